@EVT-2 @AISIM-1893
Feature: A worker numbers its KV events in one sequence across GPU and host memory

  The router checks each worker's stream for gaps, duplicates and reordering by the events'
  numbers, so a rank numbers every event it sends 0, 1, 2 and so on, in the order it sends them,
  whether the event is about GPU memory or host memory. One sequence for both tiers is what lets
  the router tell that a host-memory store came after the GPU removal that preceded it.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | host memory | private, 16 blocks |
    And conversation "A" starts on worker 0 at 0 ms with a 8-token prompt and 1 output token
    And worker 0 serves a 28-token request with 1 output token at 10 ms

  Scenario: two prompts stored in both tiers, one of them partly evicted for the other, are five events numbered 0 to 4
    When the replay runs
    Then worker 0's KV events were, in order:
      | event | emitted | tier        | what    | blocks |
      | 0     | 1 ms    | GPU memory  | stored  | 2      |
      | 1     | 3 ms    | host memory | stored  | 2      |
      | 2     | 11 ms   | GPU memory  | removed | 1      |
      | 3     | 11 ms   | GPU memory  | stored  | 7      |
      | 4     | 18 ms   | host memory | stored  | 7      |

  Scenario: the removal that makes room comes before the store that needed it, so the events never show more blocks than the GPU holds
    When the replay runs
    Then worker 0's KV events show, at their fullest, 8 blocks in GPU memory
