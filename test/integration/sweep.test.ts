// `kvqual sweep` end to end, in separate processes: a sweep run whole and as 3 shards (each its
// own process, run at the same time) then merged gives the same sweep.json and sweep.csv apart
// from wall times, and byte-identical charts and HTML; a bad point, a missing shard or a repeated
// one exits 2 with one line and leaves nothing behind; without a terminal, progress is plain lines;
// a point whose replay ends with a request that never ended (a test double preloaded into the
// worker processes) makes the sweep exit 1, naming the point, with every result still written; a
// second sweep with other parameters into the same folder removes the first one's charts (only
// the chart files a sweep writes); a point with a request spinning on preemption is said as it
// runs, naming the point.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../support/paths';
import { runCliAsync } from '../../src/cli/main';

const BIN = path.join(ROOT, 'bin', 'kvqual.js');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function kvqual(cwd: string, ...args: string[]): Run {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `kvqual ARGS` from `cwd` in this process (runCliAsync with an injected io): for refusals where no process is what is tested. */
async function kvqualInProcess(cwd: string, ...args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const status = await runCliAsync(args, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd });
  return { status, stdout, stderr };
}

function kvqualAsync(cwd: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function sweepFolder(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-sweep-'));
  fs.copyFileSync(path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml'), path.join(dir, 'base.yaml'));
  fs.writeFileSync(
    path.join(dir, 'sweep.yaml'),
    `base: base.yaml
grid:
  router.kv_event_lag_ms: [0, 3, 20]
zip:
  - router.host_cache_hit_weight: [0.5, 1]
    cluster.workers[0].host_offload.num_host_blocks: [4, 16]
seeds: [1893, 7]
`,
  );
  return dir;
}

const withoutWall = (json: string) => json.replace(/"wall_ms": \d+/g, '"wall_ms": 0');
const csvWithoutWall = (csv: string) => csv.split('\n').map((line) => line.replace(/,[^,]*$/, '')).join('\n');

function listing(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

test('3 shards in separate processes, merged, give what the unsharded sweep gives (apart from wall times)', async () => {
  const dir = sweepFolder();
  const whole = kvqual(dir, 'sweep', 'sweep.yaml', '--out', 'whole', '--jobs', '2');
  assert.equal(whole.status, 0, whole.stderr);
  assert.match(whole.stdout, /^sweep: 12 point\(s\) in [\d.]+ s, every run clean; written to whole\//);
  assert.match(whole.stderr, /^sweep: 12\/12 points \([\d.]+ s\); point \d+ \(.*\) clean, \d+ ms$/m, 'plain progress lines without a terminal');
  const shards = await Promise.all([1, 2, 3].map((i) => kvqualAsync(dir, 'sweep', 'sweep.yaml', '--shard', `${i}/3`, '--out', 'shards', '--jobs', '1')));
  for (const shard of shards) assert.equal(shard.status, 0, shard.stderr);
  assert.deepEqual(listing(path.join(dir, 'shards')), ['shard-1-of-3.json', 'shard-2-of-3.json', 'shard-3-of-3.json']);
  const shardPoints = [1, 2, 3].map((i) => JSON.parse(fs.readFileSync(path.join(dir, 'shards', `shard-${i}-of-3.json`), 'utf8')).points.map((p: { index: number }) => p.index));
  assert.deepEqual(shardPoints, [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]]);
  const merge = kvqual(dir, 'sweep', 'merge', 'shards/shard-3-of-3.json', 'shards/shard-1-of-3.json', 'shards/shard-2-of-3.json', '--out', 'merged');
  assert.equal(merge.status, 0, merge.stderr);
  const files = listing(path.join(dir, 'whole'));
  assert.deepEqual(listing(path.join(dir, 'merged')), files);
  assert.ok(files.includes('sweep.html') && files.includes('sweep.csv') && files.includes('sweep.json'));
  assert.ok(files.filter((file) => file.endsWith('.svg')).length >= 15 * 4, 'charts against lag, weight, host blocks and seed');
  for (const file of files) {
    const full = path.join(dir, 'whole', file);
    if (fs.statSync(full).isDirectory()) continue;
    const [a, b] = [fs.readFileSync(full, 'utf8'), fs.readFileSync(path.join(dir, 'merged', file), 'utf8')];
    if (file === 'sweep.json') assert.equal(withoutWall(b), withoutWall(a), file);
    else if (file === 'sweep.csv') assert.equal(csvWithoutWall(b), csvWithoutWall(a), file);
    else assert.equal(b, a, file);
  }
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'whole', 'sweep.json'), 'utf8'));
  assert.equal(json.points.length, 12);
  assert.ok(json.points.every((p: { wall_ms: number }) => Number.isInteger(p.wall_ms) && p.wall_ms >= 0));
  assert.equal(new Set(json.points.map((p: { digest: string }) => p.digest)).size > 1, true, 'the points differ');

  const missing = kvqual(dir, 'sweep', 'merge', 'shards/shard-1-of-3.json', 'shards/shard-3-of-3.json', '--out', 'partial');
  assert.equal(missing.status, 2);
  assert.equal(missing.stderr, 'kvqual sweep merge: shard 2/3 missing; give every shard\'s result\n');
  const twice = kvqual(dir, 'sweep', 'merge', 'shards/shard-1-of-3.json', 'shards/shard-2-of-3.json', 'shards/shard-1-of-3.json', '--out', 'partial');
  assert.equal(twice.status, 2);
  assert.match(twice.stderr, /shard 1\/3 is given twice/);
  assert.ok(!fs.existsSync(path.join(dir, 'partial')), 'a refused merge writes nothing');
});

