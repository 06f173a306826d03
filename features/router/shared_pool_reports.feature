@AISIM-1894 @MIR-1 @SCORE-1
Feature: A shared-pool store counts on every worker it is reported to

  A shared host memory pool holds one copy of a prefix for all the workers that use it, and reports
  the store on each of their KV event streams. The router builds each worker's view from its own
  stream, so the prefix counts in host memory on every one of them, and load decides between them.

  Scenario: a prefix the pool reports to both workers counts on both, and the less busy one gets the request
    Given a cluster of 2 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 16 tokens long
    And KV events reach the router as soon as they are emitted
    And worker 0 is already serving a 4-token request
    And the shared pool finishes storing "system prompt" and reports it to workers 0 and 1 at 10 ms
    When a request starting with "system prompt" arrives at 11 ms
    Then the router counted 4 host blocks on worker 0 for it
    And it is placed on worker 1, which holds it in G2
