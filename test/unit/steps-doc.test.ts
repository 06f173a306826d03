// docs/steps.md is generated from the step definitions and the features: the check fails on a
// stale copy, and every phrase of steps/ is listed with a level.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { staleness } from '../../scripts/steps-doc';

// Whether the committed file is current is `npm test`'s own phase ("docs/steps.md is current":
// `scripts/steps-doc.ts --check`, which loads every step definition); here, the comparison it makes.
test('a current copy passes the check, and a stale copy fails it with what to run', () => {
  const committed = fs.readFileSync(path.join(ROOT, 'docs', 'steps.md'), 'utf8');
  assert.equal(staleness(committed, committed, 'docs/steps.md'), null);
  const stale = committed.replace('### When the replay runs twice', '### When the replay runs thrice');
  assert.notEqual(stale, committed);
  assert.match(staleness(stale, committed, 'docs/steps.md') ?? '', /^docs\/steps\.md is stale: the step definitions or the features changed\. Run `npm run docs:steps` and commit the result\.\n$/);
});

test('every phrase defined in steps/ is in docs/steps.md with its level, and the settings table keys are listed', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'steps.md'), 'utf8');
  const sources = fs.readdirSync(path.join(ROOT, 'steps')).filter((f) => f.endsWith('.steps.ts'));
  let phrases = 0;
  for (const file of sources) {
    const text = fs.readFileSync(path.join(ROOT, 'steps', file), 'utf8');
    for (const match of text.matchAll(/\b(Given|When|Then)\(\s*(['"])((?:\\.|(?!\2).)*)\2/g)) {
      phrases++;
      const phrase = match[3].replace(/\\(.)/g, '$1');
      assert.ok(doc.includes(`### ${match[1]} ${phrase}\n\n- `), `docs/steps.md lists "${match[1]} ${phrase}"`);
    }
  }
  assert.ok(phrases > 50, `${phrases} phrases found`);
  assert.match(doc, /\| host memory \| `private, 16 blocks`/);
  assert.match(doc, /\[the glossary\]\(glossary\.md\)/);
});
