// One generated case end to end: validate its config as `kvqual replay` would, run it with a
// pass observer, write the event stream as `--events-out` does, check every invariant, then run
// it again stepping every decode pass through the kernel, and compare digests, event logs and the
// passes planned (the same seed must give the same run, however runs of decode passes are taken).
import { validateReplayConfig } from '../config/load';
import type { ReplayConfig } from '../config/schema';
import { parseAgenticTrace } from '../agentic/trace';
import { runReplay, type ReplayInputs, type ReplayOutcome } from '../replay';
import { fromKvEventBatch, toWireLines } from '../events/wire';
import type { Cluster } from '../sim/cluster';
import { UnsettledError } from '../kernel';
import { formatNs, msToNs } from '../time';
import { rankLabel, type KvEventBatch } from '../events/model';
import { checkRun, declaredBandwidths, declaredLagMs, declaredRouterWeights, routerWeightsOf, transferBandwidthsOf, type FailureRecord, type ObservedRun, type PassRecord, type PlacementView, type Violation } from './invariants';
import type { FuzzCase } from './generate';
import { PassLedger, passKeysInOrder } from './passLedger';
import { plantedViolations } from './planted';
import { digestPending } from '../report/report';
import { sameCanonicalValue } from '../report/canonical';

export interface CaseVerdict {
  violations: Violation[];
  /** The report digest of the first run (null when it did not complete). */
  digest: string | null;
  first: ObservedRun;
  /** The case needed more KV events than a checked run keeps (see MAX_CHECKED_KV_EVENTS): not checked, no violation. */
  too_heavy: boolean;
}

/**
 * A checked run keeps every KV event it delivers (to write and check the stream) and a case holds
 * two runs: a case with more events than this is counted as too heavy to check instead of being
 * run to the end (one that settles after 3.2 million preemptions, 6.4 million events, needed more
 * than 11 GB). A plain `kvqual replay` of it is not limited.
 */
export const MAX_CHECKED_KV_EVENTS = 500_000;

/**
 * Generated cases are small: one that needs more kernel events than this does not settle (a
 * livelock), unless it is spinning on preemption (see SPIN_EVENTS_PER_PREEMPTION): then it is too
 * heavy to check. The heaviest seen that settles needs 12.7 M (docs/development.md, Generated workloads).
 */
const MAX_KERNEL_EVENTS = 20_000_000;
/** Late or early KV event deliveries kept as violations per run (the first ones name the problem). */
const MAX_LATE_DELIVERIES_KEPT = 5;

/** The run stopped because it passed the budget of events a checked run keeps, or spun on preemption past its kernel event budget. */
export class TooHeavyToCheck extends Error {}

/** What "too heavy to check" means, for the counts that `npm run fuzz` and the sign-off print. */
export const TOO_HEAVY_MEANING = `more than ${MAX_CHECKED_KV_EVENTS.toLocaleString('en-US')} KV events, or a preemption spin past ${MAX_KERNEL_EVENTS.toLocaleString('en-US')} kernel events`;

/**
 * A run past its kernel event budget was spinning when its ranks preempted a request at least once
 * per spin cycle, with a margin: over the second half of the budget, at least one preemption per
 * this many kernel events for each pass a cycle may take (see cyclePasses). Spinning: short passes,
 * each readmitting a request that a later one preempts, while something slow (a G2 restore or copy
 * over a slow link, a decode worker not yet pulling the KV that a prefill worker holds) keeps the
 * G1 blocks it needs. It would settle when that slow thing ends, as vLLM would also spin, one step
 * at a time, but after far more events than a checked run may take: too heavy to check, not a
 * livelock. A pass is two kernel events (its start and its end) when nothing else happens.
 */
const SPIN_EVENTS_PER_PREEMPTION = 10;

/**
 * The config a case holds, validated (a generator that writes an invalid config is a bug: this
 * throws). The loader reads the case's config without changing it and makes every object of what
 * it returns anew (test/unit/fuzz.test.ts), so a run can change its config and the case (which
 * fast-check shrinks from) stays as generated: no copy of the case's config is needed first.
 */
export function caseConfig(fuzzCase: FuzzCase, source = 'generated case'): ReplayConfig {
  return validateReplayConfig(fuzzCase.config, source);
}

export function caseInputs(fuzzCase: FuzzCase, config: ReplayConfig): ReplayInputs {
  if (!config.workload.agentic) return {};
  if (fuzzCase.agentic_trace === null) throw new Error('the case has an agentic workload but no trace');
  return { agentic_trace: parseAgenticTrace(fuzzCase.agentic_trace, config.workload.agentic.trace) };
}

