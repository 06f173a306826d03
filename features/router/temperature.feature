@AISIM-1893 @SCORE-3
Feature: With a temperature the router samples among the workers, favouring the cheaper ones

  At temperature 0 the router always takes the cheapest worker. Above 0 it draws a worker from the
  seeded stream, with weights that fall with cost: each cost is set between 0 (the cheapest) and 1
  (the dearest), negated, divided by the temperature and raised as a power of e. At temperature 0.5
  costs 6, 6.5 and 8 blocks give weights 1, e^−0.5 and e^−2: shares of about 57 %, 35 % and 8 %.

  Background:
    Given a cluster of 3 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 8 tokens long
    And KV events reach the router as soon as they are emitted
    And the router samples placements at temperature 0.5
    And worker 1 is already serving a 2-token request
    And worker 2 is already serving a 4-token request

  Scenario: over many seeds each worker is drawn in proportion to its weight
    When a request starting with "system prompt" arrives at 1 ms
    Then over seeds 1 to 2000 the request is placed on the workers in these shares, each within 3 points:
      | worker | cost | share |
      | 0      | 6    | 57 %  |
      | 1      | 6.5  | 35 %  |
      | 2      | 8    | 8 %   |
