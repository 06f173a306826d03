// Tests of `kvqual replay`: the example configs run, two runs give the same digest, --out writes
// the canonical report, and bad input exits 2 with a clear message and no report written. The
// command line runs in this process; the first example's first run, and a missing file, go through a
// real `node bin/kvqual.js` process (the process and the in-process run must print the same bytes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { scratchFolder } from '../support/scratch';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { eventLogOf } from '../../src/fuzz/runCase';
import { replayFile, summaryText } from '../../src/cli/replay';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from '../support/paths';
import { kvqualInProcess, kvqualProcess } from '../support/cli';

const EXAMPLES = ['two-replicas-private.yaml', 'two-replicas-shared.yaml', 'lagged-events.yaml', 'prefill-decode.yaml'].map((name) => path.join('examples', 'configs', name));

const kvqual = (...args: string[]) => kvqualInProcess(args);
const kvqualAsProcess = (...args: string[]) => kvqualProcess(args);

test('each example config replays, and two runs give the same digest', () => {
  for (const [index, example] of EXAMPLES.entries()) {
    // The first as a real process beside a run in this one; the others twice in this process (a second run sees what the first left behind).
    const first = index === 0 ? kvqualAsProcess('replay', example, '--json') : kvqual('replay', example, '--json');
    const second = kvqual('replay', example, '--json');
    assert.equal(first.status, 0, first.stderr);
    const [a, b] = [JSON.parse(first.stdout), JSON.parse(second.stdout)];
    assert.match(a.digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(a.digest, b.digest, example);
    assert.equal(first.stdout, second.stdout, `${example}: byte-identical reports`);
  }
});

test('the summary names what happened and --out writes the canonical report', (t) => {
  const dir = scratchFolder('replay-cli', t);
  const out = path.join(dir, 'report.json');
  const run = kvqual('replay', EXAMPLES[0], '--out', out);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /4\/4 requests finished/);
  assert.match(run.stdout, /prefix reuse .*G2 8\)/);
  assert.doesNotMatch(run.stdout, /preemptions/, 'no line for preemptions when there were none');
  const report = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(report.summary.g2_restored_tokens, 8);
  assert.ok(run.stdout.includes(report.digest));
});

test('private and shared examples differ: only the shared one reports g2_domains', () => {
  const [privateRun, sharedRun] = [EXAMPLES[0], EXAMPLES[1]].map((example) => JSON.parse(kvqual('replay', example, '--json').stdout));
  assert.equal(privateRun.summary.g2_domains, undefined);
  assert.equal(sharedRun.summary.g2_domains[0].capacity_blocks, 16);
});

test('a bad config exits 2, names the field and writes no report', (t) => {
  const dir = scratchFolder('replay-cli', t);
  const bad = path.join(dir, 'bad.yaml');
  const out = path.join(dir, 'report.json');
  writeFileSync(bad, readFileSync(path.join(ROOT, EXAMPLES[0]), 'utf8').replace('h2d_bandwidth_gbps: 1', 'h2d_bandwidth_gbps: -1'));
  const run = kvqual('replay', bad, '--out', out);
  assert.equal(run.status, 2);
  assert.match(run.stderr, /cluster\.workers\[0\]\.host_offload\.h2d_bandwidth_gbps: h2d_bandwidth_gbps must be ≥ 0/);
  assert.equal(existsSync(out), false);
});

test('a missing file and a bad seed exit 2', () => {
  assert.equal(kvqualAsProcess('replay', 'no/such/file.yaml').status, 2);
  const run = kvqual('replay', EXAMPLES[0], '--seed', 'abc');
  assert.equal(run.status, 2);
  assert.match(run.stderr, /--seed abc/);
});

test('--seed changes tie-breaks but a run stays reproducible', () => {
  const a = JSON.parse(kvqual('replay', EXAMPLES[0], '--json', '--seed', '7').stdout);
  const b = JSON.parse(kvqual('replay', EXAMPLES[0], '--json', '--seed', '7').stdout);
  assert.equal(a.digest, b.digest);
});

