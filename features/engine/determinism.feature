@AISIM-1893 @DET-1 @RPT-1
Feature: Reruns are identical

  Qualification evidence is only worth signing if it can be reproduced: the same configuration
  and seed must give a byte-identical canonical report, whose digest identifies the run.

  Background:
    Given a cluster of 2 aggregated workers with the reference rank profile
    And conversation "A" starts at 0 ms with a 9-token prompt and 2 output tokens
    And conversation "B" starts at 0 ms with a 9-token prompt and 2 output tokens
    And conversation "C" starts at 3 ms with a 31-token prompt and 1 output token
    And conversation "A" is to resume at 20 ms with 4 more tokens
    And conversation "B" is to resume at 20 ms with 4 more tokens

  Scenario Outline: two runs with <host memory> give the same report digest
    Given <host memory setting>
    When the replay runs twice
    Then both runs produce the same report digest

    Examples:
      | host memory                 | host memory setting                                   |
      | no host memory              | the workers have no host memory                       |
      | private host memory         | each worker has private host memory of 16 blocks      |
      | one shared host memory pool | the workers share one host memory pool of 16 blocks   |
