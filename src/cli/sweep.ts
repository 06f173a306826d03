// `kvqual sweep <sweep.yaml>`: runs every point of a sweep (a base replay config and the field
// paths it varies) on a pool of worker processes and writes sweep.json, sweep.csv, one SVG chart
// per metric and varied parameter under charts/ (none against the seed: its runs fold into each
// chart as a mean line and a lowest-to-highest band), and sweep.html into --out. Every point is
// validated, its pass-time tables read and every trace checked (as `kvqual replay` does), and
// every output checked (none may overwrite an input), before anything runs or is created; the
// output folder is made only when the results are written. `--shard i/n` runs only
// the points whose index modulo n is i − 1 and writes shard-<i>-of-<n>.json; `kvqual sweep merge
// <shard files…>` writes what the unsharded sweep writes (same bytes apart from wall times).
// Charts an earlier sweep left under charts/ that this one does not write are removed (only names
// a sweep writes). A sweep file with a `search` (an objective and constraints, src/sweep/search.ts)
// runs only the points its bisection needs, a round at a time (a sharded one runs every point of
// its shard, and merge answers the search from them), and writes search.json, winner.yaml and
// pareto.svg too. Exit status 0 when every point ran clean (and a search found a winner), 1 when a
// point's event stream was rejected or a request never ended, or no point met a search's
// constraints (results still written), 2 for bad input.
// Progress: a bar on a terminal, plain lines otherwise (both on standard error). May read the clock.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { parseDocument } from 'yaml';
import { parseReplayConfig } from '../config/load';
import type { ReplayConfig } from '../config/schema';
import type { TablePoints } from '../config/timingCsv';
import { LIMITS } from '../limits';
import { InputFileError, readTextFile, reason } from '../inputFiles';
import { expandSweep, invalidPointsError, parseShard, parseSweepFile, pointLabel, pointWhere, shardOfPoint, SweepError, sweepDigest, type ExpandedSweep, type ParameterValue } from '../sweep/spec';
import { mergeShards, METRICS, runsText, parseSweepDocument, sweepCsv, sweepJsonText, SWEEP_FORMAT, type PointOutcome, type SweepDocument } from '../sweep/results';
import { isSweepChartName, renderChart, sweepCharts, sweepHtml, type SweepChart } from '../sweep/charts';
import { resolveSearch, runSearch, searchMetricKeys, winnerConfigText, type PointResult, type SearchAnswer, type SearchPoint, type SearchSpec } from '../sweep/search';
import { documentResults, mergeSearchSections, type SearchSection } from '../sweep/searchSection';
import { questionText, renderPareto, SEARCH_FILES, searchHtml, searchJsonText, searchText } from '../sweep/searchReport';
import type { CliIo } from './io';
import { ExitCode } from './io';
import { configFolderOf, isInputError, loadTrace, readTimingTable, shownPath, spinText, traceOf, type TraceFile } from './replay';
import { OutputError, planOutputs, writeOutputs } from './outputs';
import { defaultJobs, PointFailure, runPoints, SweepPool } from './sweepPool';
import { traceKey, type PointTask, type SearchedOutcome, type WorkerNotice } from './sweepWorker';

export interface SweepOptions {
  out: string;
  jobs?: string;
  shard?: string;
  traceRoot: string[];
}

export function registerSweep(program: Command, io: CliIo, finish: (code: ExitCode) => void): void {
  const sweep = program
    .command('sweep')
    // The options of `sweep` go before `merge`; `merge --out` is merge's own.
    .enablePositionalOptions()
    .description('run a sweep: a base replay config with field paths varied over a grid, zipped lists and seeds (see examples/sweeps/)')
    .argument('<sweep>', 'the sweep file (YAML): base, grid, zip, seeds, search')
    .addHelpText('after', SWEEP_HELP_AFTER)
    .option('--out <dir>', 'the folder to write sweep.json, sweep.csv, sweep.html and charts/ into (created if absent)', 'sweep-results')
    .option('--jobs <n>', `worker processes (default: the core count, ${defaultJobs()} here)`)
    .option('--shard <i/n>', 'run only shard i of n (points whose index modulo n is i − 1) and write shard-<i>-of-<n>.json')
    .option('--trace-root <dir>', "a folder the base config's trace may be in (repeatable), as for kvqual replay", (dir: string, dirs: string[]) => [...dirs, dir], [] as string[])
    .action(async (file: string, options: SweepOptions) => finish(await sweepFile(file, options, io)));
  sweep
    .command('merge')
    .description('merge the shard-*.json of every shard of one sweep into what the unsharded sweep writes')
    .argument('<shards...>', 'the shard results (shard-<i>-of-<n>.json), every shard exactly once')
    .option('--out <dir>', 'the folder to write into (created if absent)', 'sweep-results')
    .action(async (files: string[], options: { out: string }) => finish(await mergeFiles(files, options, io)));
}

