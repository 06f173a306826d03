@AISIM-1894
Feature: One cluster-shared G2 pool serves every replica

  With a cluster_shared pool, a prefix one replica stored in host memory is visible to every
  participating replica: the pool reports each store on every participant's event stream. Which
  replica restores it is then a matter of load, and replicas restoring at the same time split the
  pool's bandwidth evenly.

  Background:
    Given a cluster of 2 aggregated workers with the reference rank profile and these settings:
      | host memory | shared, 16 blocks |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 31-token request with 1 output token at 5 ms

  @AISIM-1893 @SCORE-1 @EVT-3
  Scenario: a shared host memory pool is visible to every replica, and load picks among them
    Given worker 0 serves a 4-token request with 8 output tokens at 19 ms
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then the resume is placed on worker 1, the less loaded of the workers that all see its prefix in G2
    And it restores 8 tokens from G2

  @G2-9 @G2-10
  Scenario: two replicas restoring the same shared prefix at once each wait twice the solo time
    Given the cluster has these settings:
      | shared pool bandwidth   | 1 GB/s  |
      | host bandwidth per rank | 32 GB/s |
    When two requests continuing conversation "A" with the same 4 new tokens arrive at 20 ms
    Then each request's H2D wait is 4 ms, twice the solo wait of 2 ms
    And the shared pool's residency matches the solo run

  @G2-9 @TIME-2
  Scenario: a restore alone in the shared pool takes its bytes over the pool's bandwidth, rounded up to a whole nanosecond
    The prefix is 2,000,000 bytes; at 1.0000005 GB/s that is 1,999,999.0000005 ns, which rounds up
    to 2,000,000 ns, never down to 1,999,999.

    Given the cluster has these settings:
      | shared pool bandwidth   | 1.0000005 GB/s |
      | host bandwidth per rank | 32 GB/s        |
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then it restores 8 tokens from G2
    And its H2D wait is 2 ms

  @DET-1 @G2-9
  Scenario: two replicas restoring the same shared prefix at once replay identically
    Given the cluster has these settings:
      | shared pool bandwidth   | 1 GB/s  |
      | host bandwidth per rank | 32 GB/s |
    When two requests continuing conversation "A" with the same 4 new tokens arrive at 20 ms, in two runs
    Then both runs produce the same report digest
    And each request's H2D wait is 4 ms, twice the solo wait of 2 ms

  @G2-10
  Scenario: the shared-pool contract is written for readers, a section per clause, each citing the feature that qualifies it
    When the shared-pool contract page docs/shared-g2-pool.md is read
    Then it has a section for each of "ownership, discovery, visibility, eviction, contention, stale-entry fallback, membership, disable semantics, out of scope"
    And every feature file it cites exists, at least 5 of them

  @G2-2 @G2-10 @EVT-3
  Scenario: a full shared pool evicts its least recently used prefix and tells every participant at the same instant
    Given the cluster has these settings:
      | host memory | shared, 4 blocks |
    And worker 1 serves a 9-token request with 1 output token at 10 ms
    And worker 1 serves a 10-token request with 1 output token at 15 ms
    When the replay runs
    Then the pool reported the eviction of conversation "A"'s 2 blocks to workers 0 and 1 at the same instant
    And the shared pool holds 4 of its 4 blocks

  # The contract of docs/shared-g2-pool.md, clause by clause. Contention is the two scenarios
  # above; stale-entry fallback, membership and disable semantics have features of their own
  # (stale_entry, shared_contract, disable_sharing); out of scope is the AGX-6 guard.

  @AISIM-1893 @EVT-3
  Scenario: ownership and discovery: the worker that computed a prefix copies it, every participant hears of it, another restores it
    Given worker 0 serves a 4-token request with 8 output tokens at 19 ms
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then worker 0, whose pass computed the prefix, copied it into the pool
    And the pool reported the store to workers 0 and 1 at the same instant
    And the resume is placed on worker 1, the less loaded of the workers that all see its prefix in G2
    And it restores 8 tokens from G2

  @G2-3 @G2-4 @G2-6
  Scenario: visibility: a copy still in flight is neither credited by the router nor read early by the engine
    # Without a prefix cache in GPU memory, so that the router can learn of A's prefix only from the pool
    # (A's GPU blocks could not be evicted while the copy reads them).
    Given the cluster has these settings:
      | time to first byte | 20 ms |
      | prefix caching     | off   |
    And worker 0 serves a 4-token request with 8 output tokens at 9 ms
    When conversation "A" resumes at 10 ms with 4 more tokens
    Then the resume is placed on worker 1 by load, the router seeing no cached blocks
    And its H2D restore starts at 23 ms, the instant the pool's copy of its prefix completes
    And it restores 8 tokens from G2

  @G2-2
  Scenario: eviction: a prefix larger than the whole pool is never stored
    Given the workers share one host memory pool of 1 blocks
    When conversation "A" resumes at 20 ms with 4 more tokens
    Then the shared pool holds 0 of its 1 blocks
    And no worker ever reported a G2 store
    And it recomputes its whole prompt
