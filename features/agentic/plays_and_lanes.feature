@AISIM-1893 @AGX-1
Feature: Plays release their requests as the agent would send them

  A play is a graph of requests. A request is sent at the later of its authored offset from the
  play's start and the moment every request it depends on was dispatched or completed, plus the
  delay on that edge (a tool call's duration). A failure ends the play: what it has not sent yet
  is skipped. Lanes run plays one after another, each moving on when its play has finished.

  Background:
    Given a cluster of 1 aggregated worker with these settings:
      | block size          | 4 tokens |
      | GPU blocks per rank | 8        |
      | prefill pass        | 1 ms     |
      | decode pass         | 0.5 ms   |

  Scenario Outline: a resume waits for the later of its authored floor (<floor>) and the tool call
    Given an agentic trace with 4-token trace blocks:
      | play  | request | session | input | output | hash ids | not before | after | on         | delay |
      | agent | ask     | main    | 8     | 3      | 1,2      | 0 ms       |       |            |       |
      | agent | resume  | main    | 12    | 2      | 1,2,3    | <floor>    | ask   | completion | 20 ms |
    When the agentic workload runs
    Then request "resume" of the play arrives at <arrival>

    Examples:
      | floor | arrival |
      | 5 ms  | 22 ms   |
      | 40 ms | 40 ms   |

  Scenario: a request triggered by dispatch is sent with its predecessor, not after it
    Given an agentic trace with 4-token trace blocks:
      | play  | request | session | input | output | hash ids | not before | after | on       | delay |
      | agent | ask     | main    | 8     | 3      | 1,2      | 0 ms       |       |          |       |
      | agent | probe   | probe   | 4     | 1      | 9        | 0 ms       | ask   | dispatch | 1 ms  |
    When the agentic workload runs
    Then request "probe" of the play arrives at 1 ms

  @AGX-2
  Scenario: a failed request skips the rest of its play, and what was already sent still finishes
    Given an agentic trace with 4-token trace blocks:
      | play  | request | session | input | output | hash ids               | not before | after | on         | delay |
      | agent | ask     | main    | 8     | 3      | 1,2                    | 0 ms       |       |            |       |
      | agent | huge    | tool    | 36    | 1      | 3,4,5,6,7,8,9,10,11    | 0 ms       |       |            |       |
      | agent | resume  | main    | 12    | 2      | 1,2,12                 | 0 ms       | huge  | completion | 0 ms  |
    When the agentic workload runs
    Then the requests of play "agent" end as:
      | request | status   |
      | ask     | finished |
      | huge    | failed   |
      | resume  | skipped  |

  @AGX-2
  Scenario: a request already released but still waiting out its tool call is skipped when its play fails meanwhile
    Given an agentic trace with 4-token trace blocks:
      | play  | request | session | input | output | hash ids            | not before | after | on       | delay |
      | agent | ask     | main    | 8     | 3      | 1,2                 | 0 ms       |       |          |       |
      | agent | huge    | tool    | 36    | 1      | 3,4,5,6,7,8,9,10,11 | 0 ms       |       |          |       |
      | agent | later   | main    | 12    | 2      | 1,2,12              | 0 ms       | ask   | dispatch | 50 ms |
    When the agentic workload runs
    Then the requests of play "agent" end as:
      | request | status   |
      | ask     | finished |
      | huge    | failed   |
      | later   | skipped  |

  @AGX-3
  Scenario: lanes take plays by stride and start the next one when the current one has finished
    Given an agentic trace with 4-token trace blocks:
      | play | request | session | input | output | hash ids | not before | after | on | delay |
      | p0   | p0-ask  | main    | 8     | 2      | 1,2      | 0 ms       |       |    |       |
      | p1   | p1-ask  | main    | 8     | 6      | 3,4      | 0 ms       |       |    |       |
      | p2   | p2-ask  | main    | 8     | 2      | 5,6      | 0 ms       |       |    |       |
    And 2 lanes take its plays by stride
    When the agentic workload runs
    Then the lanes play:
      | lane | play | starts        |
      | 0    | p0   | at 0 ms       |
      | 0    | p2   | when p0 ends  |
      | 1    | p1   | at 0 ms       |
