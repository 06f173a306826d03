@AISIM-1893 @MIR-2
Feature: The router rejects impossible KV event streams

  A correct engine never stores a block it already holds, never removes one it does not hold,
  and numbers its events 0, 1, 2, … without gaps. So in offline qualification every such event
  means a duplicated, lost or reordered event, and the replay stops with an error that names the
  worker, dp rank, event id, tier and block, instead of routing on a wrong picture.

  Background:
    Given a cluster of 2 aggregated workers with 4-token blocks
    And the prefix "system prompt" is 8 tokens long
    And the prefix "tool output" is 8 tokens long
    And the prefix "user turn" is 8 tokens long
    And KV events reach the router as soon as they are emitted

  Scenario: a duplicated G2 store is rejected
    Given worker 1 finishes storing "system prompt" in host memory at 10 ms
    And worker 1 finishes storing "system prompt" in host memory at 12 ms
    When the router replays the event streams
    Then the replay fails because the block is already stored on that rank
    And the error names worker 1, dp rank 0, event 1, tier HostPinned and block 1 of "system prompt"

  Scenario: a removal of a block never stored is rejected
    Given worker 1 removes "tool output" from host memory at 10 ms
    When the router replays the event streams
    Then the replay fails because the removed block was never stored on that rank
    And the error names worker 1, dp rank 0, event 0, tier HostPinned and block 1 of "tool output"

  Scenario: a lost event is rejected at the next event
    Given worker 1 finishes storing "system prompt" in host memory at 10 ms
    And worker 1 finishes storing "tool output" in host memory at 11 ms
    And worker 1 finishes storing "user turn" in host memory at 12 ms
    But the batch worker 1 emitted at 11 ms is lost on the way to the router
    When the router replays the event streams
    Then the replay fails because an event id is out of sequence
    And the error names worker 1, dp rank 0, event 2, tier HostPinned and block 1 of "user turn"

  Scenario: a gap of exactly one event is enough to be rejected
    Given worker 0 finishes storing "system prompt" in GPU memory at 10 ms
    And worker 0 finishes storing "tool output" in GPU memory at 11 ms
    But the batch worker 0 emitted at 10 ms is lost on the way to the router
    When the router replays the event streams
    Then the replay fails because an event id is out of sequence
    And the error names worker 0, dp rank 0, event 1, tier Device and block 1 of "tool output"

  Scenario: a reordered pair is rejected
    Given worker 1 finishes storing "system prompt" in host memory at 10 ms
    And worker 1 finishes storing "tool output" in host memory at 11 ms
    But the batches worker 1 emitted at 10 ms and 11 ms reach the router in swapped order
    When the router replays the event streams
    Then the replay fails because an event id is out of sequence
    And the error names worker 1, dp rank 0, event 1, tier HostPinned and block 1 of "tool output"

  Scenario: a batch delivered twice is rejected
    Given worker 1 finishes storing "system prompt" in host memory at 10 ms
    But the batch worker 1 emitted at 10 ms is delivered twice
    When the router replays the event streams
    Then the replay fails because an event id is out of sequence
    And the error names worker 1, dp rank 0, event 0, tier HostPinned and block 1 of "system prompt"

  Scenario: a clean stream from both workers is accepted
    Given worker 0 finishes storing "system prompt" in GPU memory at 10 ms
    And worker 1 finishes storing "system prompt" in host memory at 10 ms
    And worker 1 removes "system prompt" from host memory at 11 ms
    And worker 1 finishes storing "system prompt" in host memory at 12 ms
    When the router replays the event streams
    Then the replay completes without a stream error

  @EVT-3
  Scenario: one shared-pool store reported to two ranks is legal
    Given the shared pool finishes storing "system prompt" and reports it to workers 0 and 1 at 10 ms
    When the router replays the event streams
    Then the replay completes without a stream error

  @EVT-3
  Scenario: the same shared-pool store reported twice to one rank is rejected
    Given the shared pool reports storing "system prompt" to worker 1 twice, at 10 ms and 11 ms
    When the router replays the event streams
    Then the replay fails because the block is already stored on that rank
    And the error names worker 1, dp rank 0, event 1, tier HostPinned and block 1 of "system prompt"

  @EVT-1
  Scenario: a G2 store that continues a block the worker holds only in GPU memory is rejected
    Given worker 1 finishes storing blocks 1 to 1 of "system prompt" in GPU memory at 10 ms
    And worker 1 finishes storing blocks 2 to 2 of "system prompt" in host memory at 11 ms
    When the router replays the event streams
    Then the replay fails because the stored blocks continue a block the rank does not hold
    And the error names worker 1, dp rank 0, event 1, tier HostPinned and block 1 of "system prompt"

  @EVT-1
  Scenario: a G2 store that continues a block the worker holds in host memory is accepted
    Given worker 1 finishes storing blocks 1 to 1 of "system prompt" in host memory at 10 ms
    And worker 1 finishes storing blocks 2 to 2 of "system prompt" in host memory at 11 ms
    When the router replays the event streams
    Then the replay completes without a stream error
