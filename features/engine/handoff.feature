@AISIM-1893 @PD-1
Feature: A prefill worker holds a handed-off request's blocks until its KV reaches the decode worker

  In a prefill/decode deployment the prefill worker computes the prompt and hands its KV to a
  decode worker. The decode side reads the KV from the prefill worker's GPU memory, so those blocks
  stay taken until the copy is done (vLLM's KV connector frees them only then, and AISimulate
  likewise). A request that needs them waits for the handoff to end.

  Scenario: a request that needs the prefill worker's blocks is admitted when the earlier handoff ends
    Given a disaggregated cluster of 1 prefill and 1 decode worker with these settings:
      | block size                | 4 tokens |
      | GPU blocks per rank       | 4        |
      | running requests per rank | 4        |
      | tokens per pass           | 64       |
      | KV bytes per token        | 250000   |
      | prefill pass              | 1 ms     |
      | decode pass               | 0.5 ms   |
      | KV handoff bandwidth      | 0.1 GB/s |
    And worker 0 serves a 12-token request with 2 output tokens at 0 ms
    And worker 0 serves a 12-token request with 2 output tokens at 2 ms
    When the replay runs
    Then every request finishes
    And request req2 is admitted at 31.5 ms, the moment request req1's KV reaches its decode worker

  Scenario: a prompt's partial last block travels with its KV to the decode worker
    A 21-token prompt fills five 4-token blocks and one more; each block is 1 MB, so 6 MB at 1 GB/s
    take 6 ms after the handoff's 0.5 ms of latency.

    Given a disaggregated cluster of 1 prefill and 1 decode worker with these settings:
      | block size                | 4 tokens |
      | GPU blocks per rank       | 16       |
      | running requests per rank | 4        |
      | tokens per pass           | 64       |
      | KV bytes per token        | 250000   |
      | prefill pass              | 1 ms     |
      | decode pass               | 0.5 ms   |
      | KV handoff bandwidth      | 1 GB/s   |
      | KV handoff latency        | 0.5 ms   |
    And worker 0 serves a 21-token request with 4 output tokens at 0 ms
    When the replay runs
    Then every request finishes
    And request req1's KV moves to its decode worker as 6 blocks in 6.5 ms
