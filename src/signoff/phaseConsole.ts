// What a qualification prints on the console: each phase when it starts and its time when it ends,
// and the verdict with each gate.
import { SignoffModel } from './model';
import { NARROWED_VERDICT } from './narrowed';
import { seconds } from './context';
import type { DriverContext } from './context';
import type { Measured } from './coverageRun';

/** Prints each phase as it starts and its time when it ends ("[2/5] done in 3.1 s"). */
export function phaseRunner(ctx: DriverContext, phases: string[]): <T>(fn: () => T | Promise<T>) => Promise<T> {
  let index = 0;
  return async <T>(fn: () => T | Promise<T>): Promise<T> => {
    const title = phases[index++];
    ctx.write(`\n── [${index}/${phases.length}] ${title} ──\n`);
    const t0 = ctx.now();
    const value = await fn();
    ctx.write(`   [${index}/${phases.length}] done in ${seconds(ctx.now() - t0)}\n`);
    return value;
  };
}

/**
 * Phases that may overlap: each is printed with its own number when it starts and with its time
 * when it ends, whatever else runs meanwhile.
 */
export function numberedPhases(ctx: DriverContext, phases: string[]): <T>(index: number, fn: () => T | Promise<T>) => Promise<T> {
  return async <T>(index: number, fn: () => T | Promise<T>): Promise<T> => {
    ctx.write(`\n── [${index + 1}/${phases.length}] ${phases[index]} ──\n`);
    const t0 = ctx.now();
    const value = await fn();
    ctx.write(`   [${index + 1}/${phases.length}] done in ${seconds(ctx.now() - t0)}\n`);
    return value;
  };
}


export function reportVerdict(ctx: DriverContext, model: SignoffModel, measured: Measured | null): void {
  ctx.write(`\n── verdict: ${model.verdict} ──\n`);
  for (const gate of model.gates) ctx.write(`${gate.passed ? 'pass' : 'FAIL'}  ${gate.title}: ${gate.summary}\n`);
  if (model.verdict === NARROWED_VERDICT) for (const reason of model.narrowed) ctx.write(`not a release sign-off: ${reason}\n`);
  if (measured !== null && measured.run.failures.length > 0) {
    ctx.write('\nFailed in the compiled coverage run:\n');
    for (const failure of measured.run.failures) ctx.write(`  ✗ ${failure.kind} "${failure.name}" (${failure.where})${failure.why ? `: ${failure.why}` : ''}\n`);
  }
}

