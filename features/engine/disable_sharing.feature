@AISIM-1894 @G2-11
Feature: Naming the shared-pool settings without choosing cluster_shared changes nothing

  Sharing is switched on by `scope: cluster_shared` alone. A configuration that carries the
  shared-pool settings (pool bandwidths, layout id) but keeps `scope: dp_rank_local` must
  reproduce the private baseline exactly, whatever the number of workers.

  Scenario Outline: shared-pool settings under dp_rank_local reproduce the private baseline with <workers> worker(s)
    Given a cluster of <workers> aggregated workers with these settings:
      | block size              | 4 tokens           |
      | GPU blocks per rank     | 8                  |
      | KV bytes per token      | 250000             |
      | prefill pass            | 1 ms               |
      | decode pass             | 0.5 ms             |
      | host memory             | private, 16 blocks |
      | host bandwidth per rank | 1 GB/s             |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 31-token request with 1 output token at 5 ms
    And conversation "A" is to resume at 20 ms with 4 more tokens
    When the replay runs once as configured and once with the shared-pool settings added but scope dp_rank_local
    Then both runs produce the same report digest
    And the report lists no shared G2 domain

    Examples:
      | workers |
      | 1       |
      | 2       |
