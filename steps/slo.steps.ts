// Steps for trace-level qualification against service-level objectives (features/slo/): a published
// Mooncake trace's first requests on aggregated workers of a named serving profile, replayed as
// `kvqual replay` replays it, then a latency percentile or mean, goodput, a ratio between two
// routing policies or the share of the infinite-cache ceiling checked against a limit. Each check
// records what it measured first, so a failure names the metric, the limit and the measured value,
// and leaves its claim and the CDFs behind it for the card's chart (src/slo/charts.ts).
import { BeforeAll } from '@cucumber/cucumber';
import { Given, Then, When } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import type { Nanos } from '../src/time';
import type { ReplayOutcome } from '../src/replay';
import type { RunReport } from '../src/report/report';
import { runTrace, setupProblem, TRACES, type RouterPolicy, type TraceRunSetup } from '../src/slo/traceRun';
import { goodput, metricValues, parseStatistic, statisticLabel, statisticOf } from '../src/slo/claims';
import { checkoutOf, traceFile } from '../src/traceFolder';
import { ceilingLine, goodputChart, latencyChart, ratioChart } from '../src/slo/charts';

/** The checkout (compiled, these steps run from build/steps/). */
const ROOT = checkoutOf(__dirname);

/** What a scenario's Given described and its When ran. */
interface SloState {
  traceRun: TraceRunSetup | null;
  runs: Map<RouterPolicy, ReplayOutcome>;
}

const states = new WeakMap<KvWorld, SloState>();

function stateOf(world: KvWorld): SloState {
  let state = states.get(world);
  if (state === undefined) {
    state = { traceRun: null, runs: new Map() };
    states.set(world, state);
  }
  return state;
}

/**
 * Runs already made in this cucumber run, by setup and policy: a run is a pure function of them
 * (DET-1), so scenarios that replay the same setup share one run instead of repeating it. Never
 * kept from one cucumber run to the next in the same process (the planted-fault check's runs, one
 * per fault, and the tests' in-process runs: scripts/suiteInProcess.ts): a run made without the
 * planted fault must not stand in for one made under it, and the determinism proof's second run
 * must make its own.
 */
const madeRuns = new Map<string, ReplayOutcome>();
const KEPT_RUNS = 4;
BeforeAll({ name: 'the trace replays of an earlier cucumber run in this process are forgotten' }, function () {
  madeRuns.clear();
});

const POLICY_WORDS: Record<RouterPolicy, string> = { kv: 'KV-aware routing', round_robin: 'round robin' };

/** The scenario's run under a policy, replayed on first use; its digest joins the scenario's evidence. */
function runOf(world: KvWorld, policy: RouterPolicy): RunReport {
  const state = stateOf(world);
  const setup = state.traceRun;
  if (setup === null) throw new Error('name the trace first (e.g. "Given the Mooncake conversation trace, first 500 requests, on 8 aggregated workers with the reference serving profile")');
  let outcome = state.runs.get(policy);
  if (outcome === undefined) {
    const key = JSON.stringify({ setup, policy });
    outcome = madeRuns.get(key);
    if (outcome === undefined) {
      outcome = runTrace(setup, policy, traceFile(ROOT, TRACES[setup.trace]));
      if (madeRuns.size >= KEPT_RUNS) madeRuns.delete(madeRuns.keys().next().value!);
      madeRuns.set(key, outcome);
    }
    state.runs.set(policy, outcome);
    recordRuns(world, state);
  }
  return outcome.report;
}

/** The scenario's evidence: its setup and each run's digest and headline figures (the determinism check compares them). */
function recordRuns(world: KvWorld, state: SloState): void {
  const runs = [...state.runs.entries()].map(([policy, { report }]) => ({
    router: POLICY_WORDS[policy],
    digest: report.digest,
    requests_finished: report.summary.requests.finished,
    prefix_hit_rates: report.summary.prefix_hit_rates,
  }));
  world.recordComputation('trace replay', { setup: state.traceRun, runs });
}

Given(
  'the Mooncake {word} trace, first {count} requests, on {count} aggregated workers with the {word} serving profile',
  { domain: 'slo', level: 'either', says: 'Sets up a trace replay: the first requests of a Mooncake trace on this many aggregated workers with a named serving profile (reference: the linear example\'s worker with 512-token blocks); nothing runs until a When or Then needs it.' },
  function (this: KvWorld, trace: string, requests: number, workers: number, profile: string) {
    const problem = setupProblem({ trace, profile });
    if (problem !== null) throw new Error(problem);
    stateOf(this).traceRun = { trace, requests, workers, profile, time_scale: 1, seed: this.seed };
  },
);

When('the trace is replayed with KV-aware routing', { domain: 'slo', level: 'either', says: 'Replays the trace with the KV-aware router (scenarios that set up the same replay share one run).' }, function (this: KvWorld) {
  const report = runOf(this, 'kv');
  const rates = report.summary.prefix_hit_rates;
  const percent = (value: number | null) => (value === null ? 'not measured' : `${Number((value * 100).toFixed(2))} %`);
  this.measure(
    'prefix hit rate, block-weighted',
    Number((rates.measured.block_weighted * 100).toFixed(4)),
    '%',
    `prefix hit rate at ${rates.block_size_tokens}-token blocks: block-weighted ${percent(rates.measured.block_weighted)}, token-weighted ${percent(rates.measured.token_weighted)}, request-averaged ${percent(rates.measured.request_averaged)}; infinite-cache ceiling ${percent(rates.ceiling.block_weighted)} block-weighted (${percent(rates.of_ceiling.block_weighted)} of it realised)`,
  );
});

/** The statistic a step names ("p99 time to first token"), or a clear error. */
function statisticNamed(text: string) {
  const parsed = parseStatistic(text);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed;
}

