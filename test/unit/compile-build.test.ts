// Unit tests of the coverage run's compile (src/signoff/coverageRun.ts, compileBuild): esbuild writes
// build/ only for the sources whose JavaScript there is not what it wrote for their contents now. A
// source unchanged is left alone; a changed one, a damaged or missing output, a changed
// tsconfig.json or a lost record is compiled again, so that the coverage run never measures stale
// JavaScript.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { compileBuild, emptyCoverageRun } from '../../src/signoff/coverageRun';
import type { DriverContext } from '../../src/signoff/context';
import { scratchFolder } from '../support/scratch';

/** A checkout with two sources under src/ and one under steps/, and a tsconfig.json; removed after `t`. */
function checkout(t: TestContext): string {
  const root = scratchFolder('compile-build', t);
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  write('src/a.ts', 'export const a: number = 1;\n');
  write('src/b.ts', 'export const b: number = 2;\n');
  write('steps/s.ts', "export const s: string = 's';\n");
  write('tsconfig.json', '{ "compilerOptions": { "strict": true } }\n');
  return root;
}

const OUTPUTS = ['src/a.js', 'src/a.js.map', 'src/b.js', 'src/b.js.map', 'steps/s.js', 'steps/s.js.map'];
/** A time long ago, given to every output: one rewritten has a later one. */
const LONG_AGO = new Date('2001-01-01T00:00:00Z');

async function compile(root: string): Promise<void> {
  const run = emptyCoverageRun();
  assert.equal(await compileBuild({ root } as DriverContext, run), true, run.problems.join('; '));
  assert.deepEqual(run.problems, []);
}

function ageOutputs(root: string): void {
  for (const file of OUTPUTS) fs.utimesSync(path.join(root, 'build', file), LONG_AGO, LONG_AGO);
}

/** The outputs esbuild wrote again since ageOutputs. */
function rewritten(root: string): string[] {
  return OUTPUTS.filter((file) => fs.statSync(path.join(root, 'build', file)).mtimeMs !== LONG_AGO.getTime());
}

const built = (root: string, file: string) => fs.readFileSync(path.join(root, 'build', file), 'utf8');

test('the compile writes only what is not already the JavaScript of the sources as they are', async (t) => {
  const root = checkout(t);
  await compile(root);
  assert.match(built(root, 'src/a.js'), /a = 1/);
  assert.match(built(root, 'steps/s.js'), /s = "s"/);
  const fresh = built(root, 'src/b.js');

  ageOutputs(root);
  await compile(root);
  assert.deepEqual(rewritten(root), [], 'nothing changed, nothing compiled');

  fs.writeFileSync(path.join(root, 'src', 'a.ts'), 'export const a: number = 3;\n');
  await compile(root);
  assert.deepEqual(rewritten(root), ['src/a.js', 'src/a.js.map'], 'a changed source, and only it');
  assert.match(built(root, 'src/a.js'), /a = 3/);

  ageOutputs(root);
  fs.appendFileSync(path.join(root, 'build', 'src', 'b.js'), 'globalThis.tampered = true;\n');
  fs.utimesSync(path.join(root, 'build', 'src', 'b.js'), LONG_AGO, LONG_AGO);
  fs.rmSync(path.join(root, 'build', 'steps', 's.js.map'));
  await compile(root);
  assert.deepEqual(rewritten(root), ['src/b.js', 'src/b.js.map', 'steps/s.js', 'steps/s.js.map'], 'a damaged and a missing output: their sources compiled again');
  assert.equal(built(root, 'src/b.js'), fresh);

  ageOutputs(root);
  fs.writeFileSync(path.join(root, 'tsconfig.json'), '{ "compilerOptions": { "strict": false } }\n');
  await compile(root);
  assert.deepEqual(rewritten(root), OUTPUTS, 'tsconfig.json changed: everything compiled again');

  ageOutputs(root);
  fs.rmSync(path.join(root, 'build', 'compiled.json'));
  await compile(root);
  assert.deepEqual(rewritten(root), OUTPUTS, 'no record: everything compiled again');
});
