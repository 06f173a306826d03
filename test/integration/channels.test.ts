// End to end: code loaded into the cucumber runs (NODE_OPTIONS=--require, nothing committed)
// rewrites each run's message stream at exit so that a failing scenario reads as passed. The
// sign-off, built from the streams, would pass every other gate; cucumber's exit status, its summary
// line and junit.xml disagree with the stream, and the Channels gate makes the run NOT QUALIFIED,
// naming each disagreement (and that run 1's stream changed after the run had ended, before the
// process that ran it and its planted faults did). The same lie told of suite runs made in the test's own process through
// cucumber's API (scripts/suiteInProcess.ts, as most qualification tests run them) is caught the
// same way: their exit status, summary line and junit.xml are cucumber's own there too.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { qualifyInProcess } from '../support/qualify';
import { parseSignoffJson } from '../../src/signoff/jsonSchema';
import { firstThenFaults, type SuiteRunner } from '../../src/signoff/suiteRunner';
import { checkFaultsInProcess, IN_PROCESS_SUITE_RUNNER } from '../../scripts/suiteInProcess';

const REWRITE = path.join(ROOT, 'test', 'fixtures', 'channels', 'rewrite-stream.cjs');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { rewriteToPass } = require(REWRITE) as { rewriteToPass(file: string): void };

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-channels-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** The sign-off fixture's suite with one scenario made to fail (it counts 5 host blocks where there are 4), in `folder`. */
function failingSuite(folder: string): string {
  const features = path.join(scratch, folder, 'features');
  fs.mkdirSync(features, { recursive: true });
  const fixture = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'signoff', 'features', 'hostile.feature'), 'utf8');
  const failing = fixture.replace('Then the router counted 4 host blocks on worker 1 for it', 'Then the router counted 5 host blocks on worker 1 for it');
  assert.notEqual(failing, fixture);
  fs.writeFileSync(path.join(features, 'hostile.feature'), failing);
  return features;
}

/** qualify's arguments for the failing suite of `folder`, its sign-off in `folder`/out. */
function argsOf(folder: string): string[] {
  return ['--features', failingSuite(folder), '--requirements', 'test/fixtures/signoff/requirements.yaml', '--out', path.join(scratch, folder, 'out'), '--no-coverage', '--fuzz-runs', '0'];
}

/** The run is NOT QUALIFIED by the Channels gate alone, which names the exit status, summary line and junit.xml of each run. */
function assertCaught(folder: string, run: { status: number | null; stdout: string; stderr: string }): ReturnType<typeof parseSignoffJson> {
  assert.equal(run.status, 1, run.stdout + run.stderr);
  const signoff = parseSignoffJson(fs.readFileSync(path.join(scratch, folder, 'out', 'signoff.json'), 'utf8'), 'signoff.json');
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
  assert.match(run.stdout, /FAIL {2}Channels: /);
  return signoff;
}

test('a message stream rewritten at exit to pass: NOT QUALIFIED, the Channels gate naming the exit status, summary line and junit.xml of each run', async () => {
  // The driver in this process, its suite runs real processes (as `npm run qualify` makes them): the variable reaches them and their streams are rewritten at their exit.
  const env: NodeJS.ProcessEnv = { NODE_OPTIONS: `--require ${REWRITE}` };
  const run = await qualifyInProcess(argsOf('processes'), env, { processes: true });
  const signoff = assertCaught('processes', run);
  assert.ok(signoff.environment!.some((v) => v.name === 'NODE_OPTIONS'), 'the variable is named in the sign-off');
  // Run 1 shares its process with the planted faults after it (scripts/first-run.ts): its stream was read when it ended, and again when its process had.
  const channels = signoff.gates.find((g) => g.title === 'Channels')!;
  assert.ok(channels.summary.includes('run 1 of 2: its message stream changed after the run had ended, before its process did'), channels.summary);
});

test('the same lie of suite runs made in this process through cucumber\'s API is caught the same way', async () => {
  // Each run's stream rewritten to pass once cucumber has written it, before the driver reads it.
  const run: SuiteRunner['run'] = async (ctx, request) => {
    const done = await IN_PROCESS_SUITE_RUNNER.run(ctx, request);
    if (request.reports.message !== undefined) rewriteToPass(path.resolve(ctx.root, request.reports.message));
    return done;
  };
  const lying: SuiteRunner = { run, runFirst: (ctx, request) => firstThenFaults(ctx, request, run, checkFaultsInProcess) };
  assertCaught('in-process', await qualifyInProcess(argsOf('in-process'), {}, { suiteRunner: lying }));
});
