@AISIM-1893 @DET-1 @RPT-1
Feature: Reruns are identical

  Qualification evidence is only worth signing if it can be reproduced: the same configuration
  and seed must give a byte-identical canonical report, whose digest identifies the run.

  Background:
    Given a cluster of 2 aggregated workers with these settings:
      | block size              | 4 tokens |
      | GPU blocks per rank     | 8        |
      | KV bytes per token      | 250000   |
      | prefill pass            | 1 ms     |
      | decode pass             | 0.5 ms   |
      | host bandwidth per rank | 1 GB/s   |
    And conversation "A" starts at 0 ms with a 9-token prompt and 2 output tokens
    And conversation "B" starts at 0 ms with a 9-token prompt and 2 output tokens
    And conversation "C" starts at 3 ms with a 31-token prompt and 1 output token
    And conversation "A" is to resume at 20 ms with 4 more tokens
    And conversation "B" is to resume at 20 ms with 4 more tokens

  Scenario Outline: two runs with <host memory> host memory give the same report digest
    Given the cluster has these settings:
      | host memory | <host memory> |
    When the replay runs twice
    Then both runs produce the same report digest

    Examples:
      | host memory        |
      | none               |
      | private, 16 blocks |
      | shared, 16 blocks  |