const SWEEP_HELP_AFTER = `
Writes into --out: sweep.json and sweep.csv (every point, with wall times), charts/ (one SVG per
metric against each varied parameter but the seed: the line is the mean over the seeds and any
other parameters, the band their lowest to highest value) and sweep.html (the charts two to a row
and the table of points, at most 1,280 px wide).

A capacity search (the sweep file's search: key) finds the best point instead of running them all:
  search:
    minimise: cluster.workers[0].replicas   # or maximise: a field path the grid varies over
                                            # numbers, or a metric (then method grid: every point)
    subject_to:                             # "<metric> <operator> <number>", operators <= < >= >
      - p99 ttft_ms <= 2000
      - goodput >= 0.95
    goodput: { ttft_ms: 2000, itl_ms: 100 } # limits a good request meets (else the base's slo)
    front: p99 ttft_ms                      # the Pareto front's metric (default: the first
                                            # constraint's)
    method: bisect                          # bisect (default for a field path) or grid
Metrics: <statistic> <distribution> with statistic mean, min, p50, p90, p95, p99 or max and
distribution ttft_ms, ttst_ms, itl_ms, tpot_ms, e2e_ms or queue_ms (over finished requests); or
goodput (the share of finished requests meeting every goodput limit), goodput_per_s,
request_throughput_per_s, output_token_throughput_per_s, total_token_throughput_per_s, the prefix
hit rates prefix_reuse_ratio (token-weighted), prefix_reuse_block_ratio (block-weighted),
prefix_reuse_request_ratio (request-averaged) and prefix_reuse_of_ceiling_ratio (the block-weighted
share of the infinite-cache ceiling realised), requests_finished, requests_failed. A candidate is a
point's parameters but the seed: it meets when every seed's run is clean and meets every
constraint. Bisection assumes that once a value of the objective meets, every more generous one
(more replicas) does too, with the other parameters fixed, and runs only the values it needs, a
round at a time. It also writes search.json (the candidates run, the Pareto front, the winner),
winner.yaml (the base config with the winner's values; its paths are relative to the base config's
folder) and pareto.svg. The answer is the same on any --jobs and, merged, in any number of shards
(each shard runs all its points).

Exit status: 0 every point ran clean (and a search found a winner), 1 a point's event stream was
rejected or a request never ended, or no point met a search's constraints (every result is still
written), 2 a usage or input error (nothing is written then).`;

class UsageError extends Error {}

/** Worker processes per core at most: each is a Node process of about 100 MB, and points run one at a time on it. */
const JOBS_PER_CORE = 4;

export function parseJobs(text: string | undefined, cores = defaultJobs()): number {
  if (text === undefined) return cores;
  const jobs = Number(text);
  const most = Math.min(1024, JOBS_PER_CORE * cores);
  if (!/^\d+$/.test(text) || jobs < 1 || jobs > most) throw new UsageError(`--jobs ${text}: expected a whole number of worker processes from 1 to ${most} (${JOBS_PER_CORE} per core of the ${cores} here; each is a process of about 100 MB)`);
  return jobs;
}

/** An --out that names no folder ("") is refused: it would write into the working folder. */
function checkOutName(out: string): void {
  if (out.trim() === '') throw new UsageError('--out "": give a folder to write into (an empty name would write into the working folder)');
}

/** Makes a folder; one that exists already (or was made by another process meanwhile) is left as it is. */
function makeFolderUnlessThere(folder: string): void {
  try {
    fs.mkdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(folder).isDirectory()) throw error;
  }
}

