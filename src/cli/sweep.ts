// `kvqual sweep <sweep.yaml>`: runs every point of a sweep (a base replay config and the field
// paths it varies) on a pool of worker processes and writes sweep.json, sweep.csv, one SVG chart
// per metric and varied parameter under charts/, and sweep.html into --out. Every point is
// validated, and every trace checked, before anything runs or is created. `--shard i/n` runs only
// the points whose index modulo n is i − 1 and writes shard-<i>-of-<n>.json; `kvqual sweep merge
// <shard files…>` writes what the unsharded sweep writes (same bytes apart from wall times).
// Charts an earlier sweep left under charts/ that this one does not write are removed (only names
// a sweep writes). Exit status 0 when every point ran clean, 1 when a point's event stream was
// rejected or a request never ended (results still written), 2 for bad input.
// Progress: a bar on a terminal, plain lines otherwise (both on standard error). May read the clock.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import { parseDocument } from 'yaml';
import { parseReplayConfig } from '../config/load';
import { LIMITS } from '../limits';
import { InputFileError, readTextFile } from '../inputFiles';
import { expandSweep, parseShard, parseSweepFile, pointLabel, shardOfPoint, SweepError, sweepDigest, type ExpandedSweep } from '../sweep/spec';
import { mergeShards, METRICS, parseSweepDocument, sweepCsv, sweepJsonText, SWEEP_FORMAT, type PointOutcome, type SweepDocument } from '../sweep/results';
import { isSweepChartName, renderChart, sweepCharts, sweepHtml } from '../sweep/charts';
import type { CliIo } from './io';
import { ExitCode } from './io';
import { isInputError, loadTrace, spinText, traceOf } from './replay';
import { OutputError, planOutputs, writeOutputs } from './outputs';
import { defaultJobs, PointFailure, runPoints } from './sweepPool';
import { traceKey, type PointTask, type WorkerNotice } from './sweepWorker';

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
    .argument('<sweep>', 'the sweep file (YAML): base, grid, zip, seeds')
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

class UsageError extends Error {}

function parseJobs(text: string | undefined): number {
  if (text === undefined) return defaultJobs();
  const jobs = Number(text);
  if (!/^\d+$/.test(text) || jobs < 1 || jobs > 1024) throw new UsageError(`--jobs ${text}: expected a whole number of worker processes from 1 to 1024`);
  return jobs;
}

/** Makes a folder; one that exists already (or was made by another process meanwhile) is left as it is. */
function makeFolderUnlessThere(folder: string): void {
  try {
    fs.mkdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(folder).isDirectory()) throw error;
  }
}