test('an invalid point exits 2 naming the point and the field, before anything runs or is created', async () => {
  const dir = sweepFolder();
  fs.writeFileSync(path.join(dir, 'bad.yaml'), 'base: base.yaml\ngrid:\n  router.kv_event_lag_ms: [0, 10]\n  cluster.workers[0].engine.max_num_seqs: [4, 0]\n');
  const run = kvqual(dir, 'sweep', 'bad.yaml', '--out', 'out');
  assert.equal(run.status, 2);
  assert.match(run.stderr, /^kvqual sweep: bad\.yaml: point 1 of 4 \(router\.kv_event_lag_ms=0, cluster\.workers\[0\]\.engine\.max_num_seqs=0\): cluster\.workers\[0\]\.engine\.max_num_seqs: .*\(1 more point\(s\) are invalid too\)\n$/);
  assert.equal(run.stdout, '');
  assert.ok(!fs.existsSync(path.join(dir, 'out')));
  const typo = await kvqualInProcess(dir, 'sweep', 'sweep.yaml', '--jbos', '2');
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /unknown option '--jbos'; did you mean --jobs\?/);
  const jobs = await kvqualInProcess(dir, 'sweep', 'sweep.yaml', '--jobs', '0');
  assert.equal(jobs.status, 2);
  assert.match(jobs.stderr, /--jobs 0: expected a whole number/);
});