/** The output folder, absolute, once its parent is known to exist and the folder is not something else. */
function outFolder(out: string, cwd: string): string {
  const absolute = path.resolve(cwd, out);
  if (!fs.existsSync(path.dirname(absolute))) throw new OutputError(`--out ${out}: the folder ${path.dirname(out) || '.'} does not exist; create it first`);
  if (fs.existsSync(absolute) && !fs.statSync(absolute).isDirectory()) throw new OutputError(`--out ${out}: exists and is not a folder`);
  return absolute;
}

/** Creates the output folder (its parent must exist) and charts/ in it, when the results are written. */
function prepareFolder(out: string, cwd: string, charts: boolean): string {
  const absolute = outFolder(out, cwd);
  try {
    // One level at a time (the parent exists): a recursive mkdir can spin on special file systems such as /proc.
    // Shards on other machines (or processes) may make the same folder at the same moment: one that appears meanwhile is fine.
    for (const folder of charts ? [absolute, path.join(absolute, 'charts')] : [absolute]) makeFolderUnlessThere(folder);
  } catch (error) {
    throw new OutputError(`--out ${out}: cannot create it (${reason(error)})`);
  }
  return absolute;
}

/** A file a sweep reads, which no output may overwrite: where it is and what it is (for the message). */
interface InputFile {
  absolute: string;
  what: string;
}

/** The files a whole sweep writes, relative to its folder: the JSON, the CSV, the page and each chart. */
function wholeSweepFiles(charts: readonly SweepChart[]): string[] {
  return ['sweep.json', 'sweep.csv', 'sweep.html', ...charts.map((chart) => path.join('charts', chart.file))];
}

/**
 * Charts an earlier sweep with other parameters left in `folder`/charts (they would read as this
 * sweep's), relative to `folder`: only regular files named as a sweep names its charts
 * (<metric>--<parameter>.svg of a known metric) that this sweep does not write.
 */
function staleCharts(folder: string, charts: readonly SweepChart[]): string[] {
  const chartsFolder = path.join(folder, 'charts');
  if (!fs.existsSync(chartsFolder) || !fs.statSync(chartsFolder).isDirectory()) return [];
  const current = new Set(charts.map((chart) => chart.file));
  return fs
    .readdirSync(chartsFolder)
    .filter((name) => !current.has(name) && isSweepChartName(name, METRICS) && fs.lstatSync(path.join(chartsFolder, name)).isFile())
    .map((name) => path.join('charts', name));
}

/**
 * Checks, before anything runs or is created, every file a sweep writes into --out (`files`,
 * relative to it) and every stale chart it would remove there, as `kvqual replay` checks its
 * outputs: the folder can be made or used, and no output is a folder, a device or an input (the
 * sweep file, the base config, a trace, a pass-time table, a shard result). Creates nothing.
 */
function checkOutputs(out: string, files: readonly string[], charts: readonly SweepChart[] | null, inputs: readonly InputFile[], cwd: string): void {
  const folder = outFolder(out, cwd);
  if (!fs.existsSync(folder)) {
    try {
      fs.accessSync(path.dirname(folder), fs.constants.W_OK);
    } catch (error) {
      throw new OutputError(`--out ${out}: cannot create it (${reason(error)})`);
    }
    return; // nothing can be overwritten in a folder not there yet
  }
  const touched = [...files, ...(charts ? staleCharts(folder, charts) : [])];
  // A file whose folder (charts/) is not there yet is no input either; it is checked again when written.
  const present = touched.filter((file) => fs.existsSync(path.dirname(path.join(folder, file))));
  planOutputs(present.map((file) => ({ option: '--out', file: path.join(out, file) })), cwd, inputs);
}

/**
 * The pass-time tables (`timing.table.csv`) of a sweep's points, each read as `kvqual replay`
 * reads it (readTimingTable in src/cli/replay.ts: relative to the base config's folder and inside
 * it, a regular file of at most a config's size). Each file is read once, however many points name
 * it; its problem, if any, is kept to name every point that names it.
 */
class TimingTables {
  private readonly byFile = new Map<string, TablePoints | string>();

  constructor(
    private readonly configFolder: string,
    private readonly cwd: string,
  ) {}

