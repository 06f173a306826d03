@AISIM-1893 @LAG-1 @SCORE-2
Feature: A G2 store steers placement only once the router can see it

  The router learns what each worker holds in host memory (G2) only from that worker's KV events.
  Events reach the router after a configured lag. Until a store is visible the router places by
  load alone; from the exact instant it becomes visible, the stored prefix pulls the request to
  the worker that holds it.

  Background:
    Given a cluster of 2 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 16 tokens long
    And worker 1 is already serving a 4-token request
    And KV events reach the router 5 ms after they are emitted
    And worker 1 finishes storing "system prompt" in host memory at 10 ms

  Scenario Outline: arrival at <arrival> <sees> the HostPinned store
    When a request starting with "system prompt" arrives at <arrival>
    Then it is placed on <placement>

    Examples:
      | arrival   | sees         | placement                                 |
      | 5 ms      | does not see | worker 0, the less loaded worker          |
      | 14.999 ms | does not see | worker 0, the less loaded worker          |
      | 15 ms     | sees         | worker 1, which holds it in G2            |
      | 50 ms     | sees         | worker 1, which holds it in G2            |

  Scenario: the visible store outweighs the extra load, by the numbers
    When a request starting with "system prompt" arrives at 15 ms
    Then the router scored it as:
      | worker | GPU blocks | host blocks | credit | prefill blocks | decode blocks | cost |
      | 0      | 0          | 0           | 0      | 5              | 5             | 10   |
      | 1      | 0          | 4           | 3      | 6              | 6             | 9    |
