@AISIM-1893 @ENG-3
Feature: A full GPU cache evicts the least recently used cached prefix first

  Blocks of finished requests stay cached until new blocks need their room. Then the blocks that
  were let go longest ago are evicted first, so the prefix used most recently is the one that
  survives.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 1 output token
    And conversation "B" starts on worker 0 at 2 ms with a 9-token prompt and 1 output token
    And worker 0 serves a 23-token request with 1 output token at 5 ms

  Scenario: the prefix used last is still cached after a request needed room, and reused when it comes back
    When conversation "B"'s first prompt is sent again at 10 ms
    Then it reuses 8 tokens from G1

  Scenario: the prefix used first was evicted to make that room
    When conversation "A"'s first prompt is sent again at 10 ms
    Then it reuses 0 tokens from G1
