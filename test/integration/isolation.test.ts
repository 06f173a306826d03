// The order-independence proof (src/signoff/isolation.ts) on a fixture whose second scenario passes
// only when the first ran before it in the same process: the suite passes in file order and in
// either order of a shuffled run that keeps the first scenario first, but replayed alone, each in a
// process of its own, the second fails and is named; the first is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { parseRun } from '../../src/signoff/messages';
import { checkIsolation, isolationSummary } from '../../src/signoff/isolation';

const FIXTURE = path.join('test', 'fixtures', 'order');
const CUCUMBER = path.join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js');

/** The fixture's scenarios run by cucumber (the project's steps and hooks and the fixture's steps), read from their message stream. */
function cucumber(paths: string[], dir: string): ReturnType<typeof parseRun> {
  const messages = path.join(dir, `messages-${fs.readdirSync(dir).length}.ndjson`);
  const result = spawnSync(process.execPath, [CUCUMBER, '--profile', 'replay', '--require', path.join(FIXTURE, 'order.steps.ts'), ...paths, '--format', `message:${messages}`], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.ok(fs.existsSync(messages), `${result.stdout}${result.stderr}`);
  return parseRun(fs.readFileSync(messages, 'utf8'));
}

test('a scenario that passes only after another in the same process is caught when replayed alone; its neighbour is not', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-isolation-'));
  try {
    const feature = path.join(FIXTURE, 'order.feature');
    const suite = cucumber([feature], dir);
    assert.deepEqual(suite.scenarios.map((s) => s.status), ['PASSED', 'PASSED'], 'in file order both pass');
    const check = await checkIsolation(suite, async ({ uri, line }) => ({ run: cucumber([`${uri}:${line}`], dir), problem: null }));
    assert.equal(check.ran, 2);
    assert.deepEqual(check.problems, []);
    assert.deepEqual(check.dependent.map((d) => d.key), [`${feature.split(path.sep).join('/')}:10`]);
    assert.match(check.dependent[0].why, /^it passed in the suite but is failed when replayed alone: it depends on what ran before it in the same process$/);
    assert.match(isolationSummary(check), /^2 passed scenarios replayed alone, each in a process of its own: 1 did not: "the second scenario needs a warm process"$/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
