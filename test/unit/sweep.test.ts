// Tests of the sweep model: expanding a sweep file into ordered points (grid, zip, seeds), setting
// field paths, naming the invalid point and field, stable shard assignment, merging shards (a
// missing, repeated or foreign shard is an error), the CSV and the charts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { expandSweep, parseFieldPath, parseShard, parseSweepFile, setFieldPath, shardOfPoint, SweepError, sweepDigest } from '../../src/sweep/spec';
import { mergeShards, METRICS, sweepCsv, SWEEP_FORMAT, withoutWallTimes, type SweepDocument } from '../../src/sweep/results';
import { chartSpec, renderChart, sweepCharts, sweepHtml } from '../../src/sweep/charts';
import { ROOT } from '../support/paths';

const BASE = parseDocument(fs.readFileSync(path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml'), 'utf8')).toJS() as unknown;

function sweepOf(yaml: string) {
  return expandSweep(parseSweepFile(yaml, 's.yaml'), BASE, 's.yaml');
}

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
    parameters: { 'router.kv_event_lag_ms': index % 2 === 0 ? 0 : 10, seed: index < points / 2 ? 1 : 2 },
    clean: true,
    problem: null,
    metrics: Object.fromEntries(METRICS.map((metric, m) => [metric, index * 10 + m])) as SweepDocument['points'][number]['metrics'],
    digest: `sha256:${index}`,
    wall_ms: 100 + index,
  }));
  return {
    format: SWEEP_FORMAT,
    sweep_digest: 'abc',
    base: 'b.yaml',
    parameters: ['router.kv_event_lag_ms', 'seed'],
    values: { 'router.kv_event_lag_ms': [0, 10], seed: [1, 2] },
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

test('one chart per metric and varied parameter, one line per value of the other; same document, same SVG', async () => {
  const document = documentOf(4);
  const charts = sweepCharts(document);
  assert.equal(charts.length, METRICS.length * 2);
  const lagChart = charts.find((chart) => chart.parameter === 'router.kv_event_lag_ms' && chart.metric === 'ttft_p99_ms')!;
  assert.equal(lagChart.series, null, 'seed is never the series of a chart');
  const seedChart = charts.find((chart) => chart.parameter === 'seed')!;
  assert.equal(seedChart.series, 'router.kv_event_lag_ms');
  const spec = chartSpec(document, lagChart) as { data: { values: unknown[] }; title: { subtitle?: string } };
  assert.equal(spec.data.values.length, 4);
  assert.equal(spec.title.subtitle, 'mean over seed');
  const [a, b] = [await renderChart(document, seedChart), await renderChart({ ...document, points: document.points.map((p) => ({ ...p, wall_ms: 1 })) }, seedChart)];
  assert.match(a, /^<svg/);
  assert.equal(a, b);
  assert.ok(a.includes('router.kv_event_lag_ms'));
  const html = sweepHtml(document, charts);
  assert.equal((html.match(/<img /g) ?? []).length, charts.length);
  assert.ok(!html.includes('wall_ms') && !html.includes('>100<'), 'the page never shows wall times');
});
