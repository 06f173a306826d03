// The tools a qualification starts (cucumber, tsc, c8, the fault check): each spawned with its
// output collected, optionally at a lower priority beside the longest phase, and tracked so that a
// stopped qualify stops them too (stopChildren).
import { spawn as spawnChild, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import type { DriverContext, Spawned } from './context';

export type { Spawned } from './context';


/**
 * The niceness given to work beside the longest chain of phases (run 1, then the planted faults): with more work
 * than cores, the longest phase keeps a core and the rest share what is left, so that both cores
 * stay busy to the end instead of the longest phase running alone at the end.
 */
const BESIDE_NICENESS = 10;

/** The tools a qualify run has started and not yet seen end (cucumber, c8, tsc). */
const runningChildren = new Set<ChildProcess>();

/**
 * Stops every tool the run started (the process entry point calls it when qualify is stopped by a
 * signal): without it, the suite runs went on, orphaned, writing into an abandoned run folder.
 */
export function stopChildren(signal: NodeJS.Signals): number {
  for (const child of runningChildren) child.kill(signal);
  return runningChildren.size;
}

/**
 * Runs a tool; quiet ones have their output collected, the others print to the console as they run.
 * `beside`: work that runs beside the longest phase, at a lower priority (BESIDE_NICENESS).
 * `watch` sees the output collected so far each time more comes.
 */
export function spawn(ctx: DriverContext, command: string, args: string[], env: NodeJS.ProcessEnv, quiet: boolean, beside = false, watch?: (output: string) => void): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    // Output is always collected (cucumber's summary line is one of the channels compared, channels.ts; a run that stops early is explained by its last words); a tool that is not quiet is printed as it runs.
    const child = spawnChild(command, args, { cwd: ctx.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    runningChildren.add(child);
    child.on('exit', () => runningChildren.delete(child));
    if (beside && child.pid !== undefined) lowerPriority(child.pid);
    let output = '';
    const collect = (chunk: string) => {
      output += chunk;
      if (!quiet) ctx.write(chunk);
      watch?.(output);
    };
    child.stdout?.setEncoding('utf8').on('data', collect);
    child.stderr?.setEncoding('utf8').on('data', collect);
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}

/** Scheduling only (never what a run computes); where the system refuses, the process keeps its priority. */
function lowerPriority(pid: number): void {
  try {
    os.setPriority(pid, BESIDE_NICENESS);
  } catch {
    // e.g. a process that has already ended
  }
}
