@AISIM-1893 @SCORE-6
Feature: A round-robin router takes the workers in turn

  The round-robin policy ignores what the workers hold and how busy they are: it places each request
  on the next worker in order, and after the last worker it starts again with the first.

  Background:
    Given a cluster of 3 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 8 tokens long
    And the router uses the round-robin policy

  Scenario: six requests go to workers 0, 1 and 2 in turn, twice
    When 6 requests starting with "system prompt" arrive at 1 ms
    Then the requests are placed on workers "0, 1, 2, 0, 1, 2"
