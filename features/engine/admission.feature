@AISIM-1893 @ENG-1 @G2-6
Feature: A request whose G2 load has finished is admitted first, so no run stalls

  A resumed conversation that restores its prefix from host memory (G2) holds GPU (G1) blocks
  while its H2D copy runs. If the engine then let other waiting requests go first, a request that
  needs those very blocks could wait forever behind it, and the run would end with requests that
  never finish. As vLLM does, a request whose load has finished is scheduled ahead of the ordinary
  waiting queue, and a restore starts only while a running slot is free (its load then takes none);
  kvqual also starts a restore only when the G1 room for its whole prompt can be reserved.

  Background:
    Given a cluster of 1 aggregated worker with these settings:
      | block size                | 4 tokens           |
      | GPU blocks per rank       | 6                  |
      | running requests per rank | 4                  |
      | tokens per pass           | 64                 |
      | KV bytes per token        | 250000             |
      | prefill pass              | 1 ms               |
      | decode pass               | 0.5 ms             |
      | host memory               | private, 16 blocks |
      | D2H bandwidth per rank    | 1 GB/s             |
      | H2D bandwidth per rank    | 0.1 GB/s           |
    And conversation "A" starts at 0 ms with a 9-token prompt and 2 output tokens

  Scenario: a resume waits for G1 room before its slow restore starts, then is admitted the moment the copy completes
    Given worker 0 serves a 24-token request with 1 output token at 5 ms
    And worker 0 serves a 8-token request with 12 output tokens at 20 ms
    And conversation "A" is to resume at 20.25 ms with 4 more tokens
    When the replay runs
    Then every request finishes
    And it restores 8 tokens from G2
    And the resume is admitted the moment its H2D copy completes, 26.25 ms after it arrived

  Scenario: with one running slot, two resumes restore one after the other instead of blocking each other
    Given the cluster has these settings:
      | GPU blocks per rank       | 5      |
      | running requests per rank | 1      |
      | H2D bandwidth per rank    | 1 GB/s |
    And conversation "C" starts at 2 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 20-token request with 1 output token at 5 ms
    And conversation "A" is to resume at 20 ms with 4 more tokens
    And conversation "C" is to resume at 20 ms with 4 more tokens as well
    When the replay runs
    Then every request finishes
    And each resume restores 8 tokens from G2
    And no two H2D restores on the worker overlap in time

  Scenario: with one running slot but G1 room for both, two resumes load at once, and the second is admitted when the first is done
    Given the cluster has these settings:
      | GPU blocks per rank       | 8      |
      | running requests per rank | 1      |
      | H2D bandwidth per rank    | 1 GB/s |
    And conversation "C" starts at 2 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 32-token request with 1 output token at 5 ms
    And conversation "A" is to resume at 20 ms with 4 more tokens
    And conversation "C" is to resume at 20 ms with 4 more tokens as well
    When the replay runs
    Then every request finishes
    And each resume restores 8 tokens from G2
    And the two resumes' H2D restores overlap in time, and the second is admitted only when the first has finished