test('--events-out writes the stream the router received, and check-events finds it clean', (t) => {
  const dir = scratchFolder('replay-cli', t);
  const events = path.join(dir, 'events.jsonl');
  for (const example of [...EXAMPLES, path.join('examples', 'agentic', 'two-lanes-shared.yaml')]) {
    assert.equal(kvqual('replay', example, '--events-out', events).status, 0, example);
    const check = kvqual('check-events', events);
    assert.equal(check.status, 0, `${example}: ${check.stdout}${check.stderr}`);
    assert.match(check.stdout, /clean — \d+ batch\(es\)/);
  }
});

test('a Mooncake trace replays from a config (when ../shared holds the published traces)', { skip: !existsSync(path.join(ROOT, '..', 'shared', 'data', 'mooncake', 'conversation_trace.jsonl')) && 'no ../shared/data/mooncake here' }, (t) => {
  const dir = scratchFolder('replay-cli', t);
  const config = path.join(dir, 'mooncake.yaml');
  const trace = path.join(ROOT, '..', 'shared', 'data', 'mooncake', 'conversation_trace.jsonl');
  const text = readFileSync(path.join(ROOT, 'examples', 'configs', 'mooncake-conversation.yaml'), 'utf8')
    .replace('trace: ../../../shared/data/mooncake/conversation_trace.jsonl', `trace: ${JSON.stringify(trace)}`)
    .replace('max_requests: 2000', 'max_requests: 200');
  writeFileSync(config, text);
  const root = path.dirname(trace);
  const [first, second] = [kvqual('replay', config, '--json', '--trace-root', root), kvqual('replay', config, '--json', '--trace-root', root)];
  assert.equal(first.status, 0, first.stderr);
  const report = JSON.parse(first.stdout);
  assert.equal(report.summary.requests.total, 200);
  assert.equal(report.summary.requests.finished, 200);
  assert.ok(report.summary.prefix_reuse_ratio > 0, 'the conversation trace shares prefixes');
  assert.equal(report.digest, JSON.parse(second.stdout).digest);
});

test('a bad Mooncake row makes replay exit 2 naming its line', (t) => {
  const dir = scratchFolder('replay-cli', t);
  writeFileSync(path.join(dir, 'trace.jsonl'), '{"timestamp": 0, "input_length": 600, "output_length": 2, "hash_ids": [1, 2]}\n{"timestamp": 5, "input_length": 600, "output_length": 2, "hash_ids": [1]}\n');
  const text = readFileSync(path.join(ROOT, 'examples', 'configs', 'mooncake-conversation.yaml'), 'utf8').replace('trace: ../../../shared/data/mooncake/conversation_trace.jsonl', 'trace: trace.jsonl');
  writeFileSync(path.join(dir, 'config.yaml'), text);
  const run = kvqual('replay', path.join(dir, 'config.yaml'));
  assert.equal(run.status, 2, run.stdout);
  assert.match(run.stderr, /trace\.jsonl: line 2: hash_ids has 1 ids for input_length 600; expected 2 at 512 tokens per id/);
});

test('a config reached through a symbolic link names its trace relative to where it really is, as the kernel resolves `..`', (t) => {
  // real/a/configs/config.yaml names ../../data/trace.jsonl (real/data/trace.jsonl); links/a -> real/a.
  const dir = scratchFolder('replay-cli', t);
  mkdirSync(path.join(dir, 'real', 'a', 'configs'), { recursive: true });
  mkdirSync(path.join(dir, 'real', 'data'));
  mkdirSync(path.join(dir, 'links'));
  writeFileSync(path.join(dir, 'real', 'data', 'trace.jsonl'), '{"timestamp": 0, "input_length": 600, "output_length": 2, "hash_ids": [1, 2]}\n');
  const text = readFileSync(path.join(ROOT, 'examples', 'configs', 'mooncake-conversation.yaml'), 'utf8').replace('trace: ../../../shared/data/mooncake/conversation_trace.jsonl', 'trace: ../../data/trace.jsonl');
  writeFileSync(path.join(dir, 'real', 'a', 'configs', 'config.yaml'), text);
  symlinkSync(path.join(dir, 'real', 'a'), path.join(dir, 'links', 'a'));
  const direct = kvqual('replay', path.join(dir, 'real', 'a', 'configs', 'config.yaml'), '--json', '--trace-root', path.join(dir, 'real'));
  const linked = kvqual('replay', path.join(dir, 'links', 'a', 'configs', 'config.yaml'), '--json', '--trace-root', path.join(dir, 'real'));
  assert.equal(direct.status, 0, direct.stderr);
  assert.equal(linked.status, 0, linked.stderr);
  assert.equal(JSON.parse(linked.stdout).digest, JSON.parse(direct.stdout).digest);
});

