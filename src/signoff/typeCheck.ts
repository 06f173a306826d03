// The repository's type check (tsc over tsconfig.json's files, nothing emitted), as `npm test`,
// `npm run typecheck` and the sign-off's coverage run make it: in tsc's build mode, which keeps a
// record of the last check and does nothing when no file of tsconfig.json changed since (it compares
// their times with the record's, and a check that found errors is never up to date), and checks
// only what a change affects otherwise. tsc does not look at node_modules for that, so a change of
// the installed packages (package-lock.json) or of TypeScript itself forces a whole check.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface TypeCheckPlan {
  /** The tsc executable and its arguments. */
  command: string;
  args: string[];
  /** True when the check is forced whole (no record yet, or the installed packages changed). */
  forced: boolean;
  /** Records what the check was made against; call it once tsc has ended, whatever it found. */
  done(): void;
}

/** The file names kept in `recordDir`. */
export const TYPE_CHECK_FILES = { config: 'tsconfig.typecheck.json', record: 'typecheck.tsbuildinfo', dependencies: 'typecheck.dependencies' };

/**
 * How to type-check the repository at `root`, keeping tsc's record in `recordDir` (a folder of
 * its own: `build/typecheck` for the sign-off, a temporary one for `npm test`).
 */
export function typeCheckPlan(root: string, recordDir: string): TypeCheckPlan {
  fs.mkdirSync(recordDir, { recursive: true });
  const config = path.join(recordDir, TYPE_CHECK_FILES.config);
  // typeRoots: tsc looks for type packages from the config's folder up, which may be outside the repository.
  const compilerOptions = { noEmit: true, incremental: true, tsBuildInfoFile: path.join(recordDir, TYPE_CHECK_FILES.record), typeRoots: [path.join(root, 'node_modules', '@types')] };
  // Written only when it would change: tsc counts this file among the inputs of its record.
  writeIfChanged(config, `${JSON.stringify({ extends: path.join(root, 'tsconfig.json'), compilerOptions }, null, 2)}\n`);
  const stampFile = path.join(recordDir, TYPE_CHECK_FILES.dependencies);
  const stamp = dependencyStamp(root);
  const forced = !fs.existsSync(stampFile) || fs.readFileSync(stampFile, 'utf8') !== stamp;
  return {
    command: path.join(root, 'node_modules', '.bin', 'tsc'),
    args: ['--build', config, ...(forced ? ['--force'] : [])],
    forced,
    done: () => fs.writeFileSync(stampFile, stamp),
  };
}

/** What tsc's record does not follow: the installed packages and the compiler's version. */
export function dependencyStamp(root: string): string {
  const hash = createHash('sha256');
  for (const file of ['package-lock.json', path.join('node_modules', 'typescript', 'package.json')]) {
    const where = path.join(root, file);
    hash.update(`${file}\0${fs.existsSync(where) ? fs.readFileSync(where) : 'missing'}\0`);
  }
  return `sha256:${hash.digest('hex')}\n`;
}

function writeIfChanged(file: string, text: string): void {
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) return;
  fs.writeFileSync(file, text);
}