/** The batches the router received, in delivery order, as `kvqual replay --events-out` writes them. */
export function eventLogOf(outcome: ReplayOutcome): string {
  return outcome.result.batches.map(({ batch }) => toWireLines(fromKvEventBatch(batch))).join('');
}

/**
 * Runs a config once, recording every pass each rank plans and every failure. A thrown error is
 * kept, not rethrown; past `maxEvents` KV events the run stops with TooHeavyToCheck, and so does a
 * run that spins on preemption past `maxKernelEvents` (any other run past them is a livelock).
 * `viewPlacements`: record what each placement scored (the router-view check reads it; a run
 * only compared with another, as runCase's second, leaves it out: placement_views stays empty).
 */
export function runObserved(config: ReplayConfig, inputs: ReplayInputs, keptPasses?: number, maxEvents = MAX_CHECKED_KV_EVENTS, maxKernelEvents = MAX_KERNEL_EVENTS, viewPlacements = true): ObservedRun {
  const ledger = new PassLedger(keptPasses);
  const failures: FailureRecord[] = [];
  const placement_views: PlacementView[] = [];
  let observedCluster: Cluster | null = null;
  // The preemptions made by the time half the kernel event budget was used, and the longest request dispatched (see spinning).
  let preemptionsAtHalf: number | null = null;
  let longestTokens = 0;
  const observe = (cluster: Cluster) => {
    observedCluster = cluster;
    const half = maxKernelEvents / 2;
    const driver = cluster.onFinished;
    cluster.onFinished = (request) => {
      if (request.state === 'failed') failures.push({ request_id: request.request_id, play_id: request.identity.play_id, time_ns: cluster.kernel.now });
      driver?.(request);
    };
    // What each placement scored: its blocks' hashes (while the request holds their ids) and the events applied by then.
    const router = cluster.router;
    if (viewPlacements) {
      router.placementObserver = (placement, ids, applied_events) => {
        placement_views.push({ placement, applied_events, block_hashes: Array.from(ids, (id) => router.blockIds.hashOf(id)) });
      };
    }
    const dispatched = cluster.onDispatched;
    cluster.onDispatched = (request) => {
      longestTokens = Math.max(longestTokens, request.input_length + request.output_length);
      dispatched?.(request);
    };
    for (const rank of cluster.ranks) {
      const settings = rank.settings;
      // One record per rank, written again for every pass (the ledger copies the passes it keeps): a
      // new record per pass cost more than the rest of the observer, and once the first passes were
      // kept V8 made every later record in its old space (see PassLedger.observe).
      const record = {} as PassRecord;
      rank.passObserver = (engine, pass) => {
        if (preemptionsAtHalf === null && cluster.kernel.eventsProcessed >= half) preemptionsAtHalf = preemptionsOf(cluster);
        // Field by field: spreading two objects into it cost more than the rest of the observer.
        record.time_ns = pass.time_ns;
        record.running_requests = pass.running_requests;
        record.scheduled_tokens = pass.scheduled_tokens;
        record.g1_occupied_blocks = pass.g1_occupied_blocks;
        record.host_used_blocks = pass.host_used_blocks;
        record.shape = pass.shape;
        record.duration_ns = pass.duration_ns;
        record.worker_id = engine.rank.worker_id;
        record.dp_rank = engine.rank.dp_rank;
        record.max_num_seqs = settings.max_num_seqs;
        record.max_num_batched_tokens = settings.max_num_batched_tokens;
        record.num_gpu_blocks = settings.num_gpu_blocks;
        record.host_capacity_blocks = engine.host === null ? null : engine.host.pool.capacity_blocks;
        record.pass_time = settings.pass_time;
        ledger.observe(record);
      };
    }
  };
  // LAG-1, from the config: each batch reaches the router exactly its lag after it was emitted (the first few that do not are kept).
  const lag_ns = msToNs(config.router.kv_event_lag_ms);
  const late: Violation[] = [];
  const observed = () => ({ passes: ledger.kept, pass_count: ledger.count, pass_digest: ledger.digest, unkept_pass_violations: ledger.unkept_violations, delivery_violations: late, failures, placement_views, kv_event_lag_ms: config.router.kv_event_lag_ms, bandwidths: transferBandwidthsOf(config), agentic_trace: inputs.agentic_trace ?? null, router: routerWeightsOf(config) });
  try {
    let delivered = 0;
    const budget = (batch: KvEventBatch) => {
      const now = observedCluster === null ? null : (observedCluster as Cluster).kernel.now;
      if (now !== batch.emitted_ns + lag_ns && late.length < MAX_LATE_DELIVERIES_KEPT) {
        late.push({
          invariant: 'event-delivery',
          message: `a batch of ${rankLabel(batch)} emitted at ${formatNs(batch.emitted_ns)} reached the router at ${now === null ? 'no time' : formatNs(now)}, not ${formatNs(batch.emitted_ns + lag_ns)} (its lag of ${config.router.kv_event_lag_ms} ms later)`,
        });
      }
      delivered += batch.events.length;
      if (delivered > maxEvents) throw new TooHeavyToCheck(`the case delivered more than ${maxEvents.toLocaleString('en-US')} KV events, more than a checked run keeps`);
    };
    // Object.assign, not a spread followed by new fields (see runReplay).
    const outcome = runReplay(config, Object.assign({}, inputs, { observe, keep_event_history: true, on_delivered: budget, max_kernel_events: maxKernelEvents }));
    return { outcome, error: null, ...observed(), event_log: eventLogOf(outcome) };
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    const passesPerCycle = observedCluster === null ? 1 : cyclePasses(observedCluster, longestTokens);
    return { outcome: null, error: spinning(error, observedCluster, preemptionsAtHalf, passesPerCycle) ?? error, ...observed(), event_log: '' };
  }
}

