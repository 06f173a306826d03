// `kvqual replay cfg.yaml --compare field.path=value [--compare …]`: A/B in one command. Runs the
// config as given (the baseline) and once per --compare with that one field set (a variant), on the
// same trace and seed, then prints one AIPerf-style table with a column per run and each variant's
// ratio to the baseline. Every variant's field path and value are checked as a sweep checks its
// points (src/sweep/spec.ts) and every output path planned before anything runs; each output a
// variant writes takes its name (report.json → report.policy-round_robin.json; --plot charts go
// into a folder of that name inside the --plot folder).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, parseReplayConfig, validateReplayConfig } from '../config/load';
import type { ReplayConfig } from '../config/schema';
import { reason as fileReason, readTextFile } from '../inputFiles';
import { LIMITS } from '../limits';
import type { RunReport } from '../report/report';
import type { Statistics } from '../report/requestMetrics';
import { ParameterValue, parseFieldPath, setFieldPath, SweepError } from '../sweep/spec';
import { plainDecimal } from '../time';
import { ExitCode, type CliIo } from './io';
import { OutputError, planOutputs } from './outputs';
import { isInputError, replayFile, traceOf, type ReplayOptions } from './replay';

/** One run of a comparison: the baseline or a variant, its config and the options it writes its outputs with. */
interface ComparisonRun {
  /** "baseline", or the --compare text that made it ("router.policy=round_robin"). */
  label: string;
  /** What its output files are called after (null for the baseline, whose outputs keep their names). */
  name: string | null;
  config: ReplayConfig;
  options: ReplayOptions;
}

/** A finished run: its report and exit status. */
interface RunResult {
  run: ComparisonRun;
  report: RunReport;
  code: ExitCode;
}

class CompareError extends Error {}

