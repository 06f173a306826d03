@AISIM-1893
Feature: A resumed conversation goes where its prefix is, once the router can see it

  An agent's tool call pauses a conversation; when it resumes, its earlier context may still be in
  a worker's GPU cache (G1), only in that worker's host memory (G2), or nowhere. The router can
  only steer the resume to a G2 copy it has heard about through that worker's KV events; otherwise
  it places by load and the prefix is computed again.

  Background:
    Given a cluster of 2 aggregated workers with the reference rank profile
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 31-token request with 1 output token at 5 ms
    And worker 0 serves a 4-token request with 8 output tokens at 19 ms

  @ENG-3 @SCORE-2
  Scenario: without G2, a resumed conversation follows load and recomputes its prefix
    Given the workers have no host memory
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then the resume is placed on worker 1 by load, the router seeing no cached blocks
    And it recomputes its whole prompt

  @LAG-1 @LAG-3
  Scenario: with G2 but every event hidden by lag, the resume follows load and recomputes
    Given each worker has private host memory of 16 blocks
    And KV events reach the router 100 ms after they are emitted
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then worker 0 emitted its G2 store at 3 ms and the router saw it at 103 ms
    And the resume is placed on worker 1 by load, the router seeing no cached blocks
    And it recomputes its whole prompt

  @G2-4 @G2-6 @G2-8 @SCORE-1
  Scenario: with G2 events visible, the resume moves to the private G2 owner and restores 8 tokens
    Given each worker has private host memory of 16 blocks
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then the resume is placed on worker 0, which holds its prefix in G2
    And it restores 8 tokens from G2
    And it reuses 0 tokens from G1

  @G2-6 @G2-8 @TIME-2
  Scenario: the restore's H2D copy adds to the resume's time to first token
    Given each worker has private host memory of 16 blocks
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then its H2D wait is 2 ms
    And its time to first token is 3.5 ms
