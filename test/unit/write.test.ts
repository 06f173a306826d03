// Unit tests of atomic report output: no temporary file is left behind, a failed write keeps the
// old file, and an assets directory is swapped whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { replaceDirAtomic, writeFileAtomic } from '../../src/signoff/write';

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-write-'));
}

test('a file is replaced whole and nothing else is left in its directory', () => {
  const dir = scratch();
  const file = path.join(dir, 'signoff.md');
  writeFileAtomic(file, 'old\n');
  writeFileAtomic(file, 'new\n');
  assert.equal(fs.readFileSync(file, 'utf8'), 'new\n');
  assert.deepEqual(fs.readdirSync(dir), ['signoff.md']);
  fs.rmSync(dir, { recursive: true });
});

test('a write that fails keeps the old file and leaves no temporary file', () => {
  const dir = scratch();
  const file = path.join(dir, 'signoff.md');
  writeFileAtomic(file, 'old\n');
  assert.throws(() => writeFileAtomic(file, 42 as unknown as string));
  assert.equal(fs.readFileSync(file, 'utf8'), 'old\n');
  assert.deepEqual(fs.readdirSync(dir), ['signoff.md']);
  fs.rmSync(dir, { recursive: true });
});

test('an assets directory is swapped whole: stale files disappear', () => {
  const dir = scratch();
  const assets = path.join(dir, 'signoff-assets');
  replaceDirAtomic(assets, [{ name: 'a.svg', content: '<svg/>' }, { name: 'stale.svg', content: '<svg/>' }]);
  replaceDirAtomic(assets, [{ name: 'a.svg', content: '<svg id="new"/>' }]);
  assert.deepEqual(fs.readdirSync(assets), ['a.svg']);
  assert.equal(fs.readFileSync(path.join(assets, 'a.svg'), 'utf8'), '<svg id="new"/>');
  assert.deepEqual(fs.readdirSync(dir), ['signoff-assets']);
  assert.throws(() => replaceDirAtomic(assets, [{ name: '../escape.svg', content: '' }]), /plain file name/);
  assert.deepEqual(fs.readdirSync(assets), ['a.svg'], 'a refused set leaves the old directory');
  fs.rmSync(dir, { recursive: true });
});
