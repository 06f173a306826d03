// A sweep file and the points it names: a base replay config, a grid over config field paths
// (every combination), optional zipped lists (varied together, one dimension each) and seeds.
// Owns reading the sweep file, expanding it into numbered points in a fixed order, setting each
// point's values into a copy of the base config and validating every point before anything runs;
// also the stable shard assignment of points (point index modulo the shard count). A field path
// never names or writes through an object's prototype (__proto__, constructor, prototype).
import { createHash } from 'node:crypto';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError, formatPath, validateReplayConfig, yamlDocumentProblems } from '../config/load';
import type { ReplayConfig } from '../config/schema';
import { didYouMean } from '../suggest';
import { collectionKeyAt, mergeKeyAt } from '../inputFiles';

/** The most points one sweep may have. */
export const MAX_SWEEP_POINTS = 100_000;

/** A problem in the sweep file or one of its points; the message is one complete line. */
export class SweepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SweepError';
  }
}

export const ParameterValue = z.union([z.number(), z.string(), z.boolean(), z.null()], { error: 'a swept value is a finite number, a string, true, false or null (not a list, a mapping, .inf or .nan)' });
const ValueList = z.array(ParameterValue).min(1, 'give at least one value');

export const SweepFileSchema = z.strictObject({
  /** The base replay config, relative to the sweep file. */
  base: z.string().min(1),
  /** Field path → values; every combination is a point (the first path varies slowest). */
  grid: z.record(z.string(), ValueList).default({}),
  /** Groups of field paths whose lists (of equal length) are varied together. */
  zip: z.array(z.record(z.string(), ValueList)).default([]),
  /** Seeds; each point runs once per seed (the last dimension). */
  seeds: z.array(z.number().int().refine(Number.isSafeInteger, 'a whole number within 2^53 − 1')).min(1).optional(),
});
export type SweepFile = z.infer<typeof SweepFileSchema>;
export type ParameterValue = z.infer<typeof ParameterValue>;

/** One varied dimension: one path (grid, seeds) or several varied together (zip), with its values per step. */
interface Dimension {
  paths: string[];
  /** steps[k][j] is the value of paths[j] at step k. */
  steps: ParameterValue[][];
}

/** A sweep point: its index, its values in parameter order, and its validated config. */
export interface SweepPoint {
  index: number;
  parameters: [string, ParameterValue][];
  config: ReplayConfig;
}

export interface ExpandedSweep {
  /** Every varied field path in order (grid paths, zipped paths, then "seed"). */
  parameters: string[];
  /** The values of each parameter in sweep order. */
  values: Record<string, ParameterValue[]>;
  points: SweepPoint[];
}

/** A zod issue as the rest of a one-line message: "points[0].metrics: required, but missing". */
export function zodIssueText(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `${formatPath([...issue.path, issue.keys[0]])}: unknown field`;
  const missing = issue.code === 'invalid_type' && / received undefined$/.test(issue.message);
  return `${formatPath(issue.path)}: ${missing ? 'required, but missing' : issue.message}`;
}

/**
 * Checks the field paths a sweep file varies (the keys of grid and of each zip group) before the
 * schema reads them: an object's "__proto__" key would otherwise vanish there without a word.
 */
function checkVariedPaths(raw: unknown, source: string): void {
  if (raw === null || typeof raw !== 'object') return;
  const { grid, zip } = raw as { grid?: unknown; zip?: unknown };
  const groups: [string, unknown][] = [['grid', grid], ...(Array.isArray(zip) ? zip.map((group, g): [string, unknown] => [`zip[${g}]`, group]) : [])];
  for (const [where, group] of groups) {
    if (group === null || typeof group !== 'object' || Array.isArray(group)) continue;
    for (const path of Object.keys(group)) checkFieldPath(path, source, `${where}.${path}`);
  }
}

/** Checks a varied field path; the error names the sweep file and where in it the path stands. */
function checkFieldPath(path: string, source: string, where: string): void {
  try {
    parseFieldPath(path);
  } catch (error) {
    throw new SweepError(`${source}: ${where}: ${(error as Error).message}`);
  }
}

/** Parses a sweep file's YAML text; errors name the sweep file and the field. */
export function parseSweepFile(text: string, source: string): SweepFile {
  const document = parseDocument(text, { uniqueKeys: true });
  const [problem] = yamlDocumentProblems(document);
  if (problem !== undefined) throw new SweepError(`${source}: ${problem.where ?? '(top level)'}: ${problem.message}`);
  const mergeKey = mergeKeyAt(document, text);
  if (mergeKey) throw new SweepError(`${source}: line ${mergeKey.line}, column ${mergeKey.column}: a YAML merge key (<<) is not read (kvqual reads YAML 1.2); write the fields out`);
  const collectionKey = collectionKeyAt(document, text);
  if (collectionKey) throw new SweepError(`${source}: line ${collectionKey.line}, column ${collectionKey.column}: a key must be a name, not a list or a map`);
  const raw: unknown = document.toJS({ maxAliasCount: 100 });
  if (raw === null || raw === undefined) throw new SweepError(`${source}: the sweep file is empty; it needs base and grid, zip or seeds`);
  checkVariedPaths(raw, source);
  const parsed = SweepFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0];
      throw new SweepError(`${source}: ${formatPath([...issue.path, key])}: unknown field${didYouMean(key, Object.keys(SweepFileSchema.shape))} (a sweep file has base, grid, zip and seeds)`);
    }
    throw new SweepError(`${source}: ${zodIssueText(issue)}`);
  }
  return parsed.data;
}

