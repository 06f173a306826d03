// The body of one sweep worker process: receives points (a validated config and the trace it
// names), runs each as `kvqual replay` would, and sends back its summary metrics and digest (the
// pool measures its wall time), and, while a point runs, a notice of any request that spins on
// preemption. Parsed traces are kept per worker, so a trace is read once per worker.
import { runReplay, type ReplayInputs } from '../replay';
import { pointMetrics, runProblem, type PointOutcome } from '../sweep/results';
import { metricValue } from '../sweep/search';
import type { ReplayConfig } from '../config/schema';
import type { SpinNotice } from '../sim/cluster';
import { isInputError, loadTrace, type TraceFile } from './replay';

export interface PointTask {
  index: number;
  /** The point's validated config, its pass-time tables (timing.table.csv) already read into it. */
  config: ReplayConfig;
  trace: TraceFile | null;
  /** The base config as given, for messages and trace paths. */
  configFile: string;
  /** The metric keys a capacity search reads of this point ("p99 ttft_ms", "goodput"), if the sweep has a search. */
  searchMetrics?: string[];
}

/** A point's outcome with the values a capacity search asked for (not part of sweep.json's point record). */
export type SearchedOutcome = PointOutcome & { search_values?: Record<string, number | null> };

export type WorkerReply = { index: number; outcome: SearchedOutcome } | { index: number; inputError: string } | { index: number; internalError: string };

/** Said while a point runs (it does not end the point): a request of it spins on preemption. */
export interface WorkerNotice {
  index: number;
  notice: SpinNotice;
}

const traces = new Map<string, ReplayInputs>();

/** The key under which a parsed trace is reused: the file and the settings that shape its requests. */
export function traceKey(config: ReplayConfig, trace: TraceFile): string {
  return JSON.stringify([trace.absolute, config.workload.trace_block_size, config.workload.mooncake?.max_requests ?? null, config.workload.mooncake?.time_scale ?? null]);
}

/** Runs one point, telling `notify` as it runs of any request that spins on preemption. */
export function runPoint(task: PointTask, notify: (notice: WorkerNotice) => void): WorkerReply {
  try {
    let inputs: ReplayInputs = {};
    if (task.trace) {
      const key = traceKey(task.config, task.trace);
      inputs = traces.get(key) ?? loadTrace(task.config, task.configFile, task.trace);
      traces.set(key, inputs);
    }
    const { report } = runReplay(task.config, { ...inputs, spinning: (notice) => notify({ index: task.index, notice }) });
    const problem = runProblem(report);
    const outcome: SearchedOutcome = { index: task.index, clean: problem === null, problem, metrics: pointMetrics(report), digest: report.digest, wall_ms: 0 };
    if (task.searchMetrics) outcome.search_values = Object.fromEntries(task.searchMetrics.map((key) => [key, metricValue(report, key)]));
    return { index: task.index, outcome };
  } catch (error) {
    if (isInputError(error)) return { index: task.index, inputError: error.message };
    return { index: task.index, internalError: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
}

/** Set in a worker process's environment by the pool (this file is also imported by the pool). */
export const SWEEP_WORKER_ENV = 'KVQUAL_SWEEP_WORKER';

if (process.env[SWEEP_WORKER_ENV] === '1' && process.send) {
  const send = process.send.bind(process);
  process.on('message', (task: PointTask) => send(runPoint(task, send)));
  // The pool ends its workers; one whose pool went away ends too.
  process.on('disconnect', () => process.exit(0));
}
