// End to end: code loaded into the cucumber runs (NODE_OPTIONS=--require, nothing committed)
// rewrites each run's message stream at exit so that a failing scenario reads as passed. The
// sign-off, built from the streams, would pass every other gate; cucumber's exit status, its summary
// line and junit.xml disagree with the stream, and the Channels gate makes the run NOT QUALIFIED,
// naming each disagreement.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { qualifyInProcess } from '../support/qualify';
import { parseSignoffJson } from '../../src/signoff/jsonSchema';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-channels-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

test('a message stream rewritten at exit to pass: NOT QUALIFIED, the Channels gate naming the exit status, summary line and junit.xml of each run', async () => {
  const features = path.join(scratch, 'features');
  fs.mkdirSync(features);
  const fixture = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'signoff', 'features', 'hostile.feature'), 'utf8');
  const failing = fixture.replace('Then the router counted 4 host blocks on worker 1 for it', 'Then the router counted 5 host blocks on worker 1 for it');
  assert.notEqual(failing, fixture);
  fs.writeFileSync(path.join(features, 'hostile.feature'), failing);
  const out = path.join(scratch, 'out');
  // In this process: the variable reaches the suite runs, the processes whose streams are rewritten.
  const env: NodeJS.ProcessEnv = { NODE_OPTIONS: `--require ${path.join(ROOT, 'test', 'fixtures', 'channels', 'rewrite-stream.cjs')}` };
  const args = ['--features', features, '--requirements', 'test/fixtures/signoff/requirements.yaml', '--out', out, '--no-coverage', '--fuzz-runs', '0'];
  const run = await qualifyInProcess(args, env);
  assert.equal(run.status, 1, run.stdout + run.stderr);
  const signoff = parseSignoffJson(fs.readFileSync(path.join(out, 'signoff.json'), 'utf8'), 'signoff.json');
  const gate = (title: string) => signoff.gates.find((g) => g.title === title)!;
  assert.equal(gate('Scenarios').passed, true, 'the rewritten stream reads as every scenario passed');
  assert.equal(signoff.verdict, 'NOT QUALIFIED');
  const channels = gate('Channels');
  assert.equal(channels.passed, false);
  for (const label of ['run 1 of 2', 'run 2 of 2']) {
    assert.ok(channels.summary.includes(`${label}: cucumber exited with status 1, but its message stream says the run succeeded (3 scenarios, 3 passed)`), channels.summary);
    assert.ok(channels.summary.includes(`${label}: cucumber's summary line says 3 scenarios, 2 passed, its message stream 3 scenarios, 3 passed`), channels.summary);
  }
  assert.ok(channels.summary.includes('run 1 of 2: its junit.xml says 3 scenarios, 2 passed, its message stream 3 scenarios, 3 passed'), channels.summary);
  assert.ok(signoff.environment!.some((v) => v.name === 'NODE_OPTIONS'), 'the variable is named in the sign-off');
  assert.match(run.stdout, /FAIL {2}Channels: /);
});
