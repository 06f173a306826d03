// Capacity search: a sweep file's `search` (an objective to minimise or maximise, constraints on
// the replay summary's metrics, the goodput limits, the metric the Pareto front is drawn against).
// Owns reading and checking it before anything runs, the metric values a point's run report gives
// for it, the search itself (bisection along the objective's axis, or the whole grid), the answer
// (the evaluated candidates, the Pareto front, the winner) and the winner's config text. The search
// asks for point results through a callback and decides only from them, never from how or where
// they ran: the same inputs give the same answer on any number of jobs or shards.
import { parseDocument } from 'yaml';
import { z } from 'zod';
import type { RunReport } from '../report/report';
import type { Statistics } from '../report/requestMetrics';
import type { PrefixHitRates } from '../report/prefixHitRates';
import { didYouMean } from '../suggest';
import { parseFieldPath, pointLabel, SweepError, zodIssueText, type ParameterValue } from './spec';

/** The statistics a distribution metric is read at. */
export const STATISTICS = ['mean', 'min', 'p50', 'p90', 'p95', 'p99', 'max'] as const;
type Statistic = (typeof STATISTICS)[number];

/** Distribution metrics (over finished requests, as the summary's AIPerf-style metrics) → the summary field. */
const DISTRIBUTIONS = {
  ttft_ms: 'time_to_first_token_ms',
  ttst_ms: 'time_to_second_token_ms',
  itl_ms: 'inter_token_latency_ms',
  tpot_ms: 'time_per_output_token_ms',
  e2e_ms: 'request_latency_ms',
  queue_ms: 'queue_time_ms',
} as const;
type DistributionName = keyof typeof DISTRIBUTIONS;

/** A hit rate of the run's prefix_hit_rates, or null when no request arrived (or, for the share of the ceiling, nothing could be reused). */
function hitRate(report: RunReport, read: (rates: PrefixHitRates) => number | null): number | null {
  const rates = report.summary.prefix_hit_rates;
  return rates.requests === 0 ? null : read(rates);
}

/** Scalar metrics of a run: which way is better and how a run report gives it (null when not measured). */
const SCALARS: Record<string, { better: 'lower' | 'higher'; read: (report: RunReport) => number | null }> = {
  goodput: { better: 'higher', read: (r) => (r.summary.metrics.goodput === undefined || r.summary.metrics.request_count === 0 ? null : r.summary.metrics.goodput.share) },
  goodput_per_s: { better: 'higher', read: (r) => r.summary.metrics.goodput?.goodput_per_s ?? null },
  request_throughput_per_s: { better: 'higher', read: (r) => r.summary.metrics.request_throughput_per_s },
  output_token_throughput_per_s: { better: 'higher', read: (r) => r.summary.metrics.output_token_throughput_per_s },
  total_token_throughput_per_s: { better: 'higher', read: (r) => r.summary.metrics.total_token_throughput_per_s },
  // Prefix hit rates in the published definitions (docs/glossary.md), named as sweep.json's columns: token-weighted, block-weighted, request-averaged, and the block-weighted share of the infinite-cache ceiling realised.
  prefix_reuse_ratio: { better: 'higher', read: (r) => (r.summary.tokens.input === 0 ? null : r.summary.prefix_reuse_ratio) },
  prefix_reuse_block_ratio: { better: 'higher', read: (r) => hitRate(r, (rates) => rates.measured.block_weighted) },
  prefix_reuse_request_ratio: { better: 'higher', read: (r) => hitRate(r, (rates) => rates.measured.request_averaged) },
  prefix_reuse_of_ceiling_ratio: { better: 'higher', read: (r) => hitRate(r, (rates) => rates.of_ceiling.block_weighted) },
  requests_finished: { better: 'higher', read: (r) => r.summary.requests.finished },
  requests_failed: { better: 'lower', read: (r) => r.summary.requests.failed },
};

/** Every metric name a search may use, for messages. */
const METRIC_NAMES = [...Object.keys(DISTRIBUTIONS), ...Object.keys(SCALARS)];

/** A metric a search reads: "p99 ttft_ms" (a statistic of a distribution) or "goodput" (a scalar). */
export interface MetricRef {
  key: string;
  better: 'lower' | 'higher';
}

export const OPERATORS = ['<=', '<', '>=', '>'] as const;
type Operator = (typeof OPERATORS)[number];

export interface Constraint {
  text: string;
  metric: MetricRef;
  operator: Operator;
  limit: number;
}

