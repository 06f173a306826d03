// Unit tests of "did you mean": a misspelt or reworded step finds the phrase it meant first, with
// values in the step matching parameters in the phrase, and always three suggestions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { comparable, didYouMean, nearestPhrases } from '../../src/signoff/suggest';

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
