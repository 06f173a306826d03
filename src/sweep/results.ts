// What a sweep produces, apart from its charts: each point's summary metrics taken from its run
// report, the sweep.json document (format kvqual-sweep/1; a shard's holds only its points), the
// CSV, and merging shards back into the document the unsharded sweep writes. Wall times are the
// only values that differ between two runs of one sweep; everything else is a function of the
// sweep file and the base config.
import { z } from 'zod';
import type { RunReport } from '../report/report';
import { MAX_SWEEP_POINTS, ParameterValue, parseFieldPath, shardOfPoint, SweepError, zodIssueText } from './spec';
import { SearchSectionSchema } from './searchSection';

export const SWEEP_FORMAT = 'kvqual-sweep/1';

/** The summary metrics kept per point, in column order; a metric is null when it is undefined (e.g. no request finished). */
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
  'prefix_reuse_block_ratio',
  'prefix_reuse_request_ratio',
  'prefix_ceiling_token_ratio',
  'prefix_ceiling_block_ratio',
  'prefix_ceiling_request_ratio',
  'prefix_reuse_of_ceiling_ratio',
  'g2_restored_tokens',
  'd2h_transfers',
  'h2d_transfers',
  'router_agreement_ratio',
  'virtual_duration_ms',
] as const;
export type MetricName = (typeof METRICS)[number];

/**
 * Counts are whole and never negative, and are always measured; times and ratios are never negative
 * (ratios at most 1, except the share of the ceiling realised: a preempted request readmitted may
 * reuse its own blocks, which no earlier request had), null when nothing was measured.
 */
const COUNTS: readonly MetricName[] = ['requests_finished', 'requests_failed', 'requests_skipped', 'g2_restored_tokens', 'd2h_transfers', 'h2d_transfers'];
/** Every ratio but the share of the ceiling realised, which may pass 1 (above). */
const RATIOS: readonly MetricName[] = METRICS.filter((metric) => metric.endsWith('_ratio') && metric !== 'prefix_reuse_of_ceiling_ratio');
function metricSchema(metric: MetricName): z.ZodNullable<z.ZodNumber> {
  if (COUNTS.includes(metric)) return z.number().int().min(0) as unknown as z.ZodNullable<z.ZodNumber>;
  return (RATIOS.includes(metric) ? z.number().min(0).max(1) : z.number().min(0)).nullable();
}
const PointMetricsSchema = z.strictObject(Object.fromEntries(METRICS.map((metric) => [metric, metricSchema(metric)])) as Record<MetricName, z.ZodNullable<z.ZodNumber>>);
export type PointMetrics = z.infer<typeof PointMetricsSchema>;

/** One point of sweep.json, its fields in the order they are written. */
const PointRecordSchema = z.strictObject({
  index: z.number().int().min(0),
  /** Field path → this point's value. */
  parameters: z.record(z.string(), ParameterValue),
  /** The router accepted the event stream and no request was stuck. */
  clean: z.boolean(),
  /** Why not clean, else null. */
  problem: z.string().nullable(),
  metrics: PointMetricsSchema,
  /** The run report's digest, as `kvqual replay` prints it. */
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected "sha256:" and 64 hexadecimal digits'),
  wall_ms: z.number().int().min(0),
});
export type PointRecord = z.infer<typeof PointRecordSchema>;
/** A point's outcome as its worker returns it. */
export type PointOutcome = Omit<PointRecord, 'parameters'>;

/**
 * How the points' runs went, in words: "every run clean" (each event stream accepted and every
 * request ended) or how many were not, and then how many points had requests fail (a clean run may
 * have every request fail, for want of G1, which "clean" alone would hide).
 */
