// A cucumber run whose message stream did not finish (src/signoff/messages.ts): the sign-off says
// where it stopped and why, from the stream (a scenario without steps in the sources, the scenario
// and step it ends in, the last scenario that finished) and from cucumber's own last words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRun, runLastWords, steplessScenarios } from '../../src/signoff/messages';

test('scenarios written without a step are found in the text, an outline without steps too; scenarios with steps are not', () => {
  const text = ['Feature: f', '', '  Scenario: has steps', '    Given x', '', '  Scenario: bare', '', '  Scenario Outline: bare outline', '    Examples:', '      | a |', '', '  Example: last and bare'].join('\n');
  assert.deepEqual(steplessScenarios('f.feature', text), ['f.feature:6 "bare"', 'f.feature:8 "bare outline"', 'f.feature:12 "last and bare"']);
  assert.deepEqual(steplessScenarios('f.feature', 'Feature: f\r  Scenario: a\r    * step\r'), []);
});

const pickle = { id: 'p1', uri: 'features/a.feature', location: { line: 3 }, name: 'the one', tags: [], astNodeIds: [], steps: [{ id: 's1', text: 'it runs', astNodeIds: [] }] };
const testCase = { id: 'c1', pickleId: 'p1', testSteps: [{ id: 'h1', hookId: 'x' }, { id: 't1', pickleStepId: 's1' }] };
const stream = (...envelopes: object[]) => [{ source: { uri: 'features/a.feature', data: 'Feature: a\n  Scenario: the one\n    Given it runs\n' } }, { pickle }, { testCase }, ...envelopes].map((e) => JSON.stringify(e)).join('\n');
const stopped = (text: string) => parseRun(text).runErrors[0].replace('the message stream has no testRunFinished: the run did not complete; ', '');

test('the stream names the scenario and the step or hook it ends in, or the last scenario that finished, or that none started', () => {
  const started = { testCaseStarted: { id: 'r1', testCaseId: 'c1', attempt: 0 } };
  assert.match(stopped(stream(started, { testStepStarted: { testCaseStartedId: 'r1', testStepId: 't1' } })), /^the stream ends in the scenario "the one" \(features\/a\.feature:3\) during its step "it runs" \(the process may have gone a little further/);
  assert.match(stopped(stream(started, { testStepStarted: { testCaseStartedId: 'r1', testStepId: 'h1' } })), /^the stream ends in the scenario "the one" \(features\/a\.feature:3\) during one of its hooks/);
  assert.match(stopped(stream(started, { testStepStarted: { testCaseStartedId: 'r1', testStepId: 't1' } }, { testStepFinished: { testCaseStartedId: 'r1', testStepId: 't1', testStepResult: { status: 'PASSED' } } })), /^the stream ends in the scenario "the one" \(features\/a\.feature:3\) \(the process/);
  assert.match(stopped(stream(started, { testCaseFinished: { testCaseStartedId: 'r1' } })), /^the stream ends after the scenario "the one" \(features\/a\.feature:3\) had finished: in a hook after it \(an AfterAll hook\)/);
  assert.equal(stopped(stream()), 'the stream ends before any scenario started (in a BeforeAll hook, or while loading the steps)');
  assert.equal(parseRun(stream({ testRunFinished: { success: true } })).runErrors.length, 0);
});

test("cucumber's last words are its error and the two lines after it, or its last three lines; none when it said nothing", () => {
  assert.equal(runLastWords('....\n...Error: it broke: here\n    at x (y.js:1)\n  [cause]: Error: because\n}\nmore\n'), "cucumber's last words: Error: it broke: here / [cause]: Error: because / }");
  assert.equal(runLastWords('one\ntwo\nthree\nfour\n'), "cucumber's last words: two / three / four");
  assert.equal(runLastWords('\n  \n'), null);
  assert.equal(runLastWords('a BeforeAll hook errored, process exiting\n'), "cucumber's last words: a BeforeAll hook errored, process exiting");
});
