@AISIM-1894 @AGX-4 @AGX-3
Feature: Each play instance has its own cache identity

  Agent trajectories are replayed as play instances. Every instance gets one play_id and exactly
  one cache_id, and the tokens of its requests live in a namespace of its own: identical hash ids
  share cache inside one play and never across plays. So a G2 hit in a shared pool always comes
  from the play that stored it, and two lanes replaying the same play hold two copies.

  Background:
    Given a cluster of 2 aggregated workers with the reference rank profile and these settings:
      | host memory | shared, 64 blocks |
    And an agentic trace with 4-token trace blocks:
      | play   | request | session | input | output | hash ids                 | not before | after   | on         | delay |
      | triage | first   | main    | 9     | 2      | 1,2,3                    | 0 ms       |         |            |       |
      | triage | scan    | tool    | 31    | 1      | 10,11,12,13,14,15,16,17  | 0 ms       | first   | completion | 0 ms  |
      | triage | sibling | side    | 9     | 2      | 1,2,4                    | 0 ms       | scan    | completion | 5 ms  |

  Scenario: shared hits stay within the play that stored them
    Given 2 snapshot lanes replay it 1 time
    When the agentic workload runs
    Then each of the 2 "sibling" requests, one per lane, restores 8 tokens from G2, all stored by its own play
    And every play instance has exactly one cache_id, shared by all of its requests and by no other instance

  Scenario: two lanes double pool residency
    When the agentic workload runs with 1 snapshot lane and again with 2
    Then the shared pool holds 9 blocks with 1 lane and 18, as many times more, with 2

  Scenario: three lanes triple pool residency
    When the agentic workload runs with 1 snapshot lane and again with 3
    Then the shared pool holds 9 blocks with 1 lane and 27, as many times more, with 3

  @AISIM-1893 @AGX-5
  Scenario: recycled snapshot plays never share G2 identity
    Given 1 snapshot lane replays it 2 times
    When the agentic workload runs
    Then the recycled instance of play "triage" shares no identity with the first
    And no request of the recycled instance reuses a block of the first instance's play
    And each "sibling" request reuses 8 tokens, and any G2 blocks it restored were stored by its own play
