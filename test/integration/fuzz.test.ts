// End to end tests of `npm run fuzz` and of the cases it writes: a run over the generator without
// its known-defect areas passes and exits 0; with the test double's planted defect
// (KVQUAL_FUZZ_PLANT=1, src/fuzz/planted.ts) a run finds a counterexample, shrinks it, exits 1,
// prints `{ seed, path }` and writes the config, trace and feature, and `--check`, `kvqual replay`,
// cucumber and `--path` all reproduce it (and pass without the plant, so a written feature fails
// exactly when its case breaks an invariant); a written feature runs under cucumber with the
// project's steps, passing for a case that keeps every invariant; and a run that spun on
// preemption early and then stopped preempting, unsettled at its budget, is a livelock, not too
// heavy to check; and a bad --path, --out or --check file exits 2 with one line before any case runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { scratchFolder } from '../support/scratch';
import { caseFiles, caseFromYaml } from '../../src/fuzz/scenario';
import { caseConfig, runCase, runObserved } from '../../src/fuzz/runCase';
import { checkRun } from '../../src/fuzz/invariants';
import { runFuzzCampaign } from '../../src/fuzz/campaign';
import { UnsettledError } from '../../src/kernel';
import { runReplay } from '../../src/replay';
import { parse } from 'yaml';
import type { FuzzCase } from '../../src/fuzz/generate';
import { runFuzz } from '../../scripts/fuzz';
import { kvqualInProcess } from '../support/cli';
import { environmentOutsideRuns, runWithOptions } from '../../scripts/suiteInProcess';

const scratch = scratchFolder('fuzz');

/** The environment that plants the fuzz test double's defect (src/fuzz/planted.ts). */
const PLANTED = { KVQUAL_FUZZ_PLANT: '1' };

function run(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; output: string } {
  const childEnv = { ...process.env, ...env };
  if (!('KVQUAL_FUZZ_PLANT' in env)) delete childEnv.KVQUAL_FUZZ_PLANT;
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env: childEnv });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** `npm run fuzz -- ARGS` as a real process: kept where its exit status and streams are what is tested (a pass, a usage error, a counterexample). */
const fuzzProcess = (args: string[], env: NodeJS.ProcessEnv = {}) => run(['--require', 'tsx/cjs', 'scripts/fuzz.ts', ...args], env);

/** `npm run fuzz -- ARGS` in this process (scripts/fuzz.ts's runFuzz), with `env` (the planted defect only when given): a Node start and a load of the simulator saved per case. */
function fuzz(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; output: string } {
  let stdout = '';
  let stderr = '';
  const status = runFuzz(args, { out: (text) => void (stdout += text), err: (text) => void (stderr += text), env: { ...env } });
  return { status, output: `${stdout}${stderr}` };
}
/** `npx cucumber-js --profile replay FEATURE` as a real process: kept for the run whose failure (exit status 1) is tested. */
const cucumber = (feature: string, env: NodeJS.ProcessEnv = {}) => run([path.join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js'), '--profile', 'replay', feature], env);

/** The same run in this process, through cucumber's API (scripts/suiteInProcess.ts: the steps loaded once, cucumber's own exit status and output): a Node start and a load of cucumber, tsx and the steps saved per run. */
async function cucumberHere(feature: string, env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; output: string }> {
  const runEnv = { ...environmentOutsideRuns(), ...env };
  if (!('KVQUAL_FUZZ_PLANT' in env)) delete runEnv.KVQUAL_FUZZ_PLANT;
  const { status, output } = await runWithOptions(ROOT, { profiles: ['replay'], provided: { paths: [feature], format: ['progress'] } }, runEnv);
  return { status, output };
}

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
  const result = fuzzProcess(['--runs', '40', '--seed', '1893', '--exclude', 'known', '--out', path.join(scratch, 'clean')]);
  assert.equal(result.status, 0, result.output);
  assert.match(result.output, /40 cases passed every invariant in [\d.]+ s \(seed 1893\)/);
  assert.ok(!fs.existsSync(path.join(scratch, 'clean')), 'nothing is written when every case passes');
});