test('--requests-out writes one record per request as JSON lines or CSV, the same figures as the report', (t) => {
  const dir = scratchFolder('replay-cli', t);
  const [jsonl, csv, out] = ['requests.jsonl', 'requests.csv', 'report.json'].map((name) => path.join(dir, name));
  assert.equal(kvqual('replay', EXAMPLES[0], '--out', out, '--requests-out', jsonl).status, 0);
  const run = kvqual('replay', EXAMPLES[0], '--requests-out', csv);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /metric +unit +mean +min +p50 +p90 +p95 +p99 +max/);
  assert.match(run.stdout, /time to first token +ms /);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  const records = readFileSync(jsonl, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
  assert.equal(records.length, report.per_request.length);
  records.forEach((record, i) => {
    assert.equal(record.request_id, report.per_request[i].request_id);
    assert.equal(record.time_to_first_token_ms, report.per_request[i].ttft_ms);
    assert.equal(record.request_latency_ms, report.per_request[i].e2e_ms);
    assert.equal(record.inter_token_latency_ms, report.per_request[i].inter_token_latency_ms);
  });
  const lines = readFileSync(csv, 'utf8').trimEnd().split('\n');
  const header = lines[0].split(',');
  assert.equal(lines.length, records.length + 1);
  assert.deepEqual(header, Object.keys(records[0]));
  const ttft = header.indexOf('time_to_first_token_ms');
  assert.equal(Number(lines[1].split(',')[ttft]), records[0].time_to_first_token_ms);
});

test('--requests-out with another extension exits 2 before the run and writes nothing', (t) => {
  const dir = scratchFolder('replay-cli', t);
  const out = path.join(dir, 'report.json');
  const run = kvqual('replay', EXAMPLES[0], '--out', out, '--requests-out', path.join(dir, 'requests.txt'));
  assert.equal(run.status, 2);
  assert.match(run.stderr, /--requests-out .*requests\.txt: name a \.jsonl or a \.csv file/);
  assert.equal(existsSync(out), false);
});

test('--events-out is written as batches reach the router (the same lines as the kept history) and leaves no temporary file', (t) => {
  const dir = scratchFolder('replay-cli', t);
  const events = path.join(dir, 'events.jsonl');
  const example = path.join('examples', 'configs', 'two-replicas-shared.yaml');
  assert.equal(kvqual('replay', example, '--events-out', events).status, 0);
  const config = parseReplayConfig(readFileSync(path.join(ROOT, example), 'utf8'), example);
  assert.equal(readFileSync(events, 'utf8'), eventLogOf(runReplay(config, { keep_event_history: true })));
  assert.deepEqual(readdirSync(dir), ['events.jsonl']);
});

test('a run that fails after the event log was started leaves neither the log nor its temporary file', (t) => {
  const dir = scratchFolder('replay-cli', t);
  const example = path.join(ROOT, 'examples', 'configs', 'two-replicas-shared.yaml');
  // The progress display is made once the log is open: one that fails stands for any failure during the run.
  const io = { stdout: () => {}, stderr: () => {}, cwd: dir, progress: () => { throw new Error('the display failed'); } };
  assert.throws(() => replayFile(example, { json: false, eventsOut: 'events.jsonl' }, io), /the display failed/);
  assert.deepEqual(readdirSync(dir), []);
});

