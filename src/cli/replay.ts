// `kvqual replay <config.yaml>`: reads a replay configuration (cluster, router, workload), runs
// the simulation and prints a short human summary; --out writes the canonical report JSON, --json
// prints it. Exit 0 on a clean run, 1 when the router rejected the event stream or a request
// never ended (a stall: a simulator defect, each stuck request named), 2 for a bad
// config, trace or output path, or an unreadable file: all are found before the simulation
// starts, and nothing is written then (outputs go to temporary files renamed only on success).
import * as fs from 'node:fs';
import type { Command } from 'commander';
import { ConfigError, parseReplayConfig } from '../config/load';
import * as path from 'node:path';
import { runReplay, type ReplayInputs, type ReplayOutcome } from '../replay';
import { fromKvEventBatch, toWireLines } from '../events/wire';
import { agenticRequestCount, parseAgenticLines } from '../agentic/trace';
import { parseMooncakeLines } from '../config/mooncake';
import { parseTimingCsv, TimingCsvError, type TablePoints } from '../config/timingCsv';
import type { ReplayConfig } from '../config/schema';
import type { RunReport } from '../report/report';
import type { RunMetrics, Statistics } from '../report/requestMetrics';
import type { KeptScores } from '../router/router';
import type { HitRateDefinitions, PrefixHitRates } from '../report/prefixHitRates';
import { writeCanonicalPretty } from '../report/canonical';
import { renderRunChart, RUN_CHART_FILES, runCharts } from '../report/runCharts';
import { requestsFormatOf, writeRequests } from '../report/requestsExport';
import { DurationError, formatNs, plainDecimal, VirtualClockError } from '../time';
import type { SpinNotice } from '../sim/cluster';
import { fileLines, InputFileError, printable, readTextFile, reason as fileReason } from '../inputFiles';
import { budgetProblem, type BudgetItem } from '../config/budget';
import { LIMITS, limitText } from '../limits';
import { TraceLineError } from '../traceLineError';
import type { CliIo } from './io';
import { ExitCode } from './io';
import { OutputError, planOutputs, SpooledOutput, writeOutputs, type OutputRequest, type PlannedOutput } from './outputs';
import type { KvEventBatch } from '../events/model';
import { compareText } from '../order';

export interface ReplayOptions {
  out?: string;
  eventsOut?: string;
  /** One record per request, as JSON lines (.jsonl) or CSV (.csv). */
  requestsOut?: string;
  json: boolean;
  seed?: string;
  /** A folder for the run's SVG charts. */
  plot?: string;
  /** Folders trace paths must lie in; empty: the config's folder and the working folder. */
  traceRoot?: string[];
  /** "chosen" (the chosen rank and the runner-up) or "all". */
  scores?: string;
  /** A/B runs: "field.path=value", one variant each, run beside the config as given (src/cli/compare.ts). */
  compare?: string[];
}

const REPLAY_HELP_AFTER = `
Prints a summary (AIPerf-style metrics, prefix reuse, transfers, the router's agreement) and the
report's digest; when it wrote files (--out, --events-out, --requests-out, --plot) it ends by naming
each with what it holds (on standard error with --json, whose standard output is the report alone).
With --compare path=value (repeatable) it also runs the config with each field set, on the same
trace and seed, and prints one table of every run with ratios to the first.

Exit status: 0 a clean run, 1 the router rejected the event stream or a request never ended,
2 a bad config, trace, option or output path (found before the run; nothing is written then).`;

/** How `replay --compare` runs one of its runs through replayFile: its config already set, its summary kept for the comparison table. */
export interface RunOfComparison {
  config: ReplayConfig;
  onReport: (report: RunReport, code: ExitCode) => void;
}

/** `replay --compare`'s runner (src/cli/compare.ts, which builds on this module, so it is handed in). */
export type CompareRunner = (file: string, options: ReplayOptions, io: CliIo) => ExitCode | Promise<ExitCode>;

