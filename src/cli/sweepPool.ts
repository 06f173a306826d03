// A fixed pool of worker processes (child_process.fork, messages over IPC) that runs sweep points,
// a point at a time per worker, handing the next point to whichever worker finishes first. Results
// are keyed by point index, so the order in which workers finish never shows in the output. A pool
// may run several sets of points one after another on the same workers (a search's rounds).
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

/** One run of points on a pool: its tasks, what came back, and how it ends. */
interface PoolRun {
  tasks: readonly PointTask[];
  next: number;
  outcomes: Map<number, SearchedOutcome>;
  handedAt: Map<number, number>;
  onDone: (outcome: PointOutcome, done: number) => void;
  onNotice: (notice: WorkerNotice) => void;
  resolve: (outcomes: SearchedOutcome[]) => void;
  reject: (error: Error) => void;
}

/**
 * Up to `jobs` worker processes that run points, one run of points at a time, kept from one run to
 * the next (a capacity search runs a round at a time: its workers start once and keep the traces
 * they parsed) until close(). A point's wall time is measured here, from handing it to an idle
 * worker to its reply, with the caller's clock (so the workers read none). A worker that fails,
 * exits or is killed fails the run (and every later one) with a PointFailure.
 */
export class SweepPool {
  private readonly workers: ChildProcess[] = [];
  /** The point each worker runs now. */
  private readonly running = new Map<ChildProcess, number>();
  private readonly start = workerStart();
  private current: PoolRun | null = null;
  private failure: Error | null = null;
  private closed = false;

  constructor(
    private readonly jobs: number,
    private readonly wallMs: () => number,
  ) {}

  /**
   * Runs every task; calls onDone after each point and onNotice with what a point says while it
   * runs (a worker's message is written to its pipe at once, mid-run); resolves with the outcomes
   * in index order.
   */
  run(tasks: readonly PointTask[], onDone: PoolRun['onDone'], onNotice: PoolRun['onNotice'] = () => undefined): Promise<SearchedOutcome[]> {
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.current !== null || this.closed) return Promise.reject(new Error('a sweep pool runs one set of points at a time, until closed'));
    if (tasks.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.current = { tasks, next: 0, outcomes: new Map(), handedAt: new Map(), onDone, onNotice, resolve, reject };
      while (this.workers.length < Math.min(this.jobs, tasks.length)) this.workers.push(this.startWorker());
      for (const worker of this.workers) this.feed(worker);
    });
  }

  /** Ends every worker. */
  close(): void {
    this.closed = true;
    this.workers.forEach((worker) => worker.kill());
  }

  private fail(error: Error): void {
    if (this.failure !== null) return;
    this.failure = error;
    this.close();
    const run = this.current;
    this.current = null;
    run?.reject(error);
  }

  /** Hands an idle worker the run's next point, if any. */
  private feed(worker: ChildProcess): void {
    const run = this.current;
    if (run === null || run.next >= run.tasks.length || this.running.has(worker)) return;
    const task = run.tasks[run.next];
    run.handedAt.set(task.index, this.wallMs());
    // A worker the system would not start (too many open files, no memory) has no channel: its 'error' says why.
    if (typeof worker.send !== 'function' || !worker.connected) return;
    this.running.set(worker, task.index);
    run.next++;
    worker.send(task);
  }

  private startWorker(): ChildProcess {
    const worker = startWorker(this.start);
    worker.on('message', (message) => this.received(worker, message as WorkerReply | WorkerNotice));
    worker.on('error', (error: NodeJS.ErrnoException) => {
      // Refused by the system (a limit of open files or processes, memory): the machine's limit, not a kvqual bug.
      if (error.code !== undefined && SYSTEM_LIMITS.has(error.code)) return this.fail(new PointFailure(`could not start a sweep worker process: ${reason(error)}; with fewer --jobs (or a higher limit, ulimit -n / -u) it may`, false));
      this.fail(new PointFailure(`a sweep worker process failed: ${error.stack ?? error.message}`, true));
    });
    worker.on('exit', (code, signal) => {
      if (this.closed) return;
      const point = this.running.get(worker);
      const at = point === undefined ? '' : ` while it ran point ${point}`;
      // Killed by a signal from outside (the kernel's out-of-memory killer, a kill): not kvqual's own failure.
      if (signal !== null) return this.fail(new PointFailure(`a sweep worker process was killed by ${signal}${at}, from outside kvqual (out of memory, or a kill); no result was written; with fewer --jobs each process has more memory`, false, true));
      this.fail(new PointFailure(`a sweep worker process exited (status ${code})${at} before every point was done`, true));
    });
    return worker;
  }

  private received(worker: ChildProcess, message: WorkerReply | WorkerNotice): void {
    const run = this.current;
    if (run === null) return;
    if ('notice' in message) return run.onNotice(message);
    this.running.delete(worker);
    if ('inputError' in message) return this.fail(new PointFailure(`point ${message.index}: ${message.inputError}`, false));
    if ('internalError' in message) return this.fail(new PointFailure(`point ${message.index}: ${message.internalError}`, true));
    const outcome = { ...message.outcome, wall_ms: Math.round(this.wallMs() - run.handedAt.get(message.index)!) };
    run.outcomes.set(message.index, outcome);
    run.onDone(outcome, run.outcomes.size);
    if (run.outcomes.size < run.tasks.length) return this.feed(worker);
    this.current = null;
    run.resolve(run.tasks.map((task) => run.outcomes.get(task.index)!));
  }
}

/** Runs every task on a pool of `jobs` worker processes started for them and ended after (see SweepPool.run). */
export async function runPoints(
  tasks: readonly PointTask[],
  jobs: number,
  onDone: (outcome: PointOutcome, done: number) => void,
  wallMs: () => number,
  onNotice: (notice: WorkerNotice) => void = () => undefined,
): Promise<SearchedOutcome[]> {
  const pool = new SweepPool(jobs, wallMs);
  try {
    return await pool.run(tasks, onDone, onNotice);
  } finally {
    pool.close();
  }
}
