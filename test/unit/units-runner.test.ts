// test/units.ts, the runner of every unit test file in one process: each file is a suite named by
// its path, a file that throws while it loads is a failed test of its own (so that it is counted,
// as a failed suite is not), the other files still run, and the process exits 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../support/paths';

test('a file that breaks while it loads and a failing test are both counted as failures; the other files run', () => {
  // From test/ through tsx, or from build/test/ compiled (the sign-off's coverage run).
  const extension = path.extname(__filename);
  const runner = path.join(__dirname, '..', `units${extension}`);
  const fixtures = path.join(__dirname, '..', 'fixtures', 'units');
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const args = [...(extension === '.ts' ? ['--require', 'tsx/cjs'] : []), '--test-reporter=tap', runner, fixtures];
  const run = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env });
  assert.equal(run.status, 1, run.stdout + run.stderr);
  const count = (label: string) => Number(new RegExp(`^# ${label} (\\d+)$`, 'm').exec(run.stdout)?.[1] ?? -1);
  assert.deepEqual([count('tests'), count('pass'), count('fail')], [4, 2, 2], run.stdout);
  for (const name of ['a-passes', 'b-breaks-on-load', 'c-fails']) assert.match(run.stdout, new RegExp(`^# Subtest: .*fixtures/units/${name}\\.test\\.[jt]s$`, 'm'), `a suite named by the file ${name}`);
  assert.match(run.stdout, /not ok 1 - the file loads\n[\s\S]*?this fixture breaks while it loads/);
  assert.match(run.stdout, /ok 2 - a fixture test after the failing one/);
});
