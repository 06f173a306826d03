@TOPO-2 @G2-1
Feature: A block's size in bytes is its tokens times the KV bytes per token

  Copies between GPU and host memory move whole blocks, and a block holds the KV of block size
  tokens: its bytes are the block size times the model's KV bytes per token. That is what a copy
  costs, so host memory cannot be set up without the KV bytes per token.

  Scenario Outline: a 16-token prompt in blocks of <block size> at <bytes per token> bytes per token takes <copy> to copy at 1 GB/s
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | block size         | <block size>       |
      | KV bytes per token | <bytes per token>  |
      | host memory        | private, 16 blocks |
    And conversation "A" starts on worker 0 at 0 ms with a 16-token prompt and 1 output token
    When the replay runs
    Then worker 0 emitted its G2 store at <stored> and the router saw it at <stored>

    Examples:
      | block size | bytes per token | copy | stored | bytes per block          |
      | 4 tokens   | 250000          | 4 ms | 5 ms   | 1 MB: 4 blocks, 4 MB     |
      | 4 tokens   | 125000          | 2 ms | 3 ms   | 0.5 MB: 4 blocks, 2 MB   |
      | 8 tokens   | 125000          | 2 ms | 3 ms   | 1 MB: 2 blocks, 2 MB     |

  Scenario: host memory without the KV bytes per token is refused
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | host memory | private, 16 blocks |
    And the workers are given no KV bytes per token
    And conversation "A" starts on worker 0 at 0 ms with a 16-token prompt and 1 output token
    When the cluster is set up
    Then setup is refused at "cluster.workers[0].engine.kv_cache_bytes_per_token": "required when host_offload is set (block bytes = block_size × kv_cache_bytes_per_token)"
