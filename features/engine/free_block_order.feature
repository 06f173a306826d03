@AISIM-1893 @ENG-3
Feature: A full GPU cache uses blocks that hold no cached prefix before it evicts one

  A finished request gives back two kinds of GPU blocks: complete prompt blocks, which stay cached
  for a later request with the same prefix, and blocks with nothing reusable in them (its partial
  last block, its output blocks). vLLM's free-block queue puts the second kind at its front, to be
  handed out first, and the cached blocks at its back in the order they were let go; so a cached
  prefix is evicted only when no other block is free, and then its last block goes first.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | GPU blocks per rank | 4 |

  Scenario: a finished request's output blocks are used before an older cached prefix is evicted
    Given conversation "A" starts on worker 0 at 0 ms with a 4-token prompt and 1 output token
    And worker 0 serves a 4-token request with 9 output tokens at 10 ms
    And worker 0 serves a 4-token request with 1 output token at 20 ms
    When conversation "A" resumes at 30 ms with 3 more tokens
    Then it reuses 4 tokens from G1

  Scenario: when only cached blocks are left, a prefix loses its last block first
    Given conversation "A" starts on worker 0 at 0 ms with a 13-token prompt and 1 output token
    And worker 0 serves a 5-token request with 1 output token at 10 ms
    When conversation "A"'s first prompt is sent again at 20 ms
    Then it reuses 8 tokens from G1
