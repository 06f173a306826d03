// The benchmark harness: a warm-up pass, then timed repeats, and one line per figure with its
// median rate, its target and whether it met it; every figure of every benchmark as a TargetFigure
// (value, target, which way is better), what `npm run bench -- --check` makes of them (exit 1
// when a target is missed), and the command line's arguments and benchmark names (a bad one is a
// BenchUsageError: one line, exit 2). Benchmarks live outside src/ and may read the wall clock; nothing here
// is asserted by npm test, the figures are printed for people to read (the pure parts are unit-tested).
import fs from 'node:fs';

/** One timed pass: how many units of work it did and how long the measured part took. */
export interface PassResult {
  count: number;
  elapsedSeconds: number;
}

export interface Benchmark {
  /** Short name used on the command line: `npm run bench -- kernel`. */
  name: string;
  /** What one unit of work is, plural: "events", "placements". */
  unit: string;
  /** The rate to reach, in units per second. */
  targetPerSecond: number;
  /** Runs one pass with fresh state; only the measured part counts in `elapsedSeconds`. */
  runPass(): PassResult;
  /** More figures of the last pass, printed under the main line. */
  details?(): string;
  /** Targets beside the rate (read after details): e.g. the peak memory of one run, its digest beside the record. */
  targets?(): BenchFigure[];
}

export interface Figure {
  name: string;
  unit: string;
  targetPerSecond: number;
  ratesPerSecond: number[];
  medianPerSecond: number;
  met: boolean;
}

const WARM_UP_PASSES = 1;
const TIMED_PASSES = 3;

/** Monotonic wall-clock seconds, for measuring only. */
export function wallSeconds(): number {
  return Number(process.hrtime.bigint()) / 1e9;
}

/** Times `work`, which returns how many units it did. */
export function timePass(work: () => number): PassResult {
  const startSeconds = wallSeconds();
  const count = work();
  return { count, elapsedSeconds: wallSeconds() - startSeconds };
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function rateOf(pass: PassResult): number {
  return pass.count / pass.elapsedSeconds;
}

/** Runs the warm-up passes (discarded), then the timed passes, and returns the figure. */
export function measure(benchmark: Benchmark): Figure {
  for (let i = 0; i < WARM_UP_PASSES; i++) benchmark.runPass();
  const ratesPerSecond: number[] = [];
  for (let i = 0; i < TIMED_PASSES; i++) ratesPerSecond.push(rateOf(benchmark.runPass()));
  const medianPerSecond = median(ratesPerSecond);
  return {
    name: benchmark.name,
    unit: benchmark.unit,
    targetPerSecond: benchmark.targetPerSecond,
    ratesPerSecond,
    medianPerSecond,
    met: medianPerSecond >= benchmark.targetPerSecond,
  };
}

function grouped(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** "kernel: 3,456,789 events/s (median of 3: …), target ≥ 2,000,000 events/s: met" */
export function describeFigure(figure: Figure): string {
  const unitRate = `${figure.unit}/s`;
  const runs = figure.ratesPerSecond.map(grouped).join(', ');
  const verdict = figure.met ? 'met' : 'MISSED';
  return (
    `${figure.name}: ${grouped(figure.medianPerSecond)} ${unitRate} ` +
    `(median of ${figure.ratesPerSecond.length} after ${WARM_UP_PASSES} warm-up: ${runs}), ` +
    `target ≥ ${grouped(figure.targetPerSecond)} ${unitRate}: ${verdict}`
  );
}

/** One figure of a benchmark with its target: `value` must be ≥ (or ≤) `target`. */
export interface TargetFigure {
  /** The benchmark that measured it: "trace". */
  benchmark: string;
  /** What was measured, in words: "simulated requests per wall second". */
  label: string;
  /** The measured value; NaN when it could not be measured (a missed target). */
  value: number;
  /** The unit after the number ("requests/s", "MB", "s", "×"); empty for none. */
  unit: string;
  target: number;
  /** higher: the value must be at least the target; lower: at most. */
  better: 'higher' | 'lower';
  /** Decimals printed (0 by default). */
  decimals?: number;
}

/**
 * A long run's report digest beside the one recorded for it (test/fixtures/golden-digests.json,
 * `long_runs`; see bench/longRuns.ts): a benchmark whose simulator gives other results than the
 * recorded ones is not measuring the same work, so a moved or unrecorded digest counts as missed.
 */
export interface DigestFigure {
  kind: 'digest';
  benchmark: string;
  /** The long run's name in the record. */
  run: string;
  digest: string;
  /** The recorded digest; null when none is recorded for this run. */
  recorded: string | null;
}

/** What a benchmark prints and --check judges: a figure with a target, or a digest with its record. */
export type BenchFigure = TargetFigure | DigestFigure;

function isDigest(figure: BenchFigure): figure is DigestFigure {
  return 'kind' in figure && figure.kind === 'digest';
}

/** Whether a figure meets its target (a value that could not be measured never does; a digest must be the recorded one). */
export function targetMet(figure: BenchFigure): boolean {
  if (isDigest(figure)) return figure.recorded === figure.digest;
  if (!Number.isFinite(figure.value)) return false;
  return figure.better === 'higher' ? figure.value >= figure.target : figure.value <= figure.target;
}

function number(value: number, decimals = 0): string {
  return Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals }) : 'not measured';
}

