@AISIM-1893 @SCORE-5 @LAG-3 @generated
Feature: A block restored from host memory in a running pass is not in the router's view until the pass ends

  When a request is admitted, the blocks it restored from host memory (G2) become GPU blocks (G1)
  at once, but the worker reports them (their Device Stored event) only at the end of the pass.
  A request placed in between is scored against what the worker has reported: those blocks in host
  memory. Reconciling that request later must not put a difference down to lag in a run without
  lag: the router had seen everything the worker had reported.

  Found by the fuzzer (npm run fuzz, seed 42, case 871 of 3,000) when its invariant learnt that a
  run without lag never gives lag as a reason, and shrunk: r5 arrives at 3.5 ms, while a pass of
  worker 0 runs that admitted a request restoring a block r5's prompt shares; the engine's view
  counted that block in G1, the router's in G2, and the difference (16 tokens predicted, 20
  realised) was put down to lag.

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
              num_gpu_blocks: 10
              max_num_seqs: 2
              max_num_batched_tokens: 32
              enable_prefix_caching: true
              kv_cache_bytes_per_token: 1
              timing:
                fixed: { prefill_ms: 0.25, decode_ms: 0.5 }
            host_offload:
              num_host_blocks: 8
              scope: dp_rank_local
              d2h_bandwidth_gbps: 0
              h2d_bandwidth_gbps: 0
              latency_to_first_byte_ms: 0
      router:
        policy: round_robin
        kv_event_lag_ms: 0
        overlap_score_credit: 1
        host_cache_hit_weight: 0.75
        prefill_load_scale: 1
        router_temperature: 0
      workload:
        trace_block_size: 2
        prefixes: { prefix 1: 20 }
        requests:
          - id: r0
            arrival_ms: 0.5
            hash_ids: [ 0, 1099511627779, 0, 1099511627779, 0 ]
            input_length: 9
            output_length: 0
          - id: r1
            arrival_ms: 0.5
            hash_ids: [ 0, 1099511627779, 0, 1099511627779, 0, 0, 0 ]
            input_length: 13
            output_length: 4
          - id: r2
            arrival_ms: 0.25
            prompt: [ { prefix: prefix 1 }, { tokens: 16 } ]
            output_length: 0
          - id: r3
            arrival_ms: 0.5
            prompt: [ { tokens: 1 } ]
            output_length: 0
          - id: r4
            arrival_ms: 0.5
            prompt: [ { prefix: prefix 1 }, { tokens: 1 } ]
            output_length: 7
          - id: r5
            arrival_ms: 3.5
            prompt: [ { prefix: prefix 1 }, { tokens: 1 } ]
            output_length: 0
          - id: r6
            arrival_ms: 0
            prompt: [ { tokens: 8 } ]
            output_length: 3
      """

  Scenario: every invariant holds, and no reconciliation is put down to lag in a run without lag
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
