// `kvqual sweep` with a capacity search, end to end (one search in a process of its own, the rest in
// this process, their sweep workers processes either way) on a small Mooncake-format
// trace written here (48 requests of 8,192 tokens, 4 at a time): the smallest replica count meeting
// p99 TTFT ≤ 1 s and a goodput of at least 95 % is found by bisection, named with its config
// (winner.yaml, a config `kvqual replay` runs and gives the winner's p99), charted (pareto.svg,
// shown in sweep.html) and kept in search.json; the answer is the same on 1 or 2 jobs and in 2
// shards merged; a constraint naming an unknown metric (a hit rate by another name too) or a bad operator exits 2 naming the place before anything runs; a
// search no point meets says so plainly, exits 1 and writes no winner.yaml; a later sweep without a
// search into the same folder removes the search's files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../support/paths';
import { kvqualInProcessAsync, kvqualProcessAsync } from '../support/cli';

const BIN = path.join(ROOT, 'bin', 'kvqual.js');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `kvqual ARGS` from `cwd` as a real process: one search per file runs so, beside the same search in this process. */
const kvqualProcess = (cwd: string, ...args: string[]): Promise<Run> => kvqualProcessAsync(args, cwd);
/** `kvqual ARGS` from `cwd` in this process (its sweep workers are processes all the same). */
const kvqual = (cwd: string, ...args: string[]): Promise<Run> => kvqualInProcessAsync(args, cwd);

const BASE = `# A small cluster whose replica count the search chooses.
seed: 7
cluster:
  workers:
    - role: aggregated
      replicas: 4
      engine:
        block_size: 64
        num_gpu_blocks: 4096
        max_num_seqs: 32
        max_num_batched_tokens: 16384
        kv_cache_bytes_per_token: 131072
        timing: { fixed: { prefill_ms: 80, decode_ms: 20 } }
router:
  kv_event_lag_ms: 1
workload:
  trace_block_size: 512
  mooncake:
    trace: trace.jsonl
`;

/** 48 requests of 8,192 tokens (16 blocks, the first shared), 4 every 10 ms: p99 TTFT 2,170 ms on 1 replica, 1,070 on 2, 770 on 3. */
function traceText(): string {
  return Array.from({ length: 48 }, (_, i) => JSON.stringify({ timestamp: Math.floor(i / 4) * 10, input_length: 8192, output_length: 8, hash_ids: [0, ...Array.from({ length: 15 }, (_, k) => 1000 * i + k + 1)] })).join('\n') + '\n';
}

function sweepText(subjectTo: string[]): string {
  return ['base: base.yaml', 'grid:', '  cluster.workers[0].replicas: [1, 2, 3, 4, 5, 6]', 'search:', '  minimise: cluster.workers[0].replicas', '  subject_to:', ...subjectTo.map((c) => `    - ${JSON.stringify(c)}`), '  goodput: { ttft_ms: 1000, itl_ms: 100 }', ''].join('\n');
}

function folder(t: { after: (fn: () => void) => void }, subjectTo = ['p99 ttft_ms <= 1000', 'goodput >= 0.95']): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-search-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'base.yaml'), BASE);
  fs.writeFileSync(path.join(dir, 'trace.jsonl'), traceText());
  fs.writeFileSync(path.join(dir, 'search.yaml'), sweepText(subjectTo));
  return dir;
}

const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), 'utf8');

