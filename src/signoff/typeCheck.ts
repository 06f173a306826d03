// The repository's type check (tsc over tsconfig.json's files, nothing emitted), as `npm test`,
// `npm run typecheck` and the sign-off's coverage run make it: in tsc's build mode, which keeps a
// record of the last check and does nothing when no file of tsconfig.json changed since (it compares
// their times with the record's, and a check that found errors is never up to date), and checks
// only what a change affects otherwise. tsc does not look at node_modules for that, so a change of
// the installed packages (package-lock.json) or of TypeScript itself forces a whole check. Checks
// that keep one record take turns (typeCheckTurn): `npm test`'s and the sign-off's coverage run
// share build/typecheck, so the one that waits finds the other's work done instead of doing it again.
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
export const TYPE_CHECK_FILES = { config: 'tsconfig.typecheck.json', record: 'typecheck.tsbuildinfo', dependencies: 'typecheck.dependencies', turn: 'typecheck.running' };

/**
 * How to type-check the repository at `root`, keeping tsc's record in `recordDir` (a folder of
 * its own: `build/typecheck` for `npm test`, `npm run typecheck` and the sign-off alike). Make the
 * plan once it is the check's turn (typeCheckTurn).
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

/** How often a check waiting for its turn looks again, and how long it waits at most before it checks all the same. */
const TURN_POLL_MS = 100;
const TURN_PATIENCE_MS = 10 * 60_000;

/**
 * Waits until no other type check keeping its record in `recordDir` is running, then holds the
 * record until the returned function is called (after tsc has ended and the plan is done). Two
 * checks at once would each check every changed file (tsc's record is written when a check ends);
 * taking turns, the second finds the record current and tsc does nothing. The turn is a folder
 * (made atomically) holding its process id: one whose process has ended is taken over; after
 * TURN_PATIENCE_MS the check goes ahead anyway (it is then as if there were no turns).
 */
export async function typeCheckTurn(recordDir: string, patience_ms = TURN_PATIENCE_MS): Promise<() => void> {
  fs.mkdirSync(recordDir, { recursive: true });
  const turn = path.join(recordDir, TYPE_CHECK_FILES.turn);
  const owner = path.join(turn, 'pid');
  const started = Date.now();
  for (;;) {
    try {
      fs.mkdirSync(turn);
      fs.writeFileSync(owner, String(process.pid));
      return () => fs.rmSync(turn, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (heldByEndedProcess(turn, owner)) {
      fs.rmSync(turn, { recursive: true, force: true });
      continue;
    }
    if (Date.now() - started >= patience_ms) return () => {};
    await new Promise((resolve) => setTimeout(resolve, TURN_POLL_MS));
  }
}

/** A turn whose holder wrote no process id within this long was left by a process that ended there. */
const UNNAMED_TURN_MS = 5_000;

/** Whether the turn's holder (the process id in `owner`) has ended; a turn without one is taken as ended once UNNAMED_TURN_MS old. */
function heldByEndedProcess(turn: string, owner: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(owner, 'utf8'));
  } catch {
    try {
      return Date.now() - fs.statSync(turn).mtimeMs > UNNAMED_TURN_MS;
    } catch {
      return false;
    }
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
