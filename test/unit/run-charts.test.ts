// `kvqual replay --plot DIR`: six SVG charts of one run, the same bytes for the same run, written
// with the other outputs (all or none); a folder that does not exist is refused before the run.
// Queue depth is the most requests waiting at once in each time bucket, so a short spike shows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCliAsync } from '../../src/cli/main';
import type { CliIo } from '../../src/cli/io';
import { queueRows, renderRunChart, runCharts } from '../../src/report/runCharts';
import type { RequestRecord } from '../../src/report/report';
import { onDemandArray } from '../../src/report/onDemand';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { ROOT } from '../support/paths';

const CONFIG = 'examples/configs/two-replicas-private.yaml';

function io(): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), cwd: ROOT }, out, err };
}

test('the chart data: CDFs rise to 1 over finished requests, throughput counts every finished request once', () => {
  const report = runReplay(parseReplayConfig(fs.readFileSync(path.join(ROOT, CONFIG), 'utf8'), CONFIG)).report;
  const charts = runCharts(report);
  assert.deepEqual(charts.map((c) => c.file), ['ttft-cdf.svg', 'itl-cdf.svg', 'throughput.svg', 'queue-depth.svg', 'g1-reuse.svg', 'g2-reuse.svg']);
  const rows = (file: string) => (charts.find((c) => c.file === file)!.spec as { data: { values: Record<string, number>[] } }).data.values;
  const ttft = rows('ttft-cdf.svg');
  assert.equal(ttft.length, report.summary.requests.finished);
  assert.equal(ttft.at(-1)!.fraction, 1);
  assert.ok(ttft.every((row, i) => i === 0 || (row.value >= ttft[i - 1].value && row.fraction > ttft[i - 1].fraction)));
  const throughput = rows('throughput.svg');
  const width_s = throughput.length > 1 ? throughput[1].time_s - throughput[0].time_s : 1;
  const counted = throughput.reduce((sum, row) => sum + row.requests_per_s * width_s, 0);
  assert.ok(Math.abs(counted - report.summary.requests.finished) < 1e-9, `${counted} requests counted`);
  const restored = rows('g2-reuse.svg').reduce((sum, row) => sum + row.tokens, 0);
  assert.equal(restored, report.summary.tokens.host_reused);
});

