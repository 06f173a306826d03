// One replay from a validated configuration: build the cluster, submit the workload (explicit
// requests, or an agentic trace driven by lanes), run, report.
import type { KvEventBatch } from './events/model';
import type { ReplayConfig } from './config/schema';
import { clusterSpec, fidelityOf, requestSpecs } from './config/build';
import { Cluster, ClusterResult, type RequestSpec, type SpinNotice } from './sim/cluster';
import { buildReport, RunReport } from './report/report';
import type { AgenticTrace } from './agentic/trace';
import { AgenticDriver, PlayRecord } from './agentic/driver';
import type { KeptScores } from './router/router';

export interface ReplayOutcome {
  report: RunReport;
  result: ClusterResult;
  plays: PlayRecord[];
}

export interface ReplayInputs {
  /** The parsed trace named by workload.agentic.trace. */
  agentic_trace?: AgenticTrace;
  /** The requests of the trace named by workload.mooncake.trace. */
  mooncake_requests?: RequestSpec[];
  /** Keep every delivered KV event batch in the result (an event log, evidence or figures need it). */
  keep_event_history?: boolean;
  /** Which candidates each placement record keeps (default: the chosen rank and the runner-up). */
  kept_scores?: KeptScores;
  /** Told of each event batch as the router receives it (see ClusterSpec.on_delivered). */
  on_delivered?: (batch: KvEventBatch, visible_ns: number) => void;
  /** Step every decode pass through the kernel (see ClusterSpec.step_every_pass). */
  step_every_pass?: boolean;
  /** Events hold each block id they name (see ClusterSpec.hold_each_block_id). */
  hold_each_block_id?: boolean;
  /** A livelock guard: fail after this many kernel events (see ClusterSpec.max_kernel_events). */
  max_kernel_events?: number;
  /** Told as requests end, and every 65,536 kernel events (ended, submitted, virtual ns), for a progress display. */
  progress?: (ended: number, submitted: number, now_ns: number) => void;
  /** Told once per request that spins on preemption (see SPIN_NOTICE_PREEMPTIONS), as it happens. */
  spinning?: (notice: SpinNotice) => void;
  /** Compute the report's digest when it is first read, not now (see buildReport): the fuzzer's runs, compared by their contents. */
  defer_digest?: boolean;
  /** Called with the cluster once the workload is submitted, just before it runs (observers such as the fuzzer's). */
  observe?: (cluster: Cluster) => void;
}

export function runReplay(config: ReplayConfig, inputs: ReplayInputs = {}): ReplayOutcome {
  const spec = clusterSpec(config);
  // Object.assign, not a spread followed by new fields: on Node 20 each field added after a spread
  // costs about a microsecond (the copy's hidden class keeps no transitions), and the fuzzer makes
  // two clusters for each of its thousands of cases.
  const cluster = new Cluster(
    Object.assign({}, spec, {
      keep_event_history: inputs.keep_event_history ?? false,
      max_kernel_events: inputs.max_kernel_events,
      step_every_pass: inputs.step_every_pass ?? false,
      hold_each_block_id: inputs.hold_each_block_id ?? false,
      on_delivered: inputs.on_delivered,
      router: Object.assign({}, spec.router, { kept_scores: inputs.kept_scores ?? ('chosen_and_runner_up' as const) }),
    }),
  );
  const explicit = requestSpecs(config);
  for (const request of explicit) cluster.submit(request);
  if (config.workload.mooncake) {
    if (!inputs.mooncake_requests) throw new Error(`workload.mooncake.trace "${config.workload.mooncake.trace}" was not loaded`);
    for (const request of inputs.mooncake_requests) cluster.submit(request);
  }
  let driver: AgenticDriver | null = null;
  const agentic = config.workload.agentic;
  if (agentic) {
    if (!inputs.agentic_trace) throw new Error(`workload.agentic.trace "${agentic.trace}" was not loaded`);
    driver = new AgenticDriver(cluster, inputs.agentic_trace, agentic, explicit.length);
    driver.start();
  }
  if (inputs.progress) cluster.onProgress = inputs.progress;
  if (inputs.spinning) cluster.onSpinning = inputs.spinning;
  inputs.observe?.(cluster);
  const result = cluster.run();
  const plays = driver?.plays ?? [];
  const report = buildReport(result, cluster.router.settings.block_size, cluster.router.settings.host_cache_hit_weight, plays, fidelityOf(config), config.slo ?? null, inputs.defer_digest ?? false);
  return { report, result, plays };
}

/** A run that ended with requests neither finished, failed nor skipped: a simulator defect (a stall). */
export class UnfinishedRequestsError extends Error {
  constructor(readonly stuck: ClusterResult['stuck']) {
    super(
      `${stuck.length} request(s) never ended although the simulation ran out of work: ` +
        stuck.map((r) => `${r.request_id} (${r.where}, no progress since ${r.last_progress_ns / 1_000_000} ms)`).join('; '),
    );
    this.name = 'UnfinishedRequestsError';
  }
}

/** Invariant: every request ends finished, failed with a reason, or skipped with a reason. */
export function assertEveryRequestEnded(result: ClusterResult): void {
  if (result.failure !== null) return; // a rejected event stream stops the run early; reported on its own
  if (result.stuck.length > 0) throw new UnfinishedRequestsError(result.stuck);
  for (const request of result.requests) {
    const reason = request.state === 'failed' ? request.failure_reason : request.state === 'skipped' ? request.skip_reason : 'finished';
    if (!reason) throw new Error(`request ${request.request_id} ended ${request.state} without a reason`);
  }
}
