// What a sweep produces, apart from its charts: each point's summary metrics taken from its run
// report, the sweep.json document (format kvqual-sweep/1; a shard's holds only its points), the
// CSV, and merging shards back into the document the unsharded sweep writes. Wall times are the
// only values that differ between two runs of one sweep; everything else is a function of the
// sweep file and the base config.
import type { RunReport } from '../report/report';
import { type ParameterValue, shardOfPoint, SweepError } from './spec';

export const SWEEP_FORMAT = 'kvqual-sweep/1';

/** The summary metrics kept per point, in column order; a metric is null when it is undefined (no request finished). */
export const METRICS = [
  'requests_finished',
  'requests_failed',
  'requests_skipped',
  'ttft_mean_ms',
  'ttft_p50_ms',
  'ttft_p99_ms',
  'e2e_p50_ms',
  'e2e_p99_ms',
  'itl_p50_ms',
  'prefix_reuse_ratio',
  'g2_restored_tokens',
  'd2h_transfers',
  'h2d_transfers',
  'router_agreement_ratio',
  'virtual_duration_ms',
] as const;
export type MetricName = (typeof METRICS)[number];
export type PointMetrics = Record<MetricName, number | null>;

/** A point's outcome as its worker returns it. */
export interface PointOutcome {
  index: number;
  /** The router accepted the event stream and no request was stuck. */
  clean: boolean;
  /** Why not clean, else null. */
  problem: string | null;
  metrics: PointMetrics;
  digest: string;
  wall_ms: number;
}

export interface PointRecord extends PointOutcome {
  parameters: Record<string, ParameterValue>;
}

export interface SweepDocument {
  format: typeof SWEEP_FORMAT;
  /** SHA-256 over every point's parameters and validated config (see sweepDigest). */
  sweep_digest: string;
  /** The base config as the sweep file names it. */
  base: string;
  parameters: string[];
  values: Record<string, ParameterValue[]>;
  metrics: MetricName[];
  points_total: number;
  /** Present in a shard's document only. */
  shard?: { index: number; count: number };
  points: PointRecord[];
}

const rounded = (value: number) => Number(value.toFixed(6));

/** The summary metrics of one run report. */
export function pointMetrics(report: RunReport): PointMetrics {
  const s = report.summary;
  const finished = s.requests.finished > 0;
  const ofFinished = (value: number) => (finished ? rounded(value) : null);
  return {
    requests_finished: s.requests.finished,
    requests_failed: s.requests.failed,
    requests_skipped: s.requests.skipped,
    ttft_mean_ms: ofFinished(s.ttft_ms.mean),
    ttft_p50_ms: ofFinished(s.ttft_ms.p50),
    ttft_p99_ms: ofFinished(s.ttft_ms.p99),
    e2e_p50_ms: ofFinished(s.e2e_ms.p50),
    e2e_p99_ms: ofFinished(s.e2e_ms.p99),
    itl_p50_ms: s.itl_ms.count > 0 ? rounded(s.itl_ms.p50) : null,
    prefix_reuse_ratio: rounded(s.prefix_reuse_ratio),
    g2_restored_tokens: s.g2_restored_tokens,
    d2h_transfers: s.transfers.d2h,
    h2d_transfers: s.transfers.h2d,
    router_agreement_ratio: s.reconciliation.admissions > 0 ? rounded(s.reconciliation.agree / s.reconciliation.admissions) : null,
    virtual_duration_ms: rounded(s.virtual_duration_ms),
  };
}

/** Whether a run is clean, and if not, why (as `kvqual replay` exits 1). */
export function runProblem(report: RunReport): string | null {
  if (report.summary.event_stream_failure !== null) return `event stream rejected: ${report.summary.event_stream_failure}`;
  const stuck = report.summary.stuck_requests ?? [];
  if (stuck.length > 0) return `${stuck.length} request(s) never ended (a simulator defect)`;
  return null;
}