test('bad arguments exit 2 with the usage', () => {
  for (const [index, args] of [['--runs', 'many'], ['--exclude', 'everything'], ['--frobnicate']].entries()) {
    // The first as a real process (its exit status and stream), the others in this process.
    const result = (index === 0 ? fuzzProcess : fuzz)(args);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.output}`);
    assert.match(result.output, /usage: npm run fuzz/);
  }
});

test('--check of a case whose trace kvqual refuses exits 2 with the trace, the line and the problem', () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'bad-trace-'));
  fs.writeFileSync(path.join(dir, 'case.yaml'), fs.readFileSync(path.join(ROOT, 'examples', 'agentic', 'two-lanes-shared.yaml'), 'utf8').replace('trace: coding-agent.jsonl', 'trace: trace.jsonl'));
  fs.writeFileSync(path.join(dir, 'trace.jsonl'), '{"schema":"dynamo.agentic_mooncake","version":2,"block_size":4}\n{"request_id":"a","play_id":"p","session_id":"s","input_length":4,"output_length":1,"hash_ids":[1],"priority":3}\n');
  const result = fuzz(['--check', path.join(dir, 'case.yaml')]);
  assert.equal(result.status, 2, result.output);
  assert.match(result.output, /fuzz --check: trace\.jsonl: line 2: priority 3: /);
  assert.doesNotMatch(result.output, /^\s+at /m);
});

/**
 * The seed of the counterexample test: its case 8 is the first that reuses cached tokens (the
 * planted defect), and fast-check shrinks it 56 times, in about a fifteenth of the CPU that seed 1's
 * case 2 took to shrink 110 times (3.4 s, paid twice: by the process and by the check of its
 * as-found path). Any seed whose first failing case comes after the first and shrinks serves.
 */
const COUNTEREXAMPLE_SEED = 33;

test('a counterexample (the planted defect) is shrunk, written, and reproduces by --check, kvqual replay, cucumber and --path; without the plant each passes', async () => {
  const out = path.join(scratch, 'planted');
  const result = fuzzProcess(['--runs', '100', '--seed', String(COUNTEREXAMPLE_SEED), '--out', out], PLANTED);
  assert.equal(result.status, 1, result.output);
  assert.match(result.output, /^fuzz: TEST DOUBLE ACTIVE \(KVQUAL_FUZZ_PLANT=1\)/m);
  // The first case that reuses cached tokens (the seed's generator draws decide which one).
  const failed = /^fuzz: case (\d+) of 100 failed after [\d.]+ s; shrunk [1-9]\d* time\(s\)$/m.exec(result.output);
  assert.ok(failed, result.output);
  assert.match(result.output, /✗ no request reuses more tokens than its prompt: planted defect \(test double KVQUAL_FUZZ_PLANT=1\): request \S+ reused \d+ cached tokens/);
  const origin = JSON.parse(/^counterexample: (.*)$/m.exec(result.output)![1]) as { seed: number; path: string };
  assert.equal(origin.seed, COUNTEREXAMPLE_SEED);
  assert.notEqual(failed[1], '1', 'cases passed before the counterexample');
  assert.match(origin.path, /^\d+(:\d+)*$/);
  // Before shrinking (which can take long on a heavy case), the command that replays the case as found:
  // from there fast-check shrinks to the same counterexample.
  const asFound = new RegExp(`^fuzz: case ${failed[1]} broke an invariant; shrinking… \\(as found: KVQUAL_FUZZ_PLANT=1 npm run fuzz -- --seed ${COUNTEREXAMPLE_SEED} --path (\\d+)\\)$`, 'm').exec(result.output);
  assert.ok(asFound, result.output);
  assert.equal(runFuzzCampaign({ runs: 100, seed: COUNTEREXAMPLE_SEED, path: asFound[1], exclude: [], planted_defect: true }).counterexample?.path, origin.path);
  const config = /^replay it: +npx kvqual replay (.*)$/m.exec(result.output)![1];
  const feature = config.replace(/\.yaml$/, '.feature');
  assert.ok(fs.existsSync(config) && fs.existsSync(feature), result.output);
  assert.match(result.output, new RegExp(`^check it: +KVQUAL_FUZZ_PLANT=1 npm run fuzz -- --check ${config}$`, 'm'), 'the commands it prints plant the defect again');
  const written = fs.readFileSync(config, 'utf8');
  assert.match(written, new RegExp(`^# Check its invariants: KVQUAL_FUZZ_PLANT=1 npm run fuzz -- --check ${config}$`, 'm'), 'and so do the written files');
  assert.match(written, /^# It was found with the planted defect of a test double \(KVQUAL_FUZZ_PLANT=1\) and breaks an invariant only with it planted\.$/m);
  assert.match(fs.readFileSync(feature, 'utf8'), /^ {2}It was found with the planted defect of a test double/m);

  const check = fuzz(['--check', config], PLANTED);
  assert.equal(check.status, 1, check.output);
  assert.match(check.output, /planted defect \(test double KVQUAL_FUZZ_PLANT=1\)/);
  const replay = kvqualInProcess(['replay', config]);
  assert.equal(replay.status, 0, `kvqual replay runs the written config: ${replay.stdout}${replay.stderr}`);
  const scenario = cucumber(feature, PLANTED);
  assert.equal(scenario.status, 1, scenario.output);
  assert.match(scenario.output, /1 scenario \(1 failed\)/);
  assert.match(scenario.output, /✖ (Then|And) no request reuses more tokens than its prompt/);
  const rerun = fuzz(['--seed', String(origin.seed), '--path', origin.path, '--out', path.join(scratch, 'rerun')], PLANTED);
  assert.equal(rerun.status, 1, rerun.output);
  assert.ok(rerun.output.includes(`counterexample: ${JSON.stringify(origin)}`), rerun.output);

  // The simulator itself keeps every invariant on the case: only the plant broke it.
  assert.equal(fuzz(['--check', config]).status, 0);
  const unplanted = await cucumberHere(feature);
  assert.equal(unplanted.status, 0, unplanted.output);
  assert.match(unplanted.output, /1 scenario \(1 passed\)/);
});

test('KVQUAL_FUZZ_PLANT other than 1 or 0 is a usage error, exit 2', () => {
  const result = fuzz(['--runs', '1'], { KVQUAL_FUZZ_PLANT: 'yes' });
  assert.equal(result.status, 2, result.output);
  assert.match(result.output, /KVQUAL_FUZZ_PLANT="yes": expected 1/);
});

test('a written feature runs under cucumber: it passes for a case that keeps every invariant', async () => {
  const example = path.join(ROOT, 'examples', 'configs', 'two-replicas-shared.yaml');
  const fuzzCase = caseFromYaml(fs.readFileSync(example, 'utf8'), null);
  assert.deepEqual(runCase(fuzzCase).violations, []);
  const { feature } = writeCase(fuzzCase, 'passing');
  const result = await cucumberHere(feature);
  assert.equal(result.status, 0, result.output);
  assert.match(result.output, /1 scenario \(1 passed\)/);
});

test('a run that spun on preemption early and then stopped preempting, still unsettled at its budget, is a livelock', () => {
  // The spin case with a faster restore (thousands of preemptions in its first 45,000 or so kernel
  // events), then 6,000 small requests: at a budget of 140,000 events the run has preempted more
  // than a spin needs overall, but not over the budget's second half. (With 1,500, a budget of
  // 60,000 still had 2,833 preemptions of cycles of one-token passes in its second half: a spin.)
  const config = parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'fuzz', 'preemption-spin.yaml'), 'utf8').replace('shared_h2d_bandwidth_gbps: 0.01', 'shared_h2d_bandwidth_gbps: 0.95'));
  for (let i = 0; i < 6000; i++) config.workload.requests.push({ id: `tail${i}`, arrival_ms: (2000 + i) / 100, prompt: [{ tokens: 3 }], output_length: 1 });
  // The case as read from its config (its 6,000 requests written as YAML and read back took more CPU than both runs).
  const spinThenMore: FuzzCase = { config, agentic_trace: null };
  // A checked run, not a whole case (the classification is the run's; a case would run twice), on a config of its own (caseConfig makes it anew).
  const stopped = runObserved(caseConfig(spinThenMore), {}, undefined, undefined, 140_000);
  assert.ok(stopped.error instanceof UnsettledError, String(stopped.error));
  assert.deepEqual(checkRun(stopped).map((violation) => violation.invariant), ['run-completed']);
  // A plain run (no observers, its digest left unmade) shows it settles: a third of the CPU of an observed one.
  assert.doesNotThrow(() => runReplay(caseConfig(spinThenMore), { max_kernel_events: 200_000, defer_digest: true }), 'with a larger budget it settles');
});