  /** Puts each role's table points into `config` in place of its csv, as replay does; returns the files read. */
  load(config: ReplayConfig): InputFile[] {
    const files: InputFile[] = [];
    config.cluster.workers.forEach((role, i) => {
      const table = role.engine.timing.table;
      if (table?.csv === undefined) return;
      const field = `cluster.workers[${i}].engine.timing.table.csv`;
      const absolute = path.resolve(this.configFolder, table.csv);
      if (!this.byFile.has(absolute)) this.byFile.set(absolute, this.read(table.csv));
      const points = this.byFile.get(absolute)!;
      if (typeof points === 'string') throw new InputFileError(`${field}: ${points}`);
      role.engine.timing.table = { prefill: points.prefill, decode: points.decode, ...(table.source === undefined ? {} : { source: table.source }) };
      files.push({ absolute, what: `pass-time table named by ${field}` });
    });
    return files;
  }

  /** A table's points, or what is wrong with the file (see readTimingTable). */
  private read(csv: string): TablePoints | string {
    const table = readTimingTable(this.configFolder, csv, this.cwd);
    return 'problem' in table ? table.problem : table.points;
  }
}

/**
 * Reads every point's pass-time tables into its config and checks every trace it names, as
 * `kvqual replay` does, before anything runs. One line names the first invalid point, its values,
 * the field and the problem, and how many more points are invalid. Returns each point's trace and
 * the files read (traces and tables; each once).
 */
function readPointFiles(expanded: ExpandedSweep, file: string, baseShown: string, roots: readonly string[], io: CliIo): { traces: Map<number, TraceFile | null>; read: InputFile[] } {
  const tables = new TimingTables(configFolderOf(io.cwd, baseShown), io.cwd);
  const traceProblems = new Map<string, Error | null>(); // by traceKey: every trace line is checked once
  const traces = new Map<number, TraceFile | null>();
  const read = new Map<string, InputFile>();
  const failures: string[] = [];
  for (const point of expanded.points) {
    try {
      const trace = traceOf(point.config, baseShown, roots, io);
      for (const table of tables.load(point.config)) read.set(table.absolute, table);
      if (trace) {
        const key = traceKey(point.config, trace);
        if (!traceProblems.has(key)) traceProblems.set(key, inputProblem(() => loadTrace(point.config, baseShown, trace)));
        const problem = traceProblems.get(key);
        if (problem) throw problem;
        read.set(trace.absolute, { absolute: trace.absolute, what: `trace named by ${trace.field}` });
      }
      traces.set(point.index, trace);
    } catch (error) {
      if (!isInputError(error)) throw error;
      if (error.message.startsWith('--trace-root ')) throw error; // the option's own problem, not a point's
      // "base.yaml: workload.mooncake.trace: …": the point, not the base config, named that file.
      const problem = error.message.startsWith(`${baseShown}: `) ? error.message.slice(baseShown.length + 2) : error.message;
      failures.push(`${pointWhere(point, expanded.points.length)}: ${problem}`);
    }
  }
  if (failures.length > 0) throw invalidPointsError(file, failures);
  return { traces, read: [...read.values()] };
}

/** The input error `check` throws (it reads a trace, say), or null; any other error is thrown on. */
function inputProblem(check: () => unknown): Error | null {
  try {
    check();
    return null;
  } catch (error) {
    if (isInputError(error)) return error;
    throw error;
  }
}

/** A sweep's charts; two varied parameters that would give one chart file name are refused, naming `where` (the file they come from). */
function chartsOf(document: Pick<SweepDocument, 'parameters' | 'values' | 'metrics'>, where: string): SweepChart[] {
  try {
    return sweepCharts(document);
  } catch (error) {
    if (error instanceof SweepError) throw new SweepError(`${where}: ${error.message}`);
    throw error;
  }
}

interface Prepared {
  expanded: ExpandedSweep;
  tasks: PointTask[];
  document: Omit<SweepDocument, 'points'>;
  charts: SweepChart[];
  /** Every file the sweep reads: the sweep file, the base config, every trace and table of a point. */
  inputs: InputFile[];
  /** The capacity search, if the sweep file has one: what it asks and its section of sweep.json (no values yet). */
  search?: { spec: SearchSpec; section: SearchSection };
}

