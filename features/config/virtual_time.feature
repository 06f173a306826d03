@TIME-1
Feature: Times are whole nanoseconds, converted exactly from the milliseconds people write

  Every instant of a run is a whole number of nanoseconds. A config's times are written in
  milliseconds with up to six decimals and are converted exactly, never through a rounded
  floating-point product: 14.999 ms is 14,999,000 ns, not 14,998,999.999999998, so a request due at
  14.999 ms is never mistaken for one due a nanosecond earlier or later. A time finer than a
  nanosecond is refused, not rounded without a word.

  Scenario Outline: a request written to arrive at <written> ms arrives at <nanoseconds> ns
    When a replay config has a request arrive at <written> ms
    Then the request arrives at exactly <nanoseconds> ns of virtual time

    Examples:
      | written        | nanoseconds       |
      | 14.999         | 14,999,000        |
      | 0.000001       | 1                 |
      | 4.35           | 4,350,000         |
      | 1000000.000001 | 1,000,000,000,001 |
      | 1e-6           | 1                 |

  Scenario: a time with seven decimals of a millisecond is refused, naming where it is written
    When a replay config has a request arrive at 14.9990001 ms
    Then setup is refused at "workload.requests[0].arrival_ms": "14.9990001 ms has 7 decimals; ms allows at most 6 (time is whole nanoseconds)"
