// A fixed pool of worker processes (child_process.fork, messages over IPC) that runs sweep points,
// a point at a time per worker, handing the next point to whichever worker finishes first. Results
// are keyed by point index, so the order in which workers finish never shows in the output.
// Processes, not worker threads: replays are memory-bound, and two threads of one process slowed
// each other to about the speed of one (measured: npm run bench -- sweep), two processes did not.
import { ChildProcess, fork } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PointOutcome } from '../sweep/results';
import { SWEEP_WORKER_ENV, type PointTask, type SearchedOutcome, type WorkerNotice, type WorkerReply } from './sweepWorker';
import { reason } from '../inputFiles';

/** The default --jobs: the cores Node may use. */
export function defaultJobs(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/** Thrown when a point failed for a reason the input explains (a trace line), a worker crashed (internal), or a worker was killed from outside. */
export class PointFailure extends Error {
  constructor(
    message: string,
    readonly internal: boolean,
    /** Killed by a signal from outside kvqual (out of memory, a kill): exit 3, but no defect of kvqual's to report. */
    readonly killed = false,
  ) {
    super(message);
    this.name = 'PointFailure';
  }
}

/** Errors of a process start that are a limit of the machine: open files, processes, memory. */
const SYSTEM_LIMITS = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM']);

/** What a worker process runs: its module and Node's options for it. */
interface WorkerStart {
  file: string;
  execArgv: string[];
}

/**
 * The folder of the compiled command line (bin/compiled.js: built from src/ by `npm ci` or `npm run
 * build`) when it is current, else null. Read from the file system, not bundled: only a pool
 * running from the TypeScript sources asks.
 */
function currentCompiledBuild(): string | null {
  const compiled = path.join(__dirname, '..', '..', 'bin', 'compiled.js');
  try {
    return (require(compiled) as { currentBuild(): string | null }).currentBuild();
  } catch {
    return null;
  }
}

/**
 * The sweep worker beside this module: src/cli/ (TypeScript), build/src/cli/ (a file per source)
 * or build/cli/ (the bundles, bin/compiled.js). A pool running from the TypeScript sources (a sweep
 * in a test's or a script's own process) starts the compiled bundle's worker when that build is
 * current, as bin/kvqual.js chooses for the command line (the same sources, a third of the start
 * time), unless KVQUAL_TSX=1; else the TypeScript through tsx. It inherits this process's node options.
 */
function workerStart(): WorkerStart {
  const file = path.join(__dirname, `sweepWorker${path.extname(__filename)}`);
  if (!file.endsWith('.ts')) return { file, execArgv: process.execArgv };
  const build = process.env.KVQUAL_TSX === '1' ? null : currentCompiledBuild();
  if (build !== null) return { file: path.join(build, 'sweepWorker.js'), execArgv: process.execArgv };
  return { file, execArgv: [...process.execArgv, '--require', require.resolve('tsx/cjs')] };
}

/** Starts a worker process. */
function startWorker({ file, execArgv }: WorkerStart): ChildProcess {
  return fork(file, [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, [SWEEP_WORKER_ENV]: '1' } });
}

/**
 * Runs every task on `jobs` threads; calls onDone after each point and onNotice with what a point
 * says while it runs (a worker's message is written to its pipe at once, mid-run); resolves with
 * the outcomes in index order. A point's wall time is measured here, from handing it to an idle
 * thread to its reply, with the caller's clock (so the threads read none).
 */
export function runPoints(
  tasks: readonly PointTask[],
  jobs: number,
  onDone: (outcome: PointOutcome, done: number) => void,
  wallMs: () => number,
  onNotice: (notice: WorkerNotice) => void = () => undefined,
): Promise<SearchedOutcome[]> {
  const outcomes = new Map<number, SearchedOutcome>();
  if (tasks.length === 0) return Promise.resolve([]);
  const start = workerStart();
  return new Promise((resolve, reject) => {
    const workers: ChildProcess[] = [];
    let next = 0;
    let failed = false;
    const stopAll = () => workers.forEach((worker) => worker.kill());
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      stopAll();
      reject(error);
    };
    const handedAt = new Map<number, number>();
    /** The point each worker runs now. */
    const running = new Map<ChildProcess, number>();
    const feed = (worker: ChildProcess) => {
      if (next >= tasks.length) return;
      handedAt.set(tasks[next].index, wallMs());
      // A worker the system would not start (too many open files, no memory) has no channel: its 'error' says why.
      if (typeof worker.send !== 'function' || !worker.connected) return;
      running.set(worker, tasks[next].index);
      worker.send(tasks[next++]);
    };
    for (let i = 0; i < Math.min(jobs, tasks.length); i++) {
      const worker = startWorker(start);
      workers.push(worker);
      worker.on('message', (message) => {
        if (failed) return;
        if ('notice' in (message as object)) return onNotice(message as WorkerNotice);
        const reply = message as WorkerReply;
        if ('inputError' in reply) return fail(new PointFailure(`point ${reply.index}: ${reply.inputError}`, false));
        if ('internalError' in reply) return fail(new PointFailure(`point ${reply.index}: ${reply.internalError}`, true));
        const outcome = { ...reply.outcome, wall_ms: Math.round(wallMs() - handedAt.get(reply.index)!) };
        outcomes.set(reply.index, outcome);
        onDone(outcome, outcomes.size);
        if (outcomes.size === tasks.length) {
          stopAll();
          resolve(tasks.map((task) => outcomes.get(task.index)!));
        } else feed(worker);
      });
      worker.on('error', (error: NodeJS.ErrnoException) => {
        // Refused by the system (a limit of open files or processes, memory): the machine's limit, not a kvqual bug.
        if (error.code !== undefined && SYSTEM_LIMITS.has(error.code)) return fail(new PointFailure(`could not start a sweep worker process: ${reason(error)}; with fewer --jobs (or a higher limit, ulimit -n / -u) it may`, false));
        fail(new PointFailure(`a sweep worker process failed: ${error.stack ?? error.message}`, true));
      });
      worker.on('exit', (code, signal) => {
        if (failed || outcomes.size >= tasks.length) return;
        const point = running.get(worker);
        const at = point === undefined || outcomes.has(point) ? '' : ` while it ran point ${point}`;
        // Killed by a signal from outside (the kernel's out-of-memory killer, a kill): not kvqual's own failure.
        if (signal !== null) return fail(new PointFailure(`a sweep worker process was killed by ${signal}${at}, from outside kvqual (out of memory, or a kill); no result was written; with fewer --jobs each process has more memory`, false, true));
        fail(new PointFailure(`a sweep worker process exited (status ${code})${at} before every point was done`, true));
      });
      feed(worker);
    }
  });
}
