@AISIM-1893 @G2-5
Feature: A full host memory evicts a stored prefix from its end, keeping its first blocks

  When a prompt's blocks have been copied to host memory (G2), they are marked used from the last
  block to the first, so the first block is the most recently used. When a later copy needs room,
  the prefix loses its last block first, and what is left is still a prefix a request can restore.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | host memory | private, 4 blocks |
    And conversation "A" starts on worker 0 at 0 ms with a 13-token prompt and 1 output token
    And worker 0 serves a 9-token request with 1 output token at 10 ms
    And worker 0 serves a 31-token request with 1 output token at 20 ms

  Scenario: a prefix that lost its last block to a later copy still restores its first blocks from host memory
    When conversation "A"'s first prompt is sent again at 30 ms
    Then it reuses 0 tokens from G1
    And it restores 8 tokens from G2