const limitMs = z.number().positive('must be > 0').max(86_400_000, 'at most a day (86,400,000 ms)');

/** The `search` of a sweep file, as written. */
export const SearchFileSchema = z.strictObject({
  /** A varied field path (grid) or a metric whose smallest value is best. */
  minimise: z.string().min(1).optional(),
  /** A varied field path (grid) or a metric whose largest value is best. */
  maximise: z.string().min(1).optional(),
  /** Constraints every run of a winning point meets: "<metric> <operator> <number>". */
  subject_to: z.array(z.string()).default([]),
  /** The limits a request must meet to count in goodput (set as every point's `slo`). */
  goodput: z.strictObject({ ttft_ms: limitMs.optional(), itl_ms: limitMs.optional(), e2e_ms: limitMs.optional() }).optional(),
  /** The metric the Pareto front is drawn against (default: the first constraint's metric). */
  front: z.string().min(1).optional(),
  /** bisect (default when the objective is a varied field path) or grid (every point). */
  method: z.enum(['bisect', 'grid']).optional(),
});
export type SearchFile = z.infer<typeof SearchFileSchema>;

export interface SearchSpec {
  direction: 'minimise' | 'maximise';
  /** The varied field path, or the metric, being optimised. */
  objective: { parameter: string } | { metric: MetricRef };
  constraints: Constraint[];
  front: MetricRef;
  method: 'bisect' | 'grid';
  /** The goodput limits given in the search (itl_ms is kvqual's tpot_ms: equal for every request), or null. */
  slo: { ttft_ms?: number; tpot_ms?: number; e2e_ms?: number } | null;
}

/** The hit-rate metrics in words, for a name that looks like one (`block_hit_rate`) but is not. */
const HIT_RATE_NAMES =
  'prefix_reuse_ratio (token-weighted), prefix_reuse_block_ratio (block-weighted), prefix_reuse_request_ratio (request-averaged) and prefix_reuse_of_ceiling_ratio (the share of the infinite-cache ceiling)';

/** An unknown metric named, with the nearest name or, for a hit rate by another name, the hit rates' names, and every metric. */
function unknownMetric(name: string): SweepError {
  const nearest = didYouMean(name, METRIC_NAMES);
  const hint = nearest === '' && /hit|reuse|ceiling/i.test(name) ? `; the prefix hit rates are ${HIT_RATE_NAMES}` : nearest;
  return new SweepError(`unknown metric "${name}"${hint} (metrics: ${METRIC_NAMES.join(', ')})`);
}

/** Reads "p99 ttft_ms" or "goodput"; throws a plain message naming what is wrong. */
export function parseMetric(text: string): MetricRef {
  const words = text.trim().split(/\s+/);
  if (words.length === 1 && words[0] !== '') {
    const [name] = words;
    if (Object.hasOwn(SCALARS, name)) return { key: name, better: SCALARS[name].better };
    if (Object.hasOwn(DISTRIBUTIONS, name)) throw new SweepError(`${name} is a distribution: say which statistic (${STATISTICS.join(', ')}), e.g. "p99 ${name}"`);
    throw unknownMetric(name);
  }
  if (words.length === 2) {
    const [statistic, name] = words;
    if (!(STATISTICS as readonly string[]).includes(statistic)) throw new SweepError(`unknown statistic "${statistic}"${didYouMean(statistic, STATISTICS)} (statistics: ${STATISTICS.join(', ')})`);
    if (Object.hasOwn(SCALARS, name)) throw new SweepError(`${name} is one number per run: write it without "${statistic}"`);
    if (!Object.hasOwn(DISTRIBUTIONS, name)) throw unknownMetric(name);
    return { key: `${statistic} ${name}`, better: 'lower' };
  }
  throw new SweepError(`"${text}" is not a metric (e.g. "p99 ttft_ms" or "goodput")`);
}

/** Reads "p99 ttft_ms <= 2000". */
export function parseConstraint(text: string): Constraint {
  const match = /^(.*?)\s*(<=|>=|=<|=>|==|!=|<|>|=)\s*(.*)$/.exec(text.trim());
  if (!match) throw new SweepError(`"${text}" is not a constraint: write "<metric> <operator> <number>", e.g. "p99 ttft_ms <= 2000"`);
  const [, metricText, operator, limitText] = match;
  if (!(OPERATORS as readonly string[]).includes(operator)) throw new SweepError(`"${operator}" is not an operator here (operators: ${OPERATORS.join(', ')})`);
  const metric = parseMetric(metricText);
  const limit = Number(limitText);
  if (limitText.trim() === '' || !Number.isFinite(limit)) throw new SweepError(`"${limitText}" is not a number (the limit of ${metric.key})`);
  return { text: `${metric.key} ${operator} ${limit}`, metric, operator: operator as Operator, limit };
}

