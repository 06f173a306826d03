// `kvqual sweep` end to end (in a process of its own where the process is what is tested, else in
// this one; its workers are processes either way): a sweep run whole and as 3 shards (each its
// own process, run at the same time) then merged gives the same sweep.json and sweep.csv apart
// from wall times, and byte-identical charts and HTML; a bad point, a missing shard or a repeated
// one exits 2 with one line and leaves nothing behind; without a terminal, progress is plain lines;
// a point whose replay ends with a request that never ended (a test double preloaded into the
// worker processes) makes the sweep exit 1, naming the point, with every result still written; a
// second sweep with other parameters into the same folder removes the first one's charts (only
// the chart files a sweep writes); a point with a request spinning on preemption is said as it
// runs, naming the point; a sweep over a config whose pass times are in a CSV table (the
// repository's example among them) gives each point the digest `kvqual replay` gives; an output
// that would overwrite an input (the sweep file, the base config, a table, a trace, a shard result)
// is refused before anything runs. The charts: none against the seed (its runs fold into each
// chart's mean line and band), each at most 600 px wide, and sweep.html at most 1,280 px wide in Chromium.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../support/paths';
import { scratchFolder } from '../support/scratch';
import { kvqualInProcessAsync, kvqualProcessAsync } from '../support/cli';

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

/** `kvqual ARGS` from `cwd` in this process: where no process is what is tested. */
const kvqualInProcess = (cwd: string, ...args: string[]): Promise<Run> => kvqualInProcessAsync(args, cwd);

const kvqualAsync = (cwd: string, ...args: string[]): Promise<Run> => kvqualProcessAsync(args, cwd);

const CHROMIUM = '/usr/bin/chromium';

/** How wide a page is in Chromium: the document's scroll width in a 1,280 px window, and its body's width in a 1,920 px one (one page, resized). */
async function pageWidths(file: string): Promise<{ at1280: number; bodyAt1920: number }> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: true });
    await page.goto(`file://${file}`);
    const at1280 = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    await page.setViewportSize({ width: 1920, height: 800 });
    return { at1280, bodyAt1920: (await page.evaluate('document.body.getBoundingClientRect().width')) as number };
  } finally {
    await browser.close();
  }
}

function sweepFolder(): string {
  const dir = scratchFolder('sweep');
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
  // The lags alone, with four seeds: 12 points too, its charts against the lag only (18, not 54).
  fs.writeFileSync(path.join(dir, 'lags.yaml'), 'base: base.yaml\ngrid:\n  router.kv_event_lag_ms: [0, 3, 20]\nseeds: [1893, 7, 11, 13]\n');
  return dir;
}

const withoutWall = (json: string) => json.replace(/"wall_ms": \d+/g, '"wall_ms": 0');
const csvWithoutWall = (csv: string) => csv.split('\n').map((line) => line.replace(/,[^,]*$/, '')).join('\n');

