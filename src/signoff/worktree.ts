// Whether the working tree is the commit a sign-off names, as git would be asked by someone who
// does not trust `git status` alone: besides what it lists, files git was told not to look at
// (skip-worktree, assume-unchanged) whose content is not the commit's, and ignored files inside
// the folders a qualification loads code from (an ignored steps/local.ts runs with the suite).
// git is called through the caller's function, so this module reads no process or disk itself.

/** Runs git with these arguments in the checkout; its standard output, or null when it failed. */
export type Git = (args: string[]) => string | null;

/** Folders whose files a qualification loads or runs (cucumber loads steps/**; tsx and the build read src/). */
export const LOADED_FOLDERS = ['src', 'steps', 'features', 'test'];

/** The paths in which the working tree differs from HEAD, sorted; null when git cannot say (not a checkout). */
export function worktreeDifferences(git: Git, folders: readonly string[] = LOADED_FOLDERS): string[] | null {
  const status = git(['status', '--porcelain', '--untracked-files=all']);
  if (status === null) return null;
  const paths = new Set<string>();
  // "XY path" (a rename: "XY old -> new"); the caller's git may have trimmed the first line's leading space.
  for (const line of status.split('\n')) if (line.trim() !== '') paths.add(line.replace(/^[ MADRCUT?!]{1,2} /, '').replace(/^.* -> /, ''));
  // `ls-files -v` tags a skip-worktree file "S" and an assume-unchanged one with a lower-case letter.
  for (const line of (git(['ls-files', '-v']) ?? '').split('\n')) {
    const tag = line.slice(0, 1);
    const file = line.slice(2);
    if (file === '' || !(tag === 'S' || (tag >= 'a' && tag <= 'z'))) continue;
    const committed = git(['rev-parse', `HEAD:${file}`]);
    const present = git(['hash-object', '--', file]);
    if (committed === null || present === null || committed.trim() !== present.trim()) paths.add(file);
  }
  const ignored = git(['ls-files', '--others', '--ignored', '--exclude-standard', '--', ...folders]) ?? '';
  for (const file of ignored.split('\n')) if (file.trim() !== '') paths.add(file.trim());
  return [...paths].sort();
}

/** The subject's words for it: "clean working tree", or how many files differ. */
export function worktreeText(differences: readonly string[] | null): string {
  if (differences === null) return 'no git information';
  if (differences.length === 0) return 'clean working tree';
  return `working tree differs from the commit in ${differences.length} ${differences.length === 1 ? 'file' : 'files'}`;
}
