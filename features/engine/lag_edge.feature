@AISIM-1893 @LAG-1 @LAG-3
Feature: With real engines, a G2 store steers the resume from exactly emission + lag, not a nanosecond earlier

  The router-level scenarios inject KV events by hand. Here the engine emits them: conversation
  "A"'s prompt reaches worker 0's host memory when its D2H copy completes at 5 ms, and KV events
  reach the router 5 ms after they are emitted. A resume arriving one nanosecond before 10 ms
  cannot know about the copy and is placed by load; at 10 ms it follows its prefix into G2. The
  workers keep no prefix cache in GPU memory, so the G2 copy is the only thing the router can
  learn about A's prefix (with one, A's GPU blocks would still be announced: they cannot be
  evicted while the copy reads them).

  Background:
    Given a cluster of 2 aggregated workers with the reference rank profile and these settings:
      | host memory        | private, 16 blocks |
      | time to first byte | 2 ms               |
      | KV event lag       | 5 ms               |
      | prefix caching     | off                |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens
    And worker 0 serves a 4-token request with 8 output tokens at 9 ms

  Scenario Outline: a resume arriving at <arrival> <sees> worker 0's G2 copy of its prefix
    When conversation "A" resumes at <arrival> with 4 more tokens
    Then worker 0 emitted its G2 store at 5 ms and the router saw it at 10 ms
    And <placement>

    Examples:
      | arrival       | sees         | placement                                                                 |
      | 9.999999 ms   | does not see | the resume is placed on worker 1 by load, the router seeing no cached blocks |
      | 10 ms         | sees         | the resume is placed on worker 0, which holds its prefix in G2            |
