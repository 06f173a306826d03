@AISIM-1894 @G2-10
Feature: Every participant of a shared G2 pool agrees on its contract

  A cluster_shared pool holds one copy of each block for every participating rank, so all of them
  must lay blocks out the same way and see the same pool. Participants that disagree on the
  layout, tensor-parallel size, block size, block bytes, capacity or the pool's bandwidths are
  rejected before the run, with an error that names the mismatch.

  Background:
    Given a cluster of 2 aggregated workers with these settings:
      | block size         | 4 tokens          |
      | KV bytes per token | 250000            |
      | host memory        | shared, 16 blocks |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens

  Scenario: participants that agree share one pool
    Given a second group of 2 aggregated workers joins the same pool
    When the cluster is set up
    Then one shared pool serves all 4 ranks

  Scenario Outline: participants that disagree on the <term> are rejected before the run
    Given a second group of 2 aggregated workers joins the pool but with its "<term>" set to <value>
    When the cluster is set up
    Then setup fails with an error naming "<named>"

    Examples:
      | term                 | value        | named                                  |
      | KV layout            | other-layout | host_offload.kv_layout_id              |
      | tensor-parallel size | 2            | tensor_parallel_size                   |
      | block size           | 8            | engine.block_size                      |
      | KV bytes per token   | 125000       | block bytes                            |
      | host memory blocks   | 32           | host_offload.num_host_blocks           |
      | pool D2H bandwidth   | 40           | host_offload.shared_d2h_bandwidth_gbps |
      | pool H2D bandwidth   | 40           | host_offload.shared_h2d_bandwidth_gbps |