export function runsText(points: readonly Pick<PointRecord, 'index' | 'clean' | 'metrics'>[]): string {
  const unclean = points.filter((point) => !point.clean).length;
  const failing = points.filter((point) => (point.metrics.requests_failed ?? 0) > 0);
  const failed = failing.length === 0 ? '' : `; ${failing.length} point(s) with failed requests (${failing.slice(0, 3).map((p) => `point ${p.index}: ${p.metrics.requests_failed} failed, ${p.metrics.requests_finished} finished`).join('; ')}${failing.length > 3 ? '; …' : ''})`;
  return `${unclean === 0 ? 'every run clean' : `${unclean} run(s) not clean`}${failed}`;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * sweep.json (format kvqual-sweep/1) and a shard's result, its fields in the order they are
 * written: every field, and how they agree (each parameter has its values, each point's value is
 * one of them, a point is clean exactly when it has no problem).
 */
export const SweepDocumentSchema = z
  .strictObject({
    format: z.literal(SWEEP_FORMAT),
    /** SHA-256 over every point's parameters and validated config (see sweepDigest). */
    sweep_digest: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 hexadecimal digits (a SHA-256)'),
    /** The base config as the sweep file names it. */
    base: z.string().min(1),
    parameters: z.array(z.string()),
    values: z.record(z.string(), z.array(ParameterValue).min(1)),
    metrics: z.array(z.enum(METRICS)).refine((metrics) => sameJson(metrics, METRICS), `expected the metrics of ${SWEEP_FORMAT} in order: ${METRICS.join(', ')}`),
    points_total: z
      .number()
      .int()
      .min(1)
      .max(MAX_SWEEP_POINTS, `at most ${MAX_SWEEP_POINTS.toLocaleString('en-US')} (the most points a sweep may have)`),
    /** Present in a shard's document only. */
    shard: z
      .strictObject({ index: z.number().int().min(1), count: z.number().int().min(1).max(MAX_SWEEP_POINTS) })
      .refine((shard) => shard.index <= shard.count, { message: 'index must be at most count', path: ['index'] })
      .optional(),
    points: z.array(PointRecordSchema),
    /** Present when the sweep file has a search: what it asked and each run point's values (see searchSection.ts). */
    search: SearchSectionSchema.optional(),
  })
  .superRefine((document, ctx) => {
    const problem = (path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', path, message, input: document });
    document.parameters.forEach((parameter, i) => {
      try {
        parseFieldPath(parameter);
      } catch (error) {
        problem(['parameters', i], (error as Error).message);
      }
      if (document.parameters.indexOf(parameter) !== i) problem(['parameters', i], `${parameter} is given twice`);
      if (!Object.hasOwn(document.values, parameter)) problem(['values', parameter], 'required, but missing');
    });
    for (const key of Object.keys(document.values)) if (!document.parameters.includes(key)) problem(['values', key], 'not one of parameters');
    if (document.points.length > document.points_total) problem(['points'], `${document.points.length} points, but points_total is ${document.points_total}`);
    document.points.forEach((point, i) => {
      const at = (...path: PropertyKey[]) => ['points', i, ...path];
      if (point.index >= document.points_total) problem(at('index'), `${point.index} is not below points_total (${document.points_total})`);
      if (point.clean !== (point.problem === null)) problem(at('problem'), point.clean ? 'a clean point has no problem' : 'a point that is not clean says why');
      for (const key of Object.keys(point.parameters)) if (!document.parameters.includes(key)) problem(at('parameters', key), 'not one of parameters');
      for (const parameter of document.parameters) {
        if (!Object.hasOwn(point.parameters, parameter)) problem(at('parameters', parameter), 'required, but missing');
        else if (!(document.values[parameter] ?? []).includes(point.parameters[parameter])) problem(at('parameters', parameter), `${JSON.stringify(point.parameters[parameter])} is not one of its values`);
      }
    });
  });
export type SweepDocument = z.infer<typeof SweepDocumentSchema>;

const rounded = (value: number) => Number(value.toFixed(6));

/**
 * The summary metrics of one run report. A statistic is null when nothing was measured (TTFT when
 * no request produced a token, ITL when none produced two, E2E when none finished, prefix reuse
 * when no prompt token was counted, hit rates when no request arrived, the share of the ceiling
 * when nothing could be reused, router agreement when nothing was admitted): never 0 then.
 */
export function pointMetrics(report: RunReport): PointMetrics {
  const s = report.summary;
  const measured = (count: number, value: number | null) => (count > 0 && value !== null ? rounded(value) : null);
  const hits = s.prefix_hit_rates;
  return {
    requests_finished: s.requests.finished,
    requests_failed: s.requests.failed,
    requests_skipped: s.requests.skipped,
    ttft_mean_ms: measured(s.ttft_ms.count, s.ttft_ms.mean),
    ttft_p50_ms: measured(s.ttft_ms.count, s.ttft_ms.p50),
    ttft_p99_ms: measured(s.ttft_ms.count, s.ttft_ms.p99),
    e2e_p50_ms: measured(s.e2e_ms.count, s.e2e_ms.p50),
    e2e_p99_ms: measured(s.e2e_ms.count, s.e2e_ms.p99),
    // The requests' own ITLs (RPT-2), as the report's metrics: not the older pooled gaps of summary.itl_ms.
    itl_p50_ms: measured(s.metrics.inter_token_latency_ms.count, s.metrics.inter_token_latency_ms.p50),
    prefix_reuse_ratio: measured(s.tokens.input, s.prefix_reuse_ratio),
    // The published definitions and the infinite-cache ceiling (docs/glossary.md); the share realised is block-weighted, as the published ceilings are.
    prefix_reuse_block_ratio: measured(hits.requests, hits.measured.block_weighted),
    prefix_reuse_request_ratio: measured(hits.requests, hits.measured.request_averaged),
    prefix_ceiling_token_ratio: measured(hits.requests, hits.ceiling.token_weighted),
    prefix_ceiling_block_ratio: measured(hits.requests, hits.ceiling.block_weighted),
    prefix_ceiling_request_ratio: measured(hits.requests, hits.ceiling.request_averaged),
    prefix_reuse_of_ceiling_ratio: measured(hits.requests, hits.of_ceiling.block_weighted),
    g2_restored_tokens: s.g2_restored_tokens,
    d2h_transfers: s.transfers.d2h,
    h2d_transfers: s.transfers.h2d,
    router_agreement_ratio: measured(s.reconciliation.admissions, s.reconciliation.agree / s.reconciliation.admissions),
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

/** Reads a sweep document from its JSON text and checks every field (SweepDocumentSchema); errors name the file and the field. */
export function parseSweepDocument(text: string, file: string): SweepDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SweepError(`${file}: not JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || (value as { format?: unknown }).format !== SWEEP_FORMAT) throw new SweepError(`${file}: not a sweep result (format ${SWEEP_FORMAT})`);
  const parsed = SweepDocumentSchema.safeParse(value);
  if (!parsed.success) throw new SweepError(`${file}: ${zodIssueText(parsed.error.issues[0])}`);
  return parsed.data;
}

/**
 * Merges shard documents into the unsharded sweep's document. Every shard of one sweep (same
 * digest, same shard count) must be given exactly once and hold exactly its points; a missing,
 * repeated or foreign shard is an error that names it.
 */
/**
 * Every point's parameters are values the sweep varies, each combination once (a shard file
 * edited to label two points alike, or with a value the sweep never took, is damaged).
 */
function checkParameters(points: readonly PointRecord[], document: SweepDocument): void {
  const seen = new Map<string, number>();
  for (const point of points) {
    for (const parameter of document.parameters) {
      const value = point.parameters[parameter];
      if (!Object.hasOwn(point.parameters, parameter) || !(document.values[parameter] ?? []).some((taken) => sameJson(taken, value))) {
        throw new SweepError(`point ${point.index}: ${parameter}=${JSON.stringify(value)} is not a value the sweep varies it over; the file is damaged`);
      }
    }
    const key = JSON.stringify(document.parameters.map((parameter) => point.parameters[parameter]));
    const earlier = seen.get(key);
    if (earlier !== undefined) throw new SweepError(`points ${earlier} and ${point.index} have the same parameters (${key}); the file is damaged`);
    seen.set(key, point.index);
  }
}

export function mergeShards(shards: readonly { file: string; document: SweepDocument }[]): SweepDocument {
  if (shards.length === 0) throw new SweepError('give the shard results to merge (shard-*.json)');
  const [first] = shards;
  const count = first.document.shard?.count;
  const byIndex = new Map<number, string>();
  for (const { file, document } of shards) {
    if (!document.shard) throw new SweepError(`${file}: not a shard's result (it has no shard field); it is already a whole sweep`);
    if (document.sweep_digest !== first.document.sweep_digest) throw new SweepError(`${file}: from another sweep than ${first.file} (sweep digests ${document.sweep_digest.slice(0, 12)}… and ${first.document.sweep_digest.slice(0, 12)}…)`);
    if (document.shard.count !== count) throw new SweepError(`${file}: shard ${document.shard.index}/${document.shard.count}, but ${first.file} is of ${count} shards`);
    for (const field of ['base', 'parameters', 'values', 'metrics', 'points_total'] as const) {
      if (!sameJson(document[field], first.document[field])) throw new SweepError(`${file}: ${field} differs from ${first.file}'s, though both name one sweep; the file is damaged`);
    }
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
  const repeated = points.find((point, i) => i > 0 && points[i - 1].index === point.index);
  const absent = Array.from({ length: first.document.points_total }, (_, i) => i).filter((index) => !points.some((point) => point.index === index));
  if (points.length !== first.document.points_total || absent.length > 0 || repeated !== undefined) {
    const why = [repeated !== undefined ? `point ${repeated.index} is repeated` : '', absent.length > 0 ? `point ${absent[0]} is missing` : ''].filter(Boolean).join('; ');
    throw new SweepError(`the shards hold ${points.length} of ${first.document.points_total} points${why ? `; ${why}` : ''}`);
  }
  checkParameters(points, first.document);
  const { shard: _shard, ...whole } = first.document;
  return { ...whole, points };
}
