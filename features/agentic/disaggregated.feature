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

  # A decode worker with host memory of its own stores its KV there too; the router must not learn
  # of it. Here the decode worker that served A's first turn keeps A's prefix in host memory and is
  # the busier one when A resumes: a choice that credited cache would pick it, by load it is the other.
  @G2-6
  Scenario: a decode worker holding the conversation's prefix in host memory gets no credit for it, and the resume's decode goes by load
    Given the cluster has these settings:
      | host memory of decode workers | private, 16 blocks |
      | GPU blocks per decode rank    | 16                 |
    And worker 1 serves a 4-token request with 20 output tokens at 1 ms
    And worker 1 serves a 4-token request with 40 output tokens at 8 ms
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then the decode worker of conversation "A"'s first turn holds its prefix in host memory, stored there before the resume's decode worker was chosen
    And the resume's decode worker is the less loaded one, chosen by load alone
    And no decode worker's KV event reaches the router
