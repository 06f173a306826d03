// The capacity search of a sweep (src/sweep/search.ts, searchSection.ts): its objective and
// constraints are checked with messages naming the place; bisection finds what the whole grid
// finds whenever the constraints are monotone along the objective's axis (a property over random
// thresholds), in about log2 of the axis's length rounds; every seed of a candidate must meet;
// "no point meets" is a null winner; a non-monotone line is reported; the Pareto front keeps only
// points nothing beats on both axes; shards' sections merge, and a document answers as the runs did;
// the repository's example search reads and expands into valid points.
import { sharedPrefixConfig } from './fixtures';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { metricValue, parseConstraint, parseMetric, paretoFront, resolveSearch, runSearch, winnerConfigText, type CandidateRecord, type PointResult, type SearchPoint, type SearchSpec } from '../../src/sweep/search';
import { documentResults, mergeSearchSections, type SearchSection } from '../../src/sweep/searchSection';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { ROOT } from '../support/paths';
import { expandSweep, parseSweepFile, SweepError } from '../../src/sweep/spec';
import type { SearchContext } from '../../src/sweep/search';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { pointMetrics } from '../../src/sweep/results';

const REPLICAS = 'cluster.workers[0].replicas';
const HIT_RATE_METRICS = ['prefix_reuse_ratio', 'prefix_reuse_block_ratio', 'prefix_reuse_request_ratio', 'prefix_reuse_of_ceiling_ratio'] as const;

/** Six requests on 2 workers, each a 16-token shared prefix and a tail of its own (4-token blocks, a partial last block for some). */
const SHARED_PREFIX_CONFIG = sharedPrefixConfig(10, (i) => 3 + 2 * i);
const context: SearchContext = { grid: { [REPLICAS]: [1, 2, 3, 4, 5, 6, 7, 8], 'router.kv_event_lag_ms': [0, 10] }, baseHasSlo: false };

function spec(search: Record<string, unknown>, ctx: SearchContext = context): SearchSpec {
  return resolveSearch(search, ctx, 'sweep.yaml');
}

function refused(search: Record<string, unknown>, pattern: RegExp, ctx: SearchContext = context): void {
  assert.throws(() => spec(search, ctx), (error: Error) => error instanceof SweepError && pattern.test(error.message), `expected ${pattern}`);
}