/** The document's JSON text: fixed key order, two-space indent, a final newline. */
export function sweepJsonText(document: SweepDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One row per point: index, parameters, clean, metrics, digest, wall_ms. */
export function sweepCsv(document: SweepDocument): string {
  const header = ['point', ...document.parameters, 'clean', ...document.metrics, 'digest', 'wall_ms'];
  const rows = document.points.map((point) => [point.index, ...document.parameters.map((p) => point.parameters[p]), point.clean, ...document.metrics.map((m) => point.metrics[m]), point.digest, point.wall_ms]);
  return [header, ...rows].map((row) => row.map(csvCell).join(',')).join('\n') + '\n';
}

/** The same document with every wall time set to 0 (what sharded and unsharded runs share exactly). */
export function withoutWallTimes(document: SweepDocument): SweepDocument {
  return { ...document, points: document.points.map((point) => ({ ...point, wall_ms: 0 })) };
}

/** Reads a sweep document from its JSON text; errors name the file. */
export function parseSweepDocument(text: string, file: string): SweepDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SweepError(`${file}: not JSON (${(error as Error).message})`);
  }
  const doc = value as Partial<SweepDocument> | null;
  if (doc === null || typeof doc !== 'object' || doc.format !== SWEEP_FORMAT) throw new SweepError(`${file}: not a sweep result (format ${SWEEP_FORMAT})`);
  if (!Array.isArray(doc.points) || !Array.isArray(doc.parameters) || typeof doc.points_total !== 'number' || typeof doc.sweep_digest !== 'string') {
    throw new SweepError(`${file}: a ${SWEEP_FORMAT} document without points, parameters, points_total or sweep_digest`);
  }
  return doc as SweepDocument;
}

/**
 * Merges shard documents into the unsharded sweep's document. Every shard of one sweep (same
 * digest, same shard count) must be given exactly once and hold exactly its points; a missing,
 * repeated or foreign shard is an error that names it.
 */
export function mergeShards(shards: readonly { file: string; document: SweepDocument }[]): SweepDocument {
  if (shards.length === 0) throw new SweepError('give the shard results to merge (shard-*.json)');
  const [first] = shards;
  const count = first.document.shard?.count;
  const byIndex = new Map<number, string>();
  for (const { file, document } of shards) {
    if (!document.shard) throw new SweepError(`${file}: not a shard's result (it has no shard field); it is already a whole sweep`);
    if (document.sweep_digest !== first.document.sweep_digest) throw new SweepError(`${file}: from another sweep than ${first.file} (sweep digests ${document.sweep_digest.slice(0, 12)}… and ${first.document.sweep_digest.slice(0, 12)}…)`);
    if (document.shard.count !== count) throw new SweepError(`${file}: shard ${document.shard.index}/${document.shard.count}, but ${first.file} is of ${count} shards`);
    const earlier = byIndex.get(document.shard.index);
    if (earlier !== undefined) throw new SweepError(`${file}: shard ${document.shard.index}/${count} is given twice (also ${earlier})`);
    byIndex.set(document.shard.index, file);
    for (const point of document.points) {
      if (shardOfPoint(point.index, count!) !== document.shard.index) throw new SweepError(`${file}: point ${point.index} does not belong to shard ${document.shard.index}/${count}`);
    }
  }
  const missing = Array.from({ length: count! }, (_, i) => i + 1).filter((index) => !byIndex.has(index));
  if (missing.length > 0) throw new SweepError(`shard${missing.length > 1 ? 's' : ''} ${missing.map((index) => `${index}/${count}`).join(', ')} missing; give every shard's result`);
  const points = shards.flatMap(({ document }) => document.points).sort((a, b) => a.index - b.index);
  const absent = Array.from({ length: first.document.points_total }, (_, i) => i).filter((index) => points[index]?.index !== index);
  if (points.length !== first.document.points_total || absent.length > 0) {
    throw new SweepError(`the shards hold ${points.length} of ${first.document.points_total} points${absent.length > 0 ? `; point ${absent[0]} is missing or repeated` : ''}`);
  }
  const { shard: _shard, ...whole } = first.document;
  return { ...whole, points };
}