/**
 * Reads and checks the sweep file's search (before any point is expanded); its goodput limits
 * become every point's slo, set into the base config's parsed YAML (so the points and the sweep
 * digest carry them).
 */
function prepareSearch(raw: unknown, grid: Record<string, ParameterValue[]>, baseRaw: unknown, baseText: string, file: string): { spec: SearchSpec; section: SearchSection } {
  const base = baseRaw !== null && typeof baseRaw === 'object' && !Array.isArray(baseRaw) ? (baseRaw as Record<string, unknown>) : null;
  const spec = resolveSearch(raw, { grid, baseHasSlo: base !== null && base.slo !== undefined && base.slo !== null }, file);
  if (spec.slo !== null && base !== null) base.slo = { ...spec.slo };
  return { spec, section: { spec: raw as Record<string, unknown>, base_config: baseText, values: {} } };
}

/** Reads and checks everything a sweep needs: the sweep file, the base config, every point, every table and trace, the charts. */
function prepareSweep(file: string, options: SweepOptions, io: CliIo): Prepared {
  const sweepPath = path.resolve(io.cwd, file);
  const sweep = parseSweepFile(readTextFile(sweepPath, file, LIMITS.config_bytes, 'sweep file'), file);
  const baseShown = path.isAbsolute(sweep.base) ? sweep.base : path.join(path.dirname(file), sweep.base);
  const basePath = path.resolve(configFolderOf(io.cwd, file), sweep.base);
  let baseText: string;
  try {
    baseText = readTextFile(basePath, baseShown, LIMITS.config_bytes, 'config');
  } catch (error) {
    if (error instanceof InputFileError) throw new SweepError(`${file}: base: ${error.message}`);
    throw error;
  }
  parseReplayConfig(baseText, baseShown); // the base alone first: its own errors name its own fields
  const baseRaw: unknown = parseDocument(baseText, { uniqueKeys: true }).toJS({ maxAliasCount: 100 });
  const search = sweep.search === undefined ? undefined : prepareSearch(sweep.search, sweep.grid, baseRaw, baseText, file);
  const expanded = expandSweep(sweep, baseRaw, file);
  const shard = options.shard === undefined ? undefined : parseShard(options.shard);
  const { traces, read } = readPointFiles(expanded, file, baseShown, options.traceRoot, io); // before the digest: a point's tables are part of its config
  const tasks: PointTask[] = expanded.points
    .filter((point) => shard === undefined || shardOfPoint(point.index, shard.count) === shard.index)
    .map((point) => ({ index: point.index, config: point.config, trace: traces.get(point.index)!, configFile: baseShown, ...(search ? { searchMetrics: searchMetricKeys(search.spec) } : {}) }));
  const document: Omit<SweepDocument, 'points'> = {
    format: SWEEP_FORMAT,
    sweep_digest: sweepDigest(expanded),
    base: sweep.base,
    parameters: expanded.parameters,
    values: expanded.values,
    metrics: [...METRICS],
    points_total: expanded.points.length,
    ...(shard ? { shard } : {}),
  };
  const inputs = [{ absolute: sweepPath, what: 'sweep file' }, { absolute: basePath, what: 'base config' }, ...read];
  return { expanded, tasks, document, charts: chartsOf(document, file), inputs, ...(search ? { search } : {}) };
}

/** Progress on standard error: a bar redrawn in place on a terminal, else one line per point. */
function progressReporter(io: CliIo, total: number, labels: Map<number, string>, wallMs: () => number): { done: (outcome: PointOutcome, done: number) => void; stop: () => void } {
  const started = wallMs();
  if (io.stderrIsTty) {
    // Loaded only for a terminal: a piped sweep never draws a bar.
    const { Presets, SingleBar } = require('cli-progress') as typeof import('cli-progress');
    const bar = new SingleBar({ stream: process.stderr, format: 'sweep [{bar}] {value}/{total} points | {duration_formatted} elapsed | ETA {eta_formatted}', barsize: 24, hideCursor: false, linewrap: true }, Presets.shades_classic);
    bar.start(total, 0);
    return { done: (_outcome, done) => bar.update(done), stop: () => bar.stop() };
  }
  return {
    done: (outcome, done) => {
      const elapsed = (wallMs() - started) / 1000;
      const eta = done < total ? `, ETA ${((elapsed / done) * (total - done)).toFixed(1)} s` : '';
      io.stderr(`sweep: ${done}/${total} points (${elapsed.toFixed(1)} s${eta}); point ${outcome.index} (${labels.get(outcome.index)}) ${outcome.clean ? 'clean' : `NOT CLEAN: ${outcome.problem}`}, ${outcome.wall_ms} ms\n`);
    },
    stop: () => undefined,
  };
}