function preemptionsOf(cluster: Cluster): number {
  return cluster.ranks.reduce((sum, rank) => sum + rank.preemptionCount, 0);
}

/**
 * The most passes one cycle of a spin may take: a preempted request computes its prompt (and the
 * output it had made) again, at worst the longest request dispatched, at the smallest token budget
 * per pass of any rank; its next preemption comes at the latest when that is done.
 */
function cyclePasses(cluster: Cluster, longestTokens: number): number {
  let smallestBudget = Infinity;
  for (const rank of cluster.ranks) smallestBudget = Math.min(smallestBudget, rank.settings.max_num_batched_tokens);
  return Math.max(1, Math.ceil(longestTokens / smallestBudget));
}

/**
 * A run stopped by its kernel event budget while spinning on preemption, as too heavy to check;
 * null otherwise. Over the second half of the budget it must have preempted at least once per
 * SPIN_EVENTS_PER_PREEMPTION kernel events for each pass of a spin cycle (`passesPerCycle`, see
 * cyclePasses), so a run that preempted a lot early and then stopped making progress for another
 * reason is still a livelock.
 */
function spinning(error: Error, cluster: Cluster | null, preemptionsAtHalf: number | null, passesPerCycle: number): TooHeavyToCheck | null {
  if (!(error instanceof UnsettledError) || cluster === null || preemptionsAtHalf === null) return null;
  const late = preemptionsOf(cluster) - preemptionsAtHalf;
  if (late * SPIN_EVENTS_PER_PREEMPTION * passesPerCycle < error.events / 2) return null;
  return new TooHeavyToCheck(
    `the case spun on preemption past the kernel event budget: ${late.toLocaleString('en-US')} preemptions in the last ${(error.events / 2).toLocaleString('en-US')} of ${error.events.toLocaleString('en-US')} kernel events, by ${formatNs(error.now_ns)} of virtual time`,
  );
}

/**
 * The report digest of one plain run of a case (no observers, no event history, no second run),
 * or null when it did not complete: what comparing a case with its written copy needs.
 */
export function caseDigest(fuzzCase: FuzzCase): string | null {
  const config = caseConfig(fuzzCase);
  try {
    return runReplay(config, { ...caseInputs(fuzzCase, config), max_kernel_events: MAX_KERNEL_EVENTS }).report.digest;
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    return null;
  }
}

/** Limits and test doubles of one checked case. */
export interface CaseChecks {
  /** KV events past which the case is too heavy to check (default MAX_CHECKED_KV_EVENTS). */
  max_checked_events?: number;
  /** Kernel events past which a run that spins on preemption is too heavy, and any other a livelock (default MAX_KERNEL_EVENTS). */
  max_kernel_events?: number;
  /** The test double's planted defect (src/fuzz/planted.ts): its violations count as the run's own. */
  planted_defect?: boolean;
}

/**
 * Every invariant of a case, including determinism (a second run must match the first). A case
 * past `max_checked_events` KV events, or spinning on preemption past `max_kernel_events` kernel
 * events, is too heavy to check: it has no violations and no second run.
 */
