@G2-1 @AISIM-1893
Feature: Host memory needs only its size; every other setting has a documented default

  A role's host memory (G2) is set by one required number, how many blocks it holds. Everything
  else has a default a deployment may rely on without writing it down: each rank has its own host
  memory, copies run at 32 GB/s each way per rank and start without a delay, and a pool shared by
  the cluster's ranks is capped at 80 GB/s each way as a whole.

  Background:
    Given a cluster of 1 aggregated worker with these settings:
      | block size          | 4 tokens |
      | GPU blocks per rank | 8        |
      | KV bytes per token  | 250000   |
      | prefill pass        | 1 ms     |
      | decode pass         | 0.5 ms   |
    And conversation "A" starts on worker 0 at 0 ms with a 8-token prompt and 1 output token

  Scenario: private host memory given only its size takes the defaults
    Given each worker has private host memory of 16 blocks
    When the cluster is set up
    Then its host memory is set up as:
      | setting                | value             |
      | blocks                 | 16                |
      | shared by              | each rank its own |
      | D2H bandwidth per rank | 32 GB/s           |
      | H2D bandwidth per rank | 32 GB/s           |
      | time to first byte     | 0 ms              |

  Scenario: a shared pool given only its size takes the defaults of a pool
    Given the workers share one host memory pool of 64 blocks
    When the cluster is set up
    Then its host memory is set up as:
      | setting            | value                  |
      | blocks             | 64                     |
      | shared by          | every rank of the pool |
      | pool D2H bandwidth | 80 GB/s                |
      | pool H2D bandwidth | 80 GB/s                |
      | KV layout          | default                |

  Scenario: a prompt's two blocks reach host memory at the default 32 GB/s, 62.5 µs after its prefill pass
    Given each worker has private host memory of 16 blocks
    When the replay runs
    Then worker 0 emitted its G2 store at 1.0625 ms and the router saw it at 1.0625 ms

  Scenario: host memory without a size is refused, naming the missing setting
    Given each worker has private host memory of 16 blocks
    And the workers' host memory is given no number of blocks
    When the cluster is set up
    Then setup is refused at "cluster.workers[0].host_offload.num_host_blocks": "required, but missing"