describe('checking a search before anything runs', () => {
  test('a constraint is a metric, an operator and a number; the statistic of a distribution is named', () => {
    assert.deepEqual(parseConstraint('p99 ttft_ms <= 2000'), { text: 'p99 ttft_ms <= 2000', metric: { key: 'p99 ttft_ms', better: 'lower' }, operator: '<=', limit: 2000 });
    assert.equal(parseConstraint('goodput>=0.95').text, 'goodput >= 0.95');
    assert.equal(parseMetric('request_throughput_per_s').better, 'higher');
  });

  test('an unknown metric, a bad operator, a missing statistic and a limit that is no number are named with the place', () => {
    refused({ minimise: REPLICAS, subject_to: ['p99 ttft_ms <= 2000', 'p99 ttft <= 1'] }, /^sweep\.yaml: search\.subject_to\[1\]: unknown metric "ttft"; did you mean ttft_ms\?/);
    refused({ minimise: REPLICAS, subject_to: ['p99 ttft_ms =< 2000'] }, /^sweep\.yaml: search\.subject_to\[0\]: "=<" is not an operator here \(operators: <=, <, >=, >\)/);
    refused({ minimise: REPLICAS, subject_to: ['ttft_ms <= 2000'] }, /search\.subject_to\[0\]: ttft_ms is a distribution: say which statistic/);
    refused({ minimise: REPLICAS, subject_to: ['p42 ttft_ms <= 2000'] }, /search\.subject_to\[0\]: unknown statistic "p42"/);
    refused({ minimise: REPLICAS, subject_to: ['p99 ttft_ms <= two'] }, /search\.subject_to\[0\]: "two" is not a number/);
    refused({ minimise: REPLICAS, subject_to: ['fast please'] }, /search\.subject_to\[0\]: "fast please" is not a constraint/);
  });

  test('the objective is a field path the grid varies over numbers, or a metric; exactly one direction', () => {
    refused({ minimise: 'cluster.workers[0].replica' }, /^sweep\.yaml: search\.minimise: cluster\.workers\[0\]\.replica is neither a field path the grid varies; did you mean cluster\.workers\[0\]\.replicas\?/);
    refused({ minimise: 'router.kv_event_lag_ms' }, /router\.kv_event_lag_ms is neither a field path the grid varies \(the grid varies router\.policy\)/, { grid: { 'router.policy': ['kv', 'round_robin'] }, baseHasSlo: false });
    refused({ minimise: 'router.policy' }, /search\.minimise: router\.policy takes "kv"; an objective's values are numbers/, { grid: { 'router.policy': ['kv', 'round_robin'] }, baseHasSlo: false });
    refused({ minimise: REPLICAS, maximise: REPLICAS }, /^sweep\.yaml: search: give exactly one of minimise and maximise/);
    refused({ subject_to: [] }, /give exactly one of minimise and maximise/);
    refused({ maximise: 'p99 ttft_ms', method: 'bisect' }, /search\.method: bisect searches along a varied field path/);
    refused({ minimise: REPLICAS, budget: 3 }, /^sweep\.yaml: search\.budget: unknown field/);
    refused({ minimise: REPLICAS, subject_to: 'p99 ttft_ms <= 1' }, /^sweep\.yaml: search\.subject_to: .*expected array/);
    assert.throws(() => resolveSearch(3, context, 'sweep.yaml'), /^SweepError: sweep\.yaml: search: .*expected object.*; a search is a mapping/);
    assert.equal(spec({ maximise: 'request_throughput_per_s' }).method, 'grid');
    assert.equal(spec({ minimise: REPLICAS }).method, 'bisect');
  });

  test('the prefix hit rates in the published definitions and the share of the ceiling are metrics, named as sweep.json names them; a wrong name lists the metrics', () => {
    for (const name of HIT_RATE_METRICS) assert.deepEqual(parseMetric(name), { key: name, better: 'higher' });
    assert.equal(parseConstraint('prefix_reuse_block_ratio >= 0.3').text, 'prefix_reuse_block_ratio >= 0.3');
    assert.equal(spec({ maximise: 'prefix_reuse_of_ceiling_ratio' }).method, 'grid');
    assert.equal(spec({ minimise: REPLICAS, subject_to: ['p99 ttft_ms <= 2000'], front: 'prefix_reuse_request_ratio' }).front.key, 'prefix_reuse_request_ratio');
    refused({ minimise: REPLICAS, subject_to: ['p99 prefix_reuse_block_ratio >= 0.3'] }, /search\.subject_to\[0\]: prefix_reuse_block_ratio is one number per run: write it without "p99"/);
    refused({ minimise: REPLICAS, subject_to: ['prefix_reuse_block_rate >= 0.3'] }, /search\.subject_to\[0\]: unknown metric "prefix_reuse_block_rate"; did you mean prefix_reuse_block_ratio\?/);
    refused(
      { minimise: REPLICAS, subject_to: ['block_hit_rate >= 0.3'] },
      /unknown metric "block_hit_rate"; the prefix hit rates are prefix_reuse_ratio \(token-weighted\), prefix_reuse_block_ratio \(block-weighted\), .* \(metrics: .*prefix_reuse_ratio, prefix_reuse_block_ratio, prefix_reuse_request_ratio, prefix_reuse_of_ceiling_ratio, /,
    );
  });

  test("a hit-rate metric's value is the run report's, as sweep.json gives it; null when no request arrived", () => {
    const { report } = runReplay(parseReplayConfig(SHARED_PREFIX_CONFIG, 'hit rates'));
    const rates = report.summary.prefix_hit_rates;
    const columns = pointMetrics(report);
    const expected: Record<(typeof HIT_RATE_METRICS)[number], number | null> = {
      prefix_reuse_ratio: rates.measured.token_weighted,
      prefix_reuse_block_ratio: rates.measured.block_weighted,
      prefix_reuse_request_ratio: rates.measured.request_averaged,
      prefix_reuse_of_ceiling_ratio: rates.of_ceiling.block_weighted,
    };
    for (const name of HIT_RATE_METRICS) {
      const value = metricValue(report, name);
      assert.equal(value, Number(expected[name]!.toFixed(6)), name);
      assert.equal(value, columns[name], `${name}: the search reads what sweep.json writes`);
    }
    assert.ok(rates.measured.block_weighted > 0 && rates.measured.block_weighted !== rates.measured.request_averaged, 'the definitions differ on this run');
    const none = { ...report, summary: { ...report.summary, prefix_hit_rates: { ...rates, requests: 0 } } };
    for (const name of HIT_RATE_METRICS.slice(1)) assert.equal(metricValue(none, name), null, `${name} of a run no request arrived in`);
  });

  test('goodput needs limits, from the search or the base config; itl_ms is set as the slo tpot_ms', () => {
    refused({ minimise: REPLICAS, subject_to: ['goodput >= 0.95'] }, /search\.subject_to\[0\]: goodput counts the requests meeting limits, and none are given/);
    assert.doesNotThrow(() => spec({ minimise: REPLICAS, subject_to: ['goodput >= 0.95'] }, { ...context, baseHasSlo: true }));
    assert.deepEqual(spec({ minimise: REPLICAS, subject_to: ['goodput >= 0.95'], goodput: { ttft_ms: 2000, itl_ms: 100 } }).slo, { ttft_ms: 2000, tpot_ms: 100 });
    refused({ minimise: REPLICAS, goodput: {} }, /search\.goodput: give at least one limit/);
  });
});

/** Points over replicas 1..n (and seeds, and a second parameter), indexed as a sweep numbers them (first parameter slowest). */
function points(replicas: number[], others: { path: string; values: (number | string)[] }[] = []): SearchPoint[] {
  const dims: [string, (number | string)[]][] = [[REPLICAS, replicas], ...others.map((o): [string, (number | string)[]] => [o.path, o.values])];
  const total = dims.reduce((n, [, values]) => n * values.length, 1);
  return Array.from({ length: total }, (_, index) => {
    let rest = index;
    const steps: number[] = [];
    for (let d = dims.length - 1; d >= 0; d--) {
      steps[d] = rest % dims[d][1].length;
      rest = Math.floor(rest / dims[d][1].length);
    }
    return { index, parameters: dims.map(([path, values], d): [string, number | string] => [path, values[steps[d]]]) };
  });
}

/** An evaluate that gives each point p99 TTFT from `ttft` and records each round asked for. */
function fakeRuns(all: readonly SearchPoint[], ttft: (parameters: Record<string, unknown>) => number | null, clean: (index: number) => boolean = () => true) {
  const rounds: number[][] = [];
  const evaluate = (indices: readonly number[]) => {
    rounds.push([...indices]);
    return Promise.resolve(
      new Map(
        indices.map((index): [number, PointResult] => {
          const point = all.find((p) => p.index === index)!;
          return [index, { clean: clean(index), values: { 'p99 ttft_ms': ttft(Object.fromEntries(point.parameters)) } }];
        }),
      ),
    );
  };
  return { evaluate, rounds };
}

const within2s = (method: 'bisect' | 'grid', ctx: SearchContext = context) => spec({ minimise: REPLICAS, subject_to: ['p99 ttft_ms <= 2000'], method }, ctx);

describe('the search', () => {
  test('bisection finds the smallest replica count meeting the constraint in about log2(n) + 1 rounds', async () => {
    const all = points([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    const { evaluate, rounds } = fakeRuns(all, (p) => 16_000 / (p[REPLICAS] as number));
    const answer = await runSearch(all, within2s('bisect'), evaluate);
    assert.deepEqual(answer.winner?.parameters, { [REPLICAS]: 8 });
    assert.equal(rounds.length, 5, 'the most generous value first, then 4 halvings of 16');
    assert.deepEqual(rounds[0], [15], 'the first round runs the most generous value (16 replicas)');
    assert.match(answer.assumption!, /once a value meets the constraints, every larger value does too/);
  });

  test('bisection and the whole grid name the same winner whenever the constraint is monotone (any threshold, any axis length, either direction)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 21 }), fc.boolean(), async (n, threshold, maximise) => {
        const replicas = Array.from({ length: n }, (_, i) => i + 1);
        const all = points(replicas);
        // To minimise, a count meets from the threshold up; to maximise, up to it.
        const ttft = (p: Record<string, unknown>) => ((maximise ? (p[REPLICAS] as number) <= threshold : (p[REPLICAS] as number) >= threshold) ? 1000 : 3000);
        const ctx = { grid: { [REPLICAS]: replicas }, baseHasSlo: false };
        const make = (method: 'bisect' | 'grid') => spec({ [maximise ? 'maximise' : 'minimise']: REPLICAS, subject_to: ['p99 ttft_ms <= 2000'], method }, ctx);
        const bisect = await runSearch(all, make('bisect'), fakeRuns(all, ttft).evaluate);
        const grid = await runSearch(all, make('grid'), fakeRuns(all, ttft).evaluate);
        assert.deepEqual(bisect.winner?.parameters ?? null, grid.winner?.parameters ?? null);
        assert.ok(bisect.evaluated.length <= Math.ceil(Math.log2(n)) + 1);
        assert.deepEqual(bisect.not_monotone, []);
      }),
      { numRuns: 150 },
    );
  });

  test('every seed of a candidate must meet, and each line of another parameter is searched on its own', async () => {
    const all = points([1, 2, 3, 4], [{ path: 'router.kv_event_lag_ms', values: [0, 10] }, { path: 'seed', values: [1, 2] }]);
    // Lag 0 meets from 2 replicas; lag 10 from 3; seed 2 of lag 0 needs 3 as well.
    const ttft = (p: Record<string, unknown>) => {
      const need = p['router.kv_event_lag_ms'] === 10 ? 3 : p.seed === 2 ? 3 : 2;
      return (p[REPLICAS] as number) >= need ? 1500 : 2500;
    };
    const ctx = { grid: { [REPLICAS]: [1, 2, 3, 4], 'router.kv_event_lag_ms': [0, 10] }, baseHasSlo: false };
    const answer = await runSearch(all, within2s('bisect', ctx), fakeRuns(all, ttft).evaluate);
    assert.deepEqual(answer.winner?.parameters, { [REPLICAS]: 3, 'router.kv_event_lag_ms': 0 });
    assert.equal(answer.winner?.points.length, 2, 'both seeds');
    assert.deepEqual(answer.winner?.values, { 'p99 ttft_ms': 1500 }, 'the mean over its seeds');
    const unmet = answer.evaluated.find((r) => r.parameters[REPLICAS] === 2 && r.parameters['router.kv_event_lag_ms'] === 0)!;
    assert.match(unmet.unmet!, /^p99 ttft_ms was 2500 at point \d+, not <= 2000$/);
  });

  test('when no point meets the constraints the winner is null, and a run that is not clean never meets', async () => {
    const all = points([1, 2, 3]);
    const none = await runSearch(all, within2s('bisect'), fakeRuns(all, () => 9000).evaluate);
    assert.equal(none.winner, null);
    assert.equal(none.evaluated.length, 1, 'the most generous value missed, so nothing else is run');
    const unclean = await runSearch(all, within2s('grid'), fakeRuns(all, () => 100, (index) => index !== 0).evaluate);
    assert.deepEqual(unclean.winner?.parameters, { [REPLICAS]: 2 });
    assert.match(unclean.evaluated[0].unmet!, /point 0 did not run clean/);
    const unmeasured = await runSearch(all, within2s('grid'), fakeRuns(all, () => null).evaluate);
    assert.equal(unmeasured.winner, null, 'a metric not measured meets no constraint');
  });

  test('a grid whose constraint is not monotone along the objective says so (bisection would not be safe there), and bisection on it finds another point', async () => {
    const all = points([1, 2, 3, 4]);
    const ttft = (p: Record<string, unknown>) => (p[REPLICAS] === 2 || p[REPLICAS] === 4 ? 1500 : 2500);
    const grid = await runSearch(all, within2s('grid'), fakeRuns(all, ttft).evaluate);
    assert.deepEqual(grid.winner?.parameters, { [REPLICAS]: 2 });
    assert.deepEqual(grid.not_monotone, [`${REPLICAS}=2 meets the constraints but ${REPLICAS}=3 does not`]);
    const monotone = await runSearch(all, within2s('grid'), fakeRuns(all, (p) => ((p[REPLICAS] as number) >= 3 ? 1500 : 2500)).evaluate);
    assert.deepEqual(monotone.not_monotone, []);
    const bisect = await runSearch(all, within2s('bisect'), fakeRuns(all, (p) => (p[REPLICAS] === 1 || p[REPLICAS] === 4 ? 1500 : 2500)).evaluate);
    assert.deepEqual(bisect.winner?.parameters, { [REPLICAS]: 4 }, 'bisection trusts its assumption: it never runs 1 replica here');
  });

  test('the Pareto front keeps the candidates nothing beats on both the objective and the front metric', () => {
    const record = (objective: number, front: number): CandidateRecord => ({ points: [objective], parameters: {}, objective, front, values: {}, meets: true, unmet: null });
    const front = paretoFront([record(1, 900), record(2, 950), record(3, 700), record(4, 700), record(5, 600)], within2s('grid'));
    assert.deepEqual(
      front.map((r) => r.objective),
      [1, 3, 5],
    );
  });
});