export function runCase(fuzzCase: FuzzCase, checks: CaseChecks = {}): CaseVerdict {
  const maxKernelEvents = checks.max_kernel_events ?? MAX_KERNEL_EVENTS;
  const config = caseConfig(fuzzCase);
  // Each run's report digest is computed only when read: the two runs are compared by their reports' contents (see determinismViolations).
  const inputs: ReplayInputs = Object.assign(caseInputs(fuzzCase, config), { defer_digest: true });
  // The second run's copy of the parsed trace, made before the first run (parsing it again costs more).
  const secondTrace = inputs.agentic_trace === undefined ? undefined : plainCopy(inputs.agentic_trace);
  const first = runObserved(config, inputs, undefined, checks.max_checked_events ?? MAX_CHECKED_KV_EVENTS, maxKernelEvents);
  if (first.error instanceof TooHeavyToCheck) return { violations: [], digest: null, first, too_heavy: true };
  // The checks take the settings as the case wrote them, and the spec's defaults for those it left
  // out, not the loader's reading of them (which the run used).
  first.router = declaredRouterWeights(fuzzCase.config, first.router.block_size);
  first.bandwidths = declaredBandwidths(fuzzCase.config);
  first.kv_event_lag_ms = declaredLagMs(fuzzCase.config);
  const violations = checkRun(first);
  if (checks.planted_defect) violations.push(...plantedViolations(first));
  // A copy of the validated config (validating it again costs more than the copy): the second run shares nothing with the first.
  // It is compared, not checked: what its placements scored is not recorded.
  const secondInputs: ReplayInputs = { agentic_trace: secondTrace, step_every_pass: true, defer_digest: true };
  const second = runObserved(plainCopy(config), secondInputs, undefined, MAX_CHECKED_KV_EVENTS, maxKernelEvents, false);
  violations.push(...determinismViolations(first, second));
  // The first run's digest, computed if it is read (checkRun and the comparison change nothing of its report).
  return {
    violations,
    get digest() {
      return first.outcome?.report.digest ?? null;
    },
    first,
    too_heavy: false,
  };
}

/**
 * A deep copy of plain data (objects of Object's prototype, arrays, primitives), as structuredClone
 * makes it for a validated config or a parsed trace, in a fifth of its time; anything else throws.
 */
export function plainCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = plainCopy(value[i]);
    return copy as T;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) throw new TypeError(`plainCopy: a ${(value as object).constructor?.name ?? 'null-prototype object'} is not plain data`);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') throw new TypeError('plainCopy: a field named __proto__ would set the copy\'s prototype');
    copy[key] = plainCopy((value as Record<string, unknown>)[key]);
  }
  return copy as T;
}

function passesDiffer(first: ObservedRun, second: ObservedRun): boolean {
  return first.pass_count !== second.pass_count || first.pass_digest !== second.pass_digest;
}

/**
 * Whether two runs' reports have the same digest. Two reports whose digests are still pending (see
 * digestPending) have the same one when their summaries and records are the same value, found by
 * comparing them; otherwise (or when one's digest was read or set) the digests are compared.
 */
function sameDigest(first: ObservedRun, second: ObservedRun, digest: (run: ObservedRun) => string): boolean {
  const [a, b] = [first.outcome?.report, second.outcome?.report];
  if (a !== undefined && b !== undefined && digestPending(a) && digestPending(b) && sameCanonicalValue({ summary: a.summary, per_request: a.per_request }, { summary: b.summary, per_request: b.per_request })) return true;
  return digest(first) === digest(second);
}

export function determinismViolations(first: ObservedRun, second: ObservedRun): Violation[] {
  const digest = (run: ObservedRun) => run.outcome?.report.digest ?? `no digest (${run.error?.message ?? 'no outcome'})`;
  const violations: Violation[] = [];
  if (!sameDigest(first, second, digest)) violations.push({ invariant: 'determinism', message: `two runs with the same seed (the second stepping every pass) gave digests ${digest(first)} and ${digest(second)}` });
  else if (first.event_log !== second.event_log) violations.push({ invariant: 'determinism', message: 'two runs with the same seed (the second stepping every pass) gave the same digest but different KV event logs' });
  else if (passesDiffer(first, second)) violations.push({ invariant: 'determinism', message: passDifference(first, second) });
  return violations;
}

/** How two runs' passes differ: the first difference when both kept every pass, else their counts and digests. */
function passDifference(first: ObservedRun, second: ObservedRun): string {
  const differ = 'two runs with the same seed (the second stepping every pass) planned different passes';
  if (first.passes.length !== first.pass_count || second.passes.length !== second.pass_count) {
    return `${differ}: ${first.pass_count} (digest ${first.pass_digest}) and ${second.pass_count} (digest ${second.pass_digest})`;
  }
  const [a, b] = [passKeysInOrder(first.passes), passKeysInOrder(second.passes)];
  const at = a.findIndex((key, i) => key !== b[i]);
  const where = at >= 0 ? at : Math.min(a.length, b.length);
  return `${differ}: ${a.length} and ${b.length}; first difference at pass ${where + 1}: ${a[where] ?? 'none'} / ${b[where] ?? 'none'}`;
}
