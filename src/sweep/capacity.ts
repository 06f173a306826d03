// The capacity search of a sweep (`search:` in the sweep file): the point that minimises (or
// maximises) one varied parameter, such as cluster.workers[0].replicas, subject to constraints on
// the points' metrics ("ttft_p99_ms <= 2000", "goodput_ratio >= 0.95"), and the Pareto front of
// that parameter against one metric. A configuration is a point's parameters without its seed: it
// meets the constraints only when every seed's run of it is clean and meets them, and its metric
// is the worst over its seeds. Answered from the sweep's document alone, after every point ran,
// so a sharded sweep merged gives the same answer as the unsharded one. The grid is evaluated in
// full (no bisection): every point is run, then searched.
import { didYouMean } from '../suggest';
import { METRICS, type MetricName, type PointRecord, type SweepDocument } from './results';
import { SweepError, type ParameterValue, type SearchSpec } from './spec';

type Relation = '<=' | '>=' | '<' | '>';

export interface Constraint {
  text: string;
  metric: MetricName;
  relation: Relation;
  limit: number;
}

/** A configuration of the sweep: its parameters without the seed, its points (one per seed), its objective value and its metrics, worst over its seeds. */
export interface Configuration {
  parameters: Record<string, ParameterValue>;
  points: number[];
  objective: number;
  /** Every run of it was clean and met every constraint. */
  feasible: boolean;
  /** Why not feasible: the first constraint a run missed, or a run that was not clean. */
  problem: string | null;
  metrics: Partial<Record<MetricName, number | null>>;
}

export interface CapacityAnswer {
  direction: 'minimize' | 'maximize';
  parameter: string;
  constraints: string[];
  configurations: number;
  feasible: number;
  best: Configuration | null;
  pareto: { metric: MetricName; front: Configuration[] } | null;
}

/** Lower is better for times (…_ms); higher for the rest (ratios, counts of finished requests). */
function lowerIsBetter(metric: MetricName): boolean {
  return metric.endsWith('_ms') || metric === 'requests_failed' || metric === 'requests_skipped';
}

function metricNamed(name: string, where: string): MetricName {
  if ((METRICS as readonly string[]).includes(name)) return name as MetricName;
  throw new SweepError(`${where}: "${name}" is not a sweep metric${didYouMean(name, [...METRICS])} (the metrics are ${METRICS.join(', ')})`);
}

/** "ttft_p99_ms <= 2000" as a constraint, or an error naming where it stands. */
export function parseConstraint(text: string, where: string): Constraint {
  const match = /^\s*([a-z0-9_]+)\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)\s*$/i.exec(text);
  if (!match) throw new SweepError(`${where}: "${text}" is not a constraint; write a metric, <=, >=, < or >, and a number (e.g. "ttft_p99_ms <= 2000")`);
  return { text: text.trim(), metric: metricNamed(match[1], where), relation: match[2] as Relation, limit: Number(match[3]) };
}

/** Checks a search against the sweep's varied parameters before anything runs: the optimised parameter is varied over numbers, and every metric named exists. */
export function checkSearch(search: SearchSpec, parameters: readonly string[], values: Record<string, ParameterValue[]>, source: string): void {
  const direction = search.minimize !== undefined ? 'minimize' : 'maximize';
  const parameter = (search.minimize ?? search.maximize)!;
  const where = `${source}: search.${direction}`;
  if (parameter === 'seed') throw new SweepError(`${where}: the seed is not a capacity; name a varied field such as cluster.workers[0].replicas`);
  if (!parameters.includes(parameter)) throw new SweepError(`${where}: ${parameter} is not varied by this sweep${didYouMean(parameter, parameters.filter((p) => p !== 'seed'))}; the search chooses among the values a grid or zip gives it`);
  const notNumber = values[parameter].find((value) => typeof value !== 'number');
  if (notNumber !== undefined) throw new SweepError(`${where}: ${parameter} takes ${JSON.stringify(notNumber)}, not a number; the search orders its values`);
  search.subject_to.forEach((text, i) => parseConstraint(text, `${source}: search.subject_to[${i}]`));
  if (search.pareto !== undefined) metricNamed(search.pareto, `${source}: search.pareto`);
}

function holds(value: number, constraint: Constraint): boolean {
  switch (constraint.relation) {
    case '<=':
      return value <= constraint.limit;
    case '>=':
      return value >= constraint.limit;
    case '<':
      return value < constraint.limit;
    case '>':
      return value > constraint.limit;
  }
}

