// The sign-off's "scenarios must be able to fail" check (src/signoff/faults.ts) with a stand-in for
// the faulted cucumber runs: only the survivors of one fault run under the next, a scenario that
// passes under every fault is a survivor, one that checks a document is exempt and named, and an
// unreadable run or a scenario a run left out is a problem. The sign-off model then names the
// survivors as having checked nothing, fails the Planted faults gate and covers none of their
// requirements. Also: an Outline whose Examples table has no rows is read from the Gherkin document
// (src/signoff/messages.ts) and named, and the planted faults are switched on by name only.
import { unitSignoffInput } from '../support/signoffInput';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMessages } from '@cucumber/gherkin';
import { IdGenerator, SourceMediaType } from '@cucumber/messages';
import { checkFaults, DOCUMENT_EXEMPTION, faultCandidates, faultSummary, mergeFaultChecks, scenarioArguments, type FaultedRun } from '../../src/signoff/faults';
import { parseRun, type RunModel, type RunScenario } from '../../src/signoff/messages';
import { buildSignoff, CHECKED_NOTHING_WHY, type SignoffInput } from '../../src/signoff/model';
import { parseRegistry } from '../../src/signoff/requirements';
import { emptyEvidence, evidenceFromComputation } from '../../src/report/evidence';
import { faultPlanted, plantSimulatorFault, SIMULATOR_FAULT_ENV, SIMULATOR_FAULT_NAMES, simulatorFaultAsked, type SimulatorFault } from '../../src/fuzz/simulatorFaults';

function scenario(uri: string, line: number, overrides: Partial<RunScenario> = {}): RunScenario {
  return {
    key: `${uri}:${line}`,
    uri,
    line,
    name: `scenario at ${uri}:${line}`,
    feature: { name: 'f', description: '' },
    rule: null,
    tags: ['@LAG-1'],
    steps: [{ kind: 'step', keyword: 'Then', type: 'Outcome', text: 'it is so', table: null, docString: null, status: 'PASSED', message: null }],
    status: 'PASSED',
    evidence: evidenceFromComputation('blocks', { at: line }, 1893),
    evidenceError: null,
    attachments: [],
    perturbation: null,
    ...overrides,
  };
}

function runOf(scenarios: RunScenario[]): RunModel {
  return { scenarios, sources: [], cucumberVersion: '12.9.0', phrases: [], runErrors: [], finished: true };
}

/** A stand-in for the faulted runs: `dies[fault]` lists the keys that fail under it; every call is recorded. */
function fakeRuns(dies: Partial<Record<SimulatorFault, string[]>>, calls: { fault: SimulatorFault; args: string[] }[], tried: RunScenario[]): FaultedRun {
  return async (fault, args) => {
    calls.push({ fault, args });
    const asked = new Set(args.flatMap((arg) => arg.split(':').slice(1).map((line) => `${arg.split(':')[0]}:${line}`)));
    const ran = tried.filter((s) => asked.has(s.key)).map((s) => ({ ...s, status: (dies[fault] ?? []).includes(s.key) ? ('FAILED' as const) : ('PASSED' as const) }));
    return { run: runOf(ran), problem: null };
  };
}

test('only the scenarios that passed one fault run under the next; one that passes under every fault is a survivor', async () => {
  const a = scenario('features/a.feature', 3);
  const b = scenario('features/a.feature', 9);
  const c = scenario('features/b.feature', 4);
  const failed = scenario('features/b.feature', 12, { status: 'FAILED' });
  const calls: { fault: SimulatorFault; args: string[] }[] = [];
  const check = await checkFaults(runOf([a, b, c, failed]), fakeRuns({ placement: [a.key], reuse: [c.key] }, calls, [a, b, c, failed]), ['placement', 'reuse', 'lag']);
  assert.deepEqual(calls, [
    { fault: 'placement', args: ['features/a.feature:3:9', 'features/b.feature:4'] },
    { fault: 'reuse', args: ['features/a.feature:9', 'features/b.feature:4'] },
    { fault: 'lag', args: ['features/a.feature:9'] },
  ]);
  assert.deepEqual(
    check.trials.map((t) => [t.fault, t.ran, t.caught]),
    [
      ['placement', 3, 1],
      ['reuse', 2, 1],
      ['lag', 1, 0],
    ],
  );
  assert.deepEqual(check.survivors, [{ key: b.key, name: b.name }]);
  assert.deepEqual(check.problems, []);
  assert.equal(faultSummary(check), '3 passed scenarios run again under 3 planted simulator faults in turn: 1 passed under every fault (checked nothing)');
});

