// Tests clean up after themselves: every unit test file that makes scratch folders, run with a
// TMPDIR of its own, leaves no kvqual-* folder there; and `npm run qualify` removes the temporary
// folder of its coverage run when it exits, and one that a run killed outright left behind.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-temp-cleanup-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** The kvqual-* entries of a folder (tsx's compile cache, tsx-<uid>, is the tool's, kept on purpose). */
const leftovers = (folder: string) => fs.readdirSync(folder).filter((name) => name.startsWith('kvqual-'));

/** The unit test files that make temporary folders: those that name mkdtemp, a scratch folder or the system's temporary folder. */
function filesMakingFolders(): string[] {
  const unit = path.join(ROOT, 'test', 'unit');
  return fs
    .readdirSync(unit)
    .filter((name) => name.endsWith('.test.ts') && /mkdtemp|scratchFolder|tmpdir\(\)/.test(fs.readFileSync(path.join(unit, name), 'utf8')))
    .sort()
    .map((name) => path.join('test', 'unit', name));
}

test('the unit test files that make scratch folders leave no kvqual-* folder in TMPDIR', () => {
  const tmp = path.join(scratch, 'units');
  fs.mkdirSync(tmp);
  const files = filesMakingFolders();
  assert.ok(files.length >= 10 && files.includes(path.join('test', 'unit', 'replay-cli.test.ts')), `found ${files.join(', ')}`);
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
  delete env.NODE_TEST_CONTEXT;
  // In one process (test/units.ts, as npm test runs test/unit): one Node start where --test makes one per file.
  const run = spawnSync(process.execPath, ['--require', 'tsx/cjs', '--test-reporter=dot', path.join('test', 'units.ts'), ...files], { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(run.status, 0, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`);
  assert.deepEqual(leftovers(tmp), []);
});

test('qualify removes the temporary folder of its coverage run when it exits, and one a killed run left', () => {
  const tmp = path.join(scratch, 'qualify');
  fs.mkdirSync(tmp);
  const killed = path.join(tmp, 'kvqual-qualify-2147483646-abc123');
  const running = path.join(tmp, `kvqual-qualify-${process.pid}-def456`);
  for (const folder of [killed, running]) fs.mkdirSync(path.join(folder, 'kvqual-replay-cli-x'), { recursive: true });
  const env = { ...process.env, TMPDIR: tmp };
  const run = spawnSync(process.execPath, ['--require', 'tsx/cjs', 'scripts/qualify.ts', '--help'], { cwd: ROOT, env, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(leftovers(tmp), [path.basename(running)], 'the left folder is removed, a running run\'s kept, its own removed at exit');
});