test('on a terminal, progress is a bar with points done and the ETA, not a line per point', (t) => {
  if (!fs.existsSync('/usr/bin/script')) {
    t.skip('util-linux script (a pseudo-terminal) is not installed');
    return;
  }
  const dir = sweepFolder();
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} sweep sweep.yaml --out out --jobs 2`;
  const run = spawnSync('/usr/bin/script', ['-qec', command, '/dev/null'], { cwd: dir, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /sweep \[[^\]]*\] 12\/12 points \| \d+s elapsed \| ETA \d+s/);
  assert.match(run.stdout, /sweep \[[^\]]*\] \d+\/12 points \| \d+s elapsed \| ETA \d+s/);
  assert.doesNotMatch(run.stdout, /sweep: \d+\/12 points \(/, 'no plain progress lines on a terminal');
  assert.match(run.stdout, /sweep: 12 point\(s\) in [\d.]+ s, every run clean/);
});

test('a point whose replay never ends a request exits 1, naming the point, and still writes every result', () => {
  const dir = sweepFolder();
  const double = path.join(ROOT, 'test', 'fixtures', 'sweep-stall', 'stall-at-lag-20.js');
  const result = spawnSync(process.execPath, ['--require', double, BIN, 'sweep', 'sweep.yaml', '--out', 'out', '--jobs', '2'], { cwd: dir, encoding: 'utf8' });
  assert.equal(result.status, 1, result.stderr);
  // Points 8..11 have lag 20 (the grid's first dimension varies slowest: 3 lags × 2 zipped × 2 seeds).
  assert.match(result.stdout, /^sweep: 12 point\(s\) in [\d.]+ s, 4 not clean; written to out\/ \(sweep\.json, sweep\.csv, sweep\.html, charts\/\)\n {2}point 8 NOT CLEAN: 1 request\(s\) never ended \(a simulator defect\)\n/);
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'out', 'sweep.json'), 'utf8'));
  assert.deepEqual(
    json.points.filter((p: { clean: boolean }) => !p.clean).map((p: { index: number }) => p.index),
    [8, 9, 10, 11],
  );
  assert.ok(json.points.filter((p: { clean: boolean }) => p.clean).length === 8, 'the other points ran clean');
  assert.ok(fs.existsSync(path.join(dir, 'out', 'sweep.csv')) && fs.existsSync(path.join(dir, 'out', 'sweep.html')));
  // Without the double the same sweep is clean: the next test runs it so (status 0).
});

test('a sweep with other parameters into the same folder removes the charts of the earlier one, and nothing else', () => {
  const dir = sweepFolder();
  const first = kvqual(dir, 'sweep', 'sweep.yaml', '--out', 'out', '--jobs', '2');
  assert.equal(first.status, 0, first.stderr);
  const charts = path.join(dir, 'out', 'charts');
  const before = fs.readdirSync(charts);
  assert.ok(before.some((name) => name.endsWith('--router_host_cache_hit_weight.svg')), 'the first sweep charts against the zipped weight');
  fs.writeFileSync(path.join(charts, 'notes.txt'), 'mine');
  fs.writeFileSync(path.join(charts, 'my--own.svg'), '<svg/>');
  fs.writeFileSync(path.join(dir, 'lag-only.yaml'), 'base: base.yaml\ngrid:\n  router.kv_event_lag_ms: [0, 3]\n  router.host_cache_hit_weight: [0.5, 1]\n');
  const second = kvqual(dir, 'sweep', 'lag-only.yaml', '--out', 'out', '--jobs', '2');
  assert.equal(second.status, 0, second.stderr);
  const after = fs.readdirSync(charts).sort();
  const written = after.filter((name) => name !== 'notes.txt' && name !== 'my--own.svg');
  assert.ok(written.length > 0);
  assert.ok(written.every((name) => name.endsWith('--router_kv_event_lag_ms.svg') || name.endsWith('--router_host_cache_hit_weight.svg')), `only the second sweep's charts: ${written.join(', ')}`);
  assert.ok(!after.some((name) => name.endsWith('--seed.svg') || name.endsWith('--cluster_workers_0_host_offload_num_host_blocks.svg')), 'the charts against the parameters only the first sweep varied are gone');
  assert.ok(after.includes('notes.txt') && after.includes('my--own.svg'), "files the sweep does not write are left alone");
  const html = fs.readFileSync(path.join(dir, 'out', 'sweep.html'), 'utf8');
  for (const name of written) assert.ok(html.includes(name), `sweep.html shows ${name}`);
});

test('a point with a request spinning on preemption is said while it runs, naming the point, and the sweep goes on to its end', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-sweep-spin-'));
  // The fuzzer's preemption spin with a 90 times faster restore: 13,890 preemptions of one request per point.
  const fixture = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'fuzz', 'preemption-spin.yaml'), 'utf8');
  fs.writeFileSync(path.join(dir, 'spin.yaml'), fixture.replace('shared_h2d_bandwidth_gbps: 0.01', 'shared_h2d_bandwidth_gbps: 0.9'));
  fs.writeFileSync(path.join(dir, 'sweep.yaml'), 'base: spin.yaml\ngrid:\n  router.kv_event_lag_ms: [0, 1]\n');
  const run = await kvqualInProcess(dir, 'sweep', 'sweep.yaml', '--out', 'out', '--jobs', '1');
  assert.equal(run.status, 0, run.stderr);
  const warnings = run.stderr.split('\n').filter((line) => line.includes('warning'));
  assert.equal(warnings.length, 2, run.stderr);
  warnings.forEach((line, point) =>
    assert.match(line, new RegExp(`^kvqual sweep: warning: point ${point} \\(router\\.kv_event_lag_ms=${point}\\): request r4 on worker 0 dp rank 1 has been preempted and readmitted 10,000 times by [\\d.]+ ms of virtual time: `)),
  );
  assert.ok(fs.existsSync(path.join(dir, 'out', 'sweep.json')));
});
