// A fixed pool of worker threads (Node's worker_threads) that runs sweep points, a point at a
// time per thread, handing the next point to whichever thread finishes first. Results are keyed
// by point index, so the order in which threads finish never shows in the output.
import * as os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { PointOutcome } from '../sweep/results';
import type { PointTask, WorkerReply } from './sweepWorker';

/** The default --jobs: the cores Node may use. */
export function defaultJobs(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/** Thrown when a point failed for a reason the input explains (a trace line), or a thread crashed. */
export class PointFailure extends Error {
  constructor(
    message: string,
    readonly internal: boolean,
  ) {
    super(message);
    this.name = 'PointFailure';
  }
}

/** Starts a worker thread running sweepWorker (through tsx when running from the TypeScript sources). */
function startWorker(): Worker {
  const file = __filename.replace(/sweepPool\.(ts|js)$/, 'sweepWorker.$1');
  const code = file.endsWith('.ts') ? `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(file)});` : `require(${JSON.stringify(file)});`;
  return new Worker(code, { eval: true });
}

/**
 * Runs every task on `jobs` threads; calls onDone after each point; resolves with the outcomes in
 * index order. A point's wall time is measured here, from handing it to an idle thread to its
 * reply, with the caller's clock (so the threads read none).
 */
export function runPoints(tasks: readonly PointTask[], jobs: number, onDone: (outcome: PointOutcome, done: number) => void, wallMs: () => number): Promise<PointOutcome[]> {
  const outcomes = new Map<number, PointOutcome>();
  if (tasks.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const workers: Worker[] = [];
    let next = 0;
    let failed = false;
    const stopAll = () => void Promise.all(workers.map((worker) => worker.terminate()));
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      stopAll();
      reject(error);
    };
    const handedAt = new Map<number, number>();
    const feed = (worker: Worker) => {
      if (next >= tasks.length) return;
      handedAt.set(tasks[next].index, wallMs());
      worker.postMessage(tasks[next++]);
    };
    for (let i = 0; i < Math.min(jobs, tasks.length); i++) {
      const worker = startWorker();
      workers.push(worker);
      worker.on('message', (reply: WorkerReply) => {
        if (failed) return;
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
      worker.on('error', (error) => fail(new PointFailure(`a sweep worker thread failed: ${error.stack ?? error.message}`, true)));
      worker.on('exit', (code) => {
        if (!failed && outcomes.size < tasks.length && code !== 0) fail(new PointFailure(`a sweep worker thread exited with status ${code}`, true));
      });
      feed(worker);
    }
  });
}