/**
 * Writes a whole sweep's outputs (JSON, CSV, charts, HTML) into `out`, all renamed into place at
 * the end, and removes the charts an earlier sweep with other parameters left there (they would
 * read as this sweep's). No output, nor any removed chart, may be one of `inputs`.
 */
async function writeWholeSweep(document: SweepDocument, out: string, io: CliIo, inputs: readonly InputFile[], points: readonly SearchPoint[], source: string): Promise<SearchAnswer | null> {
  const charts = sweepCharts(document);
  const svgs: string[] = [];
  for (const chart of charts) svgs.push(await renderChart(document, chart));
  const searched = document.search ? await searchOutputs(document, points, source) : null;
  const texts = [sweepJsonText(document), sweepCsv(document), sweepHtml(document, charts, searched ? searchHtml(searched.answer, document.points.length, document.points_total) : ''), ...svgs];
  const folder = prepareFolder(out, io.cwd, true);
  const files = wholeSweepFiles(charts);
  // A search with no winner writes no winner.yaml, and a sweep with no search none of the search's
  // files: those an earlier search left there are removed (they would read as this sweep's answer).
  const searchFiles = searched ? SEARCH_FILES.filter((file) => file !== 'winner.yaml' || searched.winner !== null) : [];
  const staleSearch = SEARCH_FILES.filter((file) => !searchFiles.includes(file) && fs.existsSync(path.join(folder, file)));
  const removed = [...staleCharts(folder, charts), ...staleSearch];
  const written = [...files, ...searchFiles];
  const planned = planOutputs([...written, ...removed].map((file) => ({ option: '--out', file: path.join(folder, file) })), io.cwd, inputs);
  const searchTexts = searched ? searchFiles.map((file) => searched.texts[file]) : [];
  writeOutputs(planned.slice(0, written.length).map((output, i) => ({ output, text: [...texts, ...searchTexts][i] })));
  for (const file of removed) fs.rmSync(path.join(folder, file));
  return searched?.answer ?? null;
}

/**
 * The search's answer from a whole sweep's document (its points' values in its search section:
 * the same whether the points ran here, a round at a time, or in shards) and its files' texts.
 */
async function searchOutputs(document: SweepDocument, points: readonly SearchPoint[], source: string): Promise<{ answer: SearchAnswer; winner: string | null; texts: Record<string, string> }> {
  const section = document.search!;
  const spec = resolveSearch(section.spec, { grid: document.values, baseHasSlo: true }, source);
  const answer = await runSearch(points, spec, documentResults(document.points, section));
  const frontLimit = spec.constraints.find((c) => c.metric.key === spec.front.key)?.limit ?? null;
  const winner = answer.winner === null ? null : winnerConfigText(section.base_config, answer, spec.slo, winnerNote(answer, document.base));
  return { answer, winner, texts: { 'search.json': searchJsonText(answer), 'winner.yaml': winner ?? '', 'pareto.svg': await renderPareto(answer, frontLimit) } };
}

function winnerNote(answer: SearchAnswer, base: string): string {
  const seeds = answer.winner!.points.length > 1 ? ` on each of its ${answer.winner!.points.length} seeds` : '';
  return [
    `The winner of a capacity search (kvqual sweep): ${questionText(answer)}.`,
    `It is the base config ${base} with ${pointLabel(Object.entries(answer.winner!.parameters))}${answer.winner!.points.length > 1 ? '' : ''}; it met every constraint${seeds}.`,
    `Paths in it are relative to the base config's folder (${base}, as the sweep file names it): replay it from there.`,
  ].join('\n');
}

/** A sweep's points as the search sees them: index and parameters in sweep order. */
function searchPointsOf(document: Pick<SweepDocument, 'parameters' | 'points'>): SearchPoint[] {
  return document.points.map((point) => ({ index: point.index, parameters: document.parameters.map((path): [string, ParameterValue] => [path, point.parameters[path]]) }));
}