/** Creates the output folder (its parent must exist) and charts/ in it. */
function prepareFolder(out: string, cwd: string, charts: boolean): string {
  const absolute = path.resolve(cwd, out);
  const parent = path.dirname(absolute);
  if (!fs.existsSync(parent)) throw new OutputError(`--out ${out}: the folder ${path.dirname(out) || '.'} does not exist; create it first`);
  if (fs.existsSync(absolute) && !fs.statSync(absolute).isDirectory()) throw new OutputError(`--out ${out}: exists and is not a folder`);
  try {
    // One level at a time (the parent exists): a recursive mkdir can spin on special file systems such as /proc.
    // Shards on other machines (or processes) may make the same folder at the same moment: one that appears meanwhile is fine.
    for (const folder of charts ? [absolute, path.join(absolute, 'charts')] : [absolute]) makeFolderUnlessThere(folder);
  } catch (error) {
    throw new OutputError(`--out ${out}: cannot create it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return absolute;
}

interface Prepared {
  expanded: ExpandedSweep;
  tasks: PointTask[];
  document: Omit<SweepDocument, 'points'>;
}

/** Reads and checks everything a sweep needs: the sweep file, the base config, every point, every trace. */
function prepareSweep(file: string, options: SweepOptions, io: CliIo): Prepared {
  const sweepPath = path.resolve(io.cwd, file);
  const sweep = parseSweepFile(readTextFile(sweepPath, file, LIMITS.config_bytes, 'sweep file'), file);
  const baseShown = path.isAbsolute(sweep.base) ? sweep.base : path.join(path.dirname(file), sweep.base);
  const basePath = path.resolve(path.dirname(sweepPath), sweep.base);
  let baseText: string;
  try {
    baseText = readTextFile(basePath, baseShown, LIMITS.config_bytes, 'config');
  } catch (error) {
    if (error instanceof InputFileError) throw new SweepError(`${file}: base: ${error.message}`);
    throw error;
  }
  parseReplayConfig(baseText, baseShown); // the base alone first: its own errors name its own fields
  const baseRaw: unknown = parseDocument(baseText, { uniqueKeys: true }).toJS({ maxAliasCount: 100 });
  const expanded = expandSweep(sweep, baseRaw, file);
  const shard = options.shard === undefined ? undefined : parseShard(options.shard);
  const checkedTraces = new Set<string>();
  const tasks: PointTask[] = [];
  for (const point of expanded.points) {
    const trace = traceOf(point.config, baseShown, options.traceRoot, io);
    if (trace) {
      const key = traceKey(point.config, trace);
      if (!checkedTraces.has(key)) loadTrace(point.config, baseShown, trace); // every trace line checked before anything runs
      checkedTraces.add(key);
    }
    if (shard === undefined || shardOfPoint(point.index, shard.count) === shard.index) tasks.push({ index: point.index, config: point.config, trace, configFile: baseShown });
  }
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
  return { expanded, tasks, document };
}

/** Progress on standard error: a bar redrawn in place on a terminal, else one line per point. */
function progressReporter(io: CliIo, total: number, labels: Map<number, string>, wallMs: () => number): { done: (outcome: PointOutcome, done: number) => void; stop: () => void } {
  const started = wallMs();
  if (io.stderrIsTty) {
    // Loaded only for a terminal: a piped sweep never draws a bar.
    const { Presets, SingleBar } = require('cli-progress') as typeof import('cli-progress');
    const bar = new SingleBar({ stream: process.stderr, format: 'sweep [{bar}] {value}/{total} points | {duration_formatted} elapsed | ETA {eta_formatted}', hideCursor: true }, Presets.shades_classic);
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

/** Writes a whole sweep's outputs (JSON, CSV, charts, HTML) into `out`, all renamed into place at the end. */
async function writeWholeSweep(document: SweepDocument, out: string, io: CliIo): Promise<string[]> {
  const folder = prepareFolder(out, io.cwd, true);
  const charts = sweepCharts(document);
  const svgs: string[] = [];
  for (const chart of charts) svgs.push(await renderChart(document, chart));
  const files = [
    { name: 'sweep.json', text: sweepJsonText(document) },
    { name: 'sweep.csv', text: sweepCsv(document) },
    { name: 'sweep.html', text: sweepHtml(document, charts) },
    ...charts.map((chart, i) => ({ name: path.join('charts', chart.file), text: svgs[i] })),
  ];
  const planned = planOutputs(files.map((f) => ({ option: '--out', file: path.join(folder, f.name) })), io.cwd, []);
  writeOutputs(planned.map((output, i) => ({ output, text: files[i].text })));
  // Charts an earlier sweep with other parameters wrote here would read as this sweep's: removed.
  // Only names a sweep writes (<metric>--<parameter>.svg of a known metric) are touched.
  const current = new Set(charts.map((chart) => chart.file));
  const chartsFolder = path.join(folder, 'charts');
  for (const name of fs.readdirSync(chartsFolder)) {
    if (current.has(name) || !isSweepChartName(name, METRICS) || !fs.lstatSync(path.join(chartsFolder, name)).isFile()) continue;
    fs.rmSync(path.join(chartsFolder, name));
  }
  return files.map((f) => path.join(out, f.name));
}

function summaryLine(document: SweepDocument, seconds: number, written: string): string {
  const unclean = document.points.filter((point) => !point.clean);
  const problems = unclean.slice(0, 5).map((point) => `\n  point ${point.index} NOT CLEAN: ${point.problem}`).join('');
  return `sweep: ${document.points.length} point(s) in ${seconds.toFixed(1)} s, ${unclean.length === 0 ? 'every run clean' : `${unclean.length} not clean`}; ${written}${problems}\n`;
}

export async function sweepFile(file: string, options: SweepOptions, io: CliIo): Promise<ExitCode> {
  let prepared: Prepared;
  let jobs: number;
  try {
    jobs = parseJobs(options.jobs);
    prepared = prepareSweep(file, options, io);
  } catch (error) {
    if (error instanceof SweepError || error instanceof UsageError || isInputError(error)) {
      io.stderr(`kvqual sweep: ${(error as Error).message.split('\n').join(' ')}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  const { tasks, expanded, document: header } = prepared;
  const labels = new Map(expanded.points.map((point) => [point.index, pointLabel(point.parameters)]));
  const wallMs = io.wallMs ?? (() => 0);
  const started = wallMs();
  let outcomes: PointOutcome[];
  try {
    prepareFolder(options.out, io.cwd, header.shard === undefined);
  } catch (error) {
    if (error instanceof OutputError) {
      io.stderr(`kvqual sweep: ${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  const progress = progressReporter(io, tasks.length, labels, wallMs);
  try {
    const notice = ({ index, notice }: WorkerNotice) => io.stderr(`kvqual sweep: warning: point ${index} (${labels.get(index)}): ${spinText(notice)}\n`);
    outcomes = await runPoints(tasks, jobs, progress.done, wallMs, notice);
  } catch (error) {
    progress.stop();
    if (error instanceof PointFailure && !error.internal) {
      io.stderr(`kvqual sweep: ${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  progress.stop();
  const byIndex = new Map(expanded.points.map((point) => [point.index, point]));
  const document: SweepDocument = {
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
  };
  try {
    let written: string;
    if (document.shard) {
      const name = `shard-${document.shard.index}-of-${document.shard.count}.json`;
      const [output] = planOutputs([{ option: '--out', file: path.join(options.out, name) }], io.cwd, []);
      writeOutputs([{ output, text: sweepJsonText(document) }]);
      written = `shard ${document.shard.index}/${document.shard.count} of ${document.points_total} points written to ${path.join(options.out, name)}`;
    } else {
      await writeWholeSweep(document, options.out, io);
      written = `written to ${options.out}/ (sweep.json, sweep.csv, sweep.html, charts/)`;
    }
    io.stdout(summaryLine(document, (wallMs() - started) / 1000, written));
  } catch (error) {
    if (!(error instanceof OutputError)) throw error;
    io.stderr(`kvqual sweep: ${error.message}\n`);
    return ExitCode.usage;
  }
  return document.points.every((point) => point.clean) ? ExitCode.clean : ExitCode.violation;
}

export async function mergeFiles(files: readonly string[], options: { out: string }, io: CliIo): Promise<ExitCode> {
  try {
    const shards = files.map((file) => ({ file, document: parseSweepDocument(readTextFile(path.resolve(io.cwd, file), file, 1 << 30, 'shard result'), file) }));
    const merged = mergeShards(shards);
    await writeWholeSweep(merged, options.out, io);
    io.stdout(`sweep merge: ${shards.length} shard(s), ${merged.points.length} point(s), ${merged.points.filter((p) => !p.clean).length} not clean; written to ${options.out}/ (sweep.json, sweep.csv, sweep.html, charts/)\n`);
    return merged.points.every((point) => point.clean) ? ExitCode.clean : ExitCode.violation;
  } catch (error) {
    if (error instanceof SweepError || error instanceof OutputError || isInputError(error)) {
      io.stderr(`kvqual sweep merge: ${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
}
