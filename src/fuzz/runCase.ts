// One generated case end to end: validate its config as `kvqual replay` would, run it with a
// pass observer, write the event stream as `--events-out` does, check every invariant, then run
// it again and compare digests and event logs (the same seed must give the same run).
import { validateReplayConfig } from '../config/load';
import type { ReplayConfig } from '../config/schema';
import { parseAgenticTrace } from '../agentic/trace';
import { runReplay, type ReplayInputs, type ReplayOutcome } from '../replay';
import { fromKvEventBatch, toWireLine } from '../events/wire';
import type { Cluster } from '../sim/cluster';
import { checkRun, type FailureRecord, type ObservedRun, type PassRecord, type Violation } from './invariants';
import type { FuzzCase } from './generate';

export interface CaseVerdict {
  violations: Violation[];
  /** The report digest of the first run (null when it did not complete). */
  digest: string | null;
  first: ObservedRun;
}

/** The config a case holds, validated (a generator that writes an invalid config is a bug: this throws). */
export function caseConfig(fuzzCase: FuzzCase, source = 'generated case'): ReplayConfig {
  return validateReplayConfig(structuredClone(fuzzCase.config), source);
}

export function caseInputs(fuzzCase: FuzzCase, config: ReplayConfig): ReplayInputs {
  if (!config.workload.agentic) return {};
  if (fuzzCase.agentic_trace === null) throw new Error('the case has an agentic workload but no trace');
  return { agentic_trace: parseAgenticTrace(fuzzCase.agentic_trace, config.workload.agentic.trace) };
}

/** The batches the router received, in delivery order, as `kvqual replay --events-out` writes them. */
export function eventLogOf(outcome: ReplayOutcome): string {
  return outcome.result.batches.map(({ batch }) => `${toWireLine(fromKvEventBatch(batch))}\n`).join('');
}

/** Runs a config once, recording every pass each rank plans and every failure. A thrown error is kept, not rethrown. */
export function runObserved(config: ReplayConfig, inputs: ReplayInputs): ObservedRun {
  const passes: PassRecord[] = [];
  const failures: FailureRecord[] = [];
  const observe = (cluster: Cluster) => {
    const driver = cluster.onFinished;
    cluster.onFinished = (request) => {
      if (request.state === 'failed') failures.push({ request_id: request.request_id, play_id: request.identity.play_id, time_ns: cluster.kernel.now });
      driver?.(request);
    };
    for (const rank of cluster.ranks) {
      const settings = rank.settings;
      rank.passObserver = (engine, pass) =>
        passes.push({
          ...pass,
          ...engine.rank,
          max_num_seqs: settings.max_num_seqs,
          max_num_batched_tokens: settings.max_num_batched_tokens,
          num_gpu_blocks: settings.num_gpu_blocks,
          host_capacity_blocks: engine.host === null ? null : engine.host.pool.capacity_blocks,
          pass_time: settings.pass_time,
        });
    }
  };
  try {
    const outcome = runReplay(config, { ...inputs, observe, keep_event_history: true, max_kernel_events: MAX_KERNEL_EVENTS });
    return { outcome, error: null, passes, failures, event_log: eventLogOf(outcome) };
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    return { outcome: null, error, passes, failures, event_log: '' };
  }
}

/** Every invariant of a case, including determinism (a second run must match the first). */
/** Generated cases are small: one that needs more kernel events than this never settles (a livelock). */
const MAX_KERNEL_EVENTS = 2_000_000;

export function runCase(fuzzCase: FuzzCase): CaseVerdict {
  const config = caseConfig(fuzzCase);
  const inputs = caseInputs(fuzzCase, config);
  const first = runObserved(config, inputs);
  const violations = checkRun(first);
  const second = runObserved(caseConfig(fuzzCase), caseInputs(fuzzCase, config));
  violations.push(...determinismViolations(first, second));
  return { violations, digest: first.outcome?.report.digest ?? null, first };
}

export function determinismViolations(first: ObservedRun, second: ObservedRun): Violation[] {
  const digest = (run: ObservedRun) => run.outcome?.report.digest ?? `no digest (${run.error?.message ?? 'no outcome'})`;
  const violations: Violation[] = [];
  if (digest(first) !== digest(second)) violations.push({ invariant: 'determinism', message: `two runs with the same seed gave digests ${digest(first)} and ${digest(second)}` });
  else if (first.event_log !== second.event_log) violations.push({ invariant: 'determinism', message: 'two runs with the same seed gave the same digest but different KV event logs' });
  return violations;
}
