// Tests of the sweep model: expanding a sweep file into ordered points (grid, zip, seeds), setting
// field paths (never through a prototype), naming the invalid point and field, stable shard
// assignment, reading shard results (every field checked), merging shards (a missing, repeated or
// foreign shard is an error), each point's metrics (null when nothing was measured), the CSV and
// the charts (none against the seed: its runs fold into a mean line and a lowest-to-highest band;
// two parameters of one chart file name refused) and the page (at most 1,280 px wide).
import { test } from 'node:test';
import { parseJobs } from '../../src/cli/sweep';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { expandSweep, parseFieldPath, parseShard, parseSweepFile, setFieldPath, shardOfPoint, SweepError, sweepDigest } from '../../src/sweep/spec';
import { prefixHitRates } from '../../src/report/prefixHitRates';
import { mergeShards, METRICS, parseSweepDocument, pointMetrics, runsText, sweepCsv, sweepJsonText, SWEEP_FORMAT, withoutWallTimes, type PointRecord, type SweepDocument } from '../../src/sweep/results';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import type { RunReport } from '../../src/report/report';
import { bandRows, chartSpec, renderChart, sweepCharts, sweepHtml } from '../../src/sweep/charts';
import { ROOT } from '../support/paths';

const BASE = parseDocument(fs.readFileSync(path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml'), 'utf8')).toJS() as unknown;

function sweepOf(yaml: string) {
  return expandSweep(parseSweepFile(yaml, 's.yaml'), BASE, 's.yaml');
}


/** Every metric but the three infinite-cache ceilings has a chart. */
const CHARTED_METRICS = METRICS.filter((metric) => !metric.startsWith('prefix_ceiling_'));
test('field paths parse into keys and indexes, and a bad one is refused', () => {
  assert.deepEqual(parseFieldPath('cluster.workers[0].host_offload.num_host_blocks'), ['cluster', 'workers', 0, 'host_offload', 'num_host_blocks']);
  assert.deepEqual(parseFieldPath('workload.prefixes.system prompt'), ['workload', 'prefixes', 'system prompt']);
  assert.throws(() => parseFieldPath('[0].a'), SweepError);
  assert.throws(() => parseFieldPath('a..b'), SweepError);
  const tree: Record<string, unknown> = { a: [{ b: 1 }] };
  setFieldPath(tree, 'a[0].c.d', 5);
  assert.deepEqual(tree, { a: [{ b: 1, c: { d: 5 } }] });
  assert.throws(() => setFieldPath(tree, 'a[3].b', 1), /a has 1 entry, so \[3\] does not exist/);
  assert.throws(() => setFieldPath(tree, 'a[0].b.c', 1), /a\[0\]\.b is not a mapping/);
});

test('a field path never names or writes through a prototype: __proto__, constructor and prototype are refused', () => {
  for (const bad of ['__proto__.seed', 'router.__proto__.kv_event_lag_ms', 'cluster.workers[0].__proto__.replicas', '__proto__', 'constructor', 'router.prototype']) {
    assert.throws(() => parseFieldPath(bad), { name: 'SweepError', message: new RegExp(`^"${bad.replace(/[.[\]]/g, '\\$&')}" is not a field path: no config field is named `) }, bad);
  }
  // An object key "__proto__" would vanish as the schema reads the grid: refused before, naming it.
  assert.throws(() => parseSweepFile('base: b.yaml\ngrid: {"__proto__": [5]}\n', 's.yaml'), { message: /^s\.yaml: grid\.__proto__: "__proto__" is not a field path/ });
  assert.throws(() => parseSweepFile('{"base": "b.yaml", "zip": [{"__proto__": [5], "seed": [1]}]}', 's.yaml'), { message: /^s\.yaml: zip\[0\]\.__proto__: "__proto__" is not a field path/ });
  assert.throws(() => sweepOf('base: b.yaml\ngrid:\n  "__proto__.seed": [5, 6]\n'), { message: /^s\.yaml: grid\.__proto__\.seed: "__proto__\.seed" is not a field path/ });
  assert.equal(({} as Record<string, unknown>).seed, undefined, 'Object.prototype is untouched');
  // Only own fields are read and written: an inherited name is a new field of its own, never the inherited value.
  const tree: Record<string, unknown> = { router: {} };
  setFieldPath(tree, 'router.toString.x', 1);
  setFieldPath(tree, 'router.hasOwnProperty', 2);
  assert.deepEqual(JSON.parse(JSON.stringify(tree)), { router: { toString: { x: 1 }, hasOwnProperty: 2 } });
  assert.equal(typeof ({} as Record<string, unknown>).toString, 'function');
  assert.throws(() => sweepOf('base: b.yaml\ngrid:\n  router.toString.x: [1]\n'), /point 0 of 1 \(router\.toString\.x=1\): router\.toString: unknown field/);
});

test('a grid, a zip and seeds expand in order: the first dimension varies slowest, seeds fastest', () => {
  const sweep = sweepOf(`base: b.yaml
grid:
  router.kv_event_lag_ms: [0, 10]
zip:
  - router.host_cache_hit_weight: [0.5, 1]
    cluster.workers[0].host_offload.num_host_blocks: [8, 32]
seeds: [1, 2]
`);
  assert.deepEqual(sweep.parameters, ['router.kv_event_lag_ms', 'router.host_cache_hit_weight', 'cluster.workers[0].host_offload.num_host_blocks', 'seed']);
  assert.equal(sweep.points.length, 8);
  assert.deepEqual(sweep.points[5].parameters, [
    ['router.kv_event_lag_ms', 10],
    ['router.host_cache_hit_weight', 0.5],
    ['cluster.workers[0].host_offload.num_host_blocks', 8],
    ['seed', 2],
  ]);
  const point = sweep.points[7].config;
  assert.equal(point.router.kv_event_lag_ms, 10);
  assert.equal(point.router.host_cache_hit_weight, 1);
  assert.equal(point.cluster.workers[0].host_offload!.num_host_blocks, 32);
  assert.equal(point.seed, 2);
  assert.equal(sweepDigest(sweep), sweepDigest(sweepOf(`base: b.yaml\ngrid:\n  router.kv_event_lag_ms: [0, 10]\nzip:\n  - router.host_cache_hit_weight: [0.5, 1]\n    cluster.workers[0].host_offload.num_host_blocks: [8, 32]\nseeds: [1, 2]\n`)));
  assert.notEqual(sweepDigest(sweep), sweepDigest(sweepOf('base: b.yaml\nseeds: [1, 2]\n')));
});

test('an invalid point is named with its values, the field and the problem, before anything runs', () => {
  assert.throws(() => sweepOf('base: b.yaml\ngrid:\n  router.kv_event_lag_ms: [0, 5, -1]\n'), {
    message: 's.yaml: point 2 of 3 (router.kv_event_lag_ms=-1): router.kv_event_lag_ms: kv_event_lag_ms must be ≥ 0',
  });
  assert.throws(() => sweepOf('base: b.yaml\ngrid:\n  router.kv_event_lag: [0, 1]\n'), /point 0 of 2 .*router\.kv_event_lag: unknown field; did you mean kv_event_lag_ms\? \(1 more point\(s\) are invalid too\)/);
  assert.throws(() => sweepOf('base: b.yaml\nzip:\n  - router.kv_event_lag_ms: [0, 1]\n    seed: [1]\n'), /zip\[0\]\.seed: 1 values, but router\.kv_event_lag_ms has 2/);
  assert.throws(() => sweepOf('base: b.yaml\ngrid:\n  seed: [1]\nseeds: [2]\n'), /grid\.seed: seed is varied by seeds/);
  assert.throws(() => parseSweepFile('base: b.yaml\ngridd: {}\n', 's.yaml'), /s\.yaml: gridd: unknown field; did you mean grid\?/);
  assert.throws(() => parseSweepFile('grid: {}\n', 's.yaml'), /s\.yaml: base: required, but missing/);
  assert.throws(() => sweepOf('base: b.yaml\ngrid:\n  seed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n  router.kv_event_lag_ms: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n  router.host_cache_hit_weight: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  workload.prefixes.x: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  workload.prefixes.y: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n'), /s\.yaml: 110000 points, above the limit of 100,000/);
});

test('shards: stable by point index, every point in exactly one shard', () => {
  assert.deepEqual(parseShard('2/3'), { index: 2, count: 3 });
  for (const bad of ['0/3', '4/3', '1/0', 'a/b', '1']) assert.throws(() => parseShard(bad), SweepError, bad);
  const owners = Array.from({ length: 10 }, (_, i) => shardOfPoint(i, 3));
  assert.deepEqual(owners, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
});

function documentOf(points: number, shard?: { index: number; count: number }): SweepDocument {
  const all = Array.from({ length: points }, (_, index) => ({
    index,
    parameters: { 'router.kv_event_lag_ms': index % 2 === 0 ? 0 : 10, seed: 1 + Math.floor(index / 2) },
    clean: true,
    problem: null,
    metrics: Object.fromEntries(METRICS.map((metric, m) => [metric, metric.endsWith('_ratio') ? 0.5 : index * 10 + m])) as SweepDocument['points'][number]['metrics'],
    digest: `sha256:${String(index).padStart(64, '0')}`,
    wall_ms: 100 + index,
  }));
  return {
    format: SWEEP_FORMAT,
    sweep_digest: 'ab'.repeat(32),
    base: 'b.yaml',
    parameters: ['router.kv_event_lag_ms', 'seed'],
    values: { 'router.kv_event_lag_ms': [0, 10], seed: Array.from({ length: Math.ceil(points / 2) }, (_, i) => 1 + i) },
    metrics: [...METRICS],
    points_total: points,
    ...(shard ? { shard } : {}),
    points: shard ? all.filter((point) => shardOfPoint(point.index, shard.count) === shard.index) : all,
  };
}

test('merging every shard once gives the unsharded document; a missing, repeated or foreign shard is named', () => {
  const shards = [3, 1, 2].map((index) => ({ file: `shard-${index}.json`, document: documentOf(8, { index, count: 3 }) }));
  assert.equal(JSON.stringify(mergeShards(shards)), JSON.stringify(documentOf(8)));
  assert.throws(() => mergeShards(shards.slice(0, 2)), /shards? 2\/3 missing/);
  assert.throws(() => mergeShards([...shards, shards[0]]), /shard-3\.json: shard 3\/3 is given twice \(also shard-3\.json\)/);
  assert.throws(() => mergeShards([...shards.slice(0, 2), { file: 'x.json', document: { ...documentOf(8, { index: 2, count: 3 }), sweep_digest: 'other' } }]), /x\.json: from another sweep/);
  assert.throws(() => mergeShards([...shards, { file: 'w.json', document: documentOf(8) }]), /w\.json: not a shard's result/);
  const wrongPoint = documentOf(8, { index: 1, count: 3 });
  wrongPoint.points = [...wrongPoint.points, documentOf(8).points[1]];
  assert.throws(() => mergeShards([wrongPoint, shards[1], shards[2]].map((document, i) => ('document' in document ? document : { file: `f${i}`, document }))), /point 1 does not belong to shard 1\/3/);
  assert.throws(() => mergeShards([]), /give the shard results/);
});

test('a shard result is read with every field checked: a damaged one is refused naming the file and the field', () => {
  const valid = documentOf(4, { index: 1, count: 2 });
  const text = sweepJsonText(valid);
  assert.equal(sweepJsonText(parseSweepDocument(text, 's.json')), text, 'read back, the same bytes (fields in the order written)');
  const damaged: [string, (document: Record<string, any>) => void, RegExp][] = [
    ['points_total 10^12', (d) => (d.points_total = 1e12), /^s\.json: points_total: at most 100,000/],
    ["a point's metrics deleted", (d) => delete d.points[0].metrics, /^s\.json: points\[0\]\.metrics: required, but missing$/],
    ['metrics null', (d) => (d.metrics = null), /^s\.json: metrics: .*expected array, received null$/],
    ['values deleted', (d) => delete d.values, /^s\.json: values: required, but missing$/],
    ["a point's parameters null", (d) => (d.points[0].parameters = null), /^s\.json: points\[0\]\.parameters: .*received null$/],
    ['a metric missing from the list', (d) => d.metrics.pop(), /^s\.json: metrics: expected the metrics of kvqual-sweep\/1 in order/],
    ['a metric a string', (d) => (d.points[0].metrics.ttft_p50_ms = '1'), /^s\.json: points\[0\]\.metrics\.ttft_p50_ms: .*expected number/],
    ['an unknown field', (d) => (d.extra = 1), /^s\.json: extra: unknown field$/],
    ['a value not among the values', (d) => (d.points[0].parameters.seed = 3), /^s\.json: points\[0\]\.parameters\.seed: 3 is not one of its values$/],
    ['a parameter without values', (d) => delete d.values.seed, /^s\.json: values\.seed: required, but missing$/],
    ['a point without a parameter', (d) => delete d.points[1].parameters.seed, /^s\.json: points\[1\]\.parameters\.seed: required, but missing$/],
    ['a point beyond points_total', (d) => (d.points[1].index = 4), /^s\.json: points\[1\]\.index: 4 is not below points_total \(4\)$/],
    ['more points than points_total', (d) => (d.points_total = 1), /^s\.json: points: 2 points, but points_total is 1$/],
    ['shard 3 of 2', (d) => (d.shard.index = 3), /^s\.json: shard\.index: index must be at most count$/],
    ['a clean point with a problem', (d) => (d.points[0].problem = 'x'), /^s\.json: points\[0\]\.problem: a clean point has no problem$/],
    ['a parameter through __proto__', (d) => (d.parameters[1] = '__proto__.seed'), /^s\.json: parameters\[1\]: "__proto__\.seed" is not a field path/],
    ['a digest not a SHA-256', (d) => (d.sweep_digest = 'abc'), /^s\.json: sweep_digest: expected 64 hexadecimal digits/],
    ['a negative wall time', (d) => (d.points[0].wall_ms = -1), /^s\.json: points\[0\]\.wall_ms: /],
  ];
  for (const [what, damage, message] of damaged) {
    const document = JSON.parse(text);
    damage(document);
    assert.throws(() => parseSweepDocument(JSON.stringify(document), 's.json'), { name: 'SweepError', message }, what);
  }
  assert.throws(() => parseSweepDocument('[1]', 's.json'), { message: /^s\.json: not a sweep result \(format kvqual-sweep\/1\)$/ });
});

test("a shard whose sweep-wide fields differ from the others' is refused, though the digests agree", () => {
  const shards = [1, 2].map((index) => ({ file: `shard-${index}.json`, document: documentOf(4, { index, count: 2 }) }));
  shards[1].document.points_total = 3;
  assert.throws(() => mergeShards(shards), { message: /^shard-2\.json: points_total differs from shard-1\.json's, though both name one sweep; the file is damaged$/ });
});

/** A run report's summary with nothing measured: no request, no prompt token, no admission. */
function emptyReport(): RunReport {
  const none = { count: 0, mean: null, min: null, max: null, p50: null, p90: null, p95: null, p99: null };
  const summary = {
    requests: { total: 0, finished: 0, failed: 0, skipped: 0, unfinished: 0 },
    tokens: { input: 0, output: 0, g1_reused: 0, host_reused: 0 },
    virtual_duration_ms: 0,
    ttft_ms: none,
    itl_ms: none,
    e2e_ms: none,
    prefix_reuse_ratio: 0,
    prefix_hit_rates: prefixHitRates([], 4),
    g2_restored_tokens: 0,
    transfers: { d2h: 0, h2d: 0, d2h_bytes: 0, h2d_bytes: 0 },
    reconciliation: { admissions: 0, agree: 0, disagree_by_reason: {} },
    metrics: { inter_token_latency_ms: none },
  };
  return { summary } as unknown as RunReport;
}

test("a point's ITL p50 is over the requests' own ITLs, as the report's metrics, not over every gap pooled", () => {
  // The prefill/decode example: most gaps are one decode pass (0.5 ms), but requests whose KV
  // arrives during another's decoding have longer means of their own.
  const file = path.join(ROOT, 'examples', 'configs', 'prefill-decode.yaml');
  const { report } = runReplay(parseReplayConfig(fs.readFileSync(file, 'utf8'), file));
  const perRequest = report.summary.metrics.inter_token_latency_ms;
  assert.notEqual(perRequest.p50, report.summary.itl_ms.p50, 'the two populations differ here');
  assert.equal(pointMetrics(report).itl_p50_ms, Number(perRequest.p50!.toFixed(6)));
});

test("a point's metric is null when nothing was measured for it, never 0: TTFT without a first token, as the report counts it", () => {
  const config = parseReplayConfig(`cluster:
  workers:
    - role: aggregated
      engine: { block_size: 4, num_gpu_blocks: 16, timing: { fixed: { prefill_ms: 1, decode_ms: 1 } } }
workload:
  requests:
    - { id: a, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 0 }
`);
  const { report } = runReplay(config);
  assert.equal(report.summary.ttft_ms.count, 0, 'no request produced a token');
  // The report says so too: null, not 0, in both its statistics (report version 4).
  assert.deepEqual([report.summary.ttft_ms.p50, report.summary.itl_ms.max, report.summary.metrics.time_to_first_token_ms.p50, report.summary.metrics.inter_token_latency_ms.mean], [null, null, null, null]);
  assert.equal(report.summary.metrics.request_latency_ms.count, 1, 'E2E is measured');
  const metrics = pointMetrics(report);
  assert.equal(metrics.requests_finished, 1);
  assert.deepEqual([metrics.ttft_mean_ms, metrics.ttft_p50_ms, metrics.ttft_p99_ms, metrics.itl_p50_ms], [null, null, null, null]);
  assert.equal(metrics.e2e_p50_ms, report.summary.e2e_ms.p50, 'the request finished, so E2E is measured');
  const nothing = pointMetrics(emptyReport());
  const measuredOnly = [
    'ttft_mean_ms',
    'ttft_p50_ms',
    'ttft_p99_ms',
    'e2e_p50_ms',
    'e2e_p99_ms',
    'itl_p50_ms',
    'prefix_reuse_ratio',
    'prefix_reuse_block_ratio',
    'prefix_reuse_request_ratio',
    'prefix_ceiling_token_ratio',
    'prefix_ceiling_block_ratio',
    'prefix_ceiling_request_ratio',
    'prefix_reuse_of_ceiling_ratio',
    'router_agreement_ratio',
  ] as const;
  for (const metric of METRICS) assert.equal(nothing[metric], (measuredOnly as readonly string[]).includes(metric) ? null : 0, metric);
});

test('the CSV has one row per point and quotes what needs quoting; wall times are the only run-dependent values', () => {
  const document = documentOf(2);
  document.points[0].parameters['router.kv_event_lag_ms'] = 'a,"b"';
  const lines = sweepCsv(document).trimEnd().split('\n');
  assert.equal(lines.length, 3);
  assert.ok(lines[0].startsWith('point,router.kv_event_lag_ms,seed,clean,requests_finished,'));
  assert.ok(lines[0].endsWith(',digest,wall_ms'));
  assert.ok(lines[1].startsWith('0,"a,""b""",1,true,0,1,'));
  assert.deepEqual(withoutWallTimes(document).points.map((p) => p.wall_ms), [0, 0]);
});

test('one chart per metric and varied parameter, none against the seed: the seeds fold into a mean line and a lowest-to-highest band; same document, same SVG', async () => {
  const document = documentOf(4);
  const charts = sweepCharts(document);
  assert.equal(charts.length, CHARTED_METRICS.length, 'against the lag only');
  assert.ok(!charts.some((chart) => chart.metric.startsWith('prefix_ceiling_')), 'the ceilings are the trace\'s own: no chart');
  assert.ok(charts.every((chart) => chart.parameter !== 'seed' && chart.series !== 'seed'), 'no chart against the seed, no line per seed');
  const lagChart = charts.find((chart) => chart.parameter === 'router.kv_event_lag_ms' && chart.metric === 'ttft_p99_ms')!;
  assert.equal(lagChart.series, null);
  // Points 0 and 2 have lag 0 (seeds 1 and 2), points 1 and 3 lag 10; a point's metric m is 10 × index + m.
  const m = METRICS.indexOf('ttft_p99_ms');
  assert.deepEqual(bandRows(document, lagChart), [
    { x: '0', series: 'all', mean: 10 + m, min: m, max: 20 + m, runs: 2 },
    { x: '10', series: 'all', mean: 20 + m, min: 10 + m, max: 30 + m, runs: 2 },
  ]);
  const spec = chartSpec(document, lagChart) as { width: number; data: { values: unknown[] }; title: { subtitle?: string }; layer: { mark: { type: string } }[] };
  assert.equal(spec.data.values.length, 2);
  assert.deepEqual(spec.layer.map((layer) => layer.mark.type), ['area', 'line']);
  assert.equal(spec.title.subtitle, 'line: mean over seed; band: lowest to highest');
  const [a, b] = [await renderChart(document, lagChart), await renderChart({ ...document, points: document.points.map((p) => ({ ...p, wall_ms: 1 })) }, lagChart)];
  assert.match(a, /^<svg/);
  assert.equal(a, b);
  assert.ok(a.includes('router.kv_event_lag_ms'));
  assert.ok(Number(/^<svg[^>]* width="(\d+)"/.exec(a)![1]) <= 600, 'two charts side by side fit a 1,280 px page');
  const html = sweepHtml(document, charts);
  assert.equal((html.match(/<img /g) ?? []).length, charts.length);
  assert.match(html, /body\{[^}]*max-width:1280px/);
  assert.match(html, /mean over the seeds as its line and their lowest to highest value as a band/);
  assert.ok(!html.includes('wall_ms') && !html.includes('>100<'), 'the page never shows wall times');
});

test('a sweep of seeds alone has no chart and says why; one run per value draws a line without a band', () => {
  const seedsOnly = documentOf(4);
  seedsOnly.values['router.kv_event_lag_ms'] = [0];
  for (const point of seedsOnly.points) point.parameters['router.kv_event_lag_ms'] = 0;
  assert.deepEqual(sweepCharts(seedsOnly), []);
  assert.match(sweepHtml(seedsOnly, []), /Only the seed varies, so there is nothing to chart against; the table below gives each run\./);
  const oneSeed = documentOf(2);
  const chart = sweepCharts(oneSeed).find((c) => c.metric === 'ttft_p99_ms')!;
  const spec = chartSpec(oneSeed, chart) as { title: { subtitle?: string }; layer: { mark: { type: string } }[] };
  assert.deepEqual(spec.layer.map((layer) => layer.mark.type), ['line']);
  assert.equal(spec.title.subtitle, undefined);
  assert.doesNotMatch(sweepHtml(oneSeed, sweepCharts(oneSeed)), /as a band/);
});

test('two varied parameters whose charts would have one file name are refused, naming both', () => {
  const colliding = { parameters: ['workload.prefixes.a/b', 'workload.prefixes.a_b'], values: { 'workload.prefixes.a/b': [4, 8], 'workload.prefixes.a_b': [12, 16] }, metrics: [...METRICS] };
  assert.throws(() => sweepCharts(colliding), { name: 'SweepError', message: /^workload\.prefixes\.a\/b and workload\.prefixes\.a_b would have charts of one file name \(<metric>--workload_prefixes_a_b\.svg\)/ });
  assert.equal(sweepCharts({ ...colliding, values: { ...colliding.values, 'workload.prefixes.a_b': [12] } }).length, CHARTED_METRICS.length, 'a parameter with one value has no chart, so no clash');
});

test('--jobs: up to four worker processes per core (each about 100 MB), never 1,024 on two cores; the default is the core count', () => {
  assert.equal(parseJobs(undefined, 2), 2);
  assert.equal(parseJobs('8', 2), 8);
  assert.throws(() => parseJobs('9', 2), /^Error: --jobs 9: expected a whole number of worker processes from 1 to 8 \(4 per core of the 2 here; each is a process of about 100 MB\)$/);
  assert.throws(() => parseJobs('1024', 2), /from 1 to 8/);
  assert.equal(parseJobs('1024', 512), 1024, 'at most 1,024 on any machine');
  assert.throws(() => parseJobs('0', 2), /from 1 to 8/);
});

test('a field has one spelling in a sweep: an index with leading zeros or after a dot is no field path (it let one field be varied twice)', () => {
  assert.deepEqual(parseFieldPath('cluster.workers[0].engine.num_gpu_blocks'), ['cluster', 'workers', 0, 'engine', 'num_gpu_blocks']);
  assert.deepEqual(parseFieldPath('workload.requests[10].prompt[1]'), ['workload', 'requests', 10, 'prompt', 1]);
  for (const path of ['cluster.workers[00].replicas', 'cluster.workers.[0].replicas', 'router.', 'a..b', '[0]', 'a[0]b']) {
    assert.throws(() => parseFieldPath(path), /is not a field path/, path);
  }
});

test("how a sweep's runs went says which points had requests fail: a clean run may have every request fail for want of G1", () => {
  const point = (index: number, clean: boolean, failed: number, finished: number) => ({ index, clean, metrics: { requests_failed: failed, requests_finished: finished } as PointRecord['metrics'] });
  assert.equal(runsText([point(0, true, 0, 4), point(1, true, 0, 4)]), 'every run clean');
  assert.equal(runsText([point(0, true, 4, 0), point(1, true, 0, 4)]), 'every run clean; 1 point(s) with failed requests (point 0: 4 failed, 0 finished)');
  assert.equal(runsText([point(0, false, 0, 3), point(1, true, 1, 3)]), '1 run(s) not clean; 1 point(s) with failed requests (point 1: 1 failed, 3 finished)');
});

test('a merge refuses shard points labelled alike (an edit moved one), and counts that are negative or missing; a sweep file refuses a value given twice', () => {
  const shards = [1, 2].map((index) => ({ file: `shard-${index}.json`, document: documentOf(4, { index, count: 2 }) }));
  const relabelled = structuredClone(shards);
  relabelled[1].document.points[0].parameters = { ...relabelled[0].document.points[0].parameters };
  assert.throws(() => mergeShards(relabelled), /^SweepError: points 0 and 1 have the same parameters \(\[0,1\]\); the file is damaged$/);
  const text = sweepJsonText(documentOf(4, { index: 1, count: 2 }));
  for (const [value, message] of [[-3, /requests_finished: Too small/], [-3.5, /requests_finished: .*expected int/], [null, /requests_finished: .*received null/], [1.5, /requests_finished: .*expected int/]] as const) {
    const damaged = JSON.parse(text);
    damaged.points[0].metrics.requests_finished = value;
    assert.throws(() => parseSweepDocument(JSON.stringify(damaged), 's.json'), message, String(value));
  }
  assert.throws(() => parseSweepDocument(text.replace('"prefix_reuse_ratio": 0.5', '"prefix_reuse_ratio": 1.5'), 's.json'), /prefix_reuse_ratio: Too big/);
  assert.throws(() => expandSweep(parseSweepFile('base: b.yaml\nseeds: [7, 7]\n', 'sw.yaml'), {}, 'sw.yaml'), /^SweepError: sw\.yaml: seeds: 7 is given twice; give each value once$/);
  assert.throws(() => expandSweep(parseSweepFile('base: b.yaml\ngrid: { router.kv_event_lag_ms: [0, 5, 0] }\n', 'sw.yaml'), {}, 'sw.yaml'), /grid\.router\.kv_event_lag_ms: 0 is given twice/);
});

test('a swept value that is a list, a mapping or not finite says what a value may be; a shard count past the points limit says so', () => {
  for (const grid of ['{ router: [{ policy: kv }] }', '{ router.kv_event_lag_ms: [.inf] }', '{ router.kv_event_lag_ms: [[1, 2]] }']) {
    assert.throws(() => parseSweepFile(`base: b.yaml\ngrid: ${grid}\n`, 's.yaml'), /: a swept value is a finite number, a string, true, false or null \(not a list, a mapping, \.inf or \.nan\)$/, grid);
  }
  assert.throws(() => parseShard('1/100001'), /^SweepError: --shard 1\/100001: 100,001 shards, above the limit of 100,000 \(a sweep's points\)$/);
});

test('a chart leaves points with nothing measured out of its lines but keeps their value on the x axis, and says how many it left out', async () => {
  const document = documentOf(4);
  for (const point of document.points) if (point.parameters['router.kv_event_lag_ms'] === 10) point.metrics.ttft_p99_ms = null;
  const chart = sweepCharts(document).find((c) => c.parameter === 'router.kv_event_lag_ms' && c.metric === 'ttft_p99_ms')!;
  const spec = chartSpec(document, chart) as { data: { values: unknown[] }; title: { subtitle?: string }; encoding: { x: { scale: { domain: string[] } } } };
  assert.equal(spec.data.values.length, 1, 'the two runs at lag 0, folded');
  assert.equal(spec.title.subtitle, 'line: mean over seed; band: lowest to highest; 2 point(s) with nothing measured left out');
  assert.deepEqual(spec.encoding.x.scale.domain, ['0', '10']);
  assert.ok((await renderChart(document, chart)).includes('>10<'), 'the value with nothing measured is still on the axis');
});

test('a YAML merge key in a sweep file is named at its line, not read as a field', () => {
  assert.throws(() => parseSweepFile('base: b.yaml\ngrid:\n  <<: { router.kv_event_lag_ms: [0, 5] }\n', 'sw.yaml'), /^SweepError: sw\.yaml: line 3, column 3: a YAML merge key \(<<\) is not read \(kvqual reads YAML 1\.2\); write the fields out$/);
  assert.doesNotThrow(() => parseSweepFile('base: b.yaml\ngrid: { "<<": [1] }\n', 'sw.yaml'), 'a quoted "<<" is a key like any other (then refused as a field path elsewhere)');
});
