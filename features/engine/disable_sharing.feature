@AISIM-1894 @G2-11
Feature: Naming the shared-pool settings without choosing cluster_shared changes nothing

  Sharing is switched on by `scope: cluster_shared` alone. A configuration that carries the
  shared-pool settings (pool bandwidths, layout id) but keeps `scope: dp_rank_local` must
  reproduce the private baseline exactly, whatever the number of workers.

  Scenario Outline: naming the shared-pool settings while host memory stays private reproduces the private baseline on <workers>
    Given a cluster of <count> aggregated workers with the reference rank profile and these settings:
      | host memory | private, 16 blocks |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 31-token request with 1 output token at 5 ms
    And conversation "A" is to resume at 20 ms with 4 more tokens
    When the replay runs once as configured and once with shared-pool bandwidths of 0.25 GB/s and a layout id added but scope dp_rank_local
    Then both runs produce the same report digest
    And the report lists no shared G2 domain

    Examples:
      | workers   | count |
      | 1 worker  | 1     |
      | 2 workers | 2     |
