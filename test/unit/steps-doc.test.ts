// docs/steps.md is generated from the step definitions (their catalogue info) and the features: the
// check fails on a stale copy, every phrase of steps/ is listed in words with its level, no heading is
// a regular expression, and a step defined without its info fails the generator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { requireInfo, staleness, wordsOf } from '../../scripts/steps-doc';

const doc = () => fs.readFileSync(path.join(ROOT, 'docs', 'steps.md'), 'utf8');

// Whether the committed file is current is `npm test`'s own phase ("docs/steps.md is current":
// `scripts/steps-doc.ts --check`, which loads every step definition); here, the comparison it makes.
test('a current copy passes the check, and a stale copy fails it with what to run', () => {
  const committed = doc();
  assert.equal(staleness(committed, committed, 'docs/steps.md'), null);
  const stale = committed.replace('#### When the replay runs twice', '#### When the replay runs thrice');
  assert.notEqual(stale, committed);
  assert.match(staleness(stale, committed, 'docs/steps.md') ?? '', /^docs\/steps\.md is stale: the step definitions or the features changed\. Run `npm run docs:steps` and commit the result\.\n$/);
});

test('every phrase defined in steps/ is in docs/steps.md in words, with its level; no heading is a regular expression', () => {
  const text = doc();
  const sources = fs.readdirSync(path.join(ROOT, 'steps')).filter((f) => f.endsWith('.steps.ts'));
  let phrases = 0;
  for (const file of sources) {
    const source = fs.readFileSync(path.join(ROOT, 'steps', file), 'utf8');
    for (const match of source.matchAll(/\b(Given|When|Then)\(\s*(['"])((?:\\.|(?!\2).)*)\2/g)) {
      phrases++;
      const words = wordsOf(match[3].replace(/\\(.)/g, '$1'));
      assert.ok(new RegExp(`#### ${match[1]} ${words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n\\n\\*(router-level|engine-level|either level)\\* — `).test(text) || text.includes(`\`${match[1]} ${words}\``), `docs/steps.md lists "${match[1]} ${words}" with its level`);
    }
  }
  assert.ok(phrases > 50, `${phrases} phrases found`);
  const headings = text.split('\n').filter((line) => line.startsWith('#'));
  assert.deepEqual(headings.filter((h) => /\^|\$$|\(\?|\\d|\\s|\.\+|\.\*/.test(h)), [], 'headings that read as regular expressions');
  for (const section of ['## Writing a scenario', '### A router-level skeleton', '### An engine-level skeleton', '### Tags and requirements', '### What a Then needs', '## The cluster', '## Routing outcomes', '## Engine outcomes', '## Appendix: generated cases and unused steps']) {
    assert.ok(headings.includes(section), `docs/steps.md has "${section}"`);
  }
  assert.match(text, /the less loaded worker[^\n]*\n[^\n]*strictly less load/);
  assert.match(text, /\| host memory \| `private, 16 blocks`/);
  assert.match(text, /\[the glossary\]\(glossary\.md\)/);
});

test('placeholders are written in words, named by what they stand for', () => {
  assert.equal(wordsOf('worker {int} leaves the cluster at {duration}'), 'worker <worker> leaves the cluster at <time>');
  assert.equal(wordsOf('a cluster of {count} aggregated worker(s) with {tokens} blocks'), 'a cluster of <number> aggregated worker(s) with <n>-token blocks');
  assert.equal(wordsOf('the prefix {string} is {tokens} long'), 'the prefix "<prefix>" is <n> tokens long');
  assert.equal(wordsOf('worker {int} dp rank {int} finishes storing {string} in {tier} at {duration}'), 'worker <worker> dp rank <dp rank> finishes storing "<prefix>" in <tier> at <time>');
  assert.equal(wordsOf('shared-pool bandwidths of {float} GB\\/s'), 'shared-pool bandwidths of <decimal> GB/s');
});

test('a step defined without its catalogue info, or with an empty description, fails the generator naming it', () => {
  assert.doesNotThrow(() => requireInfo([{ place: 'steps/a.steps.ts:3', pattern: 'the replay runs', info: { domain: 'requests', level: 'engine', says: 'Runs it.' } }]));
  assert.throws(() => requireInfo([{ place: 'steps/a.steps.ts:3', pattern: 'the replay runs', info: null }]), /steps without catalogue info[^]*steps\/a\.steps\.ts:3 the replay runs/);
  assert.throws(() => requireInfo([{ place: 'steps/b.steps.ts:9', pattern: 'x', info: { domain: 'requests', level: 'engine', says: ' ' } }]), /steps\/b\.steps\.ts:9 x/);
});