test('the smallest replica count meeting p99 TTFT and goodput is found, named with its config, and the same on 1 or 2 jobs and in 2 shards merged', async (t) => {
  const dir = folder(t);
  // The unsharded search on 1 job as a real process, meanwhile the others one after another in this process.
  const oneProcess = kvqualProcess(dir, 'sweep', 'search.yaml', '--out', 'one', '--jobs', '1');
  const two = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'two', '--jobs', '2');
  const shard1 = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'shards', '--jobs', '1', '--shard', '1/2');
  const shard2 = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'shards', '--jobs', '1', '--shard', '2/2');
  const one = await oneProcess;
  for (const run of [one, two, shard1, shard2]) assert.equal(run.status, 0, run.stderr);
  assert.match(one.stdout, /search: minimise cluster\.workers\[0\]\.replicas subject to p99 ttft_ms <= 1000, goodput >= 0\.95/);
  assert.match(one.stdout, /search: winner cluster\.workers\[0\]\.replicas=3 \(point 2\): p99 ttft_ms 770, goodput 1; its config is one\/winner\.yaml/);
  assert.match(one.stdout, /replicas=2: .*misses: p99 ttft_ms was 1070 at point 1, not <= 1000/);
  assert.match(one.stdout, /^sweep: 3 point\(s\) \(of 6: the search needed no more\) in /);
  assert.match(one.stderr, /search: round 1: 1 point\(s\) \(cluster\.workers\[0\]\.replicas=6\)/);
  const merged = await kvqual(dir, 'sweep', 'merge', 'shards/shard-1-of-2.json', 'shards/shard-2-of-2.json', '--out', 'merged');
  assert.equal(merged.status, 0, merged.stderr);
  for (const file of ['search.json', 'winner.yaml', 'pareto.svg']) {
    assert.equal(read(dir, `two/${file}`), read(dir, `one/${file}`), `${file}: 2 jobs as 1`);
    assert.equal(read(dir, `merged/${file}`), read(dir, `one/${file}`), `${file}: 2 shards merged as unsharded`);
  }
  const answer = JSON.parse(read(dir, 'one/search.json'));
  assert.deepEqual(answer.winner.parameters, { 'cluster.workers[0].replicas': 3 });
  assert.deepEqual(
    answer.evaluated.map((r: { objective: number }) => r.objective),
    [2, 3, 6],
    'bisection ran 3 of the 6 counts: 6, then 3, then 2',
  );
  assert.equal(JSON.parse(read(dir, 'one/sweep.json')).points.length, 3, 'sweep.json holds the points run');
  assert.match(read(dir, 'one/pareto.svg'), /^<svg/);
  assert.match(read(dir, 'one/sweep.html'), /<h2>Capacity search<\/h2>[\s\S]*Winner: <strong>cluster\.workers\[0\]\.replicas=3<\/strong>[\s\S]*3 of 6 points run[\s\S]*<img src="pareto\.svg"/);
  // The winner's config is one kvqual replays (beside the base config, as its note says) with the winner's p99 TTFT.
  fs.copyFileSync(path.join(dir, 'one', 'winner.yaml'), path.join(dir, 'winner.yaml'));
  assert.match(read(dir, 'winner.yaml'), /replicas: 3\n[\s\S]*slo:\n {2}ttft_ms: 1000\n {2}tpot_ms: 100\n/);
  const replay = await kvqual(dir, 'replay', 'winner.yaml');
  assert.equal(replay.status, 0, replay.stderr);
  assert.match(replay.stdout, /time to first token\s+ms(\s+\S+){5}\s+770\s/);
});

test("a constraint on a prefix hit rate and a front of the share of the ceiling read the values sweep.json reports", async (t) => {
  const dir = folder(t, ['p99 ttft_ms <= 1000', 'prefix_reuse_block_ratio >= 0.05']);
  fs.writeFileSync(path.join(dir, 'search.yaml'), read(dir, 'search.yaml').replace('  goodput:', '  front: prefix_reuse_of_ceiling_ratio\n  goodput:'));
  const run = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'out', '--jobs', '1');
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /subject to p99 ttft_ms <= 1000, prefix_reuse_block_ratio >= 0\.05/);
  const answer = JSON.parse(read(dir, 'out/search.json'));
  assert.deepEqual(answer.winner.parameters, { 'cluster.workers[0].replicas': 3 });
  const points = JSON.parse(read(dir, 'out/sweep.json')).points as { parameters: Record<string, number>; metrics: Record<string, number | null> }[];
  for (const record of answer.evaluated as { parameters: Record<string, number>; values: Record<string, number | null> }[]) {
    const point = points.find((p) => p.parameters['cluster.workers[0].replicas'] === record.parameters['cluster.workers[0].replicas'])!;
    assert.ok(point.metrics.prefix_reuse_block_ratio! > 0, 'the trace shares its first block');
    assert.equal(record.values.prefix_reuse_block_ratio, point.metrics.prefix_reuse_block_ratio, 'the constraint read sweep.json\'s block-weighted hit rate');
    assert.equal(record.values.prefix_reuse_of_ceiling_ratio, point.metrics.prefix_reuse_of_ceiling_ratio, 'the front read its share of the ceiling');
  }
});

