// The benchmark harness: a warm-up pass, then timed repeats, and one line per figure with its
// median rate, its target and whether it met it. Benchmarks live outside src/ and may read the
// wall clock; nothing here is asserted, the figures are printed for people to read.

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

function median(values: number[]): number {
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
