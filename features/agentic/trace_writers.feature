@AGX-1 @AGX-4
Feature: An agentic trace reads the same whether kvqual or AISimulate wrote it

  Agentic Mooncake v2 traces are written two ways. kvqual's spec names a dependency's predecessor
  "predecessor". AISimulate and Dynamo name it "request_id", add the model and where the trace
  came from, and write 64-bit hash ids (the first 64 bits of a content hash). Both are read, and
  which numbers name the blocks changes nothing: only which blocks are the same matters.

  Background:
    Given a cluster of 2 aggregated workers with these settings:
      | block size          | 4 tokens          |
      | GPU blocks per rank | 16                |
      | prefill pass        | 1 ms              |
      | decode pass         | 0.5 ms            |
      | host memory         | shared, 32 blocks |

  Scenario: the same plays written by kvqual and by AISimulate replay to the same report
    Given an agentic trace with 4-token trace blocks, written once as kvqual writes it and once as AISimulate does:
      | play  | request | session | input | output | hash ids  | not before | after      | on         | delay | relation |
      | agent | plan    | main    | 12    | 4      | 1,2,3     | 0 ms       |            |            |       |          |
      | agent | grep    | tool    | 12    | 2      | 1,9,3     | 0 ms       | plan       | completion | 0 ms  | spawn    |
      | agent | resume  | main    | 20    | 6      | 1,2,3,4,5 | 5 ms       | plan, grep | completion | 20 ms | sequence |
      | docs  | draft   | main    | 16    | 8      | 1,7,8,10  | 2 ms       |            |            |       |          |
    And 2 snapshot lanes replay it 2 times
    When the agentic workload runs from each
    Then both runs produce the same report digest

  @AGX-3
  Scenario: plays that AISimulate numbered go to the lanes in its order, not by name
    Given an agentic trace with 4-token trace blocks, as AISimulate writes it:
      | play  | play number | request  | session | input | output | hash ids |
      | alpha | 2           | alpha-q  | main    | 8     | 2      | 1,2      |
      | beta  | 0           | beta-q   | main    | 8     | 6      | 3,4      |
      | gamma | 1           | gamma-q  | main    | 8     | 2      | 5,6      |
    And 2 lanes take its plays by stride
    When the agentic workload runs
    Then the lanes play:
      | lane | play  | starts         |
      | 0    | beta  | at 0 ms        |
      | 0    | alpha | when beta ends |
      | 1    | gamma | at 0 ms        |
