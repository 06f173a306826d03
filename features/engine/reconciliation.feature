@AISIM-1893 @SCORE-5 @SCORE-4
Feature: The router's predicted overlap is reconciled with the reuse each admission realises

  At placement the router reports how many prompt tokens it expects the chosen worker to reuse.
  At admission the engine realises some reuse from G1 and G2. With a host block weighted like a
  GPU block, no lag and no stale entries, the two agree; when they differ, the report says why, so a
  reviewer can tell an expected difference from a bug.

  Background:
    Given a cluster of 2 aggregated workers with the reference rank profile and these settings:
      | host memory       | private, 16 blocks |
      | host block weight | 1.0                |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 31-token request with 1 output token at 5 ms

  Scenario: with a host block weighing 1.0 of a GPU block, reported overlap equals realised G1 + G2 reuse at every admission
    Given conversation "B" starts at 1 ms with a 12-token prompt and 3 output tokens
    And conversation "C" starts at 2 ms with a 6-token prompt and 1 output token
    And conversation "B" is to resume at 30 ms with 5 more tokens
    And conversation "C" is to resume at 31 ms with 2 more tokens
    And worker 0 serves a 4-token request with 8 output tokens at 19 ms
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then at every admission the router's reported overlap equals the realised G1 + G2 reuse
    And it restores 8 tokens from G2

  @LAG-3
  Scenario Outline: a resume the router placed blind still restores from G2, and the difference is put down to lag (prefix caching <prefix caching>)
    Given KV events reach the router 100 ms after they are emitted
    And the cluster has these settings:
      | prefix caching | <prefix caching> |
    And worker 1 serves a 4-token request with 8 output tokens at 19 ms
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then it restores 8 tokens from G2
    And the reconciliation of the resume says "lag", reported 0 tokens vs realised 8

    Examples:
      | prefix caching |
      | on             |
      | off            |

  # With prefix caching off vLLM still hashes the prompt's blocks for its offloading connector,
  # which looks up and restores CPU blocks; only G1 reuse is off (docs/model.md, Engine).
  @G2-6
  Scenario: with prefix caching off a resume reuses nothing from G1 but still restores from G2, as the router predicted
    Given the cluster has these settings:
      | prefix caching | off |
    And worker 1 serves a 4-token request with 8 output tokens at 19 ms
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then it reuses 0 tokens from G1
    And it restores 8 tokens from G2
    And at every admission the router's reported overlap equals the realised G1 + G2 reuse

  @ENG-4
  Scenario: resending a prompt of exactly two blocks reuses one, and the difference is put down to the last-token rule
    Given conversation "D" starts on worker 1 at 0 ms with a 8-token prompt and 2 output tokens
    When conversation "D"'s first prompt is sent again at 20 ms
    Then it reuses 4 tokens from G1
    And the reconciliation of the resume says "last-token rule", reported 8 tokens vs realised 4

  @ENG-4
  Scenario: resending a prefill-only prompt of exactly two blocks reuses both, as the router predicted
    Given conversation "E" starts on worker 1 at 0 ms with a 8-token prompt and 0 output tokens
    When conversation "E"'s first prompt is sent again at 20 ms
    Then it reuses 8 tokens from G1
    And at every admission the router's reported overlap equals the realised G1 + G2 reuse
