// What ran is what was committed: the checks that make "commit X (clean working tree)" true of the
// files a qualification loads, even when git is told to lie. A symbolic link under the features,
// steps or source folders, the registry or cucumber.js that leads out of the checkout is refused
// (the commit holds the link, not what it points at); git runs with every GIT_* variable cleared and
// without replace refs; a clean or smudge filter on those paths is refused (git would show the
// filtered content, not the file's); and every file on disk is compared by content with the commit's
// blob, hashed here as git hashes a blob, never by `git hash-object` (which applies the filters).
// git is called through the caller's function; the files are read from the root given.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Git } from './worktree';

/**
 * The paths, relative to the repository, whose files a qualification loads and compares with the
 * commit (run 1 and its planted faults run through scripts/first-run.ts and suiteInProcess.ts).
 */
export const LOADED_PATHS = ['features', 'steps', 'src', 'requirements.yaml', 'cucumber.js', 'scripts/first-run.ts', 'scripts/suiteInProcess.ts'];

/** The arguments every git call of qualify starts with: replace refs (`git replace`) are not followed. */
export const GIT_SAFE_ARGS = ['--no-replace-objects'];

/**
 * The environment git runs in: every GIT_* variable of the caller's cleared (GIT_DIR, GIT_WORK_TREE,
 * GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY… would make it describe another checkout), replace refs off.
 */
export function gitEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (!name.startsWith('GIT_')) clean[name] = value;
  clean.GIT_NO_REPLACE_OBJECTS = '1';
  return clean;
}

/** Whether `inner` is `outer` or inside it (both real, absolute paths). */
function within(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** A path's real path, or null when it cannot be resolved (a dangling link, a loop). */
function realOrNull(at: string): string | null {
  try {
    return fs.realpathSync(at);
  } catch {
    return null;
  }
}

/**
 * Every symbolic link at or under `given` (relative to `root`, or absolute) that leads outside its
 * boundary, in words: the checkout for a path inside it, else the given folder itself (a features
 * folder outside the checkout may link within itself). Links inside the boundary are followed.
 */
export function linksLeaving(root: string, given: string): string[] {
  const start = path.resolve(root, given);
  if (!fs.existsSync(start) && !isLink(start)) return [];
  const realRoot = fs.realpathSync(root);
  const realStart = realOrNull(start);
  const boundary = within(start, path.resolve(root)) || (realStart !== null && within(realStart, realRoot)) ? realRoot : (realStart ?? start);
  const problems: string[] = [];
  const seen = new Set<string>();
  const shown = (at: string) => (within(at, root) ? path.relative(root, at) || '.' : at);
  const visit = (at: string): void => {
    if (isLink(at)) {
      const target = realOrNull(at);
      if (target === null) {
        problems.push(`${shown(at)} is a symbolic link that leads nowhere (${fs.readlinkSync(at)}), so the commit does not hold what it would load`);
        return;
      }
      if (!within(target, boundary)) {
        problems.push(`${shown(at)} is a symbolic link to ${target}, outside ${boundary === realRoot ? 'the checkout' : given}: the commit holds the link, not what it points at`);
        return;
      }
    }
    const real = realOrNull(at)!;
    if (seen.has(real)) return;
    seen.add(real);
    if (!fs.statSync(at).isDirectory()) return;
    for (const name of fs.readdirSync(at).sort()) visit(path.join(at, name));
  };
  visit(start);
  return problems;
}

function isLink(at: string): boolean {
  try {
    return fs.lstatSync(at).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Every path of `paths` (tracked, relative to the repository) that has a git filter attribute (a
 * clean or smudge filter, from .gitattributes, .git/info/attributes or a global attributes file),
 * in words; git would compare the filtered content, not the file's.
 */
export function filteredPaths(git: Git, paths: readonly string[]): string[] {
  // -z: names as they are (no quoting), NUL-separated; check-attr answers "path NUL filter NUL value NUL".
  const files = (git(['ls-files', '-z', '--', ...paths]) ?? '').split('\0').filter((f) => f !== '');
  if (files.length === 0) return [];
  const answer = git(['check-attr', '-z', 'filter', '--', ...files]);
  if (answer === null) return ['git check-attr could not say which files have a filter'];
  const problems: string[] = [];
  const fields = answer.split('\0');
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [file, , value] = fields.slice(i, i + 3);
    if (value === 'unspecified' || value === 'unset') continue;
    problems.push(`${file} has the git filter "${value}": git would compare its filtered content, not the file's`);
  }
  return problems;
}

/** The id git gives a blob of this content, in the repository's object format (sha1 or sha256). */
export function blobId(content: Buffer, format: 'sha1' | 'sha256' = 'sha1'): string {
  return createHash(format).update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** The files under a path on disk (relative to root, sorted), links listed as themselves. */
function filesOnDisk(root: string, given: string): string[] {
  const out: string[] = [];
  const visit = (relative: string): void => {
    const at = path.join(root, relative);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(at);
    } catch {
      return;
    }
    if (stat.isDirectory()) for (const name of fs.readdirSync(at).sort()) visit(path.posix.join(relative, name));
    else out.push(relative);
  };
  visit(given);
  return out;
}

/**
 * The files under `paths` whose content on disk is not the commit's (HEAD), by content: each
 * committed file hashed here as a blob and compared with the commit's blob id, a committed link by
 * its target text; a committed file missing from disk, and a file on disk the commit does not hold,
 * count too. Sorted; null when git cannot list the commit.
 */
export function contentDifferences(root: string, git: Git, paths: readonly string[] = LOADED_PATHS): string[] | null {
  const listing = git(['ls-tree', '-r', '-z', '--full-tree', 'HEAD', '--', ...paths]);
  if (listing === null) return null;
  const format = git(['rev-parse', '--show-object-format'])?.trim() === 'sha256' ? 'sha256' : 'sha1';
  const committed = new Map<string, { mode: string; id: string }>();
  for (const entry of listing.split('\0')) {
    const match = /^(\d+) blob ([0-9a-f]+)\t([^]*)$/.exec(entry);
    if (match) committed.set(match[3], { mode: match[1], id: match[2] });
  }
  const differing = new Set<string>();
  for (const [file, blob] of committed) {
    const at = path.join(root, file);
    let content: Buffer;
    try {
      content = blob.mode === '120000' ? Buffer.from(fs.readlinkSync(at)) : fs.readFileSync(at);
      if (blob.mode !== '120000' && fs.lstatSync(at).isSymbolicLink()) differing.add(file);
    } catch {
      differing.add(file);
      continue;
    }
    if (blobId(content, format) !== blob.id) differing.add(file);
  }
  for (const given of paths) for (const file of filesOnDisk(root, given)) if (!committed.has(file)) differing.add(file);
  return [...differing].sort();
}