/** Whether `value` meets the constraint; an unmeasured value (null) meets none. */
export function meets(constraint: Constraint, value: number | null): boolean {
  if (value === null) return false;
  switch (constraint.operator) {
    case '<=':
      return value <= constraint.limit;
    case '<':
      return value < constraint.limit;
    case '>=':
      return value >= constraint.limit;
    case '>':
      return value > constraint.limit;
  }
}

/** What a search needs of the sweep it is in: the grid's paths and values, and whether the base config sets `slo`. */
export interface SearchContext {
  grid: Record<string, ParameterValue[]>;
  baseHasSlo: boolean;
}

/** Checks a sweep file's `search` and resolves it; a SweepError names `source`, search and the field. */
export function resolveSearch(raw: unknown, context: SearchContext, source: string): SearchSpec {
  const where = (field: string, message: string) => new SweepError(`${source}: search.${field}: ${message}`);
  const parsed = SearchFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue.code === 'unrecognized_keys') throw where(String(issue.keys[0]), `unknown field${didYouMean(issue.keys[0], Object.keys(SearchFileSchema.shape))} (search has minimise or maximise, subject_to, goodput, front and method)`);
    throw new SweepError(issue.path.length > 0 ? `${source}: search.${zodIssueText(issue)}` : `${source}: search: ${issue.message}; a search is a mapping (minimise or maximise, subject_to, goodput, front, method)`);
  }
  const file = parsed.data;
  if ((file.minimise === undefined) === (file.maximise === undefined)) throw new SweepError(`${source}: search: give exactly one of minimise and maximise`);
  const direction = file.minimise !== undefined ? 'minimise' : 'maximise';
  const objectiveText = (file.minimise ?? file.maximise)!;
  const objective = resolveObjective(objectiveText, context, (message) => where(direction, message));
  const constraints = file.subject_to.map((text, i) => {
    try {
      return parseConstraint(text);
    } catch (error) {
      if (error instanceof SweepError) throw where(`subject_to[${i}]`, error.message);
      throw error;
    }
  });
  let front: MetricRef;
  try {
    front = file.front !== undefined ? parseMetric(file.front) : (constraints[0]?.metric ?? parseMetric('p99 ttft_ms'));
  } catch (error) {
    if (error instanceof SweepError) throw where('front', error.message);
    throw error;
  }
  const method = file.method ?? ('parameter' in objective ? 'bisect' : 'grid');
  if (method === 'bisect' && !('parameter' in objective)) throw where('method', `bisect searches along a varied field path, and ${objectiveText} is a metric; use grid`);
  const slo = file.goodput === undefined ? null : { ...(file.goodput.ttft_ms === undefined ? {} : { ttft_ms: file.goodput.ttft_ms }), ...(file.goodput.itl_ms === undefined ? {} : { tpot_ms: file.goodput.itl_ms }), ...(file.goodput.e2e_ms === undefined ? {} : { e2e_ms: file.goodput.e2e_ms }) };
  if (slo !== null && Object.keys(slo).length === 0) throw where('goodput', 'give at least one limit: ttft_ms, itl_ms or e2e_ms');
  const usesGoodput = [...constraints.map((c, i) => ({ key: c.metric.key, field: `subject_to[${i}]` })), { key: front.key, field: 'front' }, ...('metric' in objective ? [{ key: objective.metric.key, field: direction }] : [])].find((use) => use.key.startsWith('goodput'));
  if (usesGoodput && slo === null && !context.baseHasSlo) throw where(usesGoodput.field, 'goodput counts the requests meeting limits, and none are given: add search.goodput (ttft_ms, itl_ms, e2e_ms) or slo to the base config');
  return { direction, objective, constraints, front, method, slo };
}

