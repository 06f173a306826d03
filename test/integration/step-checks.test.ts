// The project's step hooks (steps/support/assertions.ts) in a real cucumber run of a fixture suite:
// a Then that asserts nothing fails, a Then that catches its own failed assertion fails, honest ones
// pass, a Given or When needs no assertion of its own, and a scenario with no Then (Givens and Whens
// only, or `*` steps) or with a When after its last Then fails before its steps run. Both fixture
// suites run in one cucumber process; each test reads its own file's scenarios from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { parseRun, type RunModel } from '../../src/signoff/messages';

const CHECKS = path.join('test', 'fixtures', 'step-checks');
const SWALLOWED = path.join('test', 'fixtures', 'swallowed');

/**
 * The two fixture suites in one real cucumber run (the project's steps and hooks, each fixture's own
 * steps; a Node start and a load of the steps for both): its printed summary, and its message stream
 * for what each file's scenarios and steps came to.
 */
function runBoth(): { status: number | null; output: string; stream: RunModel } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-step-checks-'));
  try {
    const messages = path.join(dir, 'messages.ndjson');
    const cucumber = path.join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js');
    const args = ['--profile', 'replay', '--require', path.join(CHECKS, 'checks.steps.ts'), '--require', path.join(SWALLOWED, 'swallowed.steps.ts'), path.join(CHECKS, 'checks.feature'), path.join(SWALLOWED, 'swallowed.feature'), '--format', 'summary', '--format', `message:${messages}`];
    const result = spawnSync(process.execPath, [cucumber, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    return { status: result.status, output: `${result.stdout}${result.stderr}`, stream: parseRun(fs.existsSync(messages) ? fs.readFileSync(messages, 'utf8') : '') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

let both: ReturnType<typeof runBoth> | null = null;
/** The run of both fixtures, made once for the two tests that read it. */
const run = () => (both ??= runBoth());

/** "N scenarios (F failed, P passed)" and "N steps (…)" of one feature file, as cucumber's summary would count them run alone. */
function counts(stream: RunModel, feature: string): { scenarios: string; steps: string } {
  const scenarios = stream.scenarios.filter((s) => s.uri === feature.split(path.sep).join('/'));
  const line = (statuses: string[], noun: string) => {
    const failed = statuses.filter((s) => s === 'FAILED').length;
    const passed = statuses.filter((s) => s === 'PASSED').length;
    assert.equal(failed + passed, statuses.length, `only failed and passed ${noun}: ${statuses.join(', ')}`);
    return `${statuses.length} ${noun} (${failed} failed, ${passed} passed)`;
  };
  return { scenarios: line(scenarios.map((s) => s.status), 'scenarios'), steps: line(scenarios.flatMap((s) => s.steps.filter((step) => step.kind === 'step' && step.status !== 'SKIPPED').map((step) => step.status)), 'steps') };
}

test('a Then that checks nothing, or swallows its failed check, fails the scenario, as does a scenario without a Then; honest steps pass', () => {
  const { status, output, stream } = run();
  assert.equal(status, 1, output);
  assert.match(output, /^16 scenarios \(12 failed, 4 passed\)$/m);
  assert.equal(counts(stream, path.join(CHECKS, 'checks.feature')).scenarios, '8 scenarios (6 failed, 2 passed)', output);
  assert.match(output, /✖ Then the fixture's sum is claimed without a check[^\n]*\n\s+Error: this Then step passed without checking anything: it made no assertion/);
  assert.match(output, /✖ Then the fixture's sum is 5, or so it says[^\n]*\n\s+Error: an assertion of this step failed and the step passed anyway \(caught inside it, or thrown where nothing awaited it\): a step must not swallow its own check/);
  const noThen = /✖ Before # steps\/support\/assertions\.ts:\d+\n\s+Error: this scenario has no Then step, so it checks nothing/g;
  assert.equal(output.match(noThen)?.length, 2, `both scenarios without a Then fail in the project's hook:\n${output}`);
  assert.match(output, /a scenario of bullet steps has no Then and fails # [^\n]*\n\s+✖ Before # steps\/support\/assertions/);
  assert.match(output, /a When after the last Then fails before its steps run # [^\n]*\n\s+✖ Before # steps\/support\/assertions\.ts:\d+\n\s+Error: this scenario has a step after its last Then that is not a Then/);
  assert.match(output, /a bullet step after the last Then fails before its steps run # [^\n]*\n\s+✖ Before # steps\/support\/assertions\.ts:\d+\n\s+Error: this scenario has a step after its last Then that is not a Then/);
});

test('an assertion caught inside a step (expect.fail, assert.fail, node:assert), an unawaited, never-settling or unhandled-rejected check fails that step only', () => {
  const { status, output, stream } = run();
  assert.equal(status, 1, output);
  const swallowed = counts(stream, path.join(SWALLOWED, 'swallowed.feature'));
  assert.equal(swallowed.scenarios, '8 scenarios (6 failed, 2 passed)', output);
  assert.equal(swallowed.steps, '16 steps (6 failed, 10 passed)', `only the six Then steps fail (a late assertion of one is not charged to the next scenario's Given):\n${output}`);
  const caught = /✖ Then the fixture's value is checked with (expect\.fail|assert\.fail|node's strictEqual against 5), caught[^\n]*\n\s+Error: an assertion of this step failed and the step passed anyway/g;
  assert.equal(output.match(caught)?.length, 3, output);
  assert.match(output, /✖ Then the fixture's value is checked later against 5, unawaited[^\n]*\n\s+Error: 3 promises this step made were still pending when it returned/);
  assert.match(output, /✖ Then the fixture's value is checked in a promise that never settles[^\n]*\n\s+Error: a promise this step made was still pending when it returned/);
  assert.match(output, /✖ Then the fixture's value is checked in a promise rejected unhandled[^\n]*\n\s+Error: a promise this step made was rejected and nothing handled it: the value is 4, not 5/);
});
