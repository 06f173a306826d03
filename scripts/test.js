#!/usr/bin/env node
// `npm test`: type-check, the requirement-tag lint, unit and integration tests (node --test:
// test/unit, then test/integration, which runs the sign-off end to end and in a browser), then
// every feature (cucumber). Prints each tool's output, then one closing line `N passed, N failed`
// that counts tests and scenarios; undefined, pending, ambiguous and failed steps all count as
// failed, and skipped tests (e.g. the browser test without Chromium) as skipped.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const reports = path.join(root, 'reports');
fs.mkdirSync(reports, { recursive: true });

const tally = { passed: 0, failed: 0, skipped: 0 };
const problems = [];

function run(title, command, args, options = {}) {
  process.stdout.write(`\n── ${title} ──\n`);
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', env: process.env, ...options });
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.stderr) process.stderr.write(result.stderr);
  if (result.error) throw result.error;
  return result;
}

function typecheck() {
  const result = run('type-check (tsc --noEmit)', bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']);
  if (result.status !== 0) {
    tally.failed++;
    problems.push('type-check failed');
  }
}

function extraChecks() {
  const lint = path.join(root, 'scripts', 'lint-requirements.ts');
  if (!fs.existsSync(lint)) return;
  const result = run('requirement tags (lint)', process.execPath, ['--require', 'tsx/cjs', lint]);
  if (result.status !== 0) {
    tally.failed++;
    problems.push('requirement lint failed');
  }
}

function unitTests() {
  const testsIn = (name) => {
    const dir = path.join(root, 'test', name);
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.test.ts')).sort().map((f) => path.join('test', name, f)) : [];
  };
  const files = [...testsIn('unit'), ...testsIn('integration')];
  if (files.length === 0) return;
  const result = run('unit and integration tests (node --test)', process.execPath, ['--require', 'tsx/cjs', '--test', '--test-reporter=tap', ...files]);
  const count = (label) => Number((result.stdout.match(new RegExp(`^# ${label} (\\d+)$`, 'm')) || [0, 0])[1]);
  tally.passed += count('pass');
  tally.failed += count('fail') + count('cancelled');
  tally.skipped += count('skipped') + count('todo');
  if (result.status !== 0 && count('fail') + count('cancelled') === 0) {
    tally.failed++;
    problems.push('unit test runner failed');
  }
}

function features() {
  const messages = path.join(reports, 'test-messages.ndjson');
  fs.rmSync(messages, { force: true });
  const result = run('features (cucumber)', bin('cucumber-js'), ['--format', `message:${messages}`]);
  if (!fs.existsSync(messages)) {
    tally.failed++;
    problems.push('cucumber did not run');
    return;
  }
  const counts = countScenarios(fs.readFileSync(messages, 'utf8'));
  tally.passed += counts.passed;
  tally.failed += counts.failed;
  tally.skipped += counts.skipped;
  if (result.status !== 0 && counts.failed === 0) {
    tally.failed++;
    problems.push('cucumber exited with an error');
  }
}

const RANK = { UNKNOWN: 6, PASSED: 0, SKIPPED: 1, PENDING: 3, UNDEFINED: 4, AMBIGUOUS: 5, FAILED: 6 };

/** Counts scenarios by their worst step result from cucumber's message stream. */
function countScenarios(ndjson) {
  const worst = new Map();
  for (const line of ndjson.split('\n')) {
    if (!line) continue;
    const message = JSON.parse(line);
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

typecheck();
extraChecks();
unitTests();
features();

process.stdout.write('\n');
for (const problem of problems) process.stdout.write(`problem: ${problem}\n`);
const skipped = tally.skipped > 0 ? `, ${tally.skipped} skipped` : '';
process.stdout.write(`${tally.passed} passed, ${tally.failed} failed${skipped}\n`);
process.exit(tally.failed > 0 ? 1 : 0);
