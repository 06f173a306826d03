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
import { processAlive } from '../processes';

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
 * its own: `build/typecheck` for `npm test`, `npm run typecheck` and the sign-off alike). Made
 * once it is the check's turn (typeCheckInTurn).
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

/**
 * A type check with its record in `recordDir`, once it is its turn (typeCheckTurn): the plan made
 * then, `check` running tsc on it, the plan done once tsc has ended (whatever it found) and the
 * turn given back. Resolves with what `check` did.
 */
export async function typeCheckInTurn<T>(root: string, recordDir: string, check: (plan: TypeCheckPlan) => T | Promise<T>): Promise<T> {
  const release = await typeCheckTurn(recordDir);
  try {
    const plan = typeCheckPlan(root, recordDir);
    const checked = await check(plan);
    plan.done();
    return checked;
  } finally {
    release();
  }
}

/** How a check waits for its turn: how often it looks again, and after how many looks it goes ahead, or takes over a turn whose holder never named itself. */
export interface TurnPatience {
  poll_ms: number;
  /** Looks before the check goes ahead all the same (as if there were no turns). */
  polls: number;
  /** Looks that find a turn without its holder's process id before it is taken as left by a process that ended there. */
  unnamed_polls: number;
}

/**
 * A tenth of a second between looks, for three minutes (a whole check takes about a minute on a
 * busy two-core machine; where the system does not tell a process's start time, a holder's process
 * id taken by another process would otherwise hold the check up); a holder that named no process within five seconds ended before it could.
 */
const TURN_PATIENCE: TurnPatience = { poll_ms: 100, polls: 1_800, unnamed_polls: 50 };

/**
 * Waits until no other type check keeping its record in `recordDir` is running, then holds the
 * record until the returned function is called (after tsc has ended and the plan is done). Two
 * checks at once would each check every changed file (tsc's record is written when a check ends);
 * taking turns, the second finds the record current and tsc does nothing. The turn is a folder
 * (made atomically) holding its process id and start time: one whose process has ended (or whose
 * id a later process has taken) is taken over; when its patience runs out the check goes ahead
 * anyway (it is then as if there were no turns).
 */
export async function typeCheckTurn(recordDir: string, patience: TurnPatience = TURN_PATIENCE): Promise<() => void> {
  fs.mkdirSync(recordDir, { recursive: true });
  const turn = path.join(recordDir, TYPE_CHECK_FILES.turn);
  const owner = path.join(turn, 'pid');
  const me = `${process.pid} ${processStart(process.pid) ?? ''}`.trim();
  let unnamed = 0;
  for (let look = 0; ; look++) {
    try {
      fs.mkdirSync(turn);
      fs.writeFileSync(owner, me);
      return () => giveBack(turn, owner, me);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(owner);
    unnamed = holder === 'unnamed' ? unnamed + 1 : 0;
    if (holder === 'ended' || unnamed > patience.unnamed_polls) {
      fs.rmSync(turn, { recursive: true, force: true });
      unnamed = 0;
      continue;
    }
    if (look >= patience.polls) return () => {};
    await new Promise((resolve) => setTimeout(resolve, patience.poll_ms));
  }
}

/** Removes the turn when it is still this check's: one another check has taken over since is left to that check. */
function giveBack(turn: string, owner: string, me: string): void {
  let holder: string | null = null;
  try {
    holder = fs.readFileSync(owner, 'utf8');
  } catch {
    // no holder named: not this check's turn any more
  }
  if (holder === me) fs.rmSync(turn, { recursive: true, force: true });
}

/**
 * Whether the turn's holder (`owner`: its process id, and its start time where the system tells it)
 * is running, has ended, or has not named itself (yet). A process id that a process started since
 * has taken (after a crash, or a restart of the machine or container) is one that has ended: else
 * every check would wait out its patience while that other process lives.
 */
function holderOf(owner: string): 'running' | 'ended' | 'unnamed' {
  let text: string;
  try {
    text = fs.readFileSync(owner, 'utf8');
  } catch {
    return 'unnamed';
  }
  const [pidText = '', start] = text.trim().split(' ');
  const pid = Number(pidText);
  if (pidText === '' || !Number.isInteger(pid) || pid <= 0) return 'unnamed';
  if (!processAlive(pid)) return 'ended';
  const now = start === undefined ? null : processStart(pid);
  return now !== null && now !== start ? 'ended' : 'running';
}

/** When process `pid` started, in the system's clock ticks since boot (Linux's /proc/PID/stat, field 22), or null where the system does not say. */
function processStart(pid: number): string | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command's name (field 2, in parentheses) may hold spaces and parentheses: the fields are counted after its last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}
