@AISIM-1893 @ENG-1 @RPT-1 @generated
Feature: A request that spins on preemption keeps its first admission attempts and its latest

  With passes of a nanosecond (a timing table at its floor) and a one-token budget, a request is
  readmitted every pass and preempted again by the next, for as long as something slow holds the
  G1 blocks it needs: here the restore of one block over a slow shared H2D link. vLLM would also
  spin, one step at a time. The run settles when the restore ends, but one request is tried
  thousands of times: its admission history keeps its first 999 attempts and its latest, and
  counts the others, so the run's memory and report stay small.

  Found by the fuzzer (npm run fuzz, seed 404, case 3464 of 10,000) and shrunk: with a 10 MB/s
  link the request spun 12.4 million times in 50 ms of virtual time, and `kvqual replay` kept
  every attempt (2 GB, a 2.6 GB report); the original case ran out of memory. Here the link is
  0.98 GB/s, so the spin is short enough for every invariant to be checked.

  Background:
    Given the cluster and workload of this generated case:
      """yaml
      seed: 0
      cluster:
        workers:
          - role: aggregated
            replicas: 1
            dp_size: 2
            engine:
              block_size: 2
              num_gpu_blocks: 13
              max_num_seqs: 2
              max_num_batched_tokens: 1
              enable_prefix_caching: true
              kv_cache_bytes_per_token: 250000
              timing:
                table:
                  prefill:
                    - tokens: 1
                      ms: 0.000001
                  decode:
                    - batch_size: 1
                      context_tokens: 1
                      ms: 0.25
                  source: generated
            host_offload:
              num_host_blocks: 1
              scope: cluster_shared
              d2h_bandwidth_gbps: 0
              h2d_bandwidth_gbps: 0
              latency_to_first_byte_ms: 0
              shared_d2h_bandwidth_gbps: 0
              shared_h2d_bandwidth_gbps: 0.98
      router:
        policy: round_robin
        kv_event_lag_ms: 0
        overlap_score_credit: 1
        host_cache_hit_weight: 0.75
        prefill_load_scale: 1
        router_temperature: 0
      workload:
        trace_block_size: 2
        prefixes:
          prefix 0: 1
        requests:
          - id: r0
            arrival_ms: 0
            prompt:
              - prefix: prefix 0
              - tokens: 1
            output_length: 0
          - id: r1
            arrival_ms: 0
            extends: r0
            prompt:
              - tokens: 1
            output_length: 13
            target_worker: 0
          - id: r2
            arrival_ms: 0.25
            extends: r1
            prompt:
              - tokens: 5
            output_length: 0
          - id: r3
            arrival_ms: 0.25
            prompt:
              - tokens: 1
            output_length: 0
          - id: r4
            arrival_ms: 0.25
            hash_ids:
              - 1099511627779
            input_length: 2
            output_length: 4
      """

  Scenario: a request preempted thousands of times keeps its first 999 admission attempts and its latest, and every invariant holds
    When the requests arrive
    Then the run completes without an internal error
    And every request finishes, fails with a reason or is skipped with a reason
    And request r4 is preempted and readmitted 2,552 times
    And request r4's admission history keeps its first 999 attempts and its latest, and counts the other 1,553
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
