// One replay from a validated configuration: build the cluster, submit the workload (explicit
// requests, or an agentic trace driven by lanes), run, report.
import type { ReplayConfig } from './config/schema';
import { clusterSpec, requestSpecs } from './config/build';
import { Cluster, ClusterResult, type RequestSpec } from './sim/cluster';
import { buildReport, RunReport } from './report/report';
import type { AgenticTrace } from './agentic/trace';
import { AgenticDriver, PlayRecord } from './agentic/driver';

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
}

export function runReplay(config: ReplayConfig, inputs: ReplayInputs = {}): ReplayOutcome {
  const cluster = new Cluster(clusterSpec(config));
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
  const result = cluster.run();
  const plays = driver?.plays ?? [];
  const report = buildReport(result, cluster.router.settings.block_size, cluster.router.settings.host_cache_hit_weight, plays);
  return { report, result, plays };
}