/** Names that would reach an object's prototype instead of a field of it; no config field has them. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A field path's parts: "cluster.workers[0].host_offload" → ["cluster", "workers", 0, "host_offload"].
 * One spelling per field: an index is written without leading zeros and never after a dot
 * (`workers[00]` and `workers.[0]` were other paths to the same field, so one field could be
 * varied twice, the later silently overriding the earlier).
 */
export function parseFieldPath(text: string): (string | number)[] {
  const parts: (string | number)[] = [];
  const pattern = /([^.[\]]+)|\[(0|[1-9]\d*)\]/y;
  let position = 0;
  while (position < text.length) {
    const dotted = parts.length > 0 && text[position] === '.';
    if (dotted) position++;
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (!match || ((parts.length === 0 || dotted) && match[2] !== undefined) || (parts.length > 0 && !dotted && match[1] !== undefined)) {
      throw new SweepError(`"${text}" is not a field path (e.g. router.kv_event_lag_ms or cluster.workers[0].replicas)`);
    }
    if (match[1] !== undefined && PROTOTYPE_KEYS.has(match[1])) throw new SweepError(`"${text}" is not a field path: no config field is named ${match[1]} (a name that reaches what every object inherits)`);
    parts.push(match[1] !== undefined ? match[1] : Number(match[2]));
    position = pattern.lastIndex;
  }
  if (parts.length === 0) throw new SweepError('an empty field path');
  return parts;
}

/**
 * Sets a value at a field path in a plain object tree, creating missing objects (never array
 * entries). Only own properties are read and written, so nothing inherited is ever reached.
 */
export function setFieldPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const parts = parseFieldPath(path);
  let current: unknown = root;
  parts.forEach((part, i) => {
    const here = formatPath(parts.slice(0, i)) === '(top level)' ? 'the config' : formatPath(parts.slice(0, i));
    const last = i === parts.length - 1;
    if (typeof part === 'number') {
      if (!Array.isArray(current)) throw new SweepError(`${here} is not a list, so [${part}] does not exist`);
      if (part >= current.length) throw new SweepError(`${here} has ${current.length} entr${current.length === 1 ? 'y' : 'ies'}, so [${part}] does not exist`);
    } else if (current === null || typeof current !== 'object' || Array.isArray(current)) {
      throw new SweepError(`${here} is not a mapping, so it has no field ${part}`);
    }
    const container = current as Record<string | number, unknown>;
    const setOwn = (fieldValue: unknown) => Object.defineProperty(container, part, { value: fieldValue, writable: true, enumerable: true, configurable: true });
    if (last) setOwn(value);
    else {
      const child = Object.hasOwn(container, part) ? container[part] : undefined;
      if (child === undefined || child === null) setOwn({});
      current = container[part];
    }
  });
}

function dimensionsOf(sweep: SweepFile, source: string): Dimension[] {
  const dimensions: Dimension[] = [];
  const seen = new Set<string>();
  const claim = (path: string, where: string) => {
    checkFieldPath(path, source, where);
    if (path === 'seed' && sweep.seeds) throw new SweepError(`${source}: ${where}: seed is varied by seeds; give it in one place`);
    if (seen.has(path)) throw new SweepError(`${source}: ${where}: ${path} is varied twice; give each field once`);
    seen.add(path);
  };
  for (const [path, values] of Object.entries(sweep.grid)) {
    claim(path, `grid.${path}`);
    dimensions.push({ paths: [path], steps: values.map((value) => [value]) });
  }
  sweep.zip.forEach((group, g) => {
    const entries = Object.entries(group);
    if (entries.length === 0) throw new SweepError(`${source}: zip[${g}]: give at least one field path and its values`);
    const length = entries[0][1].length;
    for (const [path, values] of entries) {
      claim(path, `zip[${g}].${path}`);
      if (values.length !== length) throw new SweepError(`${source}: zip[${g}].${path}: ${values.length} values, but ${entries[0][0]} has ${length}; zipped lists must have the same length`);
    }
    dimensions.push({ paths: entries.map(([path]) => path), steps: Array.from({ length }, (_, k) => entries.map(([, values]) => values[k])) });
  });
  if (sweep.seeds) dimensions.push({ paths: ['seed'], steps: sweep.seeds.map((seed) => [seed]) });
  for (const dimension of dimensions) checkDistinctSteps(dimension, source, sweep);
  return dimensions;
}