test('a request spinning on preemption is said once on standard error, as it happens, and the run goes on to its end', (t) => {
  // The fuzzer's preemption spin with a 90 times faster restore: 13,890 preemptions of one request.
  const dir = scratchFolder('replay-cli', t);
  const config = path.join(dir, 'spin.yaml');
  const fixture = readFileSync(path.join(ROOT, 'test', 'fixtures', 'fuzz', 'preemption-spin.yaml'), 'utf8');
  writeFileSync(config, fixture.replace('shared_h2d_bandwidth_gbps: 0.01', 'shared_h2d_bandwidth_gbps: 0.9'));
  const run = kvqual('replay', config, '--out', path.join(dir, 'report.json'));
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /5\/5 requests finished/);
  assert.match(run.stdout, /^  preemptions: 13,890 of 1 request\(s\), the most 13,890 of r4$/m);
  const warnings = run.stderr.split('\n').filter((line) => line.startsWith('kvqual replay: warning: '));
  assert.deepEqual(warnings, [
    'kvqual replay: warning: request r4 on worker 0 dp rank 1 has been preempted and readmitted 10,000 times by 0.789998 ms of virtual time: passes this short readmit it every pass while something slow (a G2 restore over a slow link, say) holds the G1 blocks it needs. The run goes on until that ends, and may take long (docs/model.md, Preemption)',
  ]);
  const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
  assert.equal(report.per_request.find((record: { request_id: string }) => record.request_id === 'r4').preemptions, 13_890);
});

test('a reader that stops early (kvqual replay --json | head) ends the replay quietly with its status, no EPIPE stack', async (t) => {
  const dir = scratchFolder('replay-cli', t);
  const requests = Array.from({ length: 400 }, (_, i) => `    - { id: r${i}, arrival_ms: ${i}, prompt: [{ tokens: 8 }], output_length: 2 }`).join('\n');
  writeFileSync(path.join(dir, 'many.yaml'), `cluster:\n  workers:\n    - role: aggregated\n      engine: { block_size: 4, num_gpu_blocks: 64, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }\nworkload:\n  requests:\n${requests}\n`);
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'kvqual.js'), 'replay', 'many.yaml', '--json'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // The first piece read, the pipe is closed: the rest of the report (far more than a pipe holds) has nowhere to go.
  child.stdout.once('data', () => child.stdout.destroy());
  const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  assert.equal(stderr, '');
  assert.equal(status, 0);
});

test('the summary shows a figure below a thousandth by its significant digits, not as 0', () => {
  const config = parseReplayConfig(`cluster:
  workers:
    - role: aggregated
      engine: { block_size: 4, num_gpu_blocks: 16, timing: { fixed: { prefill_ms: 0.000001, decode_ms: 0.000003 } } }
workload:
  requests:
    - { id: a, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 4 }
`, 'tiny.yaml');
  const { report } = runReplay(config);
  assert.equal(report.summary.virtual_duration_ms, 0.00001);
  const text = summaryText('tiny.yaml', report);
  assert.match(text, /in 0\.00001 ms of virtual time/);
  assert.doesNotMatch(text, /in 0 ms of virtual time/);
});

test('--events-out of a run in which no KV event reached the router writes the empty log and warns that check-events refuses it', (t) => {
  const dir = scratchFolder('replay-cli', t);
  const config = path.join(dir, 'no-cache.yaml');
  writeFileSync(config, `cluster:
  workers:
    - role: aggregated
      engine: { block_size: 4, num_gpu_blocks: 16, enable_prefix_caching: false, timing: { fixed: { prefill_ms: 1, decode_ms: 1 } } }
workload:
  requests:
    - { id: a, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 2 }
`);
  const log = path.join(dir, 'events.jsonl');
  const run = kvqualInProcess(['replay', config, '--events-out', log], dir);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(readFileSync(log, 'utf8'), '');
  assert.equal(run.stderr, `kvqual replay: warning: --events-out ${log}: no KV event reached the router, so the log is empty; check-events refuses an empty capture\n`);
  const cached = kvqualInProcess(['replay', EXAMPLES[0], '--events-out', path.join(dir, 'other.jsonl')]);
  assert.doesNotMatch(cached.stderr, /warning/, 'a run whose events reached the router says nothing');
});