test('a bad --path exits 2 with one line before any case runs: malformed, empty parts, beyond the bound, naming no case, or without --seed', () => {
  const cases: [string[], RegExp][] = [
    [['--seed', '1', '--path', 'abc'], /^fuzz: --path abc: "abc" is not a whole number/],
    [['--seed', '1', '--path', '1:2:x'], /^fuzz: --path 1:2:x: "x" \(part 3\) is not a whole number/],
    [['--seed', '1', '--runs', '1', '--path', '0:'], /^fuzz: --path 0:: a part is empty \(part 2\)/],
    [['--seed', '1', '--path', '99999999999999999999'], /^fuzz: --path 99999999999999999999: .* beyond the limit of 1,000,000/],
    [['--seed', '1', '--path', '1000001'], /beyond the limit of 1,000,000/],
    [['--seed', '1', '--path', '0:99999'], /^fuzz: --path 0:99999: names no generated case with seed 1/m],
    [['--seed', '1', '--path', '0:99999:1'], /^fuzz: --path 0:99999:1: names no generated case with seed 1/m],
    [['--path', '3'], /^fuzz: --path 3: give the --seed it was found with/],
  ];
  for (const [args, message] of cases) {
    const started = Date.now();
    const result = fuzz(['--runs', '2', ...args, '--out', path.join(scratch, 'bad-path')]);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.output}`);
    assert.match(result.output, message, args.join(' '));
    assert.doesNotMatch(result.output, /^\s+at |Unable to replay|cases passed/m, args.join(' '));
    assert.ok(Date.now() - started < 20_000, `${args.join(' ')} took ${Date.now() - started} ms`);
  }
});

test('a bad --out exits 2 with one line before any case runs (a file, inside a file, a missing parent)', () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'bad-out-'));
  fs.writeFileSync(path.join(dir, 'file'), 'x');
  const cases: [string, RegExp][] = [
    [path.join(dir, 'file'), /^fuzz: --out .*file: is not a folder/],
    [path.join(dir, 'file', 'sub'), /^fuzz: --out .*sub: cannot be used \(ENOTDIR\)/],
    [path.join(dir, 'missing', 'sub'), /^fuzz: --out .*sub: the folder .*missing does not exist; create it first/],
  ];
  for (const [out, message] of cases) {
    // The planted defect fails the first case: before the fix the folder was refused only after shrinking.
    const result = fuzz(['--runs', '5', '--seed', '1', '--out', out], PLANTED);
    assert.equal(result.status, 2, `${out}: ${result.output}`);
    assert.match(result.output, message);
    assert.doesNotMatch(result.output, /broke an invariant|^\s+at /m);
  }
  if (process.getuid?.() !== 0) {
    const readOnly = path.join(dir, 'read-only');
    fs.mkdirSync(readOnly, { mode: 0o555 });
    const result = fuzz(['--runs', '5', '--seed', '1', '--out', readOnly], PLANTED);
    assert.equal(result.status, 2, result.output);
    assert.match(result.output, /^fuzz: --out .*read-only: cannot write in this folder/m);
  }
});

test('--check reads its file as kvqual reads a config: a device, a FIFO, an empty or blank file exit 2 with one line', () => {
  const dir = fs.mkdtempSync(path.join(scratch, 'bad-check-'));
  fs.writeFileSync(path.join(dir, 'empty.yaml'), '');
  fs.writeFileSync(path.join(dir, 'blank.yaml'), '  \n\n');
  fs.writeFileSync(path.join(dir, 'broken.yaml'), 'cluster: [\n');
  const cases: [string, RegExp][] = [
    [path.join(dir, 'empty.yaml'), /^fuzz --check: .*empty\.yaml: the file holds no case \(it is empty\)/],
    [path.join(dir, 'broken.yaml'), /^fuzz --check: cannot read .*broken\.yaml: Flow sequence in block collection must be sufficiently indented and end with a \] at line 2, column 1\n$/],
    [path.join(dir, 'blank.yaml'), /^fuzz --check: .*blank\.yaml: the file holds no case \(it is empty\)/],
    ['/dev/zero', /^fuzz --check: cannot read \/dev\/zero: it is a character device, not a regular file$/m],
  ];
  if (process.platform !== 'win32') {
    const fifo = path.join(dir, 'fifo.yaml');
    spawnSync('mkfifo', [fifo]);
    if (fs.existsSync(fifo)) cases.push([fifo, /^fuzz --check: cannot read .*fifo\.yaml: it is a FIFO \(named pipe\), not a regular file$/m]);
  }
  for (const [file, message] of cases) {
    const { status, output } = fuzz(['--check', file]);
    assert.equal(status, 2, `${file}: ${output}`);
    assert.match(output, message);
    assert.doesNotMatch(output, /^\s+at /m);
  }
});
