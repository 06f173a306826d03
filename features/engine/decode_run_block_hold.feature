@AISIM-1894 @DET-1 @generated
Feature: A run of decode passes stops when an ended request's held GPU blocks are let go

  A request that ends while its prompt is still being copied to host memory (G2) keeps its GPU
  blocks until the copy is done, as vLLM's offloading connector does. When the copy ends in the
  middle of a run of identical decode passes (taken by the kernel as one action), the run must stop
  there: the passes after it see those blocks free, exactly as when every pass is stepped.

  Found by the fuzzer (npm run fuzz, seed 1893, case 8 of 1,000) while the hold was being written,
  and shrunk: r1 decodes on worker 0 while r0, ended at its prefill, keeps its blocks until its G2
  copy ends 1 ms later; the run that takes decode passes together counted 7 GPU blocks in use at
  5.75 ms where the run that steps every pass counted 6.

  Background:
    Given the cluster and workload of this generated case:
      """yaml
      seed: 0
      cluster:
        workers:
          - role: aggregated
            replicas: 1
            dp_size: 1
            engine:
              block_size: 4
              num_gpu_blocks: 13
              max_num_seqs: 1
              max_num_batched_tokens: 1
              enable_prefix_caching: true
              kv_cache_bytes_per_token: 1
              timing:
                fixed: { prefill_ms: 0.25, decode_ms: 0.25 }
            host_offload:
              num_host_blocks: 2
              scope: cluster_shared
              d2h_bandwidth_gbps: 0
              h2d_bandwidth_gbps: 0
              latency_to_first_byte_ms: 1
              shared_d2h_bandwidth_gbps: 0
              shared_h2d_bandwidth_gbps: 0
          - role: aggregated
            replicas: 1
            dp_size: 2
            engine:
              block_size: 4
              num_gpu_blocks: 13
              max_num_seqs: 1
              max_num_batched_tokens: 1
              enable_prefix_caching: true
              kv_cache_bytes_per_token: 1
              timing:
                fixed: { prefill_ms: 0.25, decode_ms: 0.25 }
      router:
        policy: round_robin
        kv_event_lag_ms: 0
        overlap_score_credit: 1
        host_cache_hit_weight: 0.75
        prefill_load_scale: 1
        router_temperature: 0
      workload:
        trace_block_size: 2
        prefixes: {}
        requests:
          - id: r0
            arrival_ms: 0
            hash_ids: [ 0, 0, 1099511627779, 0, 0, 1099511627779, 1099511627779, 0, 1008, 1009, 1010 ]
            input_length: 21
            output_length: 0
          - id: r1
            arrival_ms: 0
            hash_ids: [ 0 ]
            input_length: 1
            output_length: 3
            target_worker: 0
          - id: r2
            arrival_ms: 0
            prompt: [ { tokens: 1 } ]
            output_length: 0
      """

  Scenario: every invariant holds, and taking decode passes together gives the run that stepping gives
    When the requests arrive
    Then the run completes without an internal error
    And every request finishes, fails with a reason or is skipped with a reason
    And the KV event stream passes the strict check
    And after the last delivery the router's view equals every rank's G1 and G2
    And no rank ever exceeds its G1 blocks, host blocks, running requests or tokens per pass
    And every request's timestamps run forward
    And every pass lasts a whole number of nanoseconds, at least 1, as its timing model gives for its shape
    And every transfer moves whole blocks
    And no request reuses more tokens than its prompt
    And every reconciliation disagreement gives a documented reason
    And a failed play sends nothing after its failure
    And the same seed gives the same run twice (digest, KV events and passes), the second time stepping every decode pass
