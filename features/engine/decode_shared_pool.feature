@AISIM-1894 @PD-1
Feature: Decode workers can share one host memory pool

  In a prefill/decode deployment the decode workers may share one cluster_shared G2 pool. Their KV
  events never reach the router, so when the pool evicts a block to make room, the announcements
  of that eviction on each decode worker's own event stream may be the last things holding it.

  # Found by the fuzzer (npm run fuzz, seed 846208692): the eviction announced to the first decode
  # worker was dropped at once, and let go of the evicted block, before the second decode worker's
  # announcement was made; the run then stopped with an internal error.
  @G2-2
  Scenario: an eviction from the decode workers' shared pool that nothing else holds ends the run cleanly
    Given a disaggregated cluster of 1 prefill and 2 decode workers with the reference rank profile and these settings:
      | host memory of decode workers | shared, 3 blocks |
      | prefix caching                | off              |
      | KV event lag                  | 0 ms             |
    And worker 0 serves a 4-token request with 2 output tokens at 0 ms
    And worker 0 serves a 12-token request with 2 output tokens at 0 ms
    When the replay runs
    Then every request finishes
    And the shared pool holds 3 of its 3 blocks