test('the check stops when every scenario has failed under some fault, and then has no survivor', async () => {
  const a = scenario('features/a.feature', 3);
  const calls: { fault: SimulatorFault; args: string[] }[] = [];
  const check = await checkFaults(runOf([a]), fakeRuns({ placement: [a.key] }, calls, [a]), ['placement', 'reuse']);
  assert.equal(calls.length, 1);
  assert.deepEqual(check.survivors, []);
  assert.equal(faultSummary(check), '1 passed scenario run again under 1 planted simulator fault in turn: every one failed under at least one');
});

test('a scenario that checks a document is not tried, and is named with why; an empty Examples stand-in is not tried', async () => {
  const doc = scenario('features/d.feature', 5, { evidence: evidenceFromComputation('document', { read: 'x' }, 1893) });
  const empty = scenario('features/e.feature', 8, { status: 'NOT RUN', emptyExamples: 'no rows' });
  const sim = scenario('features/s.feature', 2);
  const { tried, exempt } = faultCandidates(runOf([doc, empty, sim]));
  assert.deepEqual(tried.map((s) => s.key), [sim.key]);
  assert.deepEqual(exempt, [{ key: doc.key, name: doc.name, why: DOCUMENT_EXEMPTION }]);
  const check = await checkFaults(runOf([doc, sim]), fakeRuns({ placement: [sim.key] }, [], [doc, sim]), ['placement']);
  assert.deepEqual(check.survivors, []);
  assert.match(faultSummary(check), /; 1 exempt \(a document, not the simulator\)$/);
});

test('a faulted run that cannot be read, or that leaves a scenario out, is a problem of the check, and what it did not run is not counted as caught', async () => {
  const a = scenario('features/a.feature', 3);
  const b = scenario('features/a.feature', 9);
  const unreadable = await checkFaults(runOf([a]), async () => ({ run: null, problem: 'no stream' }), ['placement', 'reuse']);
  assert.deepEqual(unreadable.problems, ['the run under the planted fault "placement" could not be read: no stream']);
  assert.deepEqual(unreadable.trials, []);
  const leftOut = await checkFaults(runOf([a, b]), async () => ({ run: runOf([{ ...a, status: 'FAILED' }]), problem: null }), ['placement']);
  assert.deepEqual(leftOut.problems, [`under the planted fault "placement", a scenario was not run: "${b.name}" (${b.key})`]);
  assert.deepEqual(leftOut.survivors, [{ key: b.key, name: b.name }]);
  assert.deepEqual(leftOut.trials.map((t) => t.caught), [1]);
  assert.match(faultSummary(leftOut), /could not complete: under the planted fault "placement"/);
});

test("cucumber's arguments name each feature file once, its lines in order, the files in name order", () => {
  assert.deepEqual(scenarioArguments([
    { uri: 'features/b.feature', line: 12 },
    { uri: 'features/a.feature', line: 9 },
    { uri: 'features/b.feature', line: 4 },
  ]), ['features/a.feature:9', 'features/b.feature:4:12']);
});

