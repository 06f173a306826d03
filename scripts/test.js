#!/usr/bin/env node
// `npm test`: type-check, the requirement-tag lint, the check that docs/steps.md is current, unit
// and integration tests (node --test: test/integration, which runs the sign-off end to end and in a
// browser, and test/unit), and every feature (cucumber). Two lanes run at the same time, one per
// core: the test files (two at a time, the longest first) and, beside them, the checks and the
// features one after another. Compact: each phase prints one line with its count and time, in
// this order whichever finishes first; what failed is printed in full (the tool's own output for
// it); what passed is a count. Ends with one line `N passed, N failed` (CI reads it) that counts
// tests and scenarios, exactly in that form; undefined, pending, ambiguous and failed steps all
// count as failed, and skipped tests (e.g. the browser test without Chromium) are counted on the
// line before it, each named above. The unit tests and the integration files each run with a
// TMPDIR of their own: a kvqual-* entry a test left there is a failure too.
// It first makes the compiled command line current when a source changed (bin/compiled.js, as `npm ci`
// does), so that the tests' kvqual processes start as a user's do.
// KVQUAL_TEST_VERBOSE=1 prints every tool's whole output as well.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const reports = path.join(root, 'reports');
const verbose = process.env.KVQUAL_TEST_VERBOSE === '1';

const tally = { passed: 0, failed: 0, skipped: 0 };

/** test/unit's files, run in one process (test/units.ts): a Node start and a load of src/ for all of them. */
const UNITS = path.join('test', 'units.ts');
/**
 * Integration test files started first, longest first (by their CPU time, measured), so that the
 * rest fits beside them: signoff.test.ts qualifies fixture suites and the whole suite several times
 * and drives Chromium; the sweep tests run sweeps and their forked workers; the author's loop
 * starts cucumber (ts-node too); the Kubernetes examples' pods; fuzz.test.ts shrinks a
 * counterexample and replays a livelock; the bad inputs' commands; the shard tests qualify in
 * shards; the channels' lies; the browser's figure cache (Chromium); misused steps; the planted
 * faults; qualify's --out (a name that does not exist is passed over). The rest follow in name
 * order (each a few seconds of CPU). test/unit's run beside them, in a process of their own
 * (test/units.ts).
 */
const LONGEST_TEST_FILES = ['signoff', 'sweep', 'author-loop', 'k8s-examples', 'fuzz', 'sweep-search', 'bad-inputs', 'qualify-shards', 'channels', 'figure-cache-browser', 'step-misuse', 'faults', 'qualify-out'].map((name) => path.join('test', 'integration', `${name}.test.ts`));
/** Integration test files run at a time by node --test (its default on two cores is one), beside the unit tests. */
const TEST_FILES_AT_ONCE = 2;

/** Runs a tool to its end; resolves with its status and output (never rejects on a failing status). */
function run(command, args, env = process.env) {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => {
      resolve({ status, stdout, output: `${stdout}${stderr}`, seconds: ((Date.now() - started) / 1000).toFixed(1) });
    });
  });
}

/**
 * What a phase prints (its line, and in full what failed) and adds to the tally: collected while it
 * runs beside others, printed in the phases' own order.
 */
function report() {
  const printed = [];
  const problems = [];
  return {
    problems,
    problem: (text) => problems.push(text),
    write: (text) => printed.push(text),
    line: (title, text, seconds) => printed.push(`${title.padEnd(26)} ${text} (${seconds} s)\n`),
    text: () => printed.join(''),
  };
}

function indent(text) {
  return text.replace(/\s+$/, '').split('\n').map((l) => `    ${l}`).join('\n') + '\n';
}

/** A check that passes or fails as a whole: its output is shown only when it fails. */
async function check(title, command, args, summary) {
  const out = report();
  const result = await run(command, args);
  if (verbose) out.write(result.output);
  if (result.status === 0) {
    tally.passed++;
    out.line(title, summary ? summary(result.output) : 'ok', result.seconds);
    return out;
  }
  tally.failed++;
  out.problem(`${title} failed`);
  out.line(title, 'FAILED', result.seconds);
  out.write(indent(result.output || `exit status ${result.status}`));
  return out;
}

