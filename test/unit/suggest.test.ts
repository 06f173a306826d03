// Unit tests of "did you mean": a misspelt or reworded step finds the phrase it meant first, with
// values in the step matching parameters in the phrase, and always three suggestions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { comparable, didYouMean, nearestPhrases, nearestSteps, undefinedStepMessage, type StepCandidate } from '../../src/signoff/suggest';

const PHRASES = [
  'a cluster of {count} aggregated worker(s) with {tokens} blocks',
  'conversation {string} resumes at {duration} with {int} more tokens',
  'the router replays the event streams',
  'the replay completes without a stream error',
  'worker {int} finishes storing {string} in {tier} at {duration}',
  'KV events reach the router {duration} after they are emitted',
];

test('values and parameters reduce to the same placeholder', () => {
  assert.equal(comparable('conversation "A" resumes at 14.999 ms with 4 more tokens'), comparable('conversation {string} resumes at {duration} with {int} more tokens'));
  assert.equal(comparable('a cluster of 2 aggregated workers with 4-token blocks'), 'a cluster of § aggregated workers with § blocks');
});

test('a typo, a changed word and a missing word each find the meant phrase first', () => {
  assert.equal(nearestPhrases('conversation "A" reusmes at 20 ms with 4 more tokens', PHRASES)[0], PHRASES[1]);
  assert.equal(nearestPhrases('the router replays the evnet stream', PHRASES)[0], PHRASES[2]);
  assert.equal(nearestPhrases('worker 1 stores "system prompt" in host memory at 10 ms', PHRASES)[0], PHRASES[4]);
  assert.equal(nearestPhrases('KV events reach the router 5 ms after emission', PHRASES)[0], PHRASES[5]);
  assert.equal(nearestPhrases('anything at all', PHRASES).length, 3);
});

test('the sentence names the step and the three phrases, and points to docs/steps.md', () => {
  const text = didYouMean('the router replays the evnet stream', PHRASES);
  assert.match(text, /^No step matches "the router replays the evnet stream"\. Did you mean:\n {2}- the router replays the event streams\n {2}- .+\n {2}- .+\nEvery phrase, with its parameters and an example, is listed in docs\/steps\.md\.$/);
});

const STEPS: StepCandidate[] = [
  { phrase: 'it is placed on worker {int}, the less loaded worker', words: 'it is placed on worker <worker>, the less loaded worker', level: 'router' },
  { phrase: 'it is placed on worker {int}', words: 'it is placed on worker <worker>', level: 'router' },
  { phrase: 'the resume is placed on worker {int} by load, the router seeing no cached blocks', words: 'the resume is placed on worker <worker> by load, the router seeing no cached blocks', level: 'engine' },
  { phrase: 'the resume is placed on worker {int}, which holds its prefix in G2', words: 'the resume is placed on worker <worker>, which holds its prefix in G2', level: 'engine' },
  { phrase: 'KV events reach the router {duration} after they are emitted', words: 'KV events reach the router <time> after they are emitted', level: 'either' },
];

test("suggestions that fit the scenario's level come first; with no level known, the nearest first", () => {
  const text = 'it is placed on worker 1, the less loadd worker';
  assert.deepEqual(nearestSteps(text, STEPS, null).map((s) => s.level), ['router', 'router', 'engine']);
  assert.deepEqual(nearestSteps(text, STEPS, 'router').map((s) => s.phrase), [STEPS[0].phrase, STEPS[1].phrase, STEPS[4].phrase], 'router-level, then either-level, before engine-level');
  const engine = nearestSteps(text, STEPS, 'engine');
  assert.deepEqual(engine.map((s) => s.level), ['engine', 'engine', 'either'], 'engine-level and either-level steps before router-level ones');
  assert.equal(nearestSteps(text, [...STEPS, STEPS[0]], 'router').filter((s) => s.phrase === STEPS[0].phrase).length, 1, 'a phrase is suggested once');
});

test("the undefined-step message leads with the suggestions in words and their levels, and keeps cucumber's snippet below", () => {
  const snippet = "Then('it is placed on worker {int}, the less loadd worker', function (int) {\n  return 'pending';\n});";
  const text = undefinedStepMessage('it is placed on worker …, the less loadd worker', nearestSteps('it is placed on worker 1, the less loadd worker', STEPS, 'router'), 'router', snippet);
  assert.match(text, /^No step matches "it is placed on worker …, the less loadd worker"\. Did you mean \(this scenario is router-level: steps that fit it first\):\n {2}- it is placed on worker <worker>, the less loaded worker {3}\(router-level\)\n/);
  assert.match(text, /Every step, with its level and a real example, is in docs\/steps\.md\.\n\nFor developers, a new step definition would start as:\nThen\('it is placed on worker \{int\}, the less loadd worker'/);
  assert.ok(text.indexOf('Did you mean') < text.indexOf("return 'pending'"));
  assert.match(undefinedStepMessage('x', [], null, ''), /^No step matches "x", and no step is defined at all\.\nEvery step/);
});