/**
 * Runs a search's points on one pool a round at a time (each round the candidates the search asks
 * for, all seeds of each), then returns every outcome run, in index order.
 */
async function searchRounds(prepared: Prepared, jobs: number, io: CliIo, labels: Map<number, string>, wallMs: () => number, notice: (notice: WorkerNotice) => void): Promise<SearchedOutcome[]> {
  const byIndex = new Map(prepared.tasks.map((task) => [task.index, task]));
  const outcomes = new Map<number, SearchedOutcome>();
  // One pool for every round: its workers start once and keep the traces they parsed.
  const pool = new SweepPool(jobs, wallMs);
  let round = 0;
  const evaluate = async (indices: readonly number[]) => {
    round++;
    io.stderr(`search: round ${round}: ${indices.length} point(s) (${indices.map((index) => labels.get(index)).join('; ')})\n`);
    const progress = progressReporter(io, indices.length, labels, wallMs);
    try {
      for (const outcome of await pool.run(indices.map((index) => byIndex.get(index)!), progress.done, notice)) outcomes.set(outcome.index, outcome);
    } finally {
      progress.stop();
    }
    return new Map(indices.map((index): [number, PointResult] => [index, { clean: outcomes.get(index)!.clean, values: outcomes.get(index)!.search_values ?? {} }]));
  };
  try {
    await runSearch(prepared.expanded.points, prepared.search!.spec, evaluate);
  } finally {
    pool.close();
  }
  return [...outcomes.values()].sort((a, b) => a.index - b.index);
}

/** The search section with the values of the points run, after the points (the field's place in every sweep.json). */
function withSearchValues(document: SweepDocument, section: SearchSection | undefined, outcomes: readonly SearchedOutcome[]): SweepDocument {
  if (section === undefined) return document;
  const values = Object.fromEntries(outcomes.map((outcome) => [String(outcome.index), outcome.search_values ?? {}]));
  return { ...document, search: { ...section, values } };
}

/** The file a shard's results go to, in --out. */
function shardFile(shard: { index: number; count: number }): string {
  return `shard-${shard.index}-of-${shard.count}.json`;
}

function summaryLine(document: SweepDocument, seconds: number, written: string): string {
  const unclean = document.points.filter((point) => !point.clean);
  const problems = unclean.slice(0, 5).map((point) => `\n  point ${point.index} NOT CLEAN: ${point.problem}`).join('');
  // A search runs only the points it needs: say of how many, where it left some out.
  const of = document.search && !document.shard && document.points.length < document.points_total ? ` (of ${document.points_total}: the search needed no more)` : '';
  return `sweep: ${document.points.length} point(s)${of} in ${seconds.toFixed(1)} s, ${runsText(document.points)}; ${written}${problems}\n`;
}