test('an unknown metric or a bad operator in a constraint exits 2 naming the place, before anything runs or is created', async (t) => {
  const dir = folder(t, ['p99 ttft_ms <= 1000', 'p99 ttft <= 5']);
  const unknown = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'out');
  assert.equal(unknown.status, 2);
  assert.equal(unknown.stderr, 'kvqual sweep: search.yaml: search.subject_to[1]: unknown metric "ttft"; did you mean ttft_ms? (metrics: ttft_ms, ttst_ms, itl_ms, tpot_ms, e2e_ms, queue_ms, goodput, goodput_per_s, request_throughput_per_s, output_token_throughput_per_s, total_token_throughput_per_s, prefix_reuse_ratio, prefix_reuse_block_ratio, prefix_reuse_request_ratio, prefix_reuse_of_ceiling_ratio, requests_finished, requests_failed)\n');
  fs.writeFileSync(path.join(dir, 'search.yaml'), sweepText(['p99 ttft_ms <= 1000', 'block_hit_rate >= 0.3']));
  const hitRate = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'out');
  assert.equal(hitRate.status, 2);
  assert.match(hitRate.stderr, /^kvqual sweep: search\.yaml: search\.subject_to\[1\]: unknown metric "block_hit_rate"; the prefix hit rates are prefix_reuse_ratio \(token-weighted\), prefix_reuse_block_ratio \(block-weighted\), prefix_reuse_request_ratio \(request-averaged\) and prefix_reuse_of_ceiling_ratio \(the share of the infinite-cache ceiling\) \(metrics: /);
  fs.writeFileSync(path.join(dir, 'search.yaml'), sweepText(['p99 ttft_ms => 1000']));
  const operator = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'out');
  assert.equal(operator.status, 2);
  assert.match(operator.stderr, /^kvqual sweep: search\.yaml: search\.subject_to\[0\]: "=>" is not an operator here \(operators: <=, <, >=, >\)\n$/);
  fs.writeFileSync(path.join(dir, 'search.yaml'), sweepText(['p99 ttft_ms <= 1000']).replace('minimise: cluster.workers[0].replicas', 'minimise: cluster.workers[0].replica'));
  const objective = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'out');
  assert.equal(objective.status, 2);
  assert.match(objective.stderr, /search\.yaml: search\.minimise: cluster\.workers\[0\]\.replica is neither a field path the grid varies; did you mean cluster\.workers\[0\]\.replicas\?/);
  assert.ok(!fs.existsSync(path.join(dir, 'out')), 'nothing created');
});

test('a search no point meets says so plainly, exits 1, writes the rest and no winner.yaml (removing one an earlier search left); a sweep without a search removes the rest', async (t) => {
  const dir = folder(t, ['p99 ttft_ms <= 50']);
  fs.mkdirSync(path.join(dir, 'out'));
  fs.writeFileSync(path.join(dir, 'out', 'winner.yaml'), 'seed: 1\n');
  const run = await kvqual(dir, 'sweep', 'search.yaml', '--out', 'out');
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stdout, /search: no point meets the constraints \(p99 ttft_ms <= 50\); no winner\.yaml written\n$/);
  assert.ok(!fs.existsSync(path.join(dir, 'out', 'winner.yaml')));
  assert.equal(JSON.parse(read(dir, 'out/search.json')).winner, null);
  assert.equal(JSON.parse(read(dir, 'out/search.json')).evaluated.length, 1, 'the most generous count missed: nothing else ran');
  // A sweep without a search into the same folder removes the search's files: they would read as its answer.
  fs.writeFileSync(path.join(dir, 'plain.yaml'), 'base: base.yaml\ngrid:\n  cluster.workers[0].replicas: [5, 6]\n');
  const plain = await kvqual(dir, 'sweep', 'plain.yaml', '--out', 'out');
  assert.equal(plain.status, 0, plain.stderr);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'out')).sort(), ['charts', 'sweep.csv', 'sweep.html', 'sweep.json']);
});
