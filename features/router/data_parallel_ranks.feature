@TOPO-1
Feature: Each data-parallel rank of a worker is a cache and a routing candidate of its own

  A worker that runs attention data parallelism has several ranks, and each rank has its own GPU
  cache, its own host memory and its own stream of KV events. A prefix cached on one rank is of no
  use to a request that runs on its sibling, so the router scores ranks, not workers.

  Background:
    Given a cluster of 2 aggregated workers with 4-token blocks
    And each worker has 2 attention data-parallel ranks
    And the prefix "system prompt" is 16 tokens long
    And KV events reach the router as soon as they are emitted

  Scenario: a prefix cached on dp rank 1 of worker 1 draws the request to that rank, not to its sibling
    Given worker 1 dp rank 1 finishes storing "system prompt" in GPU memory at 0 ms
    When a request starting with "system prompt" arrives at 1 ms
    Then it is placed on worker 1 dp rank 1, which holds it in GPU memory

  Scenario: every rank of every worker is scored as a candidate, and only the rank that holds the prefix counts it
    Given worker 1 dp rank 1 finishes storing "system prompt" in GPU memory at 0 ms
    When a request starting with "system prompt" arrives at 1 ms
    Then the router scored it as:
      | worker | dp rank | GPU blocks | host blocks |
      | 0      | 0       | 0          | 0           |
      | 0      | 1       | 0          | 0           |
      | 1      | 0       | 0          | 0           |
      | 1      | 1       | 4          | 0           |
