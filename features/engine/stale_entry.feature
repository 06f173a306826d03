@AISIM-1894 @G2-7 @G2-2 @G2-5 @SCORE-7
Feature: A G2 entry evicted while the request waits is recomputed, not an error

  The router scores the G2 blocks it has seen. If the pool evicts them before the engine looks the
  request up (here: the request waits behind another one whose prompt needs the room), the lookup
  misses and the prefix is computed again. That is normal operation: the event stream stays valid.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | running requests per rank | 1                 |
      | host memory               | private, 2 blocks |
      | host block weight         | 1.0               |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 32-token request with 1 output token at 5 ms
    And worker 0 serves a 8-token request with 4 output tokens at 10 ms

  Scenario: placement scores 8 G2 tokens, the 2-block pool evicts them while the request is queued, and admission recomputes
    When conversation "A" resumes at 10 ms with 4 more tokens
    Then the resume is placed on worker 0, which holds its prefix in G2
    And worker 0's host memory evicted conversation "A"'s prefix at 11 ms, after the resume was placed and before it was admitted
    And it recomputes its whole prompt
    And the reconciliation of the resume says "stale entry", reported 8 tokens vs realised 0
    And the router's event-stream check passes
