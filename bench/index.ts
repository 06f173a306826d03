// `npm run bench [-- name …]`: runs the named benchmarks (all by default) and prints one figure
// each, with its target and whether it met it. Add a benchmark by adding it to BENCHMARKS.
import type { Benchmark } from './harness';
import { describeFigure, measure } from './harness';
import { kernelBenchmark } from './kernel';
import { routerBenchmark } from './router';
import { endToEndBenchmark } from './endToEnd';
import { runScaleBenchmark } from './scale';
import { runSweepBenchmark } from './sweep';

const BENCHMARKS: Record<string, () => Benchmark> = {
  kernel: kernelBenchmark,
  router: routerBenchmark,
  e2e: endToEndBenchmark,
};

/** Benchmarks that print their own figures (whole-trace runs in fresh processes, one pass each); run only when named. */
const RUNNERS: Record<string, () => void> = {
  scale: runScaleBenchmark,
  sweep: runSweepBenchmark,
};

function selectedNames(args: string[]): string[] {
  const names = args.length === 0 ? Object.keys(BENCHMARKS) : args;
  const unknown = names.filter((name) => !(name in BENCHMARKS) && !(name in RUNNERS));
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${[...Object.keys(BENCHMARKS), ...Object.keys(RUNNERS)].join(', ')}`);
  }
  return names;
}

function main(args: string[]): void {
  process.stdout.write(`node ${process.version}, ${process.platform} ${process.arch}\n`);
  for (const name of selectedNames(args)) {
    if (name in RUNNERS) {
      RUNNERS[name]();
      continue;
    }
    const benchmark = BENCHMARKS[name]();
    process.stdout.write(`${describeFigure(measure(benchmark))}\n`);
    if (benchmark.details) process.stdout.write(`  ${benchmark.details()}\n`);
  }
}

main(process.argv.slice(2));
