// The planted-fault check end to end on a fixture suite with the real steps: scripts/fault-check.ts
// reruns what passed under each fault in one process, and a scenario no fault it is given reaches
// survives; `npm run qualify` runs the check as a phase and names an Outline whose Examples table has
// no rows, which covers nothing. The runs whose figures nobody reads (under a fault, run 2 on tsx)
// attach none, run 1 always does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { qualifyInProcess } from '../support/qualify';
import type { FaultCheck } from '../../src/signoff/faults';
import type { Envelope } from '@cucumber/messages';
import { faultRunEnvironment, runInProcess } from '../../scripts/suiteInProcess';
import { SCENARIO_FIGURES_ENV } from '../../src/report/figure';
import { runEnvironments } from '../../src/signoff/qualifyRun';
import type { DriverContext } from '../../src/signoff/context';

const FIXTURE = path.join('test', 'fixtures', 'unfailable');
const FEATURE = 'test/fixtures/unfailable/features/unfailable.feature';

test('only the scenarios that passed one fault run under the next; one that no fault reaches survives', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-faults-'));
  try {
    // The fixture's message stream, from a run in this process (the steps it loads serve the tests below); the check is a process of its own.
    const messages = path.join(dir, 'messages.ndjson');
    const first = await runInProcess(ROOT, { profile: 'replay', paths: [path.join(FIXTURE, 'features')], shard: null, order: null, reports: { message: messages }, env: process.env });
    assert.equal(first.thrown, null, first.output);
    const out = path.join(dir, 'faults.json');
    const result = spawnSync(process.execPath, ['--require', 'tsx/cjs', path.join('scripts', 'fault-check.ts'), messages, out, 'placement', 'lag'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
    const check = JSON.parse(fs.readFileSync(out, 'utf8')) as FaultCheck;
    assert.deepEqual(check.trials.map((t) => [t.fault, t.ran, t.caught]), [
      ['placement', 2, 1],
      ['lag', 1, 0],
    ]);
    assert.deepEqual(check.survivors.map((s) => s.key), [`${FEATURE}:18`]);
    assert.deepEqual(check.problems, []);
    const unknown = spawnSync(process.execPath, ['--require', 'tsx/cjs', path.join('scripts', 'fault-check.ts'), messages, out, 'lagg'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /KVQUAL_SIM_FAULT="lagg": expected one of event-ids, placement/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('qualify runs the check as a phase: every fault given, the gate passes when each scenario failed under one; the empty Examples table is named and its requirement not covered', async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-faults-out-'));
  try {
    const args = ['--features', path.join(FIXTURE, 'features'), '--requirements', path.join(FIXTURE, 'requirements.yaml'), '--out', out, '--no-coverage', '--fuzz-runs', '0'];
    const result = await qualifyInProcess(args);
    assert.equal(result.status, 1, result.output);
    const json = JSON.parse(fs.readFileSync(path.join(out, 'signoff.json'), 'utf8'));
    const gate = json.gates.find((g: { title: string }) => g.title === 'Planted faults');
    assert.equal(gate.passed, true, gate.summary);
    assert.match(gate.summary, /^2 passed scenarios run again under \d+ planted simulator faults in turn: every one failed under at least one$/);
    assert.deepEqual(json.gaps.checked_nothing, [{ key: `${FEATURE}:33`, why: 'of an outline has no rows, so the outline made no scenario of it and checked nothing' }]);
    const markdown = fs.readFileSync(path.join(out, 'signoff.md'), 'utf8');
    assert.match(markdown, /### Planted simulator faults\n\nThe scenarios that passed, run again under each fault in turn; only those that passed again ran under the next\.\n\n- `event-ids` \(/);
    assert.match(markdown, /\| Determinism \| both runs identical for all 2 scenarios; order independence not proven \(no --isolation\) \|/);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('the runs whose figures nobody reads attach none: a faulted run and run 2 on tsx; run 1 always draws them, whatever the shell says', async () => {
  const attached = async (env: NodeJS.ProcessEnv) => {
    const types: string[] = [];
    const run = await runInProcess(ROOT, { profile: 'replay', paths: ['features/router/lag_visibility.feature:27'], shard: null, order: null, reports: {}, env }, (envelope: Envelope) => {
      if (envelope.attachment) types.push(envelope.attachment.mediaType);
    });
    assert.equal(run.status, 0, run.output);
    return types;
  };
  const drawn = await attached({ ...process.env, [SCENARIO_FIGURES_ENV]: '' });
  assert.ok(drawn.includes('image/svg+xml'), `a figure attached by default: ${drawn.join(', ')}`);
  const undrawn = await attached({ ...process.env, [SCENARIO_FIGURES_ENV]: 'off' });
  assert.ok(!undrawn.includes('image/svg+xml'), `no figure when off: ${undrawn.join(', ')}`);
  assert.deepEqual(undrawn, drawn.filter((type) => type !== 'image/svg+xml'), 'the evidence and the rest attached all the same');
  assert.equal(faultRunEnvironment({}, 'lag')[SCENARIO_FIGURES_ENV], 'off');
  const envs = runEnvironments({ env: { [SCENARIO_FIGURES_ENV]: 'off' } } as unknown as DriverContext, { first: 'n1', second: 'n2' });
  assert.equal(envs.first[SCENARIO_FIGURES_ENV], undefined, "run 1 draws (its cucumber.html shows them) even when the shell turned them off");
  assert.equal(envs.second[SCENARIO_FIGURES_ENV], 'off');
});