test('--plot writes six SVG charts, the same bytes twice; a missing folder is refused before the run and nothing is written', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-plot-'));
  const first = path.join(dir, 'one');
  const second = path.join(dir, 'two');
  fs.mkdirSync(first);
  fs.mkdirSync(second);
  for (const folder of [first, second]) {
    const run = io();
    assert.equal(await runCliAsync(['replay', CONFIG, '--plot', folder], run.io), 0, run.err.join(''));
  }
  const files = fs.readdirSync(first).sort();
  assert.deepEqual(files, ['g1-reuse.svg', 'g2-reuse.svg', 'itl-cdf.svg', 'queue-depth.svg', 'throughput.svg', 'ttft-cdf.svg']);
  for (const file of files) {
    const svg = fs.readFileSync(path.join(first, file), 'utf8');
    assert.match(svg, /^<svg[\s\S]*<\/svg>$/);
    assert.equal(svg, fs.readFileSync(path.join(second, file), 'utf8'), `${file} is the same twice`);
  }
  const missing = io();
  const report = path.join(dir, 'report.json');
  assert.equal(await runCliAsync(['replay', CONFIG, '--out', report, '--plot', path.join(dir, 'nowhere')], missing.io), 2);
  assert.match(missing.err.join(''), /--plot .*nowhere/);
  assert.equal(fs.existsSync(report), false, 'no report either');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('per-session output throughput: a session\'s output tokens over its span, one value per session', () => {
  const report = runReplay(parseReplayConfig(fs.readFileSync(path.join(ROOT, CONFIG), 'utf8'), CONFIG)).report;
  const perSession = new Map<string, { tokens: number; start: number; end: number }>();
  for (const r of report.per_request.filter((x) => x.status === 'finished')) {
    const key = r.session_id ?? `request:${r.request_id}`;
    const s = perSession.get(key) ?? { tokens: 0, start: Infinity, end: -Infinity };
    s.tokens += r.output_length;
    s.start = Math.min(s.start, r.arrival_ms);
    s.end = Math.max(s.end, r.last_token_ms!);
    perSession.set(key, s);
  }
  const expected = [...perSession.values()].map((s) => s.tokens / ((s.end - s.start) / 1000)).sort((a, b) => a - b);
  const stats = report.summary.metrics!.output_token_throughput_per_session;
  assert.equal(stats.count ?? expected.length, expected.length);
  assert.ok(Math.abs(stats.max! - expected.at(-1)!) < 1e-6, `max ${stats.max} vs ${expected.at(-1)}`);
  assert.ok(Math.abs(stats.min! - expected[0]) < 1e-6, `min ${stats.min} vs ${expected[0]}`);
});

test('the charts read each of the report\'s records once, however many buckets and workers they draw', () => {
  const report = runReplay(parseReplayConfig(fs.readFileSync(path.join(ROOT, CONFIG), 'utf8'), CONFIG)).report;
  let made = 0;
  const counted = { ...report, per_request: onDemandArray(report.per_request.length, (i) => (made++, report.per_request[i])) };
  const charts = runCharts(counted);
  assert.equal(charts.length, 6);
  assert.equal(made, report.per_request.length, 'a record made again for each bucket and worker');
  assert.deepEqual(charts, runCharts(report));
});

test('throughput counts a request that finishes as the run ends and one that wanted no output; a chart with nothing to draw says so (no NaN)', async () => {
  const config = parseReplayConfig(`cluster:
  workers:
    - role: aggregated
      engine: { block_size: 4, num_gpu_blocks: 16, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }
workload:
  prefixes: { p: 8 }
  requests:
    - { id: first, arrival_ms: 0, prompt: [{ prefix: p }], output_length: 0 }
    - { id: again, arrival_ms: 5, prompt: [{ prefix: p }], output_length: 0 }
    - { id: last, arrival_ms: 6, prompt: [{ tokens: 10 }], output_length: 1 }
`, 'edge.yaml');
  const report = runReplay(config).report;
  assert.equal(report.summary.requests.finished, 3);
  assert.equal(report.summary.virtual_duration_ms, 7, '"last" finishes as the run ends');
  const charts = runCharts(report);
  const rows = (file: string) => (charts.find((c) => c.file === file)!.spec as { data: { values: Record<string, number>[] } }).data.values;
  const throughput = rows('throughput.svg');
  const width_s = throughput[1].time_s - throughput[0].time_s;
  assert.equal(Math.round(throughput.reduce((sum, row) => sum + row.requests_per_s * width_s, 0)), 3, 'every finished request, once');
  const itl = charts.find((c) => c.file === 'itl-cdf.svg')!;
  assert.equal(rows('itl-cdf.svg').length, 0, 'no request produced two tokens');
  assert.match(String(itl.spec.title), /: nothing measured$/);
  const svg = await renderRunChart(itl);
  assert.doesNotMatch(svg, /NaN/);
});

/** A request record with only what the queue-depth chart reads. */
const waited = (arrival_ms: number, first_admission_ms: number | null, status = 'finished') => ({ arrival_ms, first_admission_ms, status }) as RequestRecord;

test('queue depth is the most requests waiting at once in each bucket: a 2 ms spike inside a 20 ms bucket shows', () => {
  // A 1,000 ms run (50 buckets of 20 ms): one request every 100 ms admitted as it arrives, and three arriving at 505 ms admitted by 507 ms.
  const steady = Array.from({ length: 10 }, (_, i) => waited(i * 100, i * 100));
  const spike = [waited(505, 505.5), waited(505, 506), waited(505, 507)];
  const rows = queueRows([...steady, ...spike], 1000);
  assert.equal(rows.length, 51, 'a row per bucket start and one at the end');
  assert.deepEqual(rows.filter((row) => row.waiting > 0), [{ time_s: 0.5, waiting: 3 }], 'the spike in the bucket from 500 ms, nothing elsewhere');
  // Sampled at each bucket's start, as the chart once was, the spike was invisible.
  const sampled = rows.map((row) => [...steady, ...spike].filter((r) => r.arrival_ms <= row.time_s * 1000 && r.first_admission_ms! > row.time_s * 1000).length);
  assert.ok(sampled.every((count) => count === 0));
});

test('queue depth: a wait across buckets counts in each; admitted as it arrives never waits; never admitted waits to the end unless it failed or was skipped', () => {
  const rows = queueRows([waited(10, 65), waited(30, 30), waited(70, null), waited(70, null, 'failed'), waited(70, null, 'skipped')], 100);
  // 100 ms: 50 buckets of 2 ms. The first request waits from the bucket at 10 ms to the one at 64 ms; the unadmitted one from 70 ms on.
  const waitingAt = (ms: number) => rows.find((row) => Math.abs(row.time_s * 1000 - ms) < 1e-9)!.waiting;
  assert.deepEqual([8, 10, 30, 64, 66, 68, 70, 98, 100].map(waitingAt), [0, 1, 1, 1, 0, 0, 1, 1, 1]);
});

test('queue depth on a run: every bucket holds the most waiting at any instant in it (checked instant by instant)', () => {
  const requests = [
    ...Array.from({ length: 8 }, (_, i) => `    - { id: s${i}, arrival_ms: ${i * 120}, prompt: [{ tokens: 8 }], output_length: 2 }`),
    ...Array.from({ length: 5 }, (_, i) => `    - { id: burst${i}, arrival_ms: 503, prompt: [{ tokens: 8 }], output_length: 3 }`),
  ].join('\n');
  const config = `cluster:\n  workers:\n    - role: aggregated\n      engine: { block_size: 4, num_gpu_blocks: 64, max_num_seqs: 1, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }\nworkload:\n  requests:\n${requests}\n`;
  const report = runReplay(parseReplayConfig(config, 'burst.yaml')).report;
  const records = [...report.per_request];
  const end = report.summary.virtual_duration_ms;
  const rows = queueRows(records, end);
  const width = rows[1].time_s * 1000;
  const instants = [...new Set(records.flatMap((r) => [r.arrival_ms, r.first_admission_ms ?? r.arrival_ms]))];
  const waitingAt = (at: number) => records.filter((r) => r.arrival_ms <= at && r.first_admission_ms! > at).length;
  for (const [i, row] of rows.slice(0, -1).entries()) {
    const inBucket = instants.filter((at) => Math.min(Math.floor(at / width), rows.length - 2) === i);
    const before = i === 0 ? 0 : waitingAt(row.time_s * 1000 - 1e-9);
    assert.equal(row.waiting, Math.max(before, ...inBucket.map(waitingAt)), `bucket ${i}`);
  }
  assert.ok(Math.max(...rows.map((row) => row.waiting)) >= 4, 'the burst shows: four wait while the first runs');
  const spec = runCharts(report).find((chart) => chart.file === 'queue-depth.svg')!.spec as { title: string };
  assert.match(spec.title, /the most at once in each of [\d.]+ ms buckets/);
});
