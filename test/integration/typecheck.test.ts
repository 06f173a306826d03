// The type check as `npm test` and the sign-off make it (src/signoff/typeCheck.ts), with the real
// tsc on a small project: a passing check leaves a record that makes the next one a no-op, and
// no record can hide an error: an error in a changed or a new file fails, and fails again until fixed;
// the sign-off's type check makes a type error a problem of its coverage run gate.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import ts from 'typescript';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { typeCheckPlan } from '../../src/signoff/typeCheck';
import { typeCheck } from '../../src/signoff/coverageRun';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-typecheck-'));
// The record outside the project: typeCheckPlan keeps it in whatever folder it is given.
const records = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-typecheck-records-'));
fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
// A type package named in `types` must be found from the record's config outside the project: a
// small one (seedrandom's), since Node's takes tsc most of its time and the check is the same; and
// ES5's library only, without the DOM's and the later editions' (which took tsc most of each run here).
fs.writeFileSync(path.join(root, 'tsconfig.json'), '{ "compilerOptions": { "strict": true, "lib": ["es5"], "types": ["seedrandom"] }, "include": ["*.ts"] }\n');
after(() => [root, records].forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

let clock = Date.parse('2030-01-01T00:00:00Z');
/** Writes a source file with a time later than anything before it (as an edit would). */
function write(name: string, text: string): void {
  const file = path.join(root, name);
  fs.writeFileSync(file, text);
  clock += 10_000;
  fs.utimesSync(file, new Date(clock), new Date(clock));
}

/** tsc's command line as the typescript module exports it (not in its typings): what bin/tsc calls with ts.sys. */
const commandLine = ts as unknown as { executeCommandLine(system: ts.System, callback: () => void, args: readonly string[]): void };

/**
 * tsc's command line run in this process on `args` from `cwd`: the compiler's own entry point
 * (what bin/tsc runs), with what it writes collected and its exit status kept, not exited with.
 */
function tscHere(args: string[], cwd: string): { status: number | null; output: string } {
  let output = '';
  let status: number | null = null;
  const system: ts.System = { ...ts.sys, write: (text) => void (output += text), writeOutputIsTTY: () => false, getCurrentDirectory: () => cwd, exit: (code) => void (status = code ?? 0) };
  commandLine.executeCommandLine(system, () => {}, args);
  return { status, output };
}

/**
 * One type check as the plan says: the first as a real tsc process (the plan's command and
 * arguments), the others through tsc's command line in this process (the same compiler, without
 * a Node start and a load of it each time).
 */
function check(how: 'process' | 'here' = 'here'): { status: number | null; output: string; forced: boolean } {
  const plan = typeCheckPlan(root, records);
  const args = [...plan.args, '--verbose'];
  const result = how === 'process' ? spawnSync(plan.command, args, { cwd: root, encoding: 'utf8' }) : null;
  const ran = result === null ? tscHere(args, root) : { status: result.status, output: `${result.stdout}${result.stderr}` };
  plan.done();
  return { ...ran, forced: plan.forced };
}

test('a passing check is not made again; an error in a changed or a new file fails every check until fixed', () => {
  write('a.ts', 'export const a: number = 1;\n');
  const first = check('process');
  assert.equal(first.status, 0, first.output);
  assert.equal(first.forced, true);
  const again = check();
  assert.equal(again.status, 0, again.output);
  assert.match(again.output, /is up to date/);

  write('a.ts', "export const a: number = 'one';\n");
  const broken = check();
  assert.notEqual(broken.status, 0);
  assert.match(broken.output, /a\.ts\(1,14\): error TS2322/);
  const stillBroken = check();
  assert.notEqual(stillBroken.status, 0, 'a check that found errors is never up to date');
  assert.match(stillBroken.output, /error TS2322/);

  write('a.ts', 'export const a: number = 1;\n');
  assert.equal(check().status, 0);
  write('b.ts', "import { a } from './a';\nexport const b: string = a;\n");
  const added = check();
  assert.notEqual(added.status, 0, 'a new file is checked');
  assert.match(added.output, /b\.ts\(2,14\): error TS2322/);
  fs.rmSync(path.join(root, 'b.ts'));
  assert.equal(check().status, 0, 'a removed file is no longer checked');
});

test("the sign-off's type check (the coverage run gate's tsc) turns a type error into a problem of the coverage run, and passes a project without one", async () => {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-typecheck-gate-'));
  try {
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(project, 'node_modules'), 'dir');
    fs.writeFileSync(path.join(project, 'tsconfig.json'), '{ "compilerOptions": { "strict": true, "lib": ["es5"], "types": ["seedrandom"] }, "include": ["*.ts"] }\n');
    fs.writeFileSync(path.join(project, 'a.ts'), "export const a: number = 'one';\n");
    const ctx = { root: project, env: {}, now: () => 0, date: () => '', subject: () => { throw new Error('not asked'); }, write: () => {} };
    const failed = { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], problems: [] as string[] };
    await typeCheck(ctx, process.env, failed);
    assert.equal(failed.problems.length, 1, failed.problems.join('\n'));
    assert.match(failed.problems[0], /^tsc reported errors: .*a\.ts\(1,14\): error TS2322/);
    fs.writeFileSync(path.join(project, 'a.ts'), 'export const a: number = 1;\n');
    fs.utimesSync(path.join(project, 'a.ts'), new Date(Date.now() + 10_000), new Date(Date.now() + 10_000));
    const passed = { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], problems: [] as string[] };
    await typeCheck(ctx, process.env, passed);
    assert.deepEqual(passed.problems, []);
  } finally {
    fs.rmSync(project, { recursive: true, force: true });
  }
});