test('a planted fault is switched on by its name only; an unknown name is an error naming the known ones', () => {
  assert.equal(simulatorFaultAsked({}), null);
  assert.equal(simulatorFaultAsked({ [SIMULATOR_FAULT_ENV]: '' }), null);
  assert.equal(simulatorFaultAsked({ [SIMULATOR_FAULT_ENV]: 'lag' }), 'lag');
  assert.throws(() => simulatorFaultAsked({ [SIMULATOR_FAULT_ENV]: 'lagg' }), /KVQUAL_SIM_FAULT="lagg": expected one of event-ids, placement, /);
  plantSimulatorFault('lag');
  try {
    assert.deepEqual(SIMULATOR_FAULT_NAMES.filter((f) => faultPlanted(f)), ['lag']);
  } finally {
    plantSimulatorFault(null);
  }
  assert.deepEqual(SIMULATOR_FAULT_NAMES.filter((f) => faultPlanted(f)), []);
});

const REGISTRY = parseRegistry(`
requirements:
  - { id: LAG-1, title: Lag is exact, source: semantics.md LAG-1, owner: QA }
  - { id: HASH-1, title: Complete blocks, source: semantics.md HASH-1, owner: QA }
`);

function signoffInput(run: RunModel, faults?: SignoffInput['faults']): SignoffInput {
  return unitSignoffInput(run, REGISTRY, { faults });
}

test('a survivor of every fault checked nothing: named, its requirement not covered, the Planted faults gate fails; without survivors the gate passes', async () => {
  const lag = scenario('features/lag.feature', 3);
  const hash = scenario('features/hash.feature', 5, { tags: ['@HASH-1'] });
  const run = runOf([lag, hash]);
  const check = await checkFaults(run, fakeRuns({ placement: [lag.key] }, [], [lag, hash]), ['placement']);
  const model = buildSignoff(signoffInput(run, check));
  assert.equal(model.verdict, 'NOT QUALIFIED');
  assert.deepEqual(model.checkedNothing.map(({ view, why }) => [view.scenario.key, why]), [[hash.key, CHECKED_NOTHING_WHY[3]]]);
  assert.deepEqual(model.matrix.map((row) => [row.requirement.id, row.ok]), [['HASH-1', false], ['LAG-1', true]]);
  const gate = model.gates.find((g) => g.title === 'Planted faults')!;
  assert.equal(gate.passed, false);
  const clean = buildSignoff(signoffInput(run, await checkFaults(run, fakeRuns({ placement: [lag.key, hash.key] }, [], [lag, hash]), ['placement'])));
  assert.equal(clean.gates.find((g) => g.title === 'Planted faults')!.passed, true);
  assert.equal(clean.verdict, 'QUALIFIED');
  const problem = buildSignoff(signoffInput(run, { trials: [], survivors: [], exempt: [], problems: ['no stream'] }));
  assert.equal(problem.gates.find((g) => g.title === 'Planted faults')!.passed, false);
  const notRun = buildSignoff(signoffInput(run, null));
  assert.ok(notRun.attention.some((a) => a.text.startsWith('The planted-fault check did not run')));
  assert.equal(notRun.gates.find((g) => g.title === 'Planted faults'), undefined);
});

/** The message stream Gherkin makes of a feature file (no test run). */
function gherkinStream(uri: string, text: string): string {
  const envelopes = generateMessages(text, uri, SourceMediaType.TEXT_X_CUCUMBER_GHERKIN_PLAIN, { includeSource: true, includeGherkinDocument: true, includePickles: true, newId: IdGenerator.incrementing() });
  return [...envelopes.map((e) => JSON.stringify(e)), JSON.stringify({ testRunFinished: { success: true } })].join('\n');
}

const OUTLINES = `@LAG-1
Feature: outlines

  @HASH-1
  Scenario Outline: a <n>-token prompt
    Then it has <n> tokens

    @SCORE-1
    Examples: none
      | n |

    Examples: some
      | n |
      | 3 |

  Scenario Outline: no table at all
    Then it has <n> tokens

    Examples:
`;

