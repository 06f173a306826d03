// The user documentation stays what it promises: the README is read in one sitting (at most 300
// lines), docs/README.md lists every page of docs/, every relative link of the README and docs/
// leads to a file that exists, and neither carries history (dates, session counts, commit
// hashes), which belongs in CHANGELOG.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';

const DOCS = path.join(ROOT, 'docs');
const pages = () => fs.readdirSync(DOCS).filter((name) => name.endsWith('.md')).sort();
const read = (file: string) => fs.readFileSync(file, 'utf8');
/** The README and every page of docs/, by path from the repository root. */
const userDocs = () => ['README.md', ...pages().map((name) => path.join('docs', name))];

test('the README is at most 300 lines', () => {
  const lines = read(path.join(ROOT, 'README.md')).split('\n').length - 1;
  assert.ok(lines <= 300, `README.md has ${lines} lines; move detail into a page of docs/`);
});

test('docs/README.md links every page of docs/', () => {
  const index = read(path.join(DOCS, 'README.md'));
  for (const name of pages().filter((name) => name !== 'README.md')) {
    assert.ok(index.includes(`](${name})`), `docs/README.md does not list ${name}`);
  }
});

test('every relative link of the README and docs/ leads to a file that exists', () => {
  for (const doc of userDocs()) {
    for (const [, target] of read(path.join(ROOT, doc)).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target) || target.startsWith('#')) continue;
      const file = path.join(ROOT, path.dirname(doc), decodeURIComponent(target.replace(/#.*$/, '')));
      assert.ok(fs.existsSync(file), `${doc} links ${target}, which does not exist`);
    }
  }
});

test('the README and docs/ carry no history: no dates, session counts or commit hashes', () => {
  const history = [/\b20\d\d-\d\d-\d\d\b/, /\b(\d+(st|nd|rd|th)|first|second|third|[a-z]+teenth|[a-z]+tieth) session\b/i, /\bat [0-9a-f]{7,40}\b/];
  for (const doc of userDocs()) {
    read(path.join(ROOT, doc))
      .split('\n')
      .forEach((line, index) => {
        for (const pattern of history) assert.doesNotMatch(line, pattern, `${doc}:${index + 1} reads as history (CHANGELOG.md is the place): ${line}`);
      });
  }
});
