@AISIM-1893 @MIR-3
Feature: Cleared and worker removal reset the router's mirror

  When a worker clears its caches, or leaves the cluster, everything the router knew about that
  worker's residency is dropped. Neither is an error, and a later store of the same blocks starts
  from a clean slate instead of being rejected as a duplicate.

  Background:
    Given a cluster of 2 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 16 tokens long
    And worker 1 is already serving a 4-token request
    And KV events reach the router as soon as they are emitted
    And worker 1 finishes storing "system prompt" in host memory at 10 ms

  Scenario: after Cleared the router no longer credits the worker
    Given worker 1 clears its caches at 11 ms
    When a request starting with "system prompt" arrives at 12 ms
    Then it is placed on worker 0, the less loaded worker

  Scenario: after Cleared a new store of the same blocks is accepted and used
    Given worker 1 clears its caches at 11 ms
    And worker 1 finishes storing "system prompt" in host memory at 12 ms
    When a request starting with "system prompt" arrives at 13 ms
    Then it is placed on worker 1, which holds it in G2

  Scenario: a worker that leaves is no longer a candidate
    Given worker 1 leaves the cluster at 11 ms
    When a request starting with "system prompt" arrives at 12 ms
    Then it is placed on worker 0, the only worker left
    And the router no longer lists worker 1 as a candidate

  Scenario: a worker that rejoins starts a fresh stream and its stores are accepted
    Given worker 1 leaves the cluster at 11 ms
    And worker 1 rejoins the cluster at 12 ms
    And worker 1 finishes storing "system prompt" in host memory at 13 ms
    When a request starting with "system prompt" arrives at 14 ms
    Then it is placed on worker 1, which holds it in G2
