@MIR-1 @AISIM-1893
Feature: The router knows a worker's caches only from the events it has received

  The router keeps, for every rank, a mirror of what that rank holds in GPU memory and, apart from
  it, of what it holds in host memory. The mirror is built only from the KV events that reached the
  router: it never looks inside a worker. A block the worker dropped from one tier still counts from
  the other, and a store whose event never arrived does not count at all.

  Background:
    Given a cluster of 2 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 16 tokens long
    And worker 1 is already serving a 4-token request
    And KV events reach the router as soon as they are emitted

  Scenario: a prefix dropped from GPU memory still counts from host memory
    Given worker 1 finishes storing "system prompt" in GPU memory at 0 ms
    And worker 1 finishes storing "system prompt" in host memory at 1 ms
    And worker 1 removes "system prompt" from GPU memory at 2 ms
    When a request starting with "system prompt" arrives at 5 ms
    Then it is placed on worker 1, which holds it in G2

  Scenario: a store whose event never reached the router does not count
    Given worker 1 finishes storing "system prompt" in GPU memory at 0 ms
    And the batch worker 1 emitted at 0 ms is lost on the way to the router
    When a request starting with "system prompt" arrives at 5 ms
    Then it is placed on worker 0, the less loaded worker