/** The points grouped by their parameters without the seed, in the order of their first point. */
function configurations(document: SweepDocument, parameter: string, constraints: readonly Constraint[], metrics: readonly MetricName[]): Configuration[] {
  const groups = new Map<string, PointRecord[]>();
  const kept = document.parameters.filter((p) => p !== 'seed');
  for (const point of [...document.points].sort((a, b) => a.index - b.index)) {
    const key = JSON.stringify(kept.map((p) => point.parameters[p]));
    groups.set(key, [...(groups.get(key) ?? []), point]);
  }
  return [...groups.values()].map((points) => {
    const worst = (metric: MetricName): number | null => {
      const values = points.map((point) => point.metrics[metric]);
      if (values.some((value) => value === null)) return null;
      return (lowerIsBetter(metric) ? Math.max : Math.min)(...(values as number[]));
    };
    let problem: string | null = null;
    for (const point of points) {
      if (problem !== null) break;
      if (!point.clean) problem = `point ${point.index} not clean: ${point.problem}`;
      for (const constraint of constraints) {
        if (problem !== null) break;
        const value = point.metrics[constraint.metric];
        if (value === null) problem = `point ${point.index}: ${constraint.metric} not measured`;
        else if (!holds(value, constraint)) problem = `point ${point.index}: ${constraint.metric} ${value} misses ${constraint.text}`;
      }
    }
    return {
      parameters: Object.fromEntries(kept.map((p) => [p, points[0].parameters[p]])),
      points: points.map((point) => point.index),
      objective: points[0].parameters[parameter] as number,
      feasible: problem === null,
      problem,
      metrics: Object.fromEntries(metrics.map((metric) => [metric, worst(metric)])),
    };
  });
}

/** The search's answer from a whole sweep's points (every point present). */
export function answerSearch(document: SweepDocument): CapacityAnswer | null {
  const search = document.search;
  if (search === undefined) return null;
  const direction = search.minimize !== undefined ? 'minimize' : 'maximize';
  const parameter = (search.minimize ?? search.maximize)!;
  const constraints = search.subject_to.map((text, i) => parseConstraint(text, `search.subject_to[${i}]`));
  const pareto = search.pareto === undefined ? null : metricNamed(search.pareto, 'search.pareto');
  const shown = [...new Set([...constraints.map((c) => c.metric), ...(pareto ? [pareto] : [])])];
  const all = configurations(document, parameter, constraints, shown);
  const better = (a: number, b: number) => (direction === 'minimize' ? a < b : a > b);
  // Ties on the objective: the configuration met first (the lowest point index) wins.
  let best: Configuration | null = null;
  for (const configuration of all) if (configuration.feasible && (best === null || better(configuration.objective, best.objective))) best = configuration;
  return {
    direction,
    parameter,
    constraints: constraints.map((c) => c.text),
    configurations: all.length,
    feasible: all.filter((c) => c.feasible).length,
    best,
    pareto: pareto === null ? null : { metric: pareto, front: paretoFront(all, direction, pareto) },
  };
}

/**
 * The clean configurations no other beats on both the objective and the metric (better or equal
 * on both, better on one), in the objective's order.
 */
export function paretoFront(all: readonly Configuration[], direction: 'minimize' | 'maximize', metric: MetricName): Configuration[] {
  const objectiveScore = (c: Configuration) => (direction === 'minimize' ? c.objective : -c.objective);
  const metricScore = (c: Configuration) => (lowerIsBetter(metric) ? c.metrics[metric]! : -c.metrics[metric]!);
  const candidates = all.filter((c) => c.metrics[metric] !== null && c.metrics[metric] !== undefined && !(c.problem ?? '').includes('not clean'));
  const dominated = (c: Configuration) =>
    candidates.some((o) => o !== c && objectiveScore(o) <= objectiveScore(c) && metricScore(o) <= metricScore(c) && (objectiveScore(o) < objectiveScore(c) || metricScore(o) < metricScore(c)));
  return candidates.filter((c) => !dominated(c)).sort((a, b) => objectiveScore(a) - objectiveScore(b));
}

const label = (parameters: Record<string, ParameterValue>) => {
  const entries = Object.entries(parameters);
  return entries.length === 0 ? 'the base config' : entries.map(([p, v]) => `${p}=${JSON.stringify(v)}`).join(', ');
};

/** The answer in a few lines for the console. */
export function answerText(answer: CapacityAnswer): string {
  const goal = `${answer.direction === 'minimize' ? 'the smallest' : 'the largest'} ${answer.parameter}${answer.constraints.length > 0 ? ` meeting ${answer.constraints.join(' and ')}` : ''}`;
  const lines = [
    answer.best === null
      ? `capacity: no configuration meets ${answer.constraints.join(' and ')} (${answer.configurations} tried)`
      : `capacity: ${goal} is ${answer.best.objective} (${label(answer.best.parameters)}; point${answer.best.points.length > 1 ? 's' : ''} ${answer.best.points.join(', ')}); ${answer.feasible} of ${answer.configurations} configurations meet the constraints`,
  ];
  if (answer.pareto) {
    lines.push(`  Pareto front of ${answer.parameter} against ${answer.pareto.metric}:`);
    for (const c of answer.pareto.front) lines.push(`    ${answer.parameter}=${c.objective}: ${answer.pareto.metric} ${c.metrics[answer.pareto.metric]}${c.feasible ? '' : ` (misses: ${c.problem})`}`);
  }
  return `${lines.join('\n')}\n`;
}

/** capacity.json: the answer, with each configuration's figures. */
export function answerJsonText(answer: CapacityAnswer): string {
  return `${JSON.stringify({ format: 'kvqual-capacity/1', ...answer }, null, 2)}\n`;
}
