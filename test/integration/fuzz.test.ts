// End to end tests of `npm run fuzz` and of the cases it writes: a run over the generator without
// its known-defect areas passes and exits 0; a run over every area agrees with the checker (when
// it finds a counterexample it exits 1, prints `{ seed, path }`, writes the config, trace and
// feature, and `--check`, `kvqual replay` and cucumber all reproduce it); and a written feature
// runs under cucumber with the project's steps, passing for a case that keeps every invariant and
// failing, naming the broken claim, for one that does not; and a run that spun on preemption early
// and then stopped preempting, unsettled at its budget, is a livelock, not too heavy to check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { caseFiles, caseFromYaml } from '../../src/fuzz/scenario';
import { caseConfig, runCase, runObserved } from '../../src/fuzz/runCase';
import { checkRun, INVARIANT_CLAIMS } from '../../src/fuzz/invariants';
import { UnsettledError } from '../../src/kernel';
import { parse, stringify } from 'yaml';
import type { FuzzCase } from '../../src/fuzz/generate';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-fuzz-'));

function run(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const fuzz = (...args: string[]) => run(['--require', 'tsx/cjs', 'scripts/fuzz.ts', ...args]);
const cucumber = (feature: string) => run([path.join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js'), '--profile', 'replay', feature]);

/** Writes a case's files into a fresh folder; returns their paths. */
function writeCase(fuzzCase: FuzzCase, label: string): { config: string; feature: string } {
  const folder = path.join(scratch, label);
  fs.mkdirSync(folder, { recursive: true });
  const verdict = runCase(fuzzCase);
  const files = caseFiles(fuzzCase, { origin: { seed: 0, path: label }, violations: verdict.violations, folder });
  for (const file of [files.config, files.trace, files.feature]) if (file) fs.writeFileSync(path.join(folder, file.name), file.content);
  return { config: path.join(folder, files.config.name), feature: path.join(folder, files.feature.name) };
}

test('a fuzz run without the known-defect areas passes and exits 0', () => {
  const result = fuzz('--runs', '40', '--seed', '1893', '--exclude', 'known', '--out', path.join(scratch, 'clean'));
  assert.equal(result.status, 0, result.output);
  assert.match(result.output, /40 cases passed every invariant in [\d.]+ s \(seed 1893\)/);
  assert.ok(!fs.existsSync(path.join(scratch, 'clean')), 'nothing is written when every case passes');
});

test('bad arguments exit 2 with the usage', () => {
  for (const args of [['--runs', 'many'], ['--exclude', 'everything'], ['--frobnicate']]) {
    const result = fuzz(...args);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.output}`);
    assert.match(result.output, /usage: npm run fuzz/);
  }
});

test('--check of a case whose trace kvqual refuses exits 2 with the trace, the line and the problem', () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'bad-trace-'));
  fs.writeFileSync(path.join(dir, 'case.yaml'), fs.readFileSync(path.join(ROOT, 'examples', 'agentic', 'two-lanes-shared.yaml'), 'utf8').replace('trace: coding-agent.jsonl', 'trace: trace.jsonl'));
  fs.writeFileSync(path.join(dir, 'trace.jsonl'), '{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4}\n{"request_id":"a","play_id":"p","session_id":"s","input_length":4,"output_length":1,"hash_ids":[1],"priority":3}\n');
  const result = fuzz('--check', path.join(dir, 'case.yaml'));
  assert.equal(result.status, 2, result.output);
  assert.match(result.output, /fuzz --check: trace\.jsonl: line 2: priority 3: /);
  assert.doesNotMatch(result.output, /^\s+at /m);
});

test('a fuzz run over every area agrees with the checker, and a counterexample reproduces three ways', () => {
  const out = path.join(scratch, 'all');
  const result = fuzz('--runs', '300', '--seed', '1', '--out', out);
  if (result.status === 0) {
    // Every engine defect the generator can reach is fixed: nothing to reproduce.
    assert.match(result.output, /300 cases passed every invariant/);
    return;
  }
  assert.equal(result.status, 1, result.output);
  const origin = JSON.parse(/^counterexample: (.*)$/m.exec(result.output)![1]) as { seed: number; path: string };
  assert.equal(origin.seed, 1);
  assert.match(origin.path, /^\d+(:\d+)*$/);
  const config = /^replay it: +npx kvqual replay (.*)$/m.exec(result.output)![1];
  const feature = config.replace(/\.yaml$/, '.feature');
  assert.ok(fs.existsSync(config) && fs.existsSync(feature), result.output);
  const check = fuzz('--check', config);
  assert.equal(check.status, 1, check.output);
  const replay = run(['bin/kvqual.js', 'replay', config]);
  assert.notEqual(replay.status, 2, `kvqual replay accepts the written config: ${replay.output}`);
  const scenario = cucumber(feature);
  assert.equal(scenario.status, 1, scenario.output);
  assert.match(scenario.output, /1 scenario \(1 failed\)/);
  const rerun = fuzz('--seed', String(origin.seed), '--path', origin.path, '--out', path.join(scratch, 'rerun'));
  assert.equal(rerun.status, 1, rerun.output);
});

test('a written feature runs under cucumber: it passes for a case that keeps every invariant', () => {
  const example = path.join(ROOT, 'examples', 'configs', 'two-replicas-shared.yaml');
  const fuzzCase = caseFromYaml(fs.readFileSync(example, 'utf8'), null);
  assert.deepEqual(runCase(fuzzCase).violations, []);
  const { feature } = writeCase(fuzzCase, 'passing');
  const result = cucumber(feature);
  assert.equal(result.status, 0, result.output);
  assert.match(result.output, /1 scenario \(1 passed\)/);
});

test('a written feature fails under cucumber exactly when its case breaks an invariant, naming the claim', () => {
  // Issue 8, defect 3: a shared pool with unlimited (0) bandwidth.
  const fuzzCase: FuzzCase = {
    agentic_trace: null,
    config: {
      seed: 7,
      cluster: {
        workers: [
          {
            role: 'aggregated',
            replicas: 2,
            engine: { block_size: 4, num_gpu_blocks: 16, max_num_seqs: 4, max_num_batched_tokens: 64, kv_cache_bytes_per_token: 250000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } },
            host_offload: { num_host_blocks: 16, scope: 'cluster_shared', d2h_bandwidth_gbps: 0, h2d_bandwidth_gbps: 0, shared_d2h_bandwidth_gbps: 0, shared_h2d_bandwidth_gbps: 0 },
          },
        ],
      },
      workload: {
        prefixes: { system: 8 },
        requests: [
          { id: 'a1', arrival_ms: 0, prompt: [{ prefix: 'system' }, { tokens: 1 }], output_length: 2 },
          { id: 'a2', arrival_ms: 20, extends: 'a1', prompt: [{ tokens: 4 }], output_length: 2 },
        ],
      },
    },
  };
  const violations = runCase(fuzzCase).violations;
  const { config, feature } = writeCase(fuzzCase, 'defect-3');
  const result = cucumber(feature);
  const check = fuzz('--check', config);
  if (violations.length === 0) {
    assert.equal(result.status, 0, result.output);
    assert.equal(check.status, 0, check.output);
    return;
  }
  assert.equal(result.status, 1, result.output);
  assert.ok(new RegExp(`✖ (Then|And) ${INVARIANT_CLAIMS[violations[0].invariant]}`).test(result.output), result.output);
  assert.equal(check.status, 1, check.output);
  assert.ok(check.output.includes(violations[0].message), check.output);
});

test('a run that spun on preemption early and then stopped preempting, still unsettled at its budget, is a livelock', () => {
  // The spin case with a faster restore (6,580 preemptions in its first 45,000 or so kernel
  // events), then 1,500 small requests: at a budget of 60,000 events the run has preempted more
  // than once per 10 events overall, but not over the budget's second half.
  const config = parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'fuzz', 'preemption-spin.yaml'), 'utf8').replace('shared_h2d_bandwidth_gbps: 0.01', 'shared_h2d_bandwidth_gbps: 0.95'));
  for (let i = 0; i < 1500; i++) config.workload.requests.push({ id: `tail${i}`, arrival_ms: (2000 + i) / 100, prompt: [{ tokens: 3 }], output_length: 1 });
  const spinThenMore = caseConfig(caseFromYaml(stringify(config), null));
  // One checked run each (the classification is the run's; a whole case would run twice).
  const stopped = runObserved(spinThenMore, {}, undefined, undefined, 60_000);
  assert.ok(stopped.error instanceof UnsettledError, String(stopped.error));
  assert.deepEqual(checkRun(stopped).map((violation) => violation.invariant), ['run-completed']);
  assert.equal(runObserved(caseConfig(caseFromYaml(stringify(config), null)), {}, undefined, undefined, 100_000).error, null, 'with a larger budget it settles');
});
