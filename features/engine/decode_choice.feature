@AISIM-1893 @PD-1
Feature: A request's decode worker is chosen at its first token; its KV moves once there is room for it

  In a prefill/decode deployment the decode router chooses a decode worker by load alone. It
  chooses when the prefill worker has produced the first token, as Dynamo routes the decode stage
  when the prefill returns and AISimulate chooses the decode worker before the transfer: the
  request counts as that worker's load from the choice on, not only once its KV has landed. So two
  requests whose KV moves at the same time are spread over the decode workers.

  The KV then moves as vLLM's decode side pulls it: once the decode worker has reserved GPU blocks
  for it. Until then, and while it moves, the prefill worker keeps the request's blocks.

  Each 12-token prompt here is 3 blocks of 1 MB; a handoff also waits 0.5 ms before its first byte.

  Scenario: a second request's decode worker is chosen while the first's KV is still moving (0.1 GB/s, 30 ms)
    Given a disaggregated cluster of 1 prefill and 2 decode workers with these settings:
      | block size                | 4 tokens |
      | GPU blocks per rank       | 16       |
      | running requests per rank | 4        |
      | tokens per pass           | 64       |
      | KV bytes per token        | 250000   |
      | prefill pass              | 1 ms     |
      | decode pass               | 0.5 ms   |
      | KV handoff bandwidth      | 0.1 GB/s |
    And worker 0 serves a 12-token request with 2 output tokens at 0 ms
    And worker 0 serves a 12-token request with 2 output tokens at 1 ms
    When the replay runs
    Then every request finishes
    And request req1's decode worker is chosen at 1 ms, its first token, before its KV has moved
    And request req2's decode worker is chosen at 2 ms, its first token, before its KV has moved
    And request req2 goes to the other decode worker: request req1, its KV still moving, already counts on its own

  Scenario: a request's KV moves only once its decode worker has GPU blocks for it
    Given a disaggregated cluster of 1 prefill and 1 decode worker with these settings:
      | block size                 | 4 tokens |
      | GPU blocks per rank        | 16       |
      | GPU blocks per decode rank | 4        |
      | running requests per rank  | 4        |
      | tokens per pass            | 64       |
      | KV bytes per token         | 250000   |
      | prefill pass               | 1 ms     |
      | decode pass                | 0.5 ms   |
      | KV handoff bandwidth       | 1 GB/s   |
    And worker 0 serves a 12-token request with 4 output tokens at 0 ms
    And worker 0 serves a 12-token request with 4 output tokens at 1 ms
    When the replay runs
    Then every request finishes
    And request req2's KV starts to move at 6 ms, when request req1 has finished on their decode worker and freed its blocks
