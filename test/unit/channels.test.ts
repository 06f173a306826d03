// Unit tests of src/signoff/channels.ts: cucumber's exit status, its printed summary line, its
// junit.xml and the message stream must agree; each disagreement (the stream rewritten to pass at
// exit, a summary or JUnit report that counts otherwise, a stream whose success contradicts its
// results) is named and fails the Channels gate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { channelDisagreements, channelsGate, CHANNELS_AGREE, junitTally, RunChannels, streamSuccess, summaryTally } from '../../src/signoff/channels';
import { parseRun } from '../../src/signoff/messages';
import { FakeScenario, fakeMessages } from '../support/messages';

const scenario = (name: string, line: number, status: 'PASSED' | 'FAILED' | 'SKIPPED' = 'PASSED'): FakeScenario => ({
  uri: 'features/a.feature',
  line,
  name,
  tags: ['@LAG-1'],
  steps: [
    { keyword: 'Given', text: 'a cluster', status: 'PASSED' },
    { keyword: 'Then', text: 'it holds', status },
  ],
});

const PASSING = fakeMessages([scenario('one', 3), scenario('two', 6), scenario('three', 9)]);
const FAILING = fakeMessages([scenario('one', 3), scenario('two', 6, 'FAILED'), scenario('three', 9)]).replace('"success":true', '"success":false');
const SUMMARY_PASSED = '...\n\n3 scenarios (3 passed)\n6 steps (6 passed)\n0m00.100s (executing steps: 0m00.050s)\n';
const SUMMARY_FAILED = '..F\n\n3 scenarios (1 failed, 2 passed)\n6 steps (1 failed, 5 passed)\n';
const JUNIT_PASSED = '<?xml version="1.0"?>\n<testsuite name="Cucumber" time="0.1" tests="3" skipped="0" failures="0" errors="0" timestamp="x">\n</testsuite>';
const JUNIT_FAILED = '<?xml version="1.0"?>\n<testsuite name="Cucumber" time="0.1" tests="3" skipped="0" failures="1" errors="0">\n</testsuite>';

function check(channels: Partial<RunChannels> & { stream: string | null }): string[] {
  return channelDisagreements({ label: 'run 1 of 2', ...channels }, channels.stream === null ? null : parseRun(channels.stream));
}

test("cucumber's summary line, JUnit counts and the stream's success are read", () => {
  assert.deepEqual(summaryTally(SUMMARY_FAILED), { ran: 3, passed: 2 });
  assert.deepEqual(summaryTally('1 scenario (1 passed)\n'), { ran: 1, passed: 1 });
  assert.deepEqual(summaryTally('0 scenarios\n0 steps\n'), { ran: 0, passed: 0 });
  assert.deepEqual(summaryTally('\u001b[32m2 scenarios (\u001b[31m1 failed\u001b[39m, \u001b[32m1 passed\u001b[39m)\u001b[39m\n'), { ran: 2, passed: 1 }, 'colours stripped');
  assert.deepEqual(summaryTally('4 scenarios (4 failed)\n'), { ran: 4, passed: 0 });
  assert.deepEqual(summaryTally('12 scenarios (2 undefined, 10 passed)\n'), { ran: 12, passed: 10 });
  assert.equal(summaryTally('no summary here\nrun 3 scenarios (3 passed) again\n'), null, 'a summary is a line of its own');
  assert.equal(summaryTally('run 3 scenarios (3 passed)\n'), null, 'from the start of its line');
  assert.equal(summaryTally('3 scenarios (3 passed) and more\n'), null, 'to its end');
  assert.deepEqual(junitTally(JUNIT_FAILED), { ran: 3, passed: 2 });
  assert.deepEqual(junitTally('<testsuite tests="5" skipped="1" failures="1" errors="1">'), { ran: 5, passed: 2 });
  assert.deepEqual(junitTally('<testsuite tests="2">'), { ran: 2, passed: 2 });
  assert.equal(junitTally('<testsuites/>'), null);
  assert.equal(junitTally('<testsuite name="x">'), null);
  assert.equal(streamSuccess(PASSING), true);
  assert.equal(streamSuccess(FAILING), false);
  assert.equal(streamSuccess('{"meta":{}}\n'), null);
  assert.equal(streamSuccess('{"testRunFinished":broken\n'), null);
  assert.equal(streamSuccess('{"testRunFinished":{"success":true}}\n{"testRunFinished":broken\n'), null, 'the last one counts, and a broken one says nothing');
});

test('every channel agrees with an honest stream, passing or failing: nothing named, the gate passes', () => {
  assert.deepEqual(check({ exitStatus: 0, output: SUMMARY_PASSED, junit: JUNIT_PASSED, stream: PASSING }), []);
  assert.deepEqual(check({ exitStatus: 1, output: SUMMARY_FAILED, junit: JUNIT_FAILED, stream: FAILING }), []);
  assert.deepEqual(check({ stream: PASSING }), [], 'channels not captured are not compared');
  assert.deepEqual(check({ exitStatus: 1, stream: null }), [], 'a run without a stream is judged elsewhere');
  assert.deepEqual(channelDisagreements({ label: 'r', exitStatus: 1, stream: PASSING }, null), [], 'and so is one whose stream could not be read');
  assert.deepEqual(channelDisagreements({ label: 'r', exitStatus: 1, stream: null }, parseRun(PASSING)), []);
  assert.deepEqual(channelsGate([]), { title: 'Channels', passed: true, summary: CHANNELS_AGREE });
  assert.equal(CHANNELS_AGREE, "cucumber's exit status, its summary line, junit.xml and the message stream agree for both runs");
});