export function compareFile(file: string, options: ReplayOptions, io: CliIo): ExitCode | Promise<ExitCode> {
  let runs: ComparisonRun[];
  try {
    runs = prepareComparison(file, options, io);
  } catch (error) {
    if (error instanceof CompareError || error instanceof SweepError || isInputError(error)) {
      io.stderr(`kvqual replay: ${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  const results: RunResult[] = [];
  const runFrom = (index: number): ExitCode | Promise<ExitCode> => {
    if (index === runs.length) return finishComparison(file, results, io);
    const run = runs[index];
    const code = replayFile(file, run.options, io, { config: run.config, onReport: (report, status) => results.push({ run, report, code: status }) });
    // A run refused for its input (named on stderr by replayFile) ends the comparison; the runs before it wrote their outputs.
    const next = (status: ExitCode) => (status === ExitCode.usage ? status : runFrom(index + 1));
    return code instanceof Promise ? code.then(next) : next(code);
  };
  return runFrom(0);
}

/** Every run's config and outputs, checked before any runs: field paths, values, traces and output paths. */
function prepareComparison(file: string, options: ReplayOptions, io: CliIo): ComparisonRun[] {
  if (options.json) throw new CompareError("--json prints one run's report; with --compare, --out writes every run's report (each variant's under its name)");
  const text = readTextFile(path.resolve(io.cwd, file), file, LIMITS.config_bytes, 'config');
  const baseline = parseReplayConfig(text, file);
  const raw: unknown = parseDocument(text, { uniqueKeys: true }).toJS({ maxAliasCount: 100 });
  const specs = options.compare ?? [];
  const variants = specs.map((spec, i) => {
    if (specs.indexOf(spec) !== i) throw new CompareError(`--compare ${spec} is given twice; give each variant once`);
    return variantOf(spec, raw, file);
  });
  const names = variantNames(variants.map(({ path: fieldPath, value }) => ({ path: fieldPath, value })));
  const runs: ComparisonRun[] = [
    { label: 'baseline', name: null, config: baseline, options: { ...options, compare: [] } },
    ...variants.map((variant, i) => ({ label: variant.spec, name: names[i], config: variant.config, options: { ...optionsNamed(options, names[i]), compare: [] } })),
  ];
  for (const run of runs) traceOf(run.config, file, options.traceRoot ?? [], io);
  checkOutputs(runs, file, io);
  return runs;
}

/** A variant: the base config's raw fields with one set, validated as a sweep point is. */
function variantOf(spec: string, raw: unknown, file: string): { spec: string; path: string; value: ParameterValue; config: ReplayConfig } {
  const equals = spec.indexOf('=');
  if (equals <= 0) throw new CompareError(`--compare ${spec}: expected field.path=value (e.g. router.policy=round_robin)`);
  const fieldPath = spec.slice(0, equals);
  const valueText = spec.slice(equals + 1);
  try {
    parseFieldPath(fieldPath);
  } catch (error) {
    throw new CompareError(`--compare ${spec}: ${(error as Error).message}`);
  }
  const value = scalarOf(valueText, spec);
  const copy = structuredClone(raw) as Record<string, unknown>;
  try {
    setFieldPath(copy, fieldPath, value);
    return { spec, path: fieldPath, value, config: validateReplayConfig(copy, `${file} with --compare ${spec}`) };
  } catch (error) {
    if (error instanceof SweepError) throw new CompareError(`--compare ${spec}: ${fieldPath}: ${error.message}`);
    if (error instanceof ConfigError) throw new CompareError(`--compare ${spec}: ${error.problems[0].path}: ${error.problems[0].message}`);
    throw error;
  }
}

/** A value as YAML reads it (4 is a number, true a boolean, round_robin a string); only scalars, as a sweep varies. */
function scalarOf(text: string, spec: string): ParameterValue {
  if (text.trim() === '') throw new CompareError(`--compare ${spec}: give a value after =`);
  let value: unknown;
  try {
    value = parseDocument(text, { uniqueKeys: true }).toJS();
  } catch (error) {
    throw new CompareError(`--compare ${spec}: cannot read the value: ${(error as Error).message}`);
  }
  const parsed = ParameterValue.safeParse(value);
  if (!parsed.success || (typeof value === 'number' && !Number.isFinite(value))) throw new CompareError(`--compare ${spec}: a value is a finite number, a string, true, false or null (not a list, a mapping, .inf or .nan)`);
  return parsed.data;
}

/** A name for each variant's files: its field's last name and its value ("policy-round_robin"), or the whole path where two would clash. */
export function variantNames(variants: readonly { path: string; value: ParameterValue }[]): string[] {
  const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '_');
  const short = variants.map(({ path: fieldPath, value }) => {
    const names = parseFieldPath(fieldPath).filter((part): part is string => typeof part === 'string');
    return safe(`${names[names.length - 1]}-${String(value)}`);
  });
  return variants.map(({ path: fieldPath, value }, i) => (short.indexOf(short[i]) === short.lastIndexOf(short[i]) ? short[i] : safe(`${fieldPath}-${String(value)}`)));
}

/** "report.json" → "report.<name>.json" (the extension kept: it chooses --requests-out's format). */
export function fileNamed(file: string, name: string): string {
  const extension = path.extname(file);
  return path.join(path.dirname(file), `${path.basename(file, extension)}.${name}${extension}`);
}

function optionsNamed(options: ReplayOptions, name: string): ReplayOptions {
  const rename = (file: string | undefined) => (file === undefined ? undefined : fileNamed(file, name));
  return { ...options, out: rename(options.out), eventsOut: rename(options.eventsOut), requestsOut: rename(options.requestsOut), plot: options.plot === undefined ? undefined : path.join(options.plot, name) };
}

/** Every run's output files, planned together (no two the same, none an input) before any run writes one; the variants' chart folders are made then. */
function checkOutputs(runs: readonly ComparisonRun[], file: string, io: CliIo): void {
  const requested = runs.flatMap(({ options }) => [
    ...(options.out === undefined ? [] : [{ option: '--out', file: options.out }]),
    ...(options.eventsOut === undefined ? [] : [{ option: '--events-out', file: options.eventsOut }]),
    ...(options.requestsOut === undefined ? [] : [{ option: '--requests-out', file: options.requestsOut }]),
  ]);
  planOutputs(requested, io.cwd, [{ absolute: path.resolve(io.cwd, file), what: 'config' }]);
  const plot = runs[0].options.plot;
  if (plot === undefined) return;
  const folder = path.resolve(io.cwd, plot);
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) throw new OutputError(`--plot ${plot}: no such folder; create it first`);
  for (const run of runs.slice(1)) {
    const own = path.resolve(io.cwd, run.options.plot!);
    try {
      if (!fs.existsSync(own)) fs.mkdirSync(own);
    } catch (error) {
      throw new OutputError(`--plot ${plot}: cannot make the folder ${run.options.plot} for ${run.label}'s charts: ${fileReason(error)}`);
    }
  }
}

/** The comparison table and one line per run; the exit status is the worst of the runs'. */
function finishComparison(file: string, results: readonly RunResult[], io: CliIo): ExitCode {
  const seeds = [...new Set(results.map(({ run }) => run.config.seed))];
  const variants = results.length - 1;
  io.stdout(`${file}: the baseline and ${variants} variant${variants === 1 ? '' : 's'}, on the same trace, seed ${seeds.join(', ')}\n`);
  io.stdout(comparisonTable(results.map(({ run, report }) => ({ label: run.label, report }))));
  for (const { run, report, code } of results) {
    const s = report.summary;
    const out = run.options.out === undefined ? '' : `; report written to ${run.options.out}`;
    io.stdout(`  ${run.label}: ${s.requests.finished}/${s.requests.total} requests finished${code === ExitCode.clean ? '' : ' (NOT CLEAN: see its report)'}, digest ${report.digest}${out}\n`);
  }
  return results.reduce<ExitCode>((worst, { code }) => (code > worst ? code : worst), ExitCode.clean);
}

type Read = (report: RunReport) => number | null;
const stat = (pick: (report: RunReport) => Statistics, name: keyof Statistics): Read => (report) => pick(report)[name];
const percent = (read: (report: RunReport) => number | null): Read => (report) => {
  const value = read(report);
  return value === null ? null : value * 100;
};

/** The table's rows: label, unit, how the figure is read from a run's report. */
export const COMPARISON_ROWS: readonly [string, string, Read][] = [
  ['requests finished', 'requests', (r) => r.summary.requests.finished],
  ['time to first token mean', 'ms', stat((r) => r.summary.metrics.time_to_first_token_ms, 'mean')],
  ['time to first token p50', 'ms', stat((r) => r.summary.metrics.time_to_first_token_ms, 'p50')],
  ['time to first token p90', 'ms', stat((r) => r.summary.metrics.time_to_first_token_ms, 'p90')],
  ['time to first token p99', 'ms', stat((r) => r.summary.metrics.time_to_first_token_ms, 'p99')],
  ['inter-token latency mean', 'ms', stat((r) => r.summary.metrics.inter_token_latency_ms, 'mean')],
  ['inter-token latency p99', 'ms', stat((r) => r.summary.metrics.inter_token_latency_ms, 'p99')],
  ['request latency mean', 'ms', stat((r) => r.summary.metrics.request_latency_ms, 'mean')],
  ['request latency p99', 'ms', stat((r) => r.summary.metrics.request_latency_ms, 'p99')],
  ['queue time mean', 'ms', stat((r) => r.summary.metrics.queue_time_ms, 'mean')],
  ['request throughput', 'requests/s', (r) => r.summary.metrics.request_throughput_per_s],
  ['output token throughput', 'tokens/s', (r) => r.summary.metrics.output_token_throughput_per_s],
  ['goodput (share meeting the SLO)', '%', percent((r) => r.summary.metrics.goodput?.share ?? null)],
  ['prefix hit rate, token-weighted', '%', percent((r) => r.summary.prefix_hit_rates.measured.token_weighted)],
  ['prefix hit rate, block-weighted', '%', percent((r) => r.summary.prefix_hit_rates.measured.block_weighted)],
  ['prefix hit rate, request-averaged', '%', percent((r) => r.summary.prefix_hit_rates.measured.request_averaged)],
  ['infinite-cache ceiling, block-weighted', '%', percent((r) => r.summary.prefix_hit_rates.ceiling.block_weighted)],
  ['share of the ceiling, block-weighted', '%', percent((r) => r.summary.prefix_hit_rates.of_ceiling.block_weighted)],
];

const figure = (value: number | null) => (value === null ? '-' : plainDecimal(Number(value.toFixed(3))));

/** A run's figure ÷ the baseline's, as "×0.041"; "-" when either is not measured or the baseline is 0. */
export function ratioText(value: number | null, baseline: number | null): string {
  if (value === null || baseline === null || baseline === 0) return '-';
  const ratio = value / baseline;
  return `×${plainDecimal(Number(ratio >= 0.01 ? ratio.toFixed(3) : ratio.toPrecision(3)))}`;
}

/** Metric × run, each variant beside its ratio to the baseline (the first run); rows no run measured are left out. */
export function comparisonTable(runs: readonly { label: string; report: RunReport }[]): string {
  const [baseline, ...variants] = runs;
  const header = ['metric', 'unit', baseline.label, ...variants.flatMap(({ label }) => [label, '÷ baseline'])];
  const rows: string[][] = [];
  for (const [label, unit, read] of COMPARISON_ROWS) {
    const values = runs.map(({ report }) => read(report));
    if (values.every((value) => value === null)) continue;
    rows.push([label, unit, figure(values[0]), ...variants.flatMap((_, i) => [figure(values[i + 1]), ratioText(values[i + 1], values[0])])]);
  }
  const widths = header.map((_, i) => Math.max(header[i].length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `  ${cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')}`.trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}
