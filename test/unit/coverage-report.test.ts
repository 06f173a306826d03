// Unit tests of the coverage run's report (src/signoff/coverageRun.ts, coverageReport): c8's report made in
// this process over a small checkout compiled by esbuild, mapped back to its TypeScript; every file of
// src/ counts, loaded or not; no raw coverage to read is a problem of the coverage run, not a crash.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { coverageReport, emptyCoverageRun } from '../../src/signoff/coverageRun';
import type { DriverContext } from '../../src/signoff/context';
import { scratchFolder } from '../support/scratch';

/** A checkout whose src/ holds a loaded file (one branch taken, one not) and a file nothing loads, compiled to build/src with maps; removed after `t`. */
function compiledCheckout(t: TestContext): string {
  const root = scratchFolder('coverage-report', t);
  fs.mkdirSync(path.join(root, 'src'));
  fs.writeFileSync(path.join(root, 'src', 'loaded.ts'), 'export function sign(n: number): string {\n  if (n < 0) {\n    return "negative";\n  }\n  return "not negative";\n}\nsign(1);\n');
  fs.writeFileSync(path.join(root, 'src', 'unloaded.ts'), 'export function never(): number {\n  return 1;\n}\n');
  const esbuild = require('esbuild') as typeof import('esbuild');
  esbuild.buildSync({ entryPoints: ['loaded.ts', 'unloaded.ts'].map((f) => path.join(root, 'src', f)), outdir: path.join(root, 'build'), outbase: root, format: 'cjs', platform: 'node', sourcemap: true, logLevel: 'silent' });
  return root;
}

const contextOf = (root: string) => ({ root }) as DriverContext;

test('c8 reports in this process what ran, mapped back to src/, and counts a file nothing loaded', async (t) => {
  const root = compiledCheckout(t);
  const raw = path.join(root, 'build', '.v8-coverage');
  const ran = spawnSync(process.execPath, [path.join(root, 'build', 'src', 'loaded.js')], { env: { ...process.env, NODE_V8_COVERAGE: raw }, encoding: 'utf8' });
  assert.equal(ran.status, 0, ran.stderr);
  const run = emptyCoverageRun();
  // The checkout is not this process's working folder: the report does not depend on it.
  const measured = await coverageReport(contextOf(root), run, 'features');
  assert.deepEqual(run.problems, []);
  assert.ok(measured.summary, measured.note);
  assert.deepEqual(measured.summary.groups.map((g) => [g.path, g.files]), [['src/', 2]]);
  assert.ok(measured.summary.lines.covered > 0 && measured.summary.lines.covered < measured.summary.lines.total, JSON.stringify(measured.summary.lines));
  assert.ok(measured.summary.branches.covered < measured.summary.branches.total, 'the branch not taken is not covered');
  assert.match(measured.summary.scope, /^Measured by c8 \d+\.\d+\.\d+ .*Every file of src\/ counts, loaded or not/);
});

test('no raw coverage to read (the compiled run collected none) is a problem of the coverage run, with c8 named', async (t) => {
  const root = compiledCheckout(t);
  const run = emptyCoverageRun();
  const measured = await coverageReport(contextOf(root), run, 'features');
  assert.equal(measured.summary, null);
  assert.match(measured.note, /^c8 could not report: /);
  assert.deepEqual(run.problems, [measured.note]);
});
