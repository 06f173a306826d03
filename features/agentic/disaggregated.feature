@AISIM-1893 @PD-1 @EVT-4
Feature: In a prefill/decode deployment, prefill routing follows the prefill workers' G2 events

  With disaggregated serving the prefill workers compute prompts and hand their KV to decode
  workers. Only the prefill placement can use cache: the router learns the prefill workers' G1 and
  G2 residency from their KV events, while decode workers are chosen by load alone and their
  events never reach the router.

  Background:
    Given a disaggregated cluster of 2 prefill and 2 decode workers with the reference rank profile and these settings:
      | host memory | private, 16 blocks |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 31-token request with 1 output token at 5 ms

  @G2-6
  Scenario: 2P2D prefill routing follows G2 events, and decode placement is load-only
    Given worker 1 serves a 4-token request with 20 output tokens at 19 ms
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then the resume is placed on worker 0, which holds its prefix in G2
    And it restores 8 tokens from G2
    And the resume's decode worker is the less loaded one, chosen by load alone
    And no decode worker's KV event reaches the router
