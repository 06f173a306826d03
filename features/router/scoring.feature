@AISIM-1893 @SCORE-3 @SCORE-4 @SCORE-6
Feature: How the router chooses among ranks

  The KV-aware router takes the rank with the lowest cost. When costs tie it draws among the tied
  ranks from a seeded stream, so the choice is fair and still replays exactly. Each placement
  reports the overlap it credited, and a round-robin router ignores the cache altogether.

  Background:
    Given a cluster of 2 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 8 tokens long
    And KV events reach the router as soon as they are emitted

  @DET-1
  Scenario: equal costs are broken by a seeded draw that replays identically
    When 4 requests starting with "system prompt" arrive at 1 ms
    Then the first request was a 2-way tie broken by a seeded draw
    And over seeds 1 to 20 the tied first request goes to each of the tied workers, a seeded draw and not a fixed pick
    And a second replay with the same seed places every request on the same worker

  Scenario: the reported overlap rounds host blocks weighted at 0.75 half away from zero
    Given the router weighs a host-memory block at 0.75 of a GPU block
    And worker 1 finishes storing "system prompt" in host memory at 10 ms
    When a request starting with "system prompt" arrives at 11 ms
    Then it is placed on worker 1, which holds it in G2
    And it reports an overlap of 2 blocks, 8 tokens, the best available

  Scenario: the reported overlap rounds 2.5 host blocks up to 3, half away from zero, not to the even 2
    Given the router weighs a host-memory block at 0.5 of a GPU block
    And the prefix "long prompt" is 20 tokens long
    And worker 1 finishes storing "long prompt" in host memory at 10 ms
    When a request starting with "long prompt" arrives at 11 ms
    Then it is placed on worker 1, which holds it in G2
    And it reports an overlap of 3 blocks, 12 tokens, the best available

  Scenario: a round-robin router cycles over the workers and ignores what they hold
    Given the router uses the round-robin policy
    And worker 1 finishes storing "system prompt" in host memory at 10 ms
    When 4 requests starting with "system prompt" arrive at 11 ms
    Then the requests are placed on workers "0, 1, 0, 1"

  @SCORE-1
  Scenario: each worker is credited with the blocks of the prompt it holds from the start, and not one more
    Given the prefix "long prompt" is 12 tokens long
    And worker 0 finishes storing blocks 1 to 1 of "long prompt" in GPU memory at 0 ms
    And worker 1 finishes storing blocks 1 to 2 of "long prompt" in GPU memory at 0 ms
    When a request starting with "long prompt" arrives at 1 ms
    Then the router scored it as:
      | worker | GPU blocks | host blocks |
      | 0      | 1          | 0           |
      | 1      | 2          | 0           |
    And it is placed on worker 1

  # Worker 0 holds block 3, so the router looks at block 4 too: worker 1 holds it in host memory, after its gap.
  @SCORE-1
  Scenario: host blocks count after the GPU ones only while they follow one another: a block missing from host memory ends the run
    Given the prefix "long prompt" is 16 tokens long
    And worker 1 finishes storing blocks 1 to 1 of "long prompt" in GPU memory at 0 ms
    And worker 1 finishes storing blocks 1 to 4 of "long prompt" in host memory at 0 ms
    And worker 0 finishes storing blocks 1 to 3 of "long prompt" in host memory at 0 ms
    And worker 1 removes blocks 3 to 3 of "long prompt" from host memory at 0.5 ms
    When a request starting with "long prompt" arrives at 1 ms
    Then the router scored it as:
      | worker | GPU blocks | host blocks |
      | 0      | 0          | 3           |
      | 1      | 1          | 1           |

  # Dynamo's router counts a prompt's complete blocks only (its active-block hashes stop at the
  # last whole block); the tokens of a partial last block count as prefill.
  @SCORE-2
  Scenario: a prompt's partial last block adds prefill tokens to its worker's load but no block
    Given worker 0 is already serving a 6-token request
    And worker 1 is already serving a 8-token request
    When a request starting with "system prompt" arrives at 1 ms
    Then the router scored it as:
      | worker | prefill blocks | decode blocks | cost |
      | 0      | 4.5            | 4             | 8.5  |
      | 1      | 5              | 5             | 10   |
    And it is placed on worker 0, the less loaded worker

  # Dynamo's router counts the blocks a worker's active requests use, each block once: a new request
  # adds only the blocks its worker's active requests do not already use.
  @SCORE-2
  Scenario: a request sharing a running request's prefix adds only its own blocks to that worker's decode load
    Given worker 0 is already serving a request starting with "system prompt"
    When a request starting with "system prompt" arrives at 1 ms
    Then the router scored it as:
      | worker | prefill blocks | decode blocks | cost |
      | 0      | 6              | 4             | 10   |
      | 1      | 3              | 3             | 6    |
    And it is placed on worker 1, the less loaded worker