describe('a search answered from a document', () => {
  const section = (values: SearchSection['values']): SearchSection => ({ spec: { minimise: REPLICAS }, base_config: 'seed: 1\n', values });

  test('shards pool their values; a shard asking another search is refused', () => {
    const merged = mergeSearchSections([
      { file: 'a.json', search: section({ '2': { x: 1 } }) },
      { file: 'b.json', search: section({ '0': { x: 0 }, '1': null as never }) },
    ]);
    assert.deepEqual(Object.keys(merged!.values), ['0', '1', '2']);
    assert.throws(() => mergeSearchSections([{ file: 'a.json', search: section({}) }, { file: 'b.json', search: { ...section({}), spec: { maximise: REPLICAS } } }]), /b\.json: its search differs from a\.json's/);
    assert.throws(() => mergeSearchSections([{ file: 'a.json', search: undefined }, { file: 'b.json', search: section({}) }]), /b\.json: has a search, but a\.json does not/);
  });

  test('a point the search needs and the document does not hold is named', async () => {
    const evaluate = documentResults([{ index: 0, clean: true }], section({ '0': { 'p99 ttft_ms': 1 } }));
    assert.deepEqual([...(await evaluate([0])).values()], [{ clean: true, values: { 'p99 ttft_ms': 1 } }]);
    assert.throws(() => evaluate([1]), /point 1: the search needs its result, and the sweep holds none/);
  });

  test("the winner's config is the base config's text with its parameters and the goodput limits set, comments kept", async () => {
    const all = points([1, 2]);
    const answer = await runSearch(all, within2s('grid'), fakeRuns(all, (p) => (p[REPLICAS] === 2 ? 1000 : 3000)).evaluate);
    const text = winnerConfigText('# my cluster\nseed: 7\ncluster:\n  workers:\n    - role: aggregated\n      replicas: 8 # many\n', answer, { ttft_ms: 2000 }, 'the winner');
    assert.equal(text, '# the winner\n# my cluster\nseed: 7\ncluster:\n  workers:\n    - role: aggregated\n      replicas: 2 # many\nslo:\n  ttft_ms: 2000\n');
  });
});

describe("the repository's capacity-search example", () => {
  test('examples/sweeps/mooncake-capacity.yaml reads, its search resolves and every point of it is a valid config', () => {
    const file = path.join(ROOT, 'examples', 'sweeps', 'mooncake-capacity.yaml');
    const sweep = parseSweepFile(fs.readFileSync(file, 'utf8'), 'mooncake-capacity.yaml');
    const baseRaw = parseDocument(fs.readFileSync(path.resolve(path.dirname(file), sweep.base), 'utf8')).toJS() as Record<string, unknown>;
    const search = resolveSearch(sweep.search, { grid: sweep.grid, baseHasSlo: false }, 'mooncake-capacity.yaml');
    assert.equal(search.method, 'bisect');
    assert.deepEqual(search.slo, { ttft_ms: 2000, tpot_ms: 100 });
    assert.equal(expandSweep(sweep, { ...baseRaw, slo: search.slo }, 'mooncake-capacity.yaml').points.length, 11);
  });
});