const ms = (ns: Nanos) => ns / 1_000_000;

function checkLatency(world: KvWorld, text: string, limit_ns: Nanos): void {
  const { statistic, metric } = statisticNamed(text);
  const values = metricValues(runOf(world, 'kv'), metric);
  const measured = statisticOf(values, statistic);
  const label = statisticLabel(statistic, metric);
  expect(measured, `${label}: no finished request has a ${metric}`).to.not.equal(null);
  world.measure(label, measured!, 'ms', `${label} = ${Number(measured!.toFixed(3))} ms over ${values.length} finished requests (SLO: at most ${ms(limit_ns)} ms)`);
  world.sloCharts.push(latencyChart({ run: POLICY_WORDS.kv, values, statistic, metric, measured_ms: measured!, limit_ms: ms(limit_ns) }));
  expect(measured, `${label} (SLO: at most ${ms(limit_ns)} ms)`).to.be.at.most(ms(limit_ns));
}

Then('p{int} {} is at most {duration}', { domain: 'slo', level: 'either', says: 'Checks a percentile of a latency over the finished requests (time to first token, inter-token latency, end-to-end latency, queue time) is at most the limit; a failure names the metric, the limit and the measured value.' }, function (this: KvWorld, p: number, metric: string, limit: Nanos) {
  checkLatency(this, `p${p} ${metric}`, limit);
});

Then('the mean {} is at most {duration}', { domain: 'slo', level: 'either', says: 'Checks the mean of a latency over the finished requests is at most the limit; a failure names the metric, the limit and the measured value.' }, function (this: KvWorld, metric: string, limit: Nanos) {
  checkLatency(this, `mean ${metric}`, limit);
});

Then(
  'goodput with time to first token at most {duration} and inter-token latency at most {duration} is at least {float} %',
  { domain: 'slo', level: 'either', says: 'Checks the share of finished requests meeting both limits (time to first token and inter-token latency) is at least the given percentage.' },
  function (this: KvWorld, ttft: Nanos, itl: Nanos, share: number) {
    const report = runOf(this, 'kv');
    const measured = goodput(report, ms(ttft), ms(itl));
    const percent = Number((measured.share * 100).toFixed(4));
    const label = `goodput (time to first token at most ${ms(ttft)} ms, inter-token latency at most ${ms(itl)} ms)`;
    this.measure(label, percent, '%', `${label} = ${percent} %: ${measured.meeting} of ${measured.requests} requests (SLO: at least ${share} %)`);
    this.sloCharts.push(
      goodputChart({
        run: POLICY_WORDS.kv,
        ttft_values: metricValues(report, 'time to first token'),
        itl_values: metricValues(report, 'inter-token latency'),
        ttft_limit_ms: ms(ttft),
        itl_limit_ms: ms(itl),
        percent,
        required_percent: share,
      }),
    );
    expect(percent, `${label} (SLO: at least ${share} %)`).to.be.at.least(share);
  },
);

Then('KV-aware routing beats round robin on {} by at least {float} times', { domain: 'slo', level: 'either', says: 'Replays the same trace with round robin too and checks the round-robin figure divided by the KV-aware one (a latency statistic) is at least the given ratio.' }, function (this: KvWorld, text: string, times: number) {
  const { statistic, metric } = statisticNamed(text);
  const label = statisticLabel(statistic, metric);
  const [kvValues, roundRobinValues] = (['kv', 'round_robin'] as const).map((policy) => metricValues(runOf(this, policy), metric));
  const [kv, roundRobin] = [kvValues, roundRobinValues].map((values) => statisticOf(values, statistic));
  expect(kv !== null && roundRobin !== null && kv > 0, `${label}: measured under both policies`).to.equal(true);
  const ratio = Number((roundRobin! / kv!).toFixed(4));
  const what = `round robin's ${label} ÷ KV-aware routing's`;
  this.measure(what, ratio, '×', `${what} = ${Number(roundRobin!.toFixed(3))} ms ÷ ${Number(kv!.toFixed(3))} ms = ${ratio}× (SLO: at least ${times}×)`);
  this.sloCharts.push(
    ratioChart({
      statistic,
      metric,
      candidate: { run: POLICY_WORDS.kv, values: kvValues, measured_ms: kv! },
      baseline: { run: POLICY_WORDS.round_robin, values: roundRobinValues, measured_ms: roundRobin! },
      ratio,
      required: times,
    }),
  );
  expect(ratio, `${what} (SLO: at least ${times}×)`).to.be.at.least(times);
});

Then('prefix reuse is at least {float} % of the infinite-cache ceiling', { domain: 'slo', level: 'either', says: 'Checks the block-weighted prefix reuse is at least this share of the infinite-cache ceiling (the longest prefix of each request seen in any earlier request of the trace).' }, function (this: KvWorld, share: number) {
  const rates = runOf(this, 'kv').summary.prefix_hit_rates;
  expect(rates.of_ceiling.block_weighted, 'the share of the infinite-cache ceiling: the trace allows some reuse').to.not.equal(null);
  const percent = Number((rates.of_ceiling.block_weighted! * 100).toFixed(4));
  const label = 'prefix reuse as a share of the infinite-cache ceiling (block-weighted)';
  this.measure(
    label,
    percent,
    '%',
    `${label} = ${percent} %: ${Number((rates.measured.block_weighted * 100).toFixed(3))} % of requested blocks hit, of a ceiling of ${Number((rates.ceiling.block_weighted * 100).toFixed(3))} % (SLO: at least ${share} %)`,
  );
  this.sloCharts.push(ceilingLine({ percent, required_percent: share }));
  expect(percent, `${label} (SLO: at least ${share} %)`).to.be.at.least(share);
});
