@AISIM-1893 @G2-2 @G2-5
Feature: A copy to host memory never evicts the prefix it extends

  When host memory (G2) is full, a new copy makes room by evicting the least recently used blocks.
  The blocks of the request's own prompt that host memory already holds are never among them, as
  in vLLM's CPU offloading manager: a prefix that lost a block in its middle could only be
  restored up to the hole, so the copy would destroy more reuse than it adds. When nothing else
  can be evicted, the copy waits, as any copy that finds no room does.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | host memory             | private, 4 blocks |
      | host bandwidth per rank | 0                 |
    And conversation "A" starts on worker 0 at 0 ms with a 13-token prompt and 1 output token
    And conversation "A" is to resume at 20 ms with 7 more tokens
    And worker 0 serves a 31-token request with 1 output token at 30 ms

  Scenario: a resume that adds two blocks to a stored 3-block prefix in a 4-block host memory keeps the prefix whole
    When conversation "A"'s first prompt is sent again at 40 ms
    Then it reuses 0 tokens from G1
    And it restores 12 tokens from G2
