@AISIM-1894 @ENG-1 @G2-3
Feature: A pass that preempts a request still being copied to host memory waits for the copy

  A request's prompt is copied from its GPU (G1) blocks to host memory (G2) after the pass that
  computed it, and the copy takes time. When a later pass runs out of GPU blocks and preempts that
  request, its blocks go back to the engine at once, and this very pass may write into them. So,
  as in vLLM (whose worker waits for a preempted request's stores before its next step) and in
  AISimulate (which delays the rank's compute), the pass computes only when the preempted
  request's copies have ended.

  Here two requests are prefilled together in the first pass (0 to 1 ms): 12 and 8 tokens, 5 of the
  worker's 6 GPU blocks. Their prompts are then copied to host memory at 10 ms a block, one
  copy after the other: the 12-token prompt from 1 ms to 31 ms, the 8-token one from 31 ms to
  51 ms. The second pass, planned at 1 ms, needs a seventh block to decode both: it preempts the
  8-token request, which waits in the queue, and computes once that request's copy is done.

  Background:
    Given a cluster of 1 aggregated worker with these settings:
      | block size                | 4 tokens           |
      | GPU blocks per rank       | 6                  |
      | running requests per rank | 4                  |
      | tokens per pass           | 64                 |
      | KV bytes per token        | 250000             |
      | prefill pass              | 1 ms               |
      | decode pass               | 1 ms               |
      | host memory               | private, 16 blocks |
      | D2H bandwidth per rank    | 0.1 GB/s           |
    And worker 0 serves a 12-token request with 10 output tokens at 0 ms
    And worker 0 serves a 8-token request with 10 output tokens at 0 ms

  Scenario: the pass that preempts waits until the preempted request's copy has ended
    When the replay runs
    Then every request finishes
    And request req2 is preempted and readmitted 1 times
    And worker 0 computes nothing from 1 ms until 51 ms, when request req2's copy to host memory ends

  Scenario: without host memory the same preemption has nothing to wait for
    Given the workers have no host memory
    When the replay runs
    Then every request finishes
    And request req2 is preempted and readmitted 1 times
    And worker 0 computes without a gap until its last request finishes