test('a stream rewritten to pass at exit: exit status, summary line and junit.xml each disagree, named', () => {
  const rewritten = FAILING.replace('"status":"FAILED"', '"status":"PASSED"').replace('"success":false', '"success":true');
  const problems = check({ exitStatus: 1, output: SUMMARY_FAILED, junit: JUNIT_FAILED, stream: rewritten });
  assert.deepEqual(problems, [
    'run 1 of 2: cucumber exited with status 1, but its message stream says the run succeeded (3 scenarios, 3 passed)',
    "run 1 of 2: cucumber's summary line says 3 scenarios, 2 passed, its message stream 3 scenarios, 3 passed",
    'run 1 of 2: its junit.xml says 3 scenarios, 2 passed, its message stream 3 scenarios, 3 passed',
  ]);
  const gate = channelsGate(problems);
  assert.equal(gate.passed, false);
  assert.match(gate.summary, /^cucumber's own channels disagree with the message stream the sign-off is built from: run 1 of 2: cucumber exited with status 1.*; run 1 of 2: cucumber's summary line/);
});

test('each channel alone disagreeing is named', () => {
  assert.deepEqual(check({ exitStatus: 0, stream: FAILING }), ['run 1 of 2: cucumber exited with status 0, but its message stream says the run failed (3 scenarios, 2 passed)']);
  assert.deepEqual(check({ exitStatus: null, stream: PASSING }), ['run 1 of 2: cucumber was stopped by a signal, but its message stream says the run succeeded (3 scenarios, 3 passed)']);
  assert.deepEqual(check({ output: '3 scenarios (2 passed, 1 skipped)\n', stream: PASSING }), ["run 1 of 2: cucumber's summary line says 3 scenarios, 2 passed, its message stream 3 scenarios, 3 passed"]);
  assert.deepEqual(check({ output: '4 scenarios (4 passed)\n', stream: PASSING }), ["run 1 of 2: cucumber's summary line says 4 scenarios, 4 passed, its message stream 3 scenarios, 3 passed"]);
  assert.deepEqual(check({ output: '4 scenarios (1 failed, 3 passed)\n', stream: PASSING }), ["run 1 of 2: cucumber's summary line says 4 scenarios, 3 passed, its message stream 3 scenarios, 3 passed"], 'as many passed, more ran');
  assert.deepEqual(check({ junit: '<testsuite tests="4" failures="1">', stream: PASSING }), ['run 1 of 2: its junit.xml says 4 scenarios, 3 passed, its message stream 3 scenarios, 3 passed'], 'as many passed, more ran');
  assert.deepEqual(check({ output: 'crashed\n', stream: PASSING }), ['run 1 of 2: cucumber printed no summary line ("N scenarios (…)") to compare its message stream with']);
  assert.deepEqual(check({ output: null, stream: PASSING }), ['run 1 of 2: cucumber printed no summary line ("N scenarios (…)") to compare its message stream with']);
  assert.deepEqual(check({ junit: JUNIT_PASSED.replace('tests="3"', 'tests="4"'), stream: PASSING }), ['run 1 of 2: its junit.xml says 4 scenarios, 4 passed, its message stream 3 scenarios, 3 passed']);
  assert.deepEqual(check({ junit: null, stream: PASSING }), ['run 1 of 2: its junit.xml is missing or has no test suite counts to compare its message stream with']);
});

test("a stream whose success contradicts its own results is named, and the exit status is compared with what it says", () => {
  const lying = PASSING.replace('"success":true', '"success":false');
  assert.deepEqual(check({ exitStatus: 1, stream: lying }), ['run 1 of 2: its message stream says the run failed, but records 3 scenarios, 3 passed']);
  const failedButSuccess = FAILING.replace('"success":false', '"success":true');
  assert.deepEqual(check({ exitStatus: 0, stream: failedButSuccess }), ['run 1 of 2: its message stream says the run succeeded, but records 3 scenarios, 2 passed']);
  const unfinished = fakeMessages([scenario('one', 3)], { finished: false });
  assert.deepEqual(check({ exitStatus: 1, stream: unfinished }), ['run 1 of 2: cucumber exited with status 1, but its message stream says the run succeeded (1 scenario, 1 passed)'], 'without testRunFinished, its results speak');
});

test('scenarios the stream did not run (another shard\'s) are not counted', () => {
  const stream = fakeMessages([scenario('one', 3), { ...scenario('two', 6), notRun: true } as FakeScenario]);
  assert.deepEqual(check({ exitStatus: 0, output: '1 scenario (1 passed)\n', junit: '<testsuite tests="1" skipped="0" failures="0" errors="0">', stream }), []);
});