function resolveObjective(text: string, context: SearchContext, problem: (message: string) => SweepError): SearchSpec['objective'] {
  let isPath = true;
  try {
    parseFieldPath(text);
  } catch {
    isPath = false;
  }
  if (isPath && Object.hasOwn(context.grid, text)) {
    const values = context.grid[text];
    const bad = values.find((value) => typeof value !== 'number');
    if (bad !== undefined) throw problem(`${text} takes ${JSON.stringify(bad)}; an objective's values are numbers`);
    return { parameter: text };
  }
  if (!text.includes(' ') && !Object.hasOwn(SCALARS, text)) {
    const grid = Object.keys(context.grid);
    throw problem(`${text} is neither a field path the grid varies${didYouMean(text, grid)}${grid.length > 0 ? ` (the grid varies ${grid.join(', ')})` : ' (the grid varies none)'} nor a metric`);
  }
  try {
    return { metric: parseMetric(text) };
  } catch (error) {
    if (error instanceof SweepError) throw problem(error.message);
    throw error;
  }
}

/** Every metric key a point's run must give for the search (constraints, front, objective), each once, in that order. */
export function searchMetricKeys(spec: SearchSpec): string[] {
  const keys = [...spec.constraints.map((c) => c.metric.key), spec.front.key, ...('metric' in spec.objective ? [spec.objective.metric.key] : [])];
  return [...new Set(keys)];
}

const rounded = (value: number) => Number(value.toFixed(6));

/** The value of one metric key in a run report, or null when nothing was measured. */
export function metricValue(report: RunReport, key: string): number | null {
  const words = key.split(' ');
  if (words.length === 1) {
    const value = SCALARS[words[0]].read(report);
    return value === null ? null : rounded(value);
  }
  const statistics = report.summary.metrics[DISTRIBUTIONS[words[1] as DistributionName]] as Statistics;
  const value = statistics[words[0] as Statistic];
  return value === null ? null : rounded(value);
}

/** A point's part in a search: its parameters in sweep order. */
export interface SearchPoint {
  index: number;
  parameters: readonly [string, ParameterValue][];
}

/** What the search learns of a point's run. */
export interface PointResult {
  clean: boolean;
  values: Record<string, number | null>;
}

/** A candidate: the points that share every parameter but the seed (one per seed). */
export interface CandidateRecord {
  /** Its points' indices, ascending (one per seed). */
  points: number[];
  /** Its parameters, the seed left out. */
  parameters: Record<string, ParameterValue>;
  /** The objective's value: the parameter's, or the metric's mean over the seeds. */
  objective: number | null;
  /** The front metric's mean over the seeds (null if a run measured none). */
  front: number | null;
  /** Each metric the search reads (constraints, front, objective), its mean over the seeds (null if a run measured none). */
  values: Record<string, number | null>;
  /** Every run clean and every constraint met by every run. */
  meets: boolean;
  /** Why not: the first constraint a run missed, with its value, or the unclean run. */
  unmet: string | null;
}

export interface SearchAnswer {
  method: 'bisect' | 'grid';
  direction: 'minimise' | 'maximise';
  objective: string;
  constraints: string[];
  front_metric: string;
  /** What bisection assumes, in words (absent for grid). */
  assumption?: string;
  /** Candidates run, in order of their first point. */
  evaluated: CandidateRecord[];
  /** The evaluated candidates no other beats on both the objective and the front metric, best objective first. */
  pareto_front: CandidateRecord[];
  winner: CandidateRecord | null;
  /**
   * Where the runs contradict bisection's assumption: a candidate meets and one further along the
   * objective's axis does not. Only a grid over a varied parameter can show it (bisection never
   * runs a candidate that could), so it tells whether bisection would be safe on such a sweep.
   */
  not_monotone: string[];
}

interface Candidate {
  key: string;
  points: SearchPoint[];
  parameters: [string, ParameterValue][];
}

/** Groups the points into candidates (same parameters but the seed), in order of their first point. */
function candidatesOf(points: readonly SearchPoint[]): Candidate[] {
  const byKey = new Map<string, Candidate>();
  for (const point of [...points].sort((a, b) => a.index - b.index)) {
    const parameters = point.parameters.filter(([path]) => path !== 'seed');
    const key = JSON.stringify(parameters);
    const candidate = byKey.get(key) ?? { key, points: [], parameters };
    candidate.points.push(point);
    byKey.set(key, candidate);
  }
  return [...byKey.values()];
}

function mean(values: readonly (number | null)[]): number | null {
  if (values.length === 0 || values.some((value) => value === null)) return null;
  return rounded((values as number[]).reduce((sum, value) => sum + value, 0) / values.length);
}