/**
 * "trace: simulated requests per wall second 1,025 requests/s (target ≥ 7,700 requests/s): MISSED";
 * "trace: report digest of whole conversation trace, 16 workers sha256:bec8e69594d6…: as recorded".
 */
export function describeTarget(figure: BenchFigure): string {
  if (isDigest(figure)) return describeDigest(figure);
  const unit = figure.unit ? ` ${figure.unit}` : '';
  const sign = figure.better === 'higher' ? '≥' : '≤';
  return `${figure.benchmark}: ${figure.label} ${number(figure.value, figure.decimals)}${Number.isFinite(figure.value) ? unit : ''} (target ${sign} ${number(figure.target, figure.decimals)}${unit}): ${targetMet(figure) ? 'met' : 'MISSED'}`;
}

const shortDigest = (digest: string) => `${digest.slice(0, 19)}…`;

function describeDigest(figure: DigestFigure): string {
  const head = `${figure.benchmark}: report digest of ${figure.run} ${shortDigest(figure.digest)}`;
  if (figure.recorded === figure.digest) return `${head}: as recorded`;
  if (figure.recorded === null) return `${head}: NOT RECORDED (npm run golden -- --long --write records it)`;
  return `${head}: MOVED from the recorded ${shortDigest(figure.recorded)} (different results: the figures measure other work; npm run golden -- --long)`;
}

/** A harness figure (a median rate) as a TargetFigure. */
export function rateTarget(figure: Figure): TargetFigure {
  return { benchmark: figure.name, label: `${figure.unit} per second (median)`, value: figure.medianPerSecond, unit: `${figure.unit}/s`, target: figure.targetPerSecond, better: 'higher' };
}

/** `npm run bench -- [name …] [--check] [--write]`: the benchmarks named (none: the default set), whether to check, whether to write the results file. */
export interface BenchArgs {
  names: string[];
  check: boolean;
  write: boolean;
}

/** A bad `npm run bench` argument (an unknown option or benchmark): one line on stderr, exit 2. */
export class BenchUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchUsageError';
  }
}

export const BENCH_USAGE_EXIT = 2;

const BENCH_OPTIONS = ['--check', '--write'];

export function parseBenchArgs(args: readonly string[]): BenchArgs {
  const unknown = args.filter((arg) => arg.startsWith('-') && !BENCH_OPTIONS.includes(arg));
  if (unknown.length > 0) throw new BenchUsageError(`unknown option ${unknown.join(', ')}; usage: npm run bench -- [name …] [--check] [--write]`);
  return { names: args.filter((arg) => !BENCH_OPTIONS.includes(arg)), check: args.includes('--check'), write: args.includes('--write') };
}

/**
 * The benchmarks to run: those named, or the default set when none is. A name must be one of
 * `known`'s own (a Map: "toString" or "constructor" is no benchmark); throws BenchUsageError.
 */
export function selectBenchmarks(names: readonly string[], defaults: readonly string[], known: ReadonlyMap<string, unknown>): string[] {
  const chosen = names.length === 0 ? [...defaults] : [...names];
  const unknown = chosen.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new BenchUsageError(`unknown benchmark ${unknown.join(', ')}; known: ${[...known.keys()].join(', ')}`);
  return chosen;
}

/**
 * What `--check` concludes from every figure printed: exit status 1 when any target was missed, 0
 * otherwise (and always 0 without --check), with one line naming each miss.
 */
export function checkOutcome(figures: readonly BenchFigure[], check: boolean): { status: 0 | 1; lines: string[] } {
  if (!check) return { status: 0, lines: [] };
  const missed = figures.filter((figure) => !targetMet(figure));
  if (missed.length === 0) return { status: 0, lines: [`bench --check: every target met (${figures.length} figure${figures.length === 1 ? '' : 's'})`] };
  return {
    status: 1,
    lines: [`bench --check: ${missed.length} of ${figures.length} target${figures.length === 1 ? '' : 's'} missed:`, ...missed.map((figure) => `  ${describeTarget(figure)}`)],
  };
}

/** The digest figures apart from the rest (for the results file's two tables). */
export function splitFigures(figures: readonly BenchFigure[]): { targets: TargetFigure[]; digests: DigestFigure[] } {
  return { targets: figures.filter((figure): figure is TargetFigure => !isDigest(figure)), digests: figures.filter(isDigest) };
}

/** A measured value as the results file prints it: grouped digits, the unit after it. */
export function describeValue(figure: TargetFigure, value = figure.value): string {
  return `${number(value, figure.decimals)}${Number.isFinite(value) && figure.unit ? ` ${figure.unit}` : ''}`;
}

/** CPU seconds (user + system) used by finished child processes so far (Linux /proc; null elsewhere). */
export function childCpuSeconds(): number | null {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /, '').split(' ');
    // After the command name: state is field 3, so cutime (16) and cstime (17) are at 13 and 14 here.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}
