#!/usr/bin/env node
// `npm test`: type-check, the requirement-tag lint, the check that docs/steps.md is current, unit
// and integration tests (node --test: test/unit, then test/integration, which runs the sign-off end
// to end and in a browser), then every feature (cucumber). Compact: each phase prints one line with
// its count and time; what failed is printed in full (the tool's own output for it); what passed
// is a count. Ends with one line `N passed, N failed` (CI reads it) that counts tests and
// scenarios; undefined, pending, ambiguous and failed steps all count as failed, and skipped tests
// (e.g. the browser test without Chromium) as skipped, each named.
// KVQUAL_TEST_VERBOSE=1 prints every tool's whole output as well.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const reports = path.join(root, 'reports');
const verbose = process.env.KVQUAL_TEST_VERBOSE === '1';

const tally = { passed: 0, failed: 0, skipped: 0 };
const problems = [];

function run(command, args) {
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', env: process.env, maxBuffer: 256 * 1024 * 1024 });
  if (result.error) throw result.error;
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (verbose) process.stdout.write(output);
  return { status: result.status, stdout: result.stdout ?? '', output, seconds: ((Date.now() - started) / 1000).toFixed(1) };
}

function line(title, text, seconds) {
  process.stdout.write(`${title.padEnd(26)} ${text} (${seconds} s)\n`);
}

function indent(text) {
  return text.replace(/\s+$/, '').split('\n').map((l) => `    ${l}`).join('\n') + '\n';
}

/** A check that passes or fails as a whole: its output is shown only when it fails. */
function check(title, command, args, summary) {
  const result = run(command, args);
  if (result.status === 0) {
    tally.passed++;
    line(title, summary ? summary(result.output) : 'ok', result.seconds);
    return;
  }
  tally.failed++;
  problems.push(`${title} failed`);
  line(title, 'FAILED', result.seconds);
  process.stdout.write(indent(result.output || `exit status ${result.status}`));
}

function typecheck() {
  check('type-check (tsc)', bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']);
}

function requirementLint() {
  const lint = path.join(root, 'scripts', 'lint-requirements.ts');
  if (!fs.existsSync(lint)) return;
  check('requirement tags (lint)', process.execPath, ['--require', 'tsx/cjs', lint], (output) => {
    const summary = output.split('\n').find((l) => l.startsWith('requirement tags:'));
    return summary ? summary.replace(/^requirement tags: /, '') : 'ok';
  });
}

function stepsDoc() {
  const script = path.join(root, 'scripts', 'steps-doc.ts');
  if (!fs.existsSync(script)) return;
  check('docs/steps.md is current', process.execPath, ['--require', 'tsx/cjs', script, '--check']);
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

function unitTests() {
  const testsIn = (name) => {
    const dir = path.join(root, 'test', name);
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.test.ts')).sort().map((f) => path.join('test', name, f)) : [];
  };
  const files = [...testsIn('unit'), ...testsIn('integration')];
  if (files.length === 0) return;
  const result = run(process.execPath, ['--require', 'tsx/cjs', '--test', '--test-reporter=tap', ...files]);
  const count = (label) => Number((result.stdout.match(new RegExp(`^# ${label} (\\d+)$`, 'm')) || [0, 0])[1]);
  const failed = count('fail') + count('cancelled');
  const skipped = count('skipped') + count('todo');
  tally.passed += count('pass');
  tally.failed += failed;
  tally.skipped += skipped;
  line('unit + integration tests', `${count('pass')} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} in ${files.length} files`, result.seconds);
  for (const match of result.stdout.matchAll(/^\s*ok \d+ - (.*) # SKIP(.*)$/gm)) process.stdout.write(`    skipped: ${match[1]}${match[2] ? ` (${match[2].trim()})` : ''}\n`);
  for (const block of failedTapBlocks(result.stdout)) process.stdout.write(indent(block));
  if (result.status !== 0 && failed === 0) {
    tally.failed++;
    problems.push('the unit test runner failed');
    process.stdout.write(indent(result.output));
  }
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

function features() {
  fs.mkdirSync(reports, { recursive: true });
  const messages = path.join(reports, 'test-messages.ndjson');
  fs.rmSync(messages, { force: true });
  // The summary formatter prints every failure in full (with "did you mean" for a misspelt step).
  const result = run(bin('cucumber-js'), ['--format', 'summary', '--format', `message:${messages}`]);
  if (!fs.existsSync(messages)) {
    tally.failed++;
    problems.push('cucumber did not run');
    line('features (cucumber)', 'DID NOT RUN', result.seconds);
    process.stdout.write(indent(result.output));
    return;
  }
  const counts = countScenarios(fs.readFileSync(messages, 'utf8'));
  tally.passed += counts.passed;
  tally.failed += counts.failed;
  tally.skipped += counts.skipped;
  line('features (cucumber)', `${counts.passed} scenarios passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}`, result.seconds);
  if (counts.failed > 0 || result.status !== 0) process.stdout.write(indent(result.output));
  if (result.status !== 0 && counts.failed === 0) {
    tally.failed++;
    problems.push('cucumber exited with an error');
  }
}

function main() {
  const started = Date.now();
  typecheck();
  requirementLint();
  stepsDoc();
  unitTests();
  features();
  process.stdout.write(`\nnpm test took ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  for (const problem of problems) process.stdout.write(`problem: ${problem}\n`);
  const skipped = tally.skipped > 0 ? `, ${tally.skipped} skipped` : '';
  process.stdout.write(`${tally.passed} passed, ${tally.failed} failed${skipped}\n`);
  process.exit(tally.failed > 0 ? 1 : 0);
}

module.exports = { countScenarios, failedTapBlocks };
if (require.main === module) main();