/** A value given twice in one dimension would run the same points twice and count them twice in the charts' means. */
function checkDistinctSteps(dimension: Dimension, source: string, sweep: SweepFile): void {
  const seen = new Set<string>();
  for (const step of dimension.steps) {
    const key = JSON.stringify(step);
    if (!seen.has(key)) {
      seen.add(key);
      continue;
    }
    const where = dimension.paths[0] === 'seed' && sweep.seeds ? 'seeds' : Object.hasOwn(sweep.grid, dimension.paths[0]) ? `grid.${dimension.paths[0]}` : `zip (${dimension.paths.join(', ')})`;
    throw new SweepError(`${source}: ${where}: ${step.map((value) => JSON.stringify(value)).join(', ')} is given twice; give each value once`);
  }
}

/** "point 1 of 4 (router.kv_event_lag_ms=10, seed=2)": how a message names a point. */
export function pointWhere(point: Pick<SweepPoint, 'index' | 'parameters'>, total: number): string {
  return `point ${point.index} of ${total} (${pointLabel(point.parameters)})`;
}

/** The error for the invalid points found (each "<point>: <field>: <problem>"): the first, and how many more. */
export function invalidPointsError(source: string, failures: readonly string[]): SweepError {
  const more = failures.length > 1 ? ` (${failures.length - 1} more point(s) are invalid too)` : '';
  return new SweepError(`${source}: ${failures[0]}${more}`);
}

/** "router.kv_event_lag_ms=10, seed=2" */
export function pointLabel(parameters: readonly [string, ParameterValue][]): string {
  return parameters.length === 0 ? 'the base config' : parameters.map(([path, value]) => `${path}=${JSON.stringify(value)}`).join(', ');
}

/**
 * Expands a sweep over a base config (its parsed YAML, not yet validated) into its points, in
 * order (the first dimension varies slowest), and validates every point. The first invalid point
 * throws a SweepError naming it, its values, the field and the problem (and how many more fail).
 */
export function expandSweep(sweep: SweepFile, baseRaw: unknown, source: string): ExpandedSweep {
  const dimensions = dimensionsOf(sweep, source);
  const total = dimensions.reduce((product, dimension) => product * dimension.steps.length, 1);
  if (total > MAX_SWEEP_POINTS) throw new SweepError(`${source}: ${total} points, above the limit of ${MAX_SWEEP_POINTS.toLocaleString('en-US')}`);
  const parameters = dimensions.flatMap((dimension) => dimension.paths);
  const values: Record<string, ParameterValue[]> = {};
  for (const dimension of dimensions) dimension.paths.forEach((path, j) => (values[path] = dimension.steps.map((step) => step[j])));
  const points: SweepPoint[] = [];
  const failures: string[] = [];
  for (let index = 0; index < total; index++) {
    const pointParameters: [string, ParameterValue][] = [];
    let rest = index;
    const stepOf: number[] = [];
    for (let d = dimensions.length - 1; d >= 0; d--) {
      stepOf[d] = rest % dimensions[d].steps.length;
      rest = Math.floor(rest / dimensions[d].steps.length);
    }
    dimensions.forEach((dimension, d) => dimension.paths.forEach((path, j) => pointParameters.push([path, dimension.steps[stepOf[d]][j]])));
    const where = pointWhere({ index, parameters: pointParameters }, total);
    try {
      const raw = structuredClone(baseRaw) as Record<string, unknown>;
      for (const [path, value] of pointParameters) {
        try {
          setFieldPath(raw, path, value);
        } catch (error) {
          if (error instanceof SweepError) throw new SweepError(`${path}: ${error.message}`);
          throw error;
        }
      }
      points.push({ index, parameters: pointParameters, config: validateReplayConfig(raw, where) });
    } catch (error) {
      if (error instanceof ConfigError) failures.push(`${where}: ${error.problems[0].path}: ${error.problems[0].message}`);
      else if (error instanceof SweepError) failures.push(`${where}: ${error.message}`);
      else throw error;
    }
  }
  if (failures.length > 0) throw invalidPointsError(source, failures);
  return { parameters, values, points };
}

/** The shard (1-based, of `count`) a point belongs to: stable, by point index. */
export function shardOfPoint(index: number, count: number): number {
  return (index % count) + 1;
}

/** "2/3" → { index: 2, count: 3 }. */
export function parseShard(text: string): { index: number; count: number } {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  const index = match ? Number(match[1]) : NaN;
  const count = match ? Number(match[2]) : NaN;
  if (!match || count < 1 || index < 1 || index > count) throw new SweepError(`--shard ${text}: expected i/n with 1 ≤ i ≤ n (e.g. 2/3)`);
  if (count > MAX_SWEEP_POINTS) throw new SweepError(`--shard ${text}: ${count.toLocaleString('en-US')} shards, above the limit of ${MAX_SWEEP_POINTS.toLocaleString('en-US')} (a sweep's points)`);
  return { index, count };
}

/** SHA-256 of the expanded sweep (every point's parameters and validated config): shards of one sweep share it. */
export function sweepDigest(expanded: ExpandedSweep): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(expanded.parameters));
  for (const point of expanded.points) hash.update(`\n${JSON.stringify(point.parameters)}\n${JSON.stringify(point.config)}`);
  return hash.digest('hex');
}
