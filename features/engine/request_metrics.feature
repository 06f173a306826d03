@RPT-2
Feature: Request metrics are defined as AIPerf defines them

  Each request gets its own time to first token (TTFT), time to second token (TTST), inter-token
  latency (ITL: the mean of its own gaps between output tokens), end-to-end latency (E2E) and queue
  time. The run's statistics are taken over those per-request values: a request that stalls
  behind a long prefill counts once, with its own mean, instead of being diluted among every gap
  of every other request. Throughputs are over the virtual time from the first arrival to the
  last finish.

  Background:
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | running requests per rank | 2    |
      | prefill pass              | 2 ms |
      | decode pass               | 1 ms |
    And worker 0 serves a 4-token request with 5 output tokens at 0 ms

  Scenario: the TTFT of a request that waited 3 ms in the queue and prefilled for 2 ms is 5 ms
    Given the cluster has these settings:
      | running requests per rank | 1 |
    And worker 0 serves a 4-token request with 2 output tokens at 3 ms
    When the replay runs
    Then the request arriving at 3 ms waited 3 ms in the queue, prefilled in a pass of 2 ms, and its time to first token is 5 ms

  Scenario: a request's inter-token latency is the mean of its own gaps, and the run's mean is over requests
    Given worker 0 serves a 4-token request with 2 output tokens at 2.5 ms
    When the replay runs
    Then the request arriving at 0 ms has its second token 1 ms after its first, and 5 output tokens 1.5 ms apart on average, its inter-token latency
    And the request arriving at 2.5 ms has its second token 1 ms after its first, and 2 output tokens 1 ms apart on average, its inter-token latency
    And the run's mean inter-token latency is 1.25 ms, the mean over requests, not 1.4 ms, the mean of all gaps pooled

  Scenario: end-to-end latency runs from arrival to the last token, and throughput is over the virtual duration
    Given worker 0 serves a 4-token request with 2 output tokens at 2.5 ms
    When the replay runs
    Then the request arriving at 0 ms ends 8 ms after it arrived, its end-to-end latency
    And the request arriving at 2.5 ms ends 4.5 ms after it arrived, its end-to-end latency
    And the run served 2 requests and 7 output tokens in 8 ms: 250 requests and 875 output tokens per second

  Scenario: goodput counts the finished requests that meet every service-level objective
    Given worker 0 serves a 4-token request with 2 output tokens at 2.5 ms
    And the service-level objective is a time to first token of at most 3 ms
    When the replay runs
    Then 1 of the 2 requests meet the objective: a goodput share of 50%
