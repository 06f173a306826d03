@AISIM-1893 @SCORE-5 @LAG-3
Feature: A block a running pass evicts stays in the router's view until the pass ends

  A pass that needs room evicts cached blocks when it is planned, but the worker reports the
  eviction (its Removed event) only when the pass ends. A request placed in between is scored
  against blocks the router still sees, finds them gone when it is admitted, and the report puts
  the difference down to a stale entry. With no event lag it is never put down to lag: the router
  had seen everything the worker had reported.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | running requests per rank | 1    |
      | KV event lag              | 0 ms |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens

  Scenario: a prompt sent again while a pass evicts its cached blocks reuses nothing, and the difference is put down to a stale entry, not lag
    Given worker 0 serves a 31-token request with 1 output token at 5 ms
    When conversation "A"'s first prompt is sent again at 5.5 ms
    Then it reuses 0 tokens from G1
    And the reconciliation of the resume says "stale entry", reported 8 tokens vs realised 0