export async function sweepFile(file: string, options: SweepOptions, io: CliIo): Promise<ExitCode> {
  let prepared: Prepared;
  let jobs: number;
  try {
    jobs = parseJobs(options.jobs);
    checkOutName(options.out);
    prepared = prepareSweep(file, options, io);
    const { document, charts, inputs } = prepared;
    if (document.shard) checkOutputs(options.out, [shardFile(document.shard)], null, inputs, io.cwd);
    else checkOutputs(options.out, [...wholeSweepFiles(charts), ...SEARCH_FILES], charts, inputs, io.cwd);
  } catch (error) {
    if (error instanceof SweepError || error instanceof UsageError || isInputError(error)) {
      io.stderr(`kvqual sweep: ${(error as Error).message.split('\n').join(' ')}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  const { tasks, expanded, document: header, inputs } = prepared;
  const labels = new Map(expanded.points.map((point) => [point.index, pointLabel(point.parameters)]));
  const wallMs = io.wallMs ?? (() => 0);
  const started = wallMs();
  let outcomes: SearchedOutcome[];
  // A search runs its points a round at a time (each round with its own progress); a sharded one runs every point of its shard.
  const searching = prepared.search !== undefined && header.shard === undefined;
  const progress = searching ? { done: () => undefined, stop: () => undefined } : progressReporter(io, tasks.length, labels, wallMs);
  try {
    const notice = ({ index, notice }: WorkerNotice) => io.stderr(`kvqual sweep: warning: point ${index} (${labels.get(index)}): ${spinText(notice)}\n`);
    outcomes = searching ? await searchRounds(prepared, jobs, io, labels, wallMs, notice) : await runPoints(tasks, jobs, progress.done, wallMs, notice);
  } catch (error) {
    progress.stop();
    if (error instanceof PointFailure && error.killed) {
      io.stderr(`kvqual sweep: ${error.message}\n`);
      return ExitCode.internal;
    }
    if (error instanceof PointFailure && !error.internal) {
      io.stderr(`kvqual sweep: ${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  progress.stop();
  const byIndex = new Map(expanded.points.map((point) => [point.index, point]));
  const document: SweepDocument = withSearchValues({
    ...header,
    points: outcomes.map((outcome) => ({
      index: outcome.index,
      parameters: Object.fromEntries(byIndex.get(outcome.index)!.parameters),
      clean: outcome.clean,
      problem: outcome.problem,
      metrics: outcome.metrics,
      digest: outcome.digest,
      wall_ms: outcome.wall_ms,
    })),
  }, prepared.search?.section, outcomes);
  let answer: SearchAnswer | null = null;
  try {
    let written: string;
    if (document.shard) {
      const name = path.join(options.out, shardFile(document.shard));
      prepareFolder(options.out, io.cwd, false);
      const [output] = planOutputs([{ option: '--out', file: name }], io.cwd, inputs);
      writeOutputs([{ output, text: sweepJsonText(document) }]);
      written = `shard ${document.shard.index}/${document.shard.count} of ${document.points_total} points written to ${name}`;
    } else {
      answer = await writeWholeSweep(document, options.out, io, inputs, expanded.points, file);
      written = `written to ${options.out}/ (sweep.json, sweep.csv, sweep.html, charts/${answer ? `, ${SEARCH_FILES.filter((f) => f !== 'winner.yaml' || answer!.winner !== null).join(', ')}` : ''})`;
    }
    io.stdout(summaryLine(document, (wallMs() - started) / 1000, written));
    if (answer) io.stdout(searchText(answer, answer.winner ? path.join(options.out, 'winner.yaml') : null));
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    io.stderr(`kvqual sweep: ${error.message}\n`);
    return ExitCode.usage;
  }
  return document.points.every((point) => point.clean) && answer?.winner !== null ? ExitCode.clean : ExitCode.violation;
}

export async function mergeFiles(files: readonly string[], options: { out: string }, io: CliIo): Promise<ExitCode> {
  try {
    checkOutName(options.out);
    const shards = files.map((file) => ({ file, document: parseSweepDocument(readTextFile(path.resolve(io.cwd, file), file, 1 << 30, 'shard result'), file) }));
    const { search: _firstSearch, ...pooled } = mergeShards(shards);
    const section = mergeSearchSections(shards.map(({ file, document }) => ({ file, search: document.search })));
    const merged: SweepDocument = section ? { ...pooled, search: section } : pooled;
    const charts = chartsOf(merged, shards[0].file);
    const inputs = files.map((file) => ({ absolute: path.resolve(io.cwd, file), what: 'shard result' }));
    checkOutputs(options.out, [...wholeSweepFiles(charts), ...SEARCH_FILES], charts, inputs, io.cwd);
    const answer = await writeWholeSweep(merged, options.out, io, inputs, searchPointsOf(merged), shards[0].file);
    io.stdout(`sweep merge: ${shards.length} shard(s), ${merged.points.length} point(s), ${merged.points.filter((p) => !p.clean).length} not clean; written to ${options.out}/ (sweep.json, sweep.csv, sweep.html, charts/${answer ? ', search.json, pareto.svg' + (answer.winner ? ', winner.yaml' : '') : ''})\n`);
    if (answer) io.stdout(searchText(answer, answer.winner ? path.join(options.out, 'winner.yaml') : null));
    return merged.points.every((point) => point.clean) && answer?.winner !== null ? ExitCode.clean : ExitCode.violation;
  } catch (error) {
    if (error instanceof SweepError || error instanceof OutputError || error instanceof UsageError || isInputError(error)) {
      io.stderr(`kvqual sweep merge: ${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
}
