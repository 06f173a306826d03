@AISIM-1893 @DET-1 @AGX-2 @TIME-3 @generated
Feature: A request that joins a rank late in an instant waits for the pass that instant already started

  An instant is drained to a fixed point in the phase order of TIME-3: a pass start can finish a
  play whose lane then sends its next request at the same instant, and that arrival runs after
  the pass starts it follows. A rank in a run of identical decode passes (taken by the kernel as
  one action) must then behave exactly as when every pass is stepped: its next pass had already
  started at that instant, so the request waits for it to end.

  Found by the fuzzer (npm run fuzz, seed 315, case 750 of 10,000) and shrunk; until the kernel
  remembered what ran earlier in an instant, the run that takes decode passes together admitted
  play0's second iteration on lane 1 a pass early (2 ms instead of 2.25 ms) and its digest
  differed from the run that steps every pass. Seeds 308 and 309 found the same.

  Background:
    Given the cluster and workload of this generated case:
      """yaml
      seed: 1068347275
      cluster:
        workers:
          - role: aggregated
            replicas: 1
            dp_size: 2
            engine:
              block_size: 2
              num_gpu_blocks: 13
              max_num_seqs: 2
              max_num_batched_tokens: 32
              enable_prefix_caching: true
              kv_cache_bytes_per_token: 1
              timing:
                fixed: { prefill_ms: 0.25, decode_ms: 0.25 }
          - role: aggregated
            replicas: 2
            dp_size: 1
            engine:
              block_size: 2
              num_gpu_blocks: 2
              max_num_seqs: 1
              max_num_batched_tokens: 32
              enable_prefix_caching: true
              kv_cache_bytes_per_token: 1
              timing:
                fixed: { prefill_ms: 0.25, decode_ms: 0.5 }
      router:
        policy: kv
        kv_event_lag_ms: 0.25
        overlap_score_credit: 1
        host_cache_hit_weight: 0.75
        prefill_load_scale: 1
        router_temperature: 0.5
      workload:
        agentic:
          trace: case-315-b03f64d1.trace.jsonl
          lanes: 2
          assignment: snapshot
          iterations: 2
      """
    And the agentic trace of this generated case:
      """jsonl
      {"schema":"dynamo.agentic_mooncake","version":2,"block_size":2}
      {"request_id":"play0-n0","play_id":"play0","session_id":"main","input_length":6,"output_length":4,"hash_ids":[0,0,0],"not_before_ms":0,"dependencies":[]}
      {"request_id":"play0-n1","play_id":"play0","session_id":"main","input_length":3,"output_length":2,"hash_ids":[0,0],"not_before_ms":0,"dependencies":[]}
      {"request_id":"play1-n0","play_id":"play1","session_id":"main","input_length":4,"output_length":2,"hash_ids":[0,1099511627779],"not_before_ms":1,"dependencies":[]}
      {"request_id":"play1-n1","play_id":"play1","session_id":"main","input_length":1,"output_length":0,"hash_ids":[0],"not_before_ms":0,"dependencies":[{"predecessor":"play1-n0","trigger":"completion","delay_ms":0,"relation":"sequence"}]}
      """

  Scenario: the runs that take decode passes together and one by one agree when a lane's next request joins a rank after its pass started in the same instant
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
