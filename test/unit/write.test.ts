// Unit tests of atomic report output: a run's set is invisible until it is published in one switch,
// the previous set goes once the new one is published, and what killed runs left is removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { currentRun, newRunDir, publishRun, removeStale, runFolderGuard } from '../../src/signoff/write';
import { pidNamespace } from '../../src/processes';

test('a run set is published by one switch of .signoff-current; leftovers of killed runs are removed, the published set is kept', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-set-'));
  try {
    // An older layout: real files, and a staging folder a killed run left.
    fs.writeFileSync(path.join(out, 'signoff.md'), 'legacy');
    fs.mkdirSync(path.join(out, 'signoff-assets'));
    fs.mkdirSync(path.join(out, '.signoff-assets.new-4242'));
    fs.writeFileSync(path.join(out, '.signoff.md.tmp-4242'), 'half');
    assert.deepEqual(removeStale(out).sort(), ['.signoff-assets.new-4242', '.signoff.md.tmp-4242']);

    const first = newRunDir(out, 'run-1');
    fs.writeFileSync(path.join(first, 'signoff.md'), 'one');
    fs.mkdirSync(path.join(first, 'signoff-assets'));
    publishRun(out, first, ['signoff.md', 'signoff-assets']);
    assert.equal(fs.readFileSync(path.join(out, 'signoff.md'), 'utf8'), 'one');
    assert.equal(currentRun(out), 'run-1');

    const killed = newRunDir(out, 'run-2');
    fs.writeFileSync(path.join(killed, 'signoff.md'), 'never published');
    assert.equal(fs.readFileSync(path.join(out, 'signoff.md'), 'utf8'), 'one', 'an unpublished run is invisible');
    assert.deepEqual(removeStale(out), [path.join('.signoff-runs', 'run-2')]);

    const third = newRunDir(out, 'run-3');
    fs.writeFileSync(path.join(third, 'signoff.md'), 'three');
    fs.mkdirSync(path.join(third, 'signoff-assets'));
    publishRun(out, third, ['signoff.md', 'signoff-assets']);
    assert.equal(fs.readFileSync(path.join(out, 'signoff.md'), 'utf8'), 'three');
    assert.deepEqual(fs.readdirSync(path.join(out, '.signoff-runs')), ['run-3'], 'the previous run is removed once the new one is published');
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('a run folder of a qualify process still running into the same --out, or of another pid namespace, is kept; those of processes gone are removed', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-write-live-'));
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const elsewhere = pidNamespace() === 'abcdef01' ? 'abcdef02' : 'abcdef01';
  const live = newRunDir(out, 'run-1700000000000-1');
  const dead = newRunDir(out, `run-1700000000001-${gone}-${pidNamespace()}`);
  const foreign = newRunDir(out, `run-1700000000002-${gone}-${elsewhere}`);
  const removed = removeStale(out);
  assert.deepEqual(removed, [path.join('.signoff-runs', path.basename(dead))]);
  assert.ok(fs.existsSync(live), 'the live run (pid 1) keeps its folder');
  assert.ok(fs.existsSync(foreign), 'a run of another pid namespace (a container sharing the volume) keeps its folder: its pid means nothing here');
  fs.rmSync(out, { recursive: true, force: true });
});

test('a run folder removed and made again at the same path (a reaper, then cucumber writing its reports) fails the guard, however the file system numbers the new folder', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-guard-'));
  try {
    // Removed folders' inode numbers are often given at once to the next new one: many rounds, so that a guard that compared numbers alone is caught.
    for (let round = 0; round < 40; round++) {
      const runDir = newRunDir(out, `run-${round}-guard`);
      const kept = runFolderGuard(runDir, out);
      fs.rmSync(runDir, { recursive: true, force: true });
      fs.mkdirSync(runDir, { recursive: true });
      assert.throws(kept, /the run's folder \.signoff-runs\/run-\d+-guard was removed while the suite ran/, `round ${round}`);
    }
    const untouched = newRunDir(out, 'run-untouched-guard');
    const keptUntouched = runFolderGuard(untouched, out);
    fs.writeFileSync(path.join(untouched, 'messages.ndjson'), '');
    assert.doesNotThrow(keptUntouched);
    const removedOnly = newRunDir(out, 'run-removed-guard');
    const keptRemoved = runFolderGuard(removedOnly, out);
    fs.rmSync(removedOnly, { recursive: true, force: true });
    assert.throws(keptRemoved, /was removed while the suite ran/);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
