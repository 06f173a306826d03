// The project's step hooks (steps/support/assertions.ts) in a real cucumber run of a fixture suite:
// a Then that asserts nothing fails, a Then that catches its own failed assertion fails, honest ones
// pass, a Given or When needs no assertion of its own, and a scenario with no Then (Givens and Whens
// only, or `*` steps) or with a When after its last Then fails before its steps run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../support/paths';

const FIXTURE = path.join('test', 'fixtures', 'step-checks');

test('a Then that checks nothing, or swallows its failed check, fails the scenario, as does a scenario without a Then; honest steps pass', () => {
  const cucumber = path.join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js');
  const result = spawnSync(process.execPath, [cucumber, '--profile', 'replay', '--require', path.join(FIXTURE, 'checks.steps.ts'), path.join(FIXTURE, 'checks.feature'), '--format', 'summary'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  const output = `${result.stdout}${result.stderr}`;
  assert.equal(result.status, 1, output);
  assert.match(output, /^8 scenarios \(6 failed, 2 passed\)$/m);
  assert.match(output, /✖ Then the fixture's sum is claimed without a check[^\n]*\n\s+Error: this Then step passed without checking anything: it made no assertion/);
  assert.match(output, /✖ Then the fixture's sum is 5, or so it says[^\n]*\n\s+Error: an assertion of this step failed and the step passed anyway \(caught inside it, or thrown where nothing awaited it\): a step must not swallow its own check/);
  const noThen = /✖ Before # steps\/support\/assertions\.ts:\d+\n\s+Error: this scenario has no Then step, so it checks nothing/g;
  assert.equal(output.match(noThen)?.length, 2, `both scenarios without a Then fail in the project's hook:\n${output}`);
  assert.match(output, /a scenario of bullet steps has no Then and fails # [^\n]*\n\s+✖ Before # steps\/support\/assertions/);
  assert.match(output, /a When after the last Then fails before its steps run # [^\n]*\n\s+✖ Before # steps\/support\/assertions\.ts:\d+\n\s+Error: this scenario has a step after its last Then that is not a Then/);
  assert.match(output, /a bullet step after the last Then fails before its steps run # [^\n]*\n\s+✖ Before # steps\/support\/assertions\.ts:\d+\n\s+Error: this scenario has a step after its last Then that is not a Then/);
});

test('an assertion caught inside a step (expect.fail, assert.fail, node:assert), an unawaited, never-settling or unhandled-rejected check fails that step only', () => {
  const fixture = path.join('test', 'fixtures', 'swallowed');
  const cucumber = path.join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js');
  const result = spawnSync(process.execPath, [cucumber, '--profile', 'replay', '--require', path.join(fixture, 'swallowed.steps.ts'), path.join(fixture, 'swallowed.feature'), '--format', 'summary'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  const output = `${result.stdout}${result.stderr}`;
  assert.equal(result.status, 1, output);
  assert.match(output, /^8 scenarios \(6 failed, 2 passed\)$/m);
  assert.match(output, /^16 steps \(6 failed, 10 passed\)$/m, `only the six Then steps fail (a late assertion of one is not charged to the next scenario's Given):\n${output}`);
  const swallowed = /✖ Then the fixture's value is checked with (expect\.fail|assert\.fail|node's strictEqual against 5), caught[^\n]*\n\s+Error: an assertion of this step failed and the step passed anyway/g;
  assert.equal(output.match(swallowed)?.length, 3, output);
  assert.match(output, /✖ Then the fixture's value is checked later against 5, unawaited[^\n]*\n\s+Error: 3 promises this step made were still pending when it returned/);
  assert.match(output, /✖ Then the fixture's value is checked in a promise that never settles[^\n]*\n\s+Error: a promise this step made was still pending when it returned/);
  assert.match(output, /✖ Then the fixture's value is checked in a promise rejected unhandled[^\n]*\n\s+Error: a promise this step made was rejected and nothing handled it: the value is 4, not 5/);
});
