@AISIM-1893 @SCORE-5
Feature: A request that waits in the queue may reuse more than the router saw, and the report says so

  The router scores a request against the blocks it has seen at placement. A request that then
  waits for a running slot may find more of its prefix cached by the time it is admitted: another
  request with the same prompt, ahead of it in the queue, computed and stored it meanwhile. The
  report puts that difference down to the queue, not to lag or a stale entry.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | running requests per rank | 1 |
    And conversation "A" starts on worker 0 at 0 ms with a 9-token prompt and 2 output tokens

  Scenario: a prompt sent again while its first sending is still computing reuses what that stored, and the difference is put down to the queue
    When conversation "A"'s first prompt is sent again at 0.5 ms
    Then it reuses 8 tokens from G1
    And the reconciliation of the resume says "queued request", reported 0 tokens vs realised 8