test('an Examples table without rows (or without a table) is a NOT RUN stand-in named with why, keyed by its line, with the tags its rows would have had', () => {
  const run = parseRun(gherkinStream('features/outlines.feature', OUTLINES));
  const stand = run.scenarios.filter((s) => s.emptyExamples !== undefined);
  assert.deepEqual(stand.map((s) => [s.key, s.status, s.tags]), [
    ['features/outlines.feature:9', 'NOT RUN', ['@LAG-1', '@HASH-1', '@SCORE-1']],
    ['features/outlines.feature:19', 'NOT RUN', ['@LAG-1']],
  ]);
  assert.match(stand[0].emptyExamples!, /^its Examples table \(line 9\) has no rows, so the outline "a <n>-token prompt" made no scenario of it/);
  assert.deepEqual(stand[0].steps.map((s) => [s.keyword, s.text, s.status]), [['Then', 'it has <n> tokens', 'NOT RUN']]);
  // The row that exists is a scenario as usual.
  assert.deepEqual(run.scenarios.filter((s) => s.emptyExamples === undefined).map((s) => s.key), ['features/outlines.feature:14']);
  const model = buildSignoff(signoffInput(run));
  assert.deepEqual(model.checkedNothing.map(({ view, why }) => [view.scenario.key, why]), [
    ['features/outlines.feature:9', CHECKED_NOTHING_WHY[2]],
    ['features/outlines.feature:19', CHECKED_NOTHING_WHY[2]],
  ]);
  assert.equal(model.gates.find((g) => g.title === 'Scenarios')!.passed, false);
  assert.deepEqual(model.matrix.map((row) => [row.requirement.id, row.ok]), [['HASH-1', false], ['LAG-1', false]]);
  // Neither run ran it: the determinism proof does not compare it (the Scenarios gate names it).
  assert.deepEqual(model.input.determinism.rows.map((row) => row.key), ['features/outlines.feature:14']);
});

test('an empty table under the Scenarios keyword (an Examples synonym) is named by the keyword the feature used', () => {
  const text = 'Feature: synonyms\n\n  Scenario Outline: a <n>-token prompt\n    Then it has <n> tokens\n\n    Scenarios: none\n      | n |\n';
  const stand = parseRun(gherkinStream('features/synonyms.feature', text)).scenarios.filter((s) => s.emptyExamples !== undefined);
  assert.deepEqual(stand.map((s) => s.key), ['features/synonyms.feature:6']);
  assert.match(stand[0].emptyExamples!, /^its Scenarios table \(line 6\) has no rows/);
});

test('an outline in a document that leaves out the optional fields of its Examples and steps is still named, keyed by the outline\'s line', () => {
  const envelopes = gherkinStream('features/outlines.feature', OUTLINES).split('\n').map((line) => JSON.parse(line));
  const document = envelopes.find((e) => e.gherkinDocument).gherkinDocument;
  const outline = document.feature.children[0].scenario;
  for (const examples of outline.examples) {
    delete examples.keyword;
    delete examples.location;
    delete examples.tags;
    if (examples.tableBody.length === 0) delete examples.tableBody;
  }
  for (const step of outline.steps) delete step.text;
  const stand = parseRun(envelopes.map((e) => JSON.stringify(e)).join('\n')).scenarios.filter((s) => s.emptyExamples !== undefined && s.uri === 'features/outlines.feature' && s.line === 5);
  assert.deepEqual(stand.map((s) => [s.key, s.tags]), [['features/outlines.feature:5', ['@LAG-1', '@HASH-1']]]);
  assert.match(stand[0].emptyExamples!, /^its Examples table \(line 5\) has no rows/);
  assert.deepEqual(stand[0].steps.map((s) => s.text), ['']);
});

test('the empty evidence of a scenario that drove nothing, or of one without evidence, is no document: it is tried like any other', () => {
  const nothing = scenario('features/n.feature', 2, { evidence: emptyEvidence(1893) });
  assert.deepEqual(faultCandidates(runOf([nothing])).tried.map((s) => s.key), [nothing.key]);
  const none = scenario('features/n.feature', 5, { evidence: null });
  assert.deepEqual(faultCandidates(runOf([none])).tried.map((s) => s.key), [none.key]);
});