/** A candidate's record from its points' results. */
function recordOf(candidate: Candidate, spec: SearchSpec, results: ReadonlyMap<number, PointResult>): CandidateRecord {
  const runs = candidate.points.map((point) => ({ point, result: results.get(point.index)! }));
  let unmet: string | null = null;
  for (const { point, result } of runs) {
    if (unmet !== null) break;
    if (!result.clean) unmet = `point ${point.index} did not run clean`;
    for (const constraint of spec.constraints) {
      if (unmet !== null) break;
      const value = result.values[constraint.metric.key] ?? null;
      if (!meets(constraint, value)) unmet = `${constraint.metric.key} ${value === null ? 'not measured' : `was ${value}`} at point ${point.index}, not ${constraint.operator} ${constraint.limit}`;
    }
  }
  const parameter = 'parameter' in spec.objective ? spec.objective.parameter : null;
  const objective = parameter !== null ? (candidate.parameters.find(([path]) => path === parameter)![1] as number) : mean(runs.map(({ result }) => result.values[(spec.objective as { metric: MetricRef }).metric.key] ?? null));
  return {
    points: candidate.points.map((point) => point.index),
    parameters: Object.fromEntries(candidate.parameters),
    objective,
    front: mean(runs.map(({ result }) => result.values[spec.front.key] ?? null)),
    values: Object.fromEntries(searchMetricKeys(spec).map((key) => [key, mean(runs.map(({ result }) => result.values[key] ?? null))])),
    meets: unmet === null,
    unmet,
  };
}

/** a is better than b for the objective (strictly). */
function better(direction: 'lower' | 'higher', a: number, b: number): boolean {
  return direction === 'lower' ? a < b : a > b;
}

function objectiveBetter(spec: SearchSpec): 'lower' | 'higher' {
  return spec.direction === 'minimise' ? 'lower' : 'higher';
}

/** The candidates no other beats on both the objective and the front metric (at least as good on both, better on one), best objective first. */
export function paretoFront(records: readonly CandidateRecord[], spec: SearchSpec): CandidateRecord[] {
  const o = objectiveBetter(spec);
  const f = spec.front.better;
  const measured = records.filter((r) => r.objective !== null && r.front !== null);
  const dominates = (a: CandidateRecord, b: CandidateRecord) => !better(o, b.objective!, a.objective!) && !better(f, b.front!, a.front!) && (better(o, a.objective!, b.objective!) || better(f, a.front!, b.front!));
  return measured.filter((r) => !measured.some((other) => dominates(other, r))).sort((a, b) => (better(o, a.objective!, b.objective!) ? -1 : better(o, b.objective!, a.objective!) ? 1 : a.points[0] - b.points[0]));
}

/** The best meeting candidate (ties: the first point), or null. */
function winnerOf(records: readonly CandidateRecord[], spec: SearchSpec): CandidateRecord | null {
  const o = objectiveBetter(spec);
  let best: CandidateRecord | null = null;
  for (const record of records) {
    if (!record.meets || record.objective === null) continue;
    if (best === null || better(o, record.objective, best.objective!)) best = record;
  }
  return best;
}

/** Runs the points asked for and resolves with their results (in any way: a pool of processes, or a table already filled). */
export type Evaluate = (indices: readonly number[]) => Promise<ReadonlyMap<number, PointResult>>;

/**
 * Bisection lines: the candidates that differ only in the objective's parameter, each ordered best
 * objective first (ascending to minimise, descending to maximise).
 */
function linesOf(candidates: readonly Candidate[], spec: SearchSpec & { objective: { parameter: string } }): Candidate[][] {
  const parameter = spec.objective.parameter;
  const lines = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    const key = JSON.stringify(candidate.parameters.filter(([path]) => path !== parameter));
    lines.set(key, [...(lines.get(key) ?? []), candidate]);
  }
  const valueOf = (c: Candidate) => c.parameters.find(([path]) => path === parameter)![1] as number;
  const sign = spec.direction === 'minimise' ? 1 : -1;
  return [...lines.values()].map((line) => [...line].sort((a, b) => sign * (valueOf(a) - valueOf(b))));
}

/** One line's bisection state: it looks for the first meeting position in [low, high], knowing high meets once checked. */
interface LineSearch {
  line: Candidate[];
  low: number;
  high: number;
  /** The position to run next, or null when done. */
  probe: number | null;
  /** Whether the last position (the most generous objective) has been found to meet. */
  started: boolean;
}

/**
 * The search: runs the candidates it needs (through `evaluate`, a round at a time) and returns its
 * answer. Bisection assumes each line meets the constraints from some position on (best objective
 * first, so to minimise replicas: from some replica count up) and runs about log2 of a line's
 * length candidates per line; grid runs every candidate. The rounds depend only on the results.
 */