/**
 * The type check (scripts/typecheck.ts: tsc's build mode, which does nothing when no file changed
 * since a check that passed), its record in build/typecheck, the sign-off's: a qualification with
 * coverage (signoff.test.ts runs one) checks the project's types with the same record, so whichever
 * of the two comes second waits for the first and finds its work done (src/signoff/typeCheck.ts).
 */
function typecheck() {
  return check('type-check (tsc)', process.execPath, ['--require', 'tsx/cjs', path.join(root, 'scripts', 'typecheck.ts')]);
}

async function requirementLint() {
  const lint = path.join(root, 'scripts', 'lint-requirements.ts');
  if (!fs.existsSync(lint)) return report();
  return check('requirement tags (lint)', process.execPath, ['--require', 'tsx/cjs', lint], (output) => {
    const summary = output.split('\n').find((l) => l.startsWith('requirement tags:'));
    return summary ? summary.replace(/^requirement tags: /, '') : 'ok';
  });
}

async function stepsDoc() {
  const script = path.join(root, 'scripts', 'steps-doc.ts');
  if (!fs.existsSync(script)) return report();
  return check('docs/steps.md is current', process.execPath, ['--require', 'tsx/cjs', script, '--check']);
}

/** The TAP blocks of failed tests (from `not ok` to the end of its diagnostics), in full. */
function failedTapBlocks(tap) {
  const lines = tap.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*not ok \d+ - /.test(lines[i])) continue;
    const block = [lines[i]];
    for (let j = i + 1; j < lines.length; j++) {
      block.push(lines[j]);
      if (/^\s+\.\.\.$/.test(lines[j])) break;
    }
    if (block.some((l) => /failureType: 'subtestsFailed'/.test(l))) continue;
    blocks.push(block.join('\n'));
  }
  return blocks;
}

/** The *.test.ts files of test/NAME, in name order. */
function testsIn(name) {
  const dir = path.join(root, 'test', name);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.test.ts')).sort().map((f) => path.join('test', name, f)) : [];
}

/** The integration test files, the longest first, then the rest of test/integration in name order. */
function integrationFiles() {
  const all = testsIn('integration');
  return [...LONGEST_TEST_FILES.filter((f) => all.includes(f)), ...all.filter((f) => !LONGEST_TEST_FILES.includes(f))];
}

/** The name of tsx's compile cache in a temporary folder (tsx-<uid>). */
function tsxCacheName() {
  return `tsx-${typeof process.geteuid === 'function' ? process.geteuid() : os.userInfo().username}`;
}

/**
 * A temporary folder of a test runner's own (its TMPDIR), in which the tests must leave no kvqual-*
 * entry; tsx's compile cache is reached through a link to the system's, as a cold one would
 * compile every source again.
 */
function unitsTempFolder(system = os.tmpdir()) {
  const folder = fs.mkdtempSync(path.join(system, 'kvqual-test-units-'));
  const cache = path.join(system, tsxCacheName());
  // Made when it is not there yet (a fresh machine), so that what these runs compile is kept for the next.
  fs.mkdirSync(cache, { recursive: true, mode: 0o700 });
  fs.symlinkSync(cache, path.join(folder, tsxCacheName()));
  return folder;
}

/** The kvqual-* entries left in a temporary folder (tsx's compile cache is the tool's, kept on purpose). */
function leftovers(folder) {
  return fs.readdirSync(folder).filter((name) => name.startsWith('kvqual-')).sort();
}