export function registerReplay(program: Command, io: CliIo, finish: (code: ExitCode) => void, compareFile: CompareRunner): void {
  program
    .command('replay')
    .description('run a cluster replay from a YAML config and report it (see examples/configs/)')
    .addHelpText('after', REPLAY_HELP_AFTER)
    .argument('<config>', 'the replay configuration (YAML or JSON); its JSON Schema is schema/kvqual-config.schema.json')
    .option('--out <file>', 'write the canonical report JSON to this file (atomically)')
    .option('--json', 'print the canonical report JSON instead of the summary', false)
    .option('--events-out <file>', 'write the KV event stream the router received, as JSON lines (the check-events format)')
    .option('--requests-out <file>', 'write one record per request (AIPerf-style metric names), as JSON lines (.jsonl) or CSV (.csv)')
    .option('--seed <n>', "override the config's seed")
    .option('--scores <which>', 'candidates each placement record keeps: "chosen" (the chosen worker and the runner-up, default) or "all"', 'chosen')
    .option(
      '--trace-root <dir>',
      "a folder the config's trace may be in (repeatable); without it, the config's folder and the working folder",
      (dir: string, dirs: string[]) => [...dirs, dir],
      [] as string[],
    )
    .option('--plot <dir>', 'write SVG charts into this existing folder: TTFT and ITL CDFs; throughput and queue depth (the most requests waiting at once in each time bucket) over time; G1/G2 reuse per worker')
    .option(
      '--compare <path=value>',
      'also run the config with this field set (e.g. router.policy=round_robin; repeatable, one variant each) on the same trace and seed, and print one table of every run with ratios to the first; each output file takes the variant\'s name',
      (spec: string, specs: string[]) => [...specs, spec],
      [] as string[],
    )
    .action((file: string, options: ReplayOptions) => {
      // Synchronous unless --plot renders charts (then only runCliAsync, which bin/kvqual.js uses, waits for it).
      const result = (options.compare ?? []).length > 0 ? compareFile(file, options, io) : replayFile(file, options, io);
      if (result instanceof Promise) return result.then(finish);
      finish(result);
    });
}

