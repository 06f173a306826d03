// One replay from a validated configuration: build the cluster, submit the workload, run, report.
import type { ReplayConfig } from '../config/schema';
import { clusterSpec, requestSpecs } from '../config/build';
import { Cluster, ClusterResult } from './cluster';
import { buildReport, RunReport } from '../report/report';

export interface ReplayOutcome {
  report: RunReport;
  result: ClusterResult;
}

export function runReplay(config: ReplayConfig): ReplayOutcome {
  const cluster = new Cluster(clusterSpec(config));
  for (const request of requestSpecs(config)) cluster.submit(request);
  const result = cluster.run();
  const report = buildReport(result, cluster.router.settings.block_size, cluster.router.settings.host_cache_hit_weight);
  return { report, result };
}