/** A tool run with a TMPDIR of its own: what it left there (kvqual-* entries) comes back as `left`, and the folder is removed. */
async function runInOwnTemp(args) {
  const folder = unitsTempFolder();
  try {
    const result = await run(process.execPath, args, { ...process.env, TMPDIR: folder });
    return { ...result, left: leftovers(folder) };
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

/** test/unit's files in one process (test/units.ts) with a TMPDIR of their own: what they left there is a failure of its own. */
function unitRun() {
  return runInOwnTemp(['--require', 'tsx/cjs', '--test-reporter=tap', UNITS]);
}

/** The integration files (node --test, a few at a time) with a TMPDIR of their own, as the unit tests. */
function integrationRun(files) {
  return runInOwnTemp(['--require', 'tsx/cjs', '--test', `--test-concurrency=${TEST_FILES_AT_ONCE}`, '--test-reporter=tap', ...files]);
}

/** The integration test files (node --test, a few at a time) and, beside them, the unit tests. */
async function unitTests() {
  const out = report();
  const integration = integrationFiles();
  const units = testsIn('unit').length;
  if (integration.length + units === 0) return out;
  const started = Date.now();
  const runs = await Promise.all([
    integration.length === 0 ? null : integrationRun(integration),
    units === 0 ? null : unitRun(),
  ]);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const results = runs.filter((result) => result !== null);
  if (verbose) for (const result of results) out.write(result.output);
  const count = (label) => results.reduce((sum, result) => sum + Number((result.stdout.match(new RegExp(`^# ${label} (\\d+)$`, 'm')) || [0, 0])[1]), 0);
  // What each runner left in its temporary folder counts as one check more (a test removes the scratch folders it makes).
  const lefts = [[runs[0], 'integration'], [runs[1], 'unit']].filter(([result]) => result !== null).map(([result, kind]) => ({ kind, left: result.left }));
  const passed = count('pass') + lefts.filter(({ left }) => left.length === 0).length;
  const failed = count('fail') + count('cancelled') + lefts.filter(({ left }) => left.length > 0).length;
  const skipped = count('skipped') + count('todo');
  tally.passed += passed;
  tally.failed += failed;
  tally.skipped += skipped;
  out.line('unit + integration tests', `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} in ${integration.length + units} files`, seconds);
  for (const result of results) {
    for (const match of result.stdout.matchAll(/^\s*ok \d+ - (.*) # SKIP(.*)$/gm)) out.write(`    skipped: ${match[1]}${match[2] ? ` (${match[2].trim()})` : ''}\n`);
  }
  for (const result of results) for (const block of failedTapBlocks(result.stdout)) out.write(indent(block));
  for (const { kind, left } of lefts) {
    if (left.length === 0) continue;
    out.problem(`the ${kind} tests left temporary folders behind`);
    out.write(`    the ${kind} tests left in their TMPDIR: ${left.join(', ')} (a test must remove the scratch folders it makes)\n`);
  }
  for (const [result, what] of [[runs[0], 'the integration test runner'], [runs[1], 'the unit test runner']]) {
    if (result === null || result.status === 0 || failedTapBlocks(result.stdout).length > 0 || /^# fail [1-9]/m.test(result.stdout)) continue;
    tally.failed++;
    out.problem(`${what} failed`);
    out.write(indent(result.output));
  }
  return out;
}

const RANK = { UNKNOWN: 6, PASSED: 0, SKIPPED: 1, PENDING: 3, UNDEFINED: 4, AMBIGUOUS: 5, FAILED: 6 };

/** Counts scenarios by their worst step result from cucumber's message stream. */
function countScenarios(ndjson) {
  const worst = new Map();
  for (const text of ndjson.split('\n')) {
    if (!text) continue;
    const message = JSON.parse(text);
    if (message.testCaseStarted) worst.set(message.testCaseStarted.id, 'PASSED');
    if (message.testStepFinished) {
      const { testCaseStartedId, testStepResult } = message.testStepFinished;
      const current = worst.get(testCaseStartedId) ?? 'PASSED';
      if ((RANK[testStepResult.status] ?? 6) > RANK[current]) worst.set(testCaseStartedId, testStepResult.status);
    }
  }
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const status of worst.values()) {
    if (status === 'PASSED') counts.passed++;
    else if (status === 'SKIPPED') counts.skipped++;
    else counts.failed++;
  }
  return counts;
}

async function features() {
  const out = report();
  fs.mkdirSync(reports, { recursive: true });
  const messages = path.join(reports, 'test-messages.ndjson');
  fs.rmSync(messages, { force: true });
  // The summary formatter prints every failure in full (with "did you mean" for a misspelt step).
  // Started by Node itself with V8's --no-turbo-inlining, as qualify starts its suite runs
  // (SUITE_NODE_OPTIONS in src/signoff/suiteRunner.ts): about a sixth less CPU, the same results.
  const cucumber = path.join(root, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js');
  const result = await run(process.execPath, ['--no-turbo-inlining', cucumber, '--format', 'summary', '--format', `message:${messages}`]);
  if (verbose) out.write(result.output);
  if (!fs.existsSync(messages)) {
    tally.failed++;
    out.problem('cucumber did not run');
    out.line('features (cucumber)', 'DID NOT RUN', result.seconds);
    out.write(indent(result.output));
    return out;
  }
  const counts = countScenarios(fs.readFileSync(messages, 'utf8'));
  tally.passed += counts.passed;
  tally.failed += counts.failed;
  tally.skipped += counts.skipped;
  out.line('features (cucumber)', `${counts.passed} scenarios passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`, result.seconds);
  if (counts.failed > 0 || result.status !== 0) out.write(indent(result.output));
  if (result.status !== 0 && counts.failed === 0) {
    tally.failed++;
    out.problem('cucumber exited with an error');
  }
  return out;
}

/** Starts `first`, then each of `rest` when the one before it has finished; returns every phase's promise. */
function oneAfterAnother(first, ...rest) {
  const phases = [first()];
  for (const next of rest) phases.push(phases[phases.length - 1].then(next));
  return phases;
}

/**
 * The compiled command line (bin/compiled.js, which `npm ci` runs) made current before any test
 * starts, when a source changed since it was built: the tests start bin/kvqual.js as a user does,
 * and a stale build has every start, and every sweep worker, load the TypeScript through tsx (about
 * a third more CPU for the whole of npm test's kvqual processes). The tests of the tsx path ask for
 * it (KVQUAL_TSX=1). When it cannot compile, kvqual runs through tsx and the tests run all the same.
 */
function compiledCli() {
  const compiled = require(path.join(root, 'bin', 'compiled.js'));
  if (compiled.currentBuild(root) !== null) return;
  try {
    compiled.buildCli(root);
  } catch (error) {
    if (verbose) process.stdout.write(`the command line is not compiled (kvqual runs through tsx): ${error && error.message ? error.message.split('\n')[0] : error}\n`);
  }
}

async function main() {
  const started = Date.now();
  compiledCli();
  // Two lanes at once: the test files, and beside them the checks and the features in turn.
  const tests = unitTests();
  const [types, lint, steps, scenarios] = oneAfterAnother(typecheck, requirementLint, stepsDoc, features);
  const problems = [];
  for (const phase of [types, lint, steps, tests, scenarios]) {
    const out = await phase;
    process.stdout.write(out.text());
    problems.push(...out.problems);
  }
  process.stdout.write(`\nnpm test took ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  for (const problem of problems) process.stdout.write(`problem: ${problem}\n`);
  if (tally.skipped > 0) process.stdout.write(`${tally.skipped} skipped (named above)\n`);
  process.stdout.write(`${tally.passed} passed, ${tally.failed} failed\n`);
  process.exit(tally.failed > 0 ? 1 : 0);
}

module.exports = { compiledCli, countScenarios, failedTapBlocks, leftovers, unitsTempFolder };
if (require.main === module) {
  main().catch((error) => {
    process.stdout.write(`npm test could not run: ${error && error.stack ? error.stack : error}\n0 passed, 1 failed\n`);
    process.exit(1);
  });
}