/** Runs a replay; with --plot the charts render asynchronously, so the result is then a promise. */
export function replayFile(file: string, options: ReplayOptions, io: CliIo, comparison?: RunOfComparison): ExitCode | Promise<ExitCode> {
  let outcome: ReplayOutcome;
  let outputs: PlannedOutput[];
  let spooled: SpooledOutput | null = null;
  try {
    const seed = options.seed === undefined ? undefined : parseSeed(options.seed);
    const configPath = path.resolve(io.cwd, file);
    const config = comparison?.config ?? parseReplayConfig(readTextFile(configPath, file, LIMITS.config_bytes, 'config'), file);
    if (seed !== undefined) config.seed = seed;
    const trace = traceOf(config, file, options.traceRoot ?? [], io);
    const tables = loadTimingTables(config, file, io);
    const inputs = [{ absolute: configPath, what: 'config' }, ...(trace ? [{ absolute: trace.absolute, what: `trace named by ${trace.field}` }] : []), ...tables];
    for (const [option, value] of [['--out', options.out], ['--events-out', options.eventsOut], ['--requests-out', options.requestsOut], ['--plot', options.plot]] as const) {
      if (value !== undefined && value.trim() === '') throw new OptionError(`${option} "": give a ${option === '--plot' ? 'folder' : 'file'} name (an empty one would write into the working folder)`);
    }
    const requested = [
      ...(options.out === undefined ? [] : [{ option: '--out', file: options.out }]),
      ...(options.eventsOut === undefined ? [] : [{ option: '--events-out', file: options.eventsOut }]),
      ...(options.requestsOut === undefined ? [] : [{ option: '--requests-out', file: options.requestsOut }]),
      ...(options.plot === undefined ? [] : PLOT_FILES.map((name) => ({ option: '--plot', file: path.join(options.plot!, name) }))),
    ];
    if (options.requestsOut !== undefined && requestsFormatOf(options.requestsOut) === null) {
      throw new InputError(`--requests-out ${options.requestsOut}: name a .jsonl or a .csv file (the extension chooses the format)`);
    }
    outputs = planOutputs(requested, io.cwd, inputs);
    const kept_scores = keptScores(options.scores);
    const loaded = trace ? loadTrace(config, file, trace) : {};
    if (kept_scores === 'all') checkKeptScores(config, loaded);
    // The event log is written as batches are delivered, not kept in memory (put in place with the other outputs).
    const eventLog = outputs.find((output) => output.option === '--events-out');
    spooled = eventLog ? new SpooledOutput(eventLog) : null;
    const log = spooled;
    const on_delivered = log ? (batch: KvEventBatch) => log.append(toWireLines(fromKvEventBatch(batch))) : undefined;
    const display = io.progress?.() ?? null;
    const progress = display ? (ended: number, submitted: number, now_ns: number) => display.update(ended, submitted, now_ns / 1_000_000) : undefined;
    const spinning = (notice: SpinNotice) => io.stderr(`kvqual replay: warning: ${spinText(notice)}\n`);
    try {
      outcome = runReplay(config, { ...loaded, on_delivered, kept_scores, progress, spinning });
    } finally {
      display?.stop();
    }
  } catch (error) {
    spooled?.discard();
    if (error instanceof OutputError) {
      io.stderr(`kvqual replay: ${error.message}\n`);
      return ExitCode.usage;
    }
    if (isInputError(error)) {
      // A run past the clock's end is the config's as a whole: named by its file.
      io.stderr(`kvqual replay: ${error instanceof VirtualClockError ? `${file}: ` : ''}${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  const log = spooled;
  if (options.plot === undefined) return writeAndSummarise(file, options, io, outcome, outputs, new Map(), log, comparison);
  const charts = runCharts(outcome.report);
  const ready = outcome;
  const planned = outputs;
  return Promise.all(charts.map(async (chart) => [chart.file, await renderRunChart(chart)] as const)).then(
    (rendered) => writeAndSummarise(file, options, io, ready, planned, new Map(rendered), log, comparison),
    (error) => {
      log?.discard();
      throw error;
    },
  );
}

/** The chart files --plot writes, and what each shows (see src/report/runCharts.ts). */
const PLOT_WHAT = new Map<string, string>(RUN_CHART_FILES.map((chart) => [chart.file, `chart: ${chart.what}`]));
const PLOT_FILES = [...PLOT_WHAT.keys()];

/** Writes every output of a finished run (all or none), then prints the summary or the report; returns the exit status. */
function writeAndSummarise(file: string, options: ReplayOptions, io: CliIo, outcome: ReplayOutcome, outputs: PlannedOutput[], charts: Map<string, string>, eventLog: SpooledOutput | null, comparison?: RunOfComparison): ExitCode {
  const report = outcome.report;
  // The report is streamed (same bytes as canonicalJsonPretty), never built as one string.
  const writeReport = (sink: (text: string) => void) => {
    writeCanonicalPretty(report, sink);
    sink('\n');
  };
  try {
    const writerOf = (output: PlannedOutput) => {
      if (output.option === '--out') return writeReport;
      if (output.option === '--requests-out') return (sink: (text: string) => void) => writeRequests(report, requestsFormatOf(output.file)!, sink);
      return (sink: (text: string) => void) => sink(charts.get(path.basename(output.file)) ?? '');
    };
    writeOutputs(outputs.map((output) => (output.option === '--events-out' ? { output, spooled: eventLog! } : { output, write: writerOf(output) })));
  } catch (error) {
    eventLog?.discard();
    if (!(error instanceof OutputError)) throw error;
    io.stderr(`kvqual replay: ${error.message}\n`);
    return ExitCode.usage;
  }
  if (options.json) writeReport((text) => io.stdout(text));
  else if (comparison === undefined) io.stdout(summaryText(file, report));
  // What was written, last: on standard output after the summary; beside --json's report, on standard error.
  // (A comparison names each run's files on its own line of the table's footer, compare.ts.)
  if (outputs.length > 0 && comparison === undefined) (options.json ? io.stderr : io.stdout)(writtenText(outputs));
  if (eventLog !== null && report.summary.kv_events.batches_delivered === 0) {
    io.stderr(`kvqual replay: warning: --events-out ${options.eventsOut}: no KV event reached the router, so the log is empty; check-events refuses an empty capture\n`);
  }
  const clean = report.summary.event_stream_failure === null && report.summary.stuck_requests === undefined;
  comparison?.onReport(report, clean ? ExitCode.clean : ExitCode.violation);
  return clean ? ExitCode.clean : ExitCode.violation;
}

/** Errors that mean the input (config, trace, option or output path) is bad: exit 2, one message. */
export function isInputError(error: unknown): error is Error {
  return (
    error instanceof ConfigError ||
    error instanceof DurationError ||
    error instanceof OptionError ||
    error instanceof TraceLineError ||
    error instanceof InputFileError ||
    error instanceof InputError ||
    error instanceof OutputError ||
    error instanceof VirtualClockError
  );
}

/** The batches the router received, in delivery order, in the wire format check-events reads, a line at a time. */
class OptionError extends Error {}
class InputError extends Error {}

/** The trace file a config names: where it is, how to show it, and which field named it. */
export interface TraceFile {
  field: string;
  absolute: string;
  shown: string;
}

/** A path as the user can open it from where the command ran: relative when below, else absolute. */
/** A path as a message shows it: relative to `cwd` when inside it, else absolute. */
export function shownPath(absolute: string, cwd: string): string {
  const relative = path.relative(cwd, absolute);
  return relative === '' ? '.' : relative.startsWith('..') || path.isAbsolute(relative) ? absolute : relative;
}

/**
 * The folder a config really is in, symbolic links followed, as the kernel follows them: the paths
 * a config names (its trace, its tables) are relative to it. Resolved as text from where the link
 * sits, `../../../shared` under a symbolically linked checkout named a file that `ls` did not see
 * (found by an outside audit). Where it cannot be resolved (the config is checked for later), as given.
 */
export function configFolderOf(cwd: string, configFile: string): string {
  try {
    return path.dirname(fs.realpathSync(path.isAbsolute(configFile) ? configFile : `${cwd}${path.sep}${configFile}`));
  } catch {
    return path.dirname(path.resolve(cwd, configFile));
  }
}

function isInside(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Resolves the trace a config names (relative to the config's folder) and checks it lies inside
 * an allowed folder (after following symbolic links): the --trace-root folders if given, else the
 * config's folder and the working folder. Reads nothing yet.
 */
export function traceOf(config: ReplayConfig, configFile: string, roots: readonly string[], io: CliIo): TraceFile | null {
  const named = config.workload.agentic ? { field: 'workload.agentic.trace', name: config.workload.agentic.trace } : config.workload.mooncake ? { field: 'workload.mooncake.trace', name: config.workload.mooncake.trace } : null;
  if (named === null) return null;
  const configFolder = configFolderOf(io.cwd, configFile);
  const absolute = path.resolve(configFolder, named.name);
  const shown = shownPath(absolute, io.cwd);
  const allowed = (roots.length > 0 ? roots : [configFolder, io.cwd]).map((root) => {
    if (root.trim() === '') throw new InputError('--trace-root "": give a folder (an empty name allows none)');
    let real: string;
    try {
      real = fs.realpathSync(path.resolve(io.cwd, root));
    } catch {
      throw new InputError(`--trace-root ${printable(root, 200)}: no such folder`);
    }
    if (!fs.statSync(real).isDirectory()) throw new InputError(`--trace-root ${printable(root, 200)}: not a folder`);
    return { root, real };
  });
  let real: string;
  try {
    real = fs.realpathSync(absolute);
  } catch (error) {
    throw new InputError(`${configFile}: ${named.field}: cannot read ${shown}: ${fileReason(error)}`);
  }
  if (!allowed.some(({ real: root }) => isInside(real, root))) {
    const folders = [...new Set(allowed.map(({ root, real: rootReal }) => (roots.length > 0 ? root : shownPath(rootReal, io.cwd))))].join(', ');
    throw new InputError(`${configFile}: ${named.field}: ${shown} is outside the folders a trace may come from (${folders}); pass --trace-root DIR to allow another`);
  }
  return { field: named.field, absolute, shown };
}

/**
 * Reads each `timing.table.csv` (relative to the config's folder, and inside it after following
 * symbolic links) into the role's inline points; returns the files read, so no output overwrites one.
 */
function loadTimingTables(config: ReplayConfig, configFile: string, io: CliIo): { absolute: string; what: string }[] {
  const configFolder = configFolderOf(io.cwd, configFile);
  const read: { absolute: string; what: string }[] = [];
  config.cluster.workers.forEach((role, i) => {
    const table = role.engine.timing.table;
    if (table?.csv === undefined) return;
    const field = `cluster.workers[${i}].engine.timing.table.csv`;
    const csv = readTimingTable(configFolder, table.csv, io.cwd);
    if ('problem' in csv) throw new InputError(`${configFile}: ${field}: ${csv.problem}`);
    role.engine.timing.table = { prefill: csv.points.prefill, decode: csv.points.decode, ...(table.source === undefined ? {} : { source: table.source }) };
    read.push({ absolute: csv.absolute, what: `pass-time table named by ${field}` });
  });
  return read;
}

/**
 * A pass-time table CSV a config names (`csv`, relative to the config's folder, which it must stay
 * inside after symbolic links are followed): its points, or what is wrong with it, naming the file
 * as shown from `cwd`. Used by replay and, for each point, by sweep.
 */
export function readTimingTable(configFolder: string, csv: string, cwd: string): { absolute: string; points: TablePoints } | { absolute: string; problem: string } {
  const absolute = path.resolve(configFolder, csv);
  const shown = shownPath(absolute, cwd);
  let real: string;
  try {
    real = fs.realpathSync(absolute);
  } catch (error) {
    return { absolute, problem: `cannot read ${shown}: ${fileReason(error)}` };
  }
  if (!isInside(real, fs.realpathSync(configFolder))) return { absolute, problem: `${shown} is outside the config's folder; keep the table beside the config` };
  try {
    return { absolute, points: parseTimingCsv(readTextFile(absolute, shown, LIMITS.config_bytes, 'pass-time table'), shown) };
  } catch (error) {
    if (error instanceof TimingCsvError || error instanceof InputFileError) return { absolute, problem: error.message };
    throw error;
  }
}

/** How many times an agentic config replays its trace's requests (iterations, × lanes for snapshot assignment), and that in words. */
function agenticRepeat(agentic: NonNullable<ReplayConfig['workload']['agentic']>): { times: number; text: string } {
  const snapshot = agentic.assignment === 'snapshot';
  return { times: agentic.iterations * (snapshot ? agentic.lanes : 1), text: `${agentic.iterations} iterations${snapshot ? ` × ${agentic.lanes} lanes` : ''}` };
}

/** `--scores all` keeps a record per candidate rank of every placement: refused when that is more than LIMITS.kept_scores. */
function checkKeptScores(config: ReplayConfig, loaded: ReplayInputs): void {
  const ranks = config.cluster.workers.reduce((total, role) => total + role.replicas * role.dp_size, 0);
  const { agentic } = config.workload;
  const requests = loaded.mooncake_requests
    ? loaded.mooncake_requests.length
    : loaded.agentic_trace && agentic
      ? agenticRequestCount(loaded.agentic_trace) * agenticRepeat(agentic).times
      : (config.workload.requests?.length ?? 0);
  if (ranks * requests <= LIMITS.kept_scores) return;
  throw new OptionError(
    `--scores all keeps every candidate of every placement: ${limitText(ranks)} ranks × ${limitText(requests)} requests = ${limitText(ranks * requests)} records, above the limit of ${limitText(LIMITS.kept_scores)}; leave --scores out to keep the chosen rank and the runner-up`,
  );
}

/** Refuses a trace's workload over the budget (src/config/budget.ts): a request named in its trace, or the whole under `field` of the config. */
function checkBudget(config: ReplayConfig, configFile: string, trace: TraceFile, field: string, items: BudgetItem[], repeat: number, repeated: string): void {
  const problem = budgetProblem(items, config.cluster.workers[0].engine.block_size, repeat, repeated);
  if (problem === null) return;
  if (problem.where !== null) throw new InputError(`${trace.shown}: ${problem.where}: ${problem.message} (the trace named by ${trace.field} in ${configFile})`);
  throw new InputError(`${configFile}: ${field}: ${problem.message}`);
}

/** Reads the trace a config names, line by line; errors name the trace as shown and the config that referred to it. */
export function loadTrace(config: ReplayConfig, configFile: string, trace: TraceFile): ReplayInputs {
  const { agentic, mooncake } = config.workload;
  try {
    const lines = fileLines(trace.absolute, trace.shown, trace.shown);
    if (agentic) {
      const agentic_trace = parseAgenticLines(lines, trace.shown);
      const repeat = agenticRepeat(agentic);
      const requests = agenticRequestCount(agentic_trace) * repeat.times;
      if (requests > LIMITS.requests) {
        throw new InputError(`${configFile}: workload.agentic: ${agenticRequestCount(agentic_trace)} trace requests × ${repeat.text} = ${requests} requests, above the limit of ${limitText(LIMITS.requests)}`);
      }
      const nodes = agentic_trace.plays.flatMap((play) => play.nodes.map((node) => ({ where: `line ${node.line}`, prompt_tokens: node.input_length, output_tokens: node.output_length })));
      checkBudget(config, configFile, trace, 'workload.agentic', nodes, repeat.times, repeat.text);
      return { agentic_trace };
    }
    const options = { trace_block_size: config.workload.trace_block_size, max_requests: mooncake!.max_requests ?? null, time_scale: mooncake!.time_scale, first_ordinal: 0 };
    const mooncake_requests = parseMooncakeLines(lines, trace.shown, options);
    const requests = mooncake_requests.map((request) => ({ where: `request ${request.identity.request_id}`, prompt_tokens: request.prompt.length_tokens, output_tokens: request.output_length }));
    checkBudget(config, configFile, trace, 'workload.mooncake', requests, 1, '');
    return { mooncake_requests };
  } catch (error) {
    if (error instanceof TraceLineError) throw new InputError(`${error.message} (the trace named by ${trace.field} in ${configFile})`);
    if (error instanceof InputFileError) throw new InputError(`${configFile}: ${trace.field}: ${error.message}`);
    throw error;
  }
}

function keptScores(which: string | undefined): KeptScores {
  if (which === undefined || which === 'chosen') return 'chosen_and_runner_up';
  if (which === 'all') return 'all';
  throw new OptionError(`--scores ${printable(which)}: expected "chosen" or "all"`);
}

function parseSeed(text: string): number {
  const seed = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(seed)) throw new OptionError(`--seed ${printable(text)}: the seed must be a whole number from −(2^53 − 1) to 2^53 − 1`);
  return seed;
}

/**
 * A figure for people: three decimals, or three significant digits for a value below 0.001 that
 * three decimals would show as 0 (a run of 0.000011 ms is not "0 ms").
 */
const fixed = (value: number) => plainDecimal(Number(value !== 0 && Math.abs(value) < 0.0005 ? value.toPrecision(3) : value.toFixed(3)));

/** What each output option writes, in the words of the list a run ends with. */
const WRITTEN_WHAT: Record<string, string> = {
  '--out': 'the canonical report (JSON)',
  '--events-out': 'the KV events the router received (JSON lines; kvqual check-events reads it)',
  '--requests-out': 'one record per request',
};

/** The files a run wrote, one a line, as they were named on the command line, each with what it holds. */
export function writtenText(outputs: readonly OutputRequest[]): string {
  const width = Math.max(...outputs.map((output) => output.file.length));
  const lines = outputs.map((output) => `  ${output.file.padEnd(width)}  ${WRITTEN_WHAT[output.option] ?? PLOT_WHAT.get(path.basename(output.file)) ?? ''}`.trimEnd());
  return `wrote ${outputs.length === 1 ? '1 file' : `${outputs.length} files`}:\n${lines.join('\n')}\n`;
}

/** A few lines a person reads after a run. */
export function summaryText(file: string, report: RunReport): string {
  const s = report.summary;
  const ended = [s.requests.failed > 0 ? `${s.requests.failed} failed` : '', s.requests.skipped > 0 ? `${s.requests.skipped} skipped` : ''].filter(Boolean);
  const lines = [
    `${file}: ${s.requests.finished}/${s.requests.total} requests finished${ended.length > 0 ? ` (${ended.join(', ')})` : ''} in ${fixed(s.virtual_duration_ms)} ms of virtual time`,
    `  pass times: ${s.fidelity}`,
    ...metricsTable(s.metrics),
    `  prefix reuse ${fixed(s.prefix_reuse_ratio * 100)}% of ${s.tokens.input} prompt tokens (G1 ${s.tokens.g1_reused}, G2 ${s.tokens.host_reused})`,
    ...hitRateLines(s.prefix_hit_rates),
    `  transfers: ${s.transfers.d2h} D2H, ${s.transfers.h2d} H2D; KV events: ${s.kv_events.emitted} emitted, ${s.kv_events.batches_delivered} batches reached the router`,
    `  reconciliation: ${s.reconciliation.agree}/${s.reconciliation.admissions} admissions as the router predicted${reasons(s.reconciliation.disagree_by_reason)}`,
  ];
  const preempted = preemptionLine(report);
  if (preempted !== null) lines.push(preempted);
  if (s.plays) {
    const lanes = new Set(s.plays.map((play) => play.lane)).size;
    lines.push(`  agentic: ${s.plays.length} play instance(s) on ${lanes} lane(s), ${s.plays.filter((p) => p.failed).length} failed; ${s.requests.skipped} request(s) skipped`);
  }
  for (const domain of s.g2_domains ?? []) {
    lines.push(`  shared G2 ${domain.domain_id}: ${domain.resident_blocks} resident / ${domain.used_blocks} used / ${domain.capacity_blocks} blocks, ${domain.participants.length} participant rank(s)`);
  }
  lines.push(...endings(report));
  if (s.event_stream_failure) lines.push(`  EVENT STREAM REJECTED: ${s.event_stream_failure}`);
  for (const stuck of s.stuck_requests ?? []) {
    lines.push(`  STUCK (simulator defect): request ${stuck.request_id} never ended: ${stuck.where}, no progress since ${fixed(stuck.last_progress_ms)} ms`);
  }
  lines.push(`  digest ${report.digest}`);
  return `${lines.join('\n')}\n`;
}

/** Prefix reuse in the three published definitions beside the infinite-cache ceiling (docs/glossary.md, prefix hit rates). */
function hitRateLines(rates: PrefixHitRates): string[] {
  const percent = (value: number | null) => (value === null ? 'not measured' : `${fixed(value * 100)}%`);
  const definitions = (figures: { [K in keyof HitRateDefinitions]: number | null }) =>
    `token-weighted ${percent(figures.token_weighted)}, block-weighted ${percent(figures.block_weighted)}, request-averaged ${percent(figures.request_averaged)}`;
  return [
    `  prefix hit rate at ${rates.block_size_tokens}-token blocks: ${definitions(rates.measured)}`,
    `  infinite-cache ceiling: ${definitions(rates.ceiling)}; realised ${definitions(rates.of_ceiling)} of it`,
  ];
}

const LISTED_ENDINGS = 10;

/** How often requests were preempted (recompute preemption), and which one the most; null when none was. */
function preemptionLine(report: RunReport): string | null {
  let total = 0;
  let requests = 0;
  let most: { request_id: string; preemptions: number } | null = null;
  for (const record of report.per_request) {
    if (record.preemptions === 0) continue;
    total += record.preemptions;
    requests++;
    if (most === null || record.preemptions > most.preemptions) most = { request_id: record.request_id, preemptions: record.preemptions };
  }
  if (most === null) return null;
  const count = (n: number) => n.toLocaleString('en-US');
  return `  preemptions: ${count(total)} of ${count(requests)} request(s), the most ${count(most.preemptions)} of ${most.request_id}`;
}

/** Failed and skipped requests with their reasons (the first few of each). */
function endings(report: RunReport): string[] {
  const lines: string[] = [];
  for (const [status, reasonOf] of [
    ['failed', (r: RunReport['per_request'][number]) => r.failure_reason],
    ['skipped', (r: RunReport['per_request'][number]) => r.skip_reason],
  ] as const) {
    const ofStatus = report.per_request.filter((record) => record.status === status);
    for (const record of ofStatus.slice(0, LISTED_ENDINGS)) lines.push(`  ${status}: ${record.request_id}: ${reasonOf(record) ?? 'no reason recorded'}`);
    if (ofStatus.length > LISTED_ENDINGS) lines.push(`  … and ${ofStatus.length - LISTED_ENDINGS} more ${status} (see the report)`);
  }
  return lines;
}

/** The rows of the AIPerf-style table: label, unit, statistics. */
const TABLE_ROWS: readonly [string, string, keyof RunMetrics][] = [
  ['time to first token', 'ms', 'time_to_first_token_ms'],
  ['time to second token', 'ms', 'time_to_second_token_ms'],
  ['inter-token latency', 'ms', 'inter_token_latency_ms'],
  ['time per output token', 'ms', 'time_per_output_token_ms'],
  ['request latency (E2E)', 'ms', 'request_latency_ms'],
  ['queue time', 'ms', 'queue_time_ms'],
  ['H2D wait', 'ms', 'h2d_wait_ms'],
  ['output tokens/s per user', 'tokens/s', 'output_token_throughput_per_user'],
  ['input sequence length', 'tokens', 'input_sequence_length'],
  ['output sequence length', 'tokens', 'output_sequence_length'],
];
const STATISTICS = ['mean', 'min', 'p50', 'p90', 'p95', 'p99', 'max'] as const;

/** Metric × statistic with units (AIPerf's console table), then throughputs and goodput. */
export function metricsTable(m: RunMetrics): string[] {
  if (m.request_count === 0) return ['  metrics: none (no request finished)'];
  const header = ['metric', 'unit', ...STATISTICS];
  const rows = TABLE_ROWS.map(([label, unit, key]) => {
    const stats = m[key] as Statistics;
    return [label, unit, ...STATISTICS.map((name) => {
      const value = stats[name];
      return value === null ? '-' : fixed(value);
    })];
  });
  const widths = header.map((_, i) => Math.max(header[i].length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `  ${cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')}`.trimEnd();
  const lines = [line(header), ...rows.map(line)];
  lines.push(
    `  ${m.request_count} requests in ${fixed(m.benchmark_duration_ms)} ms (first arrival to last finish): ${fixed(m.request_throughput_per_s)} requests/s, ${fixed(m.output_token_throughput_per_s)} output tokens/s, ${fixed(m.total_token_throughput_per_s)} tokens/s in all`,
  );
  if (m.goodput) {
    const slo = Object.entries(m.goodput.slo).map(([name, value]) => `${name.replace(/_ms$/, '')} ≤ ${value} ms`).join(', ');
    lines.push(`  goodput: ${m.goodput.requests_meeting_slo}/${m.request_count} requests (${fixed(m.goodput.share * 100)}%) meet ${slo}: ${fixed(m.goodput.goodput_per_s)} requests/s`);
  }
  return lines;
}

function reasons(byReason: Record<string, number>): string {
  const entries = Object.entries(byReason).sort(([a], [b]) => compareText(a, b));
  return entries.length === 0 ? '' : ` (others: ${entries.map(([reason, count]) => `${count} ${reason}`).join(', ')})`;
}

/** What a request spinning on preemption means, said as it happens (the run may take long and end no request meanwhile). */
export function spinText(notice: SpinNotice): string {
  return (
    `request ${notice.request_id} on worker ${notice.worker_id} dp rank ${notice.dp_rank} has been preempted and readmitted ` +
    `${notice.preemptions.toLocaleString('en-US')} times by ${formatNs(notice.time_ns)} of virtual time: passes this short readmit it every pass ` +
    'while something slow (a G2 restore over a slow link, say) holds the G1 blocks it needs. The run goes on until that ends, and may take long ' +
    '(docs/model.md, Preemption)'
  );
}
