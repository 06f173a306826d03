Feature: Service-level objectives hold on the Mooncake conversation trace

  A capacity planner signs a deployment against the latency its users were promised, on requests
  recorded in production rather than on a synthetic load. These scenarios replay the start of the
  published Mooncake conversation trace on aggregated workers of the reference serving profile, as
  `kvqual replay` replays it, and check the objectives on the whole run: a percentile of the time
  to first token, goodput against two objectives at once, the gain of KV-aware routing over round
  robin, and how much of the reuse the trace allows the router and caches realised. Each limit
  sits a little below (or above) what the run measures, so a clearly stricter objective fails.

  @SLO-1
  Scenario: on 8 workers, 99 % of the first 500 conversation requests see their first token within 2 s
    Given the Mooncake conversation trace, first 500 requests, on 8 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then p99 time to first token is at most 2 s

  @SLO-1
  Scenario: on 8 workers, the first 500 conversation requests wait at most 400 ms for their first token on average
    Given the Mooncake conversation trace, first 500 requests, on 8 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then the mean time to first token is at most 400 ms

  @SLO-2
  Scenario: on 8 workers, at least 97 % of the requests meet both the first-token and the inter-token objectives
    Given the Mooncake conversation trace, first 500 requests, on 8 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then goodput with time to first token at most 2 s and inter-token latency at most 100 ms is at least 97 %

  @SLO-3
  Scenario: on 2 busy workers, KV-aware routing cuts the p99 time to first token of round robin by at least 1.5 times
    Given the Mooncake conversation trace, first 500 requests, on 2 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then KV-aware routing beats round robin on p99 time to first token by at least 1.5 times

  @SLO-3
  Scenario: on 2 busy workers, KV-aware routing cuts the mean time to first token of round robin by at least 1.2 times
    Given the Mooncake conversation trace, first 500 requests, on 2 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then KV-aware routing beats round robin on mean time to first token by at least 1.2 times

  @SLO-4
  Scenario: on 8 workers, KV-aware routing realises at least 75 % of the reuse an infinite cache would
    Given the Mooncake conversation trace, first 500 requests, on 8 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then prefix reuse is at least 75 % of the infinite-cache ceiling