export async function runSearch(points: readonly SearchPoint[], spec: SearchSpec, evaluate: Evaluate): Promise<SearchAnswer> {
  const candidates = candidatesOf(points);
  const results = new Map<number, PointResult>();
  const run = async (wanted: readonly Candidate[]) => {
    const indices = [...new Set(wanted.flatMap((c) => c.points.map((p) => p.index)))].filter((i) => !results.has(i)).sort((a, b) => a - b);
    if (indices.length === 0) return;
    const got = await evaluate(indices);
    for (const index of indices) {
      const result = got.get(index);
      if (result === undefined) throw new SweepError(`the result of point ${index} is missing; the search needs it`);
      results.set(index, result);
    }
  };
  const evaluated = new Set<Candidate>();
  const meetsCandidate = (c: Candidate) => recordOf(c, spec, results).meets;
  if (spec.method === 'grid' || !('parameter' in spec.objective)) {
    await run(candidates);
    candidates.forEach((c) => evaluated.add(c));
  } else {
    const searches: LineSearch[] = linesOf(candidates, spec as SearchSpec & { objective: { parameter: string } }).map((line) => ({ line, low: 0, high: line.length - 1, probe: line.length - 1, started: false }));
    for (;;) {
      const active = searches.filter((s) => s.probe !== null);
      if (active.length === 0) break;
      const wanted = active.map((s) => s.line[s.probe!]);
      await run(wanted);
      wanted.forEach((c) => evaluated.add(c));
      for (const s of active) stepLine(s, meetsCandidate(s.line[s.probe!]));
    }
  }
  const records = candidates.filter((c) => evaluated.has(c)).map((c) => recordOf(c, spec, results));
  return {
    method: spec.method,
    direction: spec.direction,
    objective: objectiveName(spec),
    constraints: spec.constraints.map((c) => c.text),
    front_metric: spec.front.key,
    ...(spec.method === 'bisect' ? { assumption: assumptionText(spec) } : {}),
    evaluated: records,
    pareto_front: paretoFront(records, spec),
    winner: winnerOf(records, spec),
    not_monotone: 'parameter' in spec.objective ? monotoneViolations(candidates, evaluated, spec, results) : [],
  };
}

/** One bisection step on a line, given whether its probe met the constraints. */
function stepLine(s: LineSearch, met: boolean): void {
  const at = s.probe!;
  if (!s.started) {
    s.started = true;
    if (!met) {
      s.probe = null; // not even the most generous value meets: nothing on this line does (by the assumption)
      return;
    }
  } else if (met) s.high = at;
  else s.low = at + 1;
  s.probe = s.low < s.high ? Math.floor((s.low + s.high) / 2) : null;
}

export function objectiveName(spec: SearchSpec): string {
  return 'parameter' in spec.objective ? spec.objective.parameter : spec.objective.metric.key;
}

function assumptionText(spec: SearchSpec): string {
  const more = spec.direction === 'minimise' ? 'larger' : 'smaller';
  return `bisection along ${objectiveName(spec)} assumes that once a value meets the constraints, every ${more} value does too (with the other parameters fixed); the values it skipped were not run`;
}

/** Evaluated pairs on a line where a better-objective candidate meets and a worse one does not. */
function monotoneViolations(candidates: readonly Candidate[], evaluated: ReadonlySet<Candidate>, spec: SearchSpec, results: ReadonlyMap<number, PointResult>): string[] {
  const found: string[] = [];
  for (const line of linesOf(candidates, spec as SearchSpec & { objective: { parameter: string } })) {
    const run = line.filter((c) => evaluated.has(c));
    run.forEach((a, i) => {
      const worse = run.slice(i + 1).find((b) => !recordOf(b, spec, results).meets);
      if (recordOf(a, spec, results).meets && worse) found.push(`${pointLabel(a.parameters)} meets the constraints but ${pointLabel(worse.parameters)} does not`);
    });
  }
  return found;
}

/** The winner's config: the base config's text with the winner's parameters (and the search's goodput limits as slo) set, comments kept. */
export function winnerConfigText(baseText: string, answer: SearchAnswer, slo: SearchSpec['slo'], note: string): string {
  const document = parseDocument(baseText);
  if (slo !== null) document.setIn(['slo'], document.createNode(slo));
  for (const [path, value] of Object.entries(answer.winner!.parameters)) document.setIn(parseFieldPath(path), value);
  const header = note
    .split('\n')
    .map((line) => `# ${line}`)
    .join('\n');
  return `${header}\n${document.toString()}`;
}
