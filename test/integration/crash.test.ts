// A cucumber run that stops before it writes its whole message stream (src/signoff/messages.ts):
// the sign-off names the culprit instead of showing every scenario "not run". A scenario with no
// steps (cucumber's own reports break on it) is named from the sources; a failing AfterAll hook is
// named by cucumber's last words, and the stream's end points at the last scenario it reached.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { parseRun, runLastWords } from '../../src/signoff/messages';

const FIXTURE = path.join('test', 'fixtures', 'crash');
const CUCUMBER = path.join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js');

function run(args: string[]): { stream: ReturnType<typeof parseRun>; output: string; status: number | null } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-crash-'));
  try {
    const messages = path.join(dir, 'messages.ndjson');
    const result = spawnSync(process.execPath, [CUCUMBER, '--profile', 'replay', ...args, '--format', `message:${messages}`], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    return { stream: parseRun(fs.existsSync(messages) ? fs.readFileSync(messages, 'utf8') : ''), output: `${result.stdout}${result.stderr}`, status: result.status };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('a scenario with no steps stops the run; the sign-off names it from the sources', () => {
  const { stream, status } = run([path.join(FIXTURE, 'nosteps.feature')]);
  assert.notEqual(status, 0);
  assert.equal(stream.finished, false);
  assert.deepEqual(stream.runErrors, [`the message stream has no testRunFinished: the run did not complete; a scenario has no steps, on which cucumber's reports break: test/fixtures/crash/nosteps.feature:9 "a scenario with no steps"`]);
});

test("a failing AfterAll hook stops the run; cucumber's last words name it, and the stream says where it ends", () => {
  const { stream, output, status } = run(['--require', path.join(FIXTURE, 'afterall.steps.ts'), path.join(FIXTURE, 'ok.feature')]);
  assert.notEqual(status, 0);
  assert.equal(stream.finished, false);
  assert.equal(stream.runErrors.length, 1);
  assert.match(stream.runErrors[0], /^the message stream has no testRunFinished: the run did not complete; the stream ends (in|after) the scenario "/);
  assert.match(runLastWords(output)!, /^cucumber's last words: Error: a BeforeAll hook errored, process exiting: test\/fixtures\/crash\/afterall\.steps\.ts:3 \/ \[cause\]: Error: the AfterAll hook broke/);
});