test("a merge adds up its shards' checks into the check of the whole suite, and names a shard that recorded none", async () => {
  const a = scenario('features/a.feature', 3);
  const b = scenario('features/a.feature', 10);
  const c = scenario('features/b.feature', 4);
  const doc = scenario('features/d.feature', 2, { evidence: evidenceFromComputation('document', {}, 1893) });
  const dies = { placement: [a.key], reuse: [c.key] };
  const faults: SimulatorFault[] = ['placement', 'reuse', 'lag'];
  const whole = await checkFaults(runOf([a, b, c, doc]), fakeRuns(dies, [], [a, b, c, doc]), faults);
  const one = await checkFaults(runOf([b, c]), fakeRuns(dies, [], [b, c]), faults);
  const two = await checkFaults(runOf([a, doc]), fakeRuns(dies, [], [a, doc]), faults);
  assert.deepEqual(mergeFaultChecks([{ index: 1, count: 2, faults: one }, { index: 2, count: 2, faults: two }]), whole);
  const missing = mergeFaultChecks([{ index: 1, count: 2, faults: one }, { index: 2, count: 2, faults: undefined }]);
  assert.deepEqual(missing.problems, ['shard 2 of 2 recorded no planted-fault check']);
  // The shard without a check adds no trial, survivor or exemption of its own.
  assert.deepEqual({ ...missing, problems: [] }, { ...one, problems: [] });
});

test("a merge lists the shards' survivors and exemptions in the suite's order (by file, then by line as a number), whichever shard found them", () => {
  const check = (survivors: string[], exempt: string[]) => ({
    trials: [],
    survivors: survivors.map((key) => ({ key, name: key })),
    exempt: exempt.map((key) => ({ key, name: key, why: DOCUMENT_EXEMPTION })),
    problems: [],
  });
  const merged = mergeFaultChecks([
    { index: 1, count: 2, faults: check(['features/b.feature:4', 'features/a.feature:10'], ['features/d.feature:12']) },
    { index: 2, count: 2, faults: check(['features/a.feature:9', 'features/a.feature:100'], ['features/c.feature:30', 'features/d.feature:2']) },
  ]);
  assert.deepEqual(merged.survivors.map((s) => s.key), ['features/a.feature:9', 'features/a.feature:10', 'features/a.feature:100', 'features/b.feature:4']);
  assert.deepEqual(merged.exempt.map((s) => s.key), ['features/c.feature:30', 'features/d.feature:2', 'features/d.feature:12']);
});

test('scenarios a faulted run lists as not run are not caught: they stay alive and are named together as a problem', async () => {
  const a = scenario('features/a.feature', 3);
  const b = scenario('features/a.feature', 9);
  const c = scenario('features/b.feature', 4);
  const run = runOf([{ ...a, status: 'NOT RUN' }, { ...b, status: 'NOT RUN' }, { ...c, status: 'FAILED' }]);
  const check = await checkFaults(runOf([a, b, c]), async () => ({ run, problem: null }), ['placement']);
  assert.deepEqual(check.problems, [`under the planted fault "placement", 2 scenarios were not run: "${a.name}" (${a.key}), "${b.name}" (${b.key})`]);
  assert.deepEqual(check.survivors.map((s) => s.key), [a.key, b.key]);
  assert.deepEqual(check.trials.map((t) => [t.ran, t.caught]), [[3, 1]]);
  const unreadable = await checkFaults(runOf([a]), async () => ({ run: null, problem: null }), ['placement']);
  assert.deepEqual(unreadable.problems, ['the run under the planted fault "placement" could not be read: no message stream']);
  assert.match(faultSummary({ ...check, problems: ['one', 'two'] }), /could not complete: one; two$/);
});
