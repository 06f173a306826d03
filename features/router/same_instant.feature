@AISIM-1893 @LAG-2 @TIME-3
Feature: Events emitted at an instant are applied before arrivals at that instant

  Within one instant the simulator first completes transfers and passes, then applies the KV
  event batches that have become visible, and only then places arrivals. So a store that lands at
  the very instant a request arrives is seen by it, and a lagged batch is visible at exactly
  emission time plus lag, never a nanosecond later.

  Background:
    Given a cluster of 2 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 16 tokens long
    And worker 1 is already serving a 4-token request

  Scenario: with no lag, an arrival at the instant of the store sees it
    Given KV events reach the router as soon as they are emitted
    And worker 1 finishes storing "system prompt" in host memory at 10 ms
    When a request starting with "system prompt" arrives at 10 ms
    Then it is placed on worker 1, which holds it in G2

  Scenario: with no lag, a GPU store from a pass ending at the arrival instant is seen too
    Given KV events reach the router as soon as they are emitted
    And worker 1 finishes storing "system prompt" in GPU memory at 10 ms
    When a request starting with "system prompt" arrives at 10 ms
    Then it is placed on worker 1, which holds it in GPU memory

  Scenario Outline: a batch lagged by 2.5 ms is visible from exactly <visible> on (arrival at <arrival>)
    Given KV events reach the router 2.5 ms after they are emitted
    And worker 1 finishes storing "system prompt" in host memory at 10 ms
    When a request starting with "system prompt" arrives at <arrival>
    Then the router counted <blocks> host blocks on worker 1 for it
    And worker 1's store became visible to the router at exactly <visible>

    Examples:
      | arrival      | visible  | blocks |
      | 12.499999 ms | 12.5 ms  | 0      |
      | 12.5 ms      | 12.5 ms  | 4      |

  Scenario Outline: batches queued behind one another become visible one by one, in order (arrival at <arrival>)
    Given KV events reach the router 5 ms after they are emitted
    And worker 1 finishes storing blocks 1 to 2 of "system prompt" in host memory at 10 ms
    And worker 1 finishes storing blocks 3 to 3 of "system prompt" in host memory at 10.5 ms
    And worker 1 finishes storing blocks 4 to 4 of "system prompt" in host memory at 11 ms
    When a request starting with "system prompt" arrives at <arrival>
    Then the router counted <blocks> host blocks on worker 1 for it

    Examples:
      | arrival | blocks |
      | 14 ms   | 0      |
      | 15 ms   | 2      |
      | 15.7 ms | 3      |
      | 16 ms   | 4      |

  Scenario Outline: a removal queued behind a store hides the prefix again once it is visible (arrival at <arrival>)
    Given KV events reach the router 5 ms after they are emitted
    And worker 1 finishes storing "system prompt" in host memory at 10 ms
    And worker 1 removes "system prompt" from host memory at 11 ms
    When a request starting with "system prompt" arrives at <arrival>
    Then it is placed on <placement>

    Examples:
      | arrival  | placement                        |
      | 15.5 ms  | worker 1, which holds it in G2   |
      | 16 ms    | worker 0, the less loaded worker |
