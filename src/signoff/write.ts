// Atomic output of a qualification run. A run writes its whole set (sign-off, assets, cucumber's
// reports, both message streams) into a fresh directory `<out>/.signoff-runs/<run id>/`, which
// nothing points at until it is complete. `<out>/.signoff-current` is a symlink to the published
// run's directory, and each name a reader opens (`<out>/signoff.md`, `<out>/junit.xml`, …) is a
// symlink through it. Publishing is one rename of a new `.signoff-current` link over the old one,
// so a kill at any moment leaves either the old complete set or the new complete set; the old
// run's directory is removed afterwards, and at the start of the next run if the kill came between.
import fs from 'node:fs';
import path from 'node:path';
import { ownerGone, ownerTag, OWNER_PATTERN } from '../processes';

export const CURRENT_LINK = '.signoff-current';
export const RUNS_DIR = '.signoff-runs';

/** The run directory `.signoff-current` points at, or null. */
export function currentRun(out: string): string | null {
  try {
    return path.basename(fs.readlinkSync(path.join(out, CURRENT_LINK)));
  } catch {
    return null;
  }
}

/**
 * Whether a run directory (`run-<time>-<owner>`, see ownerTag) may belong to a qualify process still
 * running (another run into the same --out, perhaps from another container): its folder is its own
 * until it publishes or dies. Only a run known to be gone is not.
 */
function runStillGoing(name: string): boolean {
  const owner = new RegExp(`^run-\\d+-(${OWNER_PATTERN})$`).exec(name)?.[1];
  return owner !== undefined && owner !== ownerTag() && !ownerGone(owner);
}

/**
 * Removes what earlier runs left behind without publishing (run directories other than the
 * current one and those of runs still going, temporary files, and the staging folders of older
 * kvqual versions). The published set stays until a new one replaces it.
 */
export function removeStale(out: string): string[] {
  const removed: string[] = [];
  const current = currentRun(out);
  const runs = path.join(out, RUNS_DIR);
  if (fs.existsSync(runs)) {
    for (const name of fs.readdirSync(runs)) {
      if (name === current || runStillGoing(name)) continue;
      fs.rmSync(path.join(runs, name), { recursive: true, force: true });
      removed.push(path.join(RUNS_DIR, name));
    }
  }
  if (fs.existsSync(out)) {
    for (const name of fs.readdirSync(out)) {
      if (/^\.signoff-assets\.(new|old)-\d+$/.test(name) || /^\..+\.tmp-\d+$/.test(name) || /^\.signoff-current\.new-\d+$/.test(name)) {
        fs.rmSync(path.join(out, name), { recursive: true, force: true });
        removed.push(name);
      }
    }
  }
  return removed;
}

/** Makes the (empty) directory a new run writes its set into. */
export function newRunDir(out: string, id: string): string {
  if (!/^[\w.-]+$/.test(id)) throw new Error(`run id "${id}" must be a plain name`);
  const dir = path.join(out, RUNS_DIR, id);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

function replaceWithLink(where: string, target: string): void {
  const temp = `${where}.link-${process.pid}`;
  fs.rmSync(temp, { force: true });
  fs.symlinkSync(target, temp);
  let stat: fs.Stats | null = null;
  try {
    stat = fs.lstatSync(where);
  } catch {
    stat = null;
  }
  // A real directory of an older layout cannot be renamed over: it goes first (once).
  if (stat !== null && stat.isDirectory() && !stat.isSymbolicLink()) fs.rmSync(where, { recursive: true, force: true });
  fs.renameSync(temp, where);
}

/**
 * Publishes a completed run directory: `.signoff-current` is switched to it in one rename, the
 * reader-facing names are (once) made links through `.signoff-current`, links of `others` (the
 * names of the other kind of set: a shard's where a sign-off is published, or the reverse) that
 * the new run does not have are removed, and the previous run's directory is removed.
 */
export function publishRun(out: string, runDir: string, names: string[], others: string[] = []): void {
  const previous = currentRun(out);
  const id = path.basename(runDir);
  replaceWithLink(path.join(out, CURRENT_LINK), path.join(RUNS_DIR, id));
  for (const name of names) {
    const where = path.join(out, name);
    const target = path.join(CURRENT_LINK, name);
    let linked = false;
    try {
      linked = fs.readlinkSync(where) === target;
    } catch {
      linked = false;
    }
    if (!linked) replaceWithLink(where, target);
  }
  for (const name of others) {
    if (names.includes(name)) continue;
    const where = path.join(out, name);
    try {
      if (fs.readlinkSync(where) === path.join(CURRENT_LINK, name)) fs.rmSync(where, { force: true });
    } catch {
      // not one of our links: left alone
    }
  }
  if (previous !== null && previous !== id) fs.rmSync(path.join(out, RUNS_DIR, previous), { recursive: true, force: true });
}

/**
 * A check that the run's folder is still the one made for it: removed while the suite ran (a CI
 * cleanup, a temporary-folder reaper), the runs' reports went with it, and a verdict built from
 * what is left said "no scenario ran" of a suite that had passed, and was published in a folder made
 * again (found by an outside audit). The folder is held open from the start: a removed folder's
 * inode number is given at once to the next new one (cucumber makes the run's folder again to
 * write its reports), so comparing numbers alone passed a removed folder (found by a flaky test);
 * a folder held open keeps its number while it is open, and says when it has been removed. The
 * check throws, so that nothing is published and qualify exits 2; its first call lets the folder go
 * (later calls compare numbers alone).
 */
export function runFolderGuard(runDir: string, outShown: string): () => void {
  let held = holdFolder(runDir);
  const made = held === null ? fs.statSync(runDir) : fs.fstatSync(held);
  return () => {
    let now: fs.Stats | null = null;
    try {
      now = fs.statSync(runDir);
    } catch {
      now = null;
    }
    let removed = false;
    if (held !== null) {
      removed = fs.fstatSync(held).nlink === 0;
      fs.closeSync(held);
      held = null;
    }
    if (removed || now === null || now.ino !== made.ino || now.dev !== made.dev) {
      throw new Error(`--out ${outShown}: the run's folder ${path.join(RUNS_DIR, path.basename(runDir))} was removed while the suite ran, with its reports; nothing was published`);
    }
  };
}

/** The folder opened for reading (a descriptor), or null where a folder cannot be opened so (then its number alone is compared). */
function holdFolder(dir: string): number | null {
  try {
    return fs.openSync(dir, 'r');
  } catch {
    return null;
  }
}