function listing(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

test('3 shards in separate processes, merged, give what the unsharded sweep gives (apart from wall times)', async () => {
  const dir = sweepFolder();
  // The unsharded sweep in this process (the shards' separate processes are what this test is about; the stalled point's test runs a whole sweep as a process).
  const whole = await kvqualInProcess(dir, 'sweep', 'sweep.yaml', '--out', 'whole', '--jobs', '2');
  assert.equal(whole.status, 0, whole.stderr);
  assert.match(whole.stdout, /^sweep: 12 point\(s\) in [\d.]+ s, every run clean; written to whole\//);
  const shards = await Promise.all([1, 2, 3].map((i) => kvqualAsync(dir, 'sweep', 'sweep.yaml', '--shard', `${i}/3`, '--out', 'shards', '--jobs', '1')));
  for (const shard of shards) assert.equal(shard.status, 0, shard.stderr);
  assert.deepEqual(listing(path.join(dir, 'shards')), ['shard-1-of-3.json', 'shard-2-of-3.json', 'shard-3-of-3.json']);
  const shardPoints = [1, 2, 3].map((i) => JSON.parse(fs.readFileSync(path.join(dir, 'shards', `shard-${i}-of-3.json`), 'utf8')).points.map((p: { index: number }) => p.index));
  assert.deepEqual(shardPoints, [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]]);
  // The merge and its refusals in this process: the shards' separate processes are what this test is about.
  const merge = await kvqualInProcess(dir, 'sweep', 'merge', 'shards/shard-3-of-3.json', 'shards/shard-1-of-3.json', 'shards/shard-2-of-3.json', '--out', 'merged');
  assert.equal(merge.status, 0, merge.stderr);
  const files = listing(path.join(dir, 'whole'));
  assert.deepEqual(listing(path.join(dir, 'merged')), files);
  assert.ok(files.includes('sweep.html') && files.includes('sweep.csv') && files.includes('sweep.json'));
  const svgs = files.filter((file) => file.endsWith('.svg'));
  assert.equal(svgs.length, 18 * 3, 'each metric but the three ceilings against the lag, the weight and the host blocks; none against the seed');
  assert.ok(!svgs.some((file) => file.startsWith('prefix_ceiling_')), 'no chart of the trace\'s own ceiling');
  assert.ok(!svgs.some((file) => file.endsWith('--seed.svg')));
  for (const file of svgs) {
    const svg = fs.readFileSync(path.join(dir, 'whole', file), 'utf8');
    assert.ok(Number(/^<svg[^>]* width="(\d+)"/.exec(svg)![1]) <= 600, `${file}: two charts side by side fit a 1,280 px page`);
  }
  assert.match(fs.readFileSync(path.join(dir, 'whole', 'charts', 'ttft_p99_ms--router_kv_event_lag_ms.svg'), 'utf8'), /line: mean over [^;<]*seed; band: lowest to highest/);
  if (fs.existsSync(CHROMIUM)) {
    const widths = await pageWidths(path.join(dir, 'whole', 'sweep.html'));
    assert.ok(widths.at1280 <= 1280, `sweep.html is ${widths.at1280} px wide in a 1,280 px window`);
    assert.ok(widths.bodyAt1920 <= 1280, `sweep.html's body is ${widths.bodyAt1920} px wide in a 1,920 px window`);
  }
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

  const missing = await kvqualInProcess(dir, 'sweep', 'merge', 'shards/shard-1-of-3.json', 'shards/shard-3-of-3.json', '--out', 'partial');
  assert.equal(missing.status, 2);
  assert.equal(missing.stderr, 'kvqual sweep merge: shard 2/3 missing; give every shard\'s result\n');
  const twice = await kvqualInProcess(dir, 'sweep', 'merge', 'shards/shard-1-of-3.json', 'shards/shard-2-of-3.json', 'shards/shard-1-of-3.json', '--out', 'partial');
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
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} sweep lags.yaml --out out --jobs 2`;
  const run = spawnSync('/usr/bin/script', ['-qec', command, '/dev/null'], { cwd: dir, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /sweep \[[^\]]*\] 12\/12 points \| \d+s elapsed \| ETA \d+s/);
  assert.match(run.stdout, /sweep \[[^\]]*\] \d+\/12 points \| \d+s elapsed \| ETA \d+s/);
  assert.doesNotMatch(run.stdout, /sweep: \d+\/12 points \(/, 'no plain progress lines on a terminal');
  assert.match(run.stdout, /sweep: 12 point\(s\) in [\d.]+ s, every run clean/);
});

/** The test doubles (test/fixtures/sweep-stall/) patch the TypeScript modules: kvqual through tsx, even where build/cli is current. */
const THROUGH_TSX = { ...process.env, KVQUAL_TSX: '1' };

test('a point whose replay never ends a request exits 1, naming the point, and still writes every result', () => {
  const dir = sweepFolder();
  const double = path.join(ROOT, 'test', 'fixtures', 'sweep-stall', 'stall-at-lag-20.js');
  const result = spawnSync(process.execPath, ['--require', double, BIN, 'sweep', 'lags.yaml', '--out', 'out', '--jobs', '1'], { cwd: dir, encoding: 'utf8', env: THROUGH_TSX });
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, /^sweep: 12\/12 points \([\d.]+ s\); point \d+ \(.*\) (clean|NOT CLEAN: .*), \d+ ms$/m, 'plain progress lines without a terminal');
  // Points 8..11 have lag 20 (the grid varies slowest, the seeds fastest: 3 lags × 4 seeds).
  assert.match(result.stdout, /^sweep: 12 point\(s\) in [\d.]+ s, 4 run\(s\) not clean; written to out\/ \(sweep\.json, sweep\.csv, sweep\.html, charts\/\)\n {2}point 8 NOT CLEAN: 1 request\(s\) never ended \(a simulator defect\)\n/);
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'out', 'sweep.json'), 'utf8'));
  assert.deepEqual(
    json.points.filter((p: { clean: boolean }) => !p.clean).map((p: { index: number }) => p.index),
    [8, 9, 10, 11],
  );
  assert.ok(json.points.filter((p: { clean: boolean }) => p.clean).length === 8, 'the other points ran clean');
  assert.ok(fs.existsSync(path.join(dir, 'out', 'sweep.csv')) && fs.existsSync(path.join(dir, 'out', 'sweep.html')));
  // Without the double the same sweep is clean: the progress bar's test runs it so (status 0).
});

test('a worker killed from outside (as by the out-of-memory killer) is named with its signal and point, exit 3, no stack, nothing written', () => {
  const dir = sweepFolder();
  const double = path.join(ROOT, 'test', 'fixtures', 'sweep-stall', 'killed-at-lag-20.js');
  const result = spawnSync(process.execPath, ['--require', double, BIN, 'sweep', 'sweep.yaml', '--out', 'out', '--jobs', '1'], { cwd: dir, encoding: 'utf8', env: THROUGH_TSX });
  assert.equal(result.status, 3, result.stderr);
  assert.match(result.stderr, /^kvqual sweep: a sweep worker process was killed by SIGKILL while it ran point 8, from outside kvqual \(out of memory, or a kill\); no result was written; with fewer --jobs each process has more memory$/m);
  assert.doesNotMatch(result.stderr, /please report|^\s+at /m);
  assert.ok(!fs.existsSync(path.join(dir, 'out', 'sweep.json')));
});

test('a sweep with other parameters into the same folder removes the charts of the earlier one, and nothing else', async () => {
  const dir = sweepFolder();
  // The first sweep varies the zipped weight and host blocks, with seeds (4 points, 36 charts).
  fs.writeFileSync(path.join(dir, 'zipped.yaml'), fs.readFileSync(path.join(dir, 'sweep.yaml'), 'utf8').replace(/grid:\n.*\n/, ''));
  const first = await kvqualInProcess(dir, 'sweep', 'zipped.yaml', '--out', 'out', '--jobs', '1');
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, /^sweep: 4 point\(s\) in /);
  const charts = path.join(dir, 'out', 'charts');
  const before = fs.readdirSync(charts);
  assert.ok(before.some((name) => name.endsWith('--router_host_cache_hit_weight.svg')), 'the first sweep charts against the zipped weight');
  fs.writeFileSync(path.join(charts, 'notes.txt'), 'mine');
  fs.writeFileSync(path.join(charts, 'my--own.svg'), '<svg/>');
  fs.writeFileSync(path.join(charts, 'ttft_p99_ms--seed.svg'), '<svg/>');
  fs.writeFileSync(path.join(dir, 'lag-only.yaml'), 'base: base.yaml\ngrid:\n  router.kv_event_lag_ms: [0, 3]\n  router.host_cache_hit_weight: [0.5, 1]\n');
  const second = await kvqualInProcess(dir, 'sweep', 'lag-only.yaml', '--out', 'out', '--jobs', '1');
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
  const dir = scratchFolder('sweep-spin');
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

/** A folder with base.yaml (one aggregated worker whose pass times are in p.csv) and the tables p.csv and q.csv. */
function tableCsvFolder(): string {
  const dir = scratchFolder('sweep-table');
  fs.writeFileSync(
    path.join(dir, 'base.yaml'),
    `cluster:
  workers:
    - role: aggregated
      engine: { block_size: 4, num_gpu_blocks: 16, timing: { table: { csv: p.csv } } }
workload:
  requests:
    - { id: a, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 2 }
    - { id: b, arrival_ms: 1, prompt: [{ tokens: 8 }], output_length: 3 }
`,
  );
  fs.writeFileSync(path.join(dir, 'p.csv'), 'pass,new_tokens,batch_size,context_tokens,ms\nprefill,512,,,15\ndecode,,1,64,5\n');
  fs.writeFileSync(path.join(dir, 'q.csv'), 'pass,new_tokens,batch_size,context_tokens,ms\nprefill,512,,,30\ndecode,,1,64,7\n');
  return dir;
}

const digestOf = (summary: string) => /digest (sha256:[0-9a-f]{64})/.exec(summary)![1];

test("a sweep over a config whose pass times are in a CSV table runs each point as kvqual replay runs that config (same digest)", async () => {
  const dir = tableCsvFolder();
  fs.writeFileSync(path.join(dir, 'lag.yaml'), 'base: base.yaml\ngrid: { router.kv_event_lag_ms: [0, 1] }\n');
  const lag = await kvqualInProcess(dir, 'sweep', 'lag.yaml', '--out', 'lag', '--jobs', '1');
  assert.equal(lag.status, 0, lag.stderr);
  fs.writeFileSync(path.join(dir, 'tables.yaml'), 'base: base.yaml\ngrid:\n  cluster.workers[0].engine.timing.table.csv: [p.csv, q.csv]\n');
  const run = await kvqualInProcess(dir, 'sweep', 'tables.yaml', '--out', 'tables', '--jobs', '1');
  assert.equal(run.status, 0, run.stderr);
  const points = JSON.parse(fs.readFileSync(path.join(dir, 'tables', 'sweep.json'), 'utf8')).points as { digest: string }[];
  const replayed = [];
  for (const table of ['p.csv', 'q.csv']) {
    fs.writeFileSync(path.join(dir, 'replayed.yaml'), fs.readFileSync(path.join(dir, 'base.yaml'), 'utf8').replace('csv: p.csv', `csv: ${table}`));
    const replay = await kvqualInProcess(dir, 'replay', 'replayed.yaml');
    assert.equal(replay.status, 0, replay.stderr);
    replayed.push(digestOf(replay.stdout));
  }
  assert.deepEqual(points.map((point) => point.digest), replayed);
  assert.notEqual(replayed[0], replayed[1], 'the two tables give two runs');
});

const SHARED_TRACE = path.join(ROOT, '..', 'shared', 'data', 'mooncake', 'conversation_trace.jsonl');

test("the repository's own table-CSV example is a sweep's base: its point gives kvqual replay's digest", { skip: !fs.existsSync(SHARED_TRACE) && 'no ../shared/data/mooncake here' }, async () => {
  const dir = scratchFolder('sweep-example');
  const example = path.join(ROOT, 'examples', 'configs', 'mooncake-conversation-table-csv.yaml');
  const sharedRoot = path.join(ROOT, '..', 'shared');
  fs.writeFileSync(path.join(dir, 'sweep.yaml'), `base: ${example}\ngrid:\n  workload.mooncake.max_requests: [5]\n`);
  const run = await kvqualInProcess(dir, 'sweep', 'sweep.yaml', '--out', 'out', '--jobs', '1', '--trace-root', sharedRoot);
  assert.equal(run.status, 0, run.stderr);
  const [point] = JSON.parse(fs.readFileSync(path.join(dir, 'out', 'sweep.json'), 'utf8')).points as { digest: string }[];
  // The same config with 5 requests, replayed: a copy beside a copy of its table, naming the trace by its absolute path.
  fs.copyFileSync(path.join(ROOT, 'examples', 'configs', 'pass-times-example.csv'), path.join(dir, 'pass-times-example.csv'));
  const config = fs.readFileSync(example, 'utf8').replace(/trace: .*/, `trace: ${SHARED_TRACE}`).replace('max_requests: 2000', 'max_requests: 5');
  fs.writeFileSync(path.join(dir, 'five.yaml'), config);
  const replay = await kvqualInProcess(dir, 'replay', 'five.yaml', '--trace-root', sharedRoot);
  assert.equal(replay.status, 0, replay.stderr);
  assert.equal(point.digest, digestOf(replay.stdout));
});

/** Every file under a folder with its bytes, to prove a refused run changed nothing there. */
function contents(dir: string): Record<string, string> {
  return Object.fromEntries(listing(dir).map((file) => [file, fs.statSync(path.join(dir, file)).isDirectory() ? '(folder)' : fs.readFileSync(path.join(dir, file), 'utf8')]));
}

test('a sweep or a merge whose output would overwrite one of its inputs is refused before anything runs, and changes nothing', async () => {
  const dir = tableCsvFolder();
  const out = path.join(dir, 'out');
  fs.mkdirSync(path.join(out, 'charts'), { recursive: true });
  const tabled = fs.readFileSync(path.join(dir, 'base.yaml'), 'utf8');
  const base = tabled.replace('table: { csv: p.csv }', 'fixed: { prefill_ms: 1, decode_ms: 1 }');
  const trace = '{"timestamp": 0, "input_length": 8, "output_length": 2, "hash_ids": [1, 2]}\n';
  const traced = (name: string) => base.replace(/workload:[\s\S]*/, `workload:\n  trace_block_size: 4\n  mooncake: { trace: "${name}" }\n`);
  fs.copyFileSync(path.join(dir, 'p.csv'), path.join(out, 'sweep.html'));
  fs.writeFileSync(path.join(out, 'sweep.json'), base);
  fs.writeFileSync(path.join(out, 'table-is-html.yaml'), tabled.replace('csv: p.csv', 'csv: sweep.html'));
  fs.writeFileSync(path.join(out, 'trace-is-chart.yaml'), traced('charts/ttft_p99_ms--router_kv_event_lag_ms.svg'));
  fs.writeFileSync(path.join(out, 'charts', 'ttft_p99_ms--router_kv_event_lag_ms.svg'), trace);
  fs.writeFileSync(path.join(out, 'charts', 'requests_finished--an_earlier_parameter.svg'), base);
  const lags = 'grid: { router.kv_event_lag_ms: [0, 1] }\n';
  fs.writeFileSync(path.join(out, 'sweep.csv'), `base: ../base.yaml\n${lags}`);
  fs.writeFileSync(path.join(out, 'shard-1-of-2.json'), `base: ../base.yaml\n${lags}`);
  for (const [name, baseOf] of [['base-is-json', 'out/sweep.json'], ['table-is-html', 'out/table-is-html.yaml'], ['trace-is-chart', 'out/trace-is-chart.yaml'], ['base-is-old-chart', 'out/charts/requests_finished--an_earlier_parameter.svg']]) {
    fs.writeFileSync(path.join(dir, `${name}.yaml`), `base: ${baseOf}\n${lags}`);
  }
  const before = contents(out);
  const refusals: [string[], string][] = [
    [['sweep', 'base-is-json.yaml'], '--out out/sweep.json: is the base config; writing it would overwrite an input'],
    [['sweep', 'out/sweep.csv'], '--out out/sweep.csv: is the sweep file; writing it would overwrite an input'],
    [['sweep', 'table-is-html.yaml'], '--out out/sweep.html: is the pass-time table named by cluster.workers[0].engine.timing.table.csv; writing it would overwrite an input'],
    [['sweep', 'trace-is-chart.yaml'], '--out out/charts/ttft_p99_ms--router_kv_event_lag_ms.svg: is the trace named by workload.mooncake.trace; writing it would overwrite an input'],
    [['sweep', 'base-is-old-chart.yaml'], '--out out/charts/requests_finished--an_earlier_parameter.svg: is the base config; writing it would overwrite an input'],
    [['sweep', 'out/shard-1-of-2.json', '--shard', '1/2'], '--out out/shard-1-of-2.json: is the sweep file; writing it would overwrite an input'],
  ];
  for (const [args, message] of refusals) {
    const run = await kvqualInProcess(dir, ...args, '--out', 'out', '--jobs', '1');
    assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.equal(run.stderr, `kvqual sweep: ${message}\n`);
    assert.equal(run.stdout, '');
    assert.deepEqual(contents(out), before, `${args.join(' ')} changed nothing`);
  }
  // A shard result named sweep.json, merged into its own folder.
  const shard = await kvqualInProcess(dir, 'sweep', 'base-is-json.yaml', '--shard', '1/1', '--out', 'shards', '--jobs', '1');
  assert.equal(shard.status, 0, shard.stderr);
  fs.renameSync(path.join(dir, 'shards', 'shard-1-of-1.json'), path.join(dir, 'shards', 'sweep.json'));
  const shards = contents(path.join(dir, 'shards'));
  const merge = await kvqualInProcess(dir, 'sweep', 'merge', 'shards/sweep.json', '--out', 'shards');
  assert.equal(merge.status, 2, merge.stderr);
  assert.equal(merge.stderr, 'kvqual sweep merge: --out shards/sweep.json: is the shard result; writing it would overwrite an input\n');
  assert.deepEqual(contents(path.join(dir, 'shards')), shards);
});
