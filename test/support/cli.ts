// Runs the kvqual command line for tests, two ways. In this process (runCli with an injected io):
// what most command-line tests check is the command's behaviour (exit status, what it prints, what
// it writes), and a process per case costs a Node start and a TypeScript load each. As a real
// `node bin/kvqual.js` process: kept for the cases where the executable itself is what is tested
// (its wiring, exit status and streams), a few per test file.
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { runCli, runCliAsync } from '../../src/cli/main';
import type { CliIo } from '../../src/cli/io';
import { ROOT } from './paths';

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `kvqual ARGS` in this process, from `cwd` (the repository by default). An exception escaping the
 * command is reported as bin/kvqual.js reports it: exit status 3 and "internal error" on stderr.
 */
export function kvqualInProcess(args: readonly string[], cwd = ROOT): CliRun {
  const run = capturedRun(cwd);
  try {
    return run.ended(runCli(args, run.io));
  } catch (error) {
    return run.crashed(error);
  }
}

/** `kvqual ARGS` in this process, from `cwd`, awaiting the asynchronous commands (sweep, qualify): as kvqualInProcess. */
export async function kvqualInProcessAsync(args: readonly string[], cwd = ROOT): Promise<CliRun> {
  const run = capturedRun(cwd);
  try {
    return run.ended(await runCliAsync(args, run.io));
  } catch (error) {
    return run.crashed(error);
  }
}

/** The io of a command run in this process (what it prints, kept) and its result once it has ended, or thrown. */
function capturedRun(cwd: string): { io: CliIo; ended(status: number): CliRun; crashed(error: unknown): CliRun } {
  let stdout = '';
  let stderr = '';
  return {
    io: { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd },
    ended: (status) => ({ status, stdout, stderr }),
    crashed: (error) => ({ status: 3, stdout, stderr: `${stderr}kvqual: internal error (please report): ${(error as Error).stack}\n` }),
  };
}

/** `node bin/kvqual.js ARGS` as a real process, from `cwd` (the repository by default), with `env` added to this one's. */
export function kvqualProcess(args: readonly string[], cwd = ROOT, env: NodeJS.ProcessEnv = {}): CliRun {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'kvqual.js'), ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `node bin/kvqual.js ARGS` as a real process from `cwd`, not waited for: for runs that must overlap (shards at once). */
export function kvqualProcessAsync(args: readonly string[], cwd = ROOT): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'kvqual.js'), ...args], { cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
