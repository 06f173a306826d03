// The order-independence proof (src/signoff/isolation.ts) with a stand-in for the replays: a
// scenario that fails alone, is not run alone or simulates something else alone is named, with
// why; one whose replay could not be read is a problem; only what passed is replayed, at most
// ISOLATION_PARALLEL at once; the sign-off model makes it a gate, or its Determinism gate says it was not proven.
import { unitSignoffInput } from '../support/signoffInput';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aloneDifference, checkIsolation, isolationSummary, ISOLATION_PARALLEL, type IsolationCheck } from '../../src/signoff/isolation';
import type { RunModel, RunScenario } from '../../src/signoff/messages';
import { evidenceFromComputation } from '../../src/report/evidence';
import { buildSignoff } from '../../src/signoff/model';
import { parseRegistry } from '../../src/signoff/requirements';

function scenario(line: number, overrides: Partial<RunScenario> = {}): RunScenario {
  return {
    key: `features/a.feature:${line}`,
    uri: 'features/a.feature',
    line,
    name: `at ${line}`,
    feature: { name: 'f', description: '' },
    rule: null,
    tags: ['@LAG-1'],
    steps: [{ kind: 'step', keyword: 'Then', type: 'Outcome', text: 'so', table: null, docString: null, status: 'PASSED', message: null }],
    status: 'PASSED',
    evidence: evidenceFromComputation('blocks', { line }, 1893),
    evidenceError: null,
    attachments: [],
    perturbation: null,
    ...overrides,
  };
}

const runOf = (scenarios: RunScenario[]): RunModel => ({ scenarios, sources: [], cucumberVersion: '12.9.0', phrases: [], runErrors: [], finished: true });

test('a replay alone that passes with the same digest is no difference; failing, missing or simulating something else is, with why', () => {
  const inRun = scenario(3);
  assert.equal(aloneDifference(inRun, scenario(3)), null);
  assert.equal(aloneDifference(inRun, undefined), 'it was not run when replayed alone');
  assert.equal(aloneDifference(inRun, scenario(3, { status: 'FAILED' })), 'it passed in the suite but is failed when replayed alone: it depends on what ran before it in the same process');
  assert.match(aloneDifference(inRun, scenario(3, { status: 'NOT RUN' }))!, /is not run when replayed alone/);
  const other = scenario(3, { evidence: evidenceFromComputation('blocks', { line: 4 }, 1893) });
  assert.match(aloneDifference(inRun, other)!, /^it did something different when replayed alone \(digest sha256:\w+, in the suite sha256:\w+\): what ran before it changed what it simulated$/);
});

test('only what passed is replayed, at most two at once, each difference and unreadable replay named', async () => {
  const scenarios = [scenario(1), scenario(2), scenario(3), scenario(4, { status: 'FAILED' }), scenario(5, { status: 'NOT RUN', emptyExamples: 'none' })];
  let running = 0;
  let most = 0;
  const replayed: number[] = [];
  const check = await checkIsolation(runOf(scenarios), async ({ line }) => {
    replayed.push(line);
    running++;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    if (line === 3) return { run: null, problem: 'cucumber wrote no message stream' };
    return { run: runOf([scenario(line, { status: line === 2 ? 'FAILED' : 'PASSED' })]), problem: null };
  });
  assert.deepEqual(replayed.sort(), [1, 2, 3]);
  assert.equal(most, ISOLATION_PARALLEL);
  assert.equal(check.ran, 3);
  assert.deepEqual(check.dependent.map((d) => d.key), ['features/a.feature:2']);
  assert.deepEqual(check.problems, ['"at 3" (features/a.feature:3) replayed alone: cucumber wrote no message stream']);
  assert.equal(isolationSummary(check), '3 passed scenarios replayed alone, each in a process of its own: 1 did not: "at 2"; could not complete: "at 3" (features/a.feature:3) replayed alone: cucumber wrote no message stream');
  assert.equal(isolationSummary({ ran: 1, dependent: [], problems: [] }), '1 passed scenario replayed alone, each in a process of its own: each passed alone as in the suite');
});

test('the sign-off makes the proof a gate when it ran, and says order independence was not proven when it did not', () => {
  const run = runOf([scenario(1)]);
  const input = (isolation: IsolationCheck | null | undefined) =>
    buildSignoff(unitSignoffInput(run, parseRegistry('requirements:\n  - { id: LAG-1, title: Lag, source: s, owner: QA }\n'), { isolation }));
  const gate = (model: ReturnType<typeof buildSignoff>) => model.gates.find((g) => g.title === 'Order independence');
  assert.equal(gate(input({ ran: 1, dependent: [], problems: [] }))!.passed, true);
  assert.equal(gate(input({ ran: 1, dependent: [{ key: 'k', name: 'n', why: 'w' }], problems: [] }))!.passed, false);
  assert.equal(gate(input({ ran: 1, dependent: [], problems: ['p'] }))!.passed, false);
  const notRun = input(null);
  assert.equal(gate(notRun), undefined);
  assert.match(notRun.gates.find((g) => g.title === 'Determinism')!.summary, /; order independence not proven \(no --isolation\)$/);
  assert.doesNotMatch(input(undefined).gates.find((g) => g.title === 'Determinism')!.summary, /order independence/);
});

test('a replay is judged by its own scenario in the stream; a scenario without evidence on one side has digest "none"', async () => {
  const bare = scenario(3, { evidence: null });
  assert.equal(aloneDifference(bare, scenario(3, { evidence: null })), null);
  assert.match(aloneDifference(bare, scenario(3))!, /\(digest sha256:\w+, in the suite none\)/);
  assert.match(aloneDifference(scenario(3), bare)!, /\(digest none, in the suite sha256:\w+\)/);
  // The replay's stream also holds another scenario, which failed: only the replayed one counts.
  const check = await checkIsolation(runOf([scenario(3)]), async () => ({ run: runOf([scenario(9, { status: 'FAILED' }), scenario(3)]), problem: null }));
  assert.deepEqual(check, { ran: 1, dependent: [], problems: [] });
});

test('an unreadable replay without a reason says there was no message stream; the summary separates names and problems', async () => {
  const check = await checkIsolation(runOf([scenario(3)]), async () => ({ run: null, problem: null }));
  assert.deepEqual(check.problems, ['"at 3" (features/a.feature:3) replayed alone: no message stream']);
  const summary = isolationSummary({ ran: 4, dependent: [{ key: 'k1', name: 'one', why: 'w' }, { key: 'k2', name: 'two', why: 'w' }], problems: ['p', 'q'] });
  assert.equal(summary, '4 passed scenarios replayed alone, each in a process of its own: 2 did not: "one", "two"; could not complete: p; q');
});
