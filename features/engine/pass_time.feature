@ENG-2
Feature: A pass lasts as long as its batch needs, by a measured table or a fitted linear model

  With fixed timing every prefill pass takes the same time, whether it computes 100 tokens or
  12,000, so latencies reflect the configuration's two constants rather than the workload. A
  measured table gives prefill time by new tokens and decode time by batch size and context;
  kvqual interpolates linearly between the points. The duration of a pass is fixed when it starts
  and rounded up to a whole nanosecond.

  Scenario: a 4,000-token prefill takes longer than a 400-token one by the table's difference
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | GPU blocks per rank | 2048 |
      | tokens per pass     | 8192 |
    And the workers time their passes by this measured table:
      | pass    | new tokens | sequences | context tokens | time   |
      | prefill | 400        |           |                | 20 ms  |
      | prefill | 4000       |           |                | 110 ms |
      | decode  |            | 1         | 1000           | 5 ms   |
    And worker 0 serves a 400-token request with 1 output token at 0 ms
    And worker 0 serves a 4000-token request with 1 output token at 500 ms
    When the replay runs
    Then the 400-token request's time to first token is 20 ms
    And the 4000-token request's time to first token is 110 ms, 90 ms more than the 400-token request's: the table's difference

  Scenario: a decode pass with 32 sequences is slower than with 1
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | GPU blocks per rank       | 256 |
      | running requests per rank | 32  |
    And the workers time their passes by this measured table:
      | pass    | new tokens | sequences | context tokens | time |
      | prefill | 4          |           |                | 1 ms |
      | decode  |            | 1         | 8              | 5 ms |
      | decode  |            | 32        | 8              | 9 ms |
    And worker 0 serves a 4-token request with 3 output tokens at 0 ms
    And worker 0 serves 32 4-token requests with 3 output tokens each at 100 ms
    When the replay runs
    Then every decode pass of 1 sequence lasts 5 ms
    And every decode pass of 32 sequences lasts 9 ms, longer than a pass of 1 sequence

  Scenario: chunked prefill splits a long prompt over passes at the token budget
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | GPU blocks per rank | 512 |
      | tokens per pass     | 512 |
    And the workers time their passes by this measured table:
      | pass    | new tokens | sequences | context tokens | time  |
      | prefill | 256        |           |                | 10 ms |
      | prefill | 512        |           |                | 18 ms |
      | decode  |            | 1         | 1000           | 5 ms  |
    And worker 0 serves a 1300-token request with 1 output token at 0 ms
    When the replay runs
    Then worker 0 prefilled it in passes of 512, 512 and 276 new tokens, lasting 18 ms, 18 ms and 10.625 ms
    And the 1300-token request's time to first token is 46.625 ms

  Scenario: under a linear model a 101-token prefill costs 2 ms plus 10 µs per token plus 0.33 ns per context token, rounded up to a whole nanosecond
    Given a cluster of 1 aggregated worker with the reference rank profile and these settings:
      | GPU blocks per rank | 512 |
      | tokens per pass     | 512 |
    And the workers time their passes by this linear model:
      | every pass             | 2 ms          |
      | each new prefill token | 0.01 ms       |
      | each decode sequence   | 0.5 ms        |
      | each context token     | 0.00000033 ms |
    And worker 0 serves a 101-token request with 1 output token at 0 ms
    When the replay runs
    Then worker 0 prefilled it in passes of 101 new tokens, lasting 3.010034 ms
    And the 101-token request's time to first token is 3.010034 ms

  Scenario: under a linear model a decode step costs its whole context, the prompt and every token made so far
    Given a cluster of 1 aggregated worker with the reference rank profile
    And the workers time their passes by this linear model:
      | every pass             | 0 ms     |
      | each new prefill token | 0 ms     |
      | each decode sequence   | 0 ms     |
      | each context token     | 0.001 ms |
    And worker 0 serves a 8-token request with 3 output tokens at 0 ms
    When the replay runs
    Then worker 0 decoded it in passes over 9 and 10 context tokens, lasting 0.009 ms and 0.01 ms
