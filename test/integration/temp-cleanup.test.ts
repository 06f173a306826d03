// `npm run qualify` removes the temporary folder of its coverage run when it exits, and one that a
// run killed outright left behind. (That the unit tests leave no kvqual-* folder in their TMPDIR
// is checked by npm test itself, which gives them one of their own: scripts/test.js.)
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
