// A fuzz campaign: N generated cases through fast-check (fixed seed), every invariant checked
// after each, the first failure shrunk. Returns what ran and, on a failure, the shrunk case with
// its `{ seed, path }` and violations — for `npm run fuzz` and for the sign-off's gate. Also
// what a `--path` may be (checkFuzzPath) and the refusal of one that names no case (FuzzPathError).
import fc from 'fast-check';
import { fuzzCaseArbitrary, type DefectArea, type FuzzCase } from './generate';
import { runCase } from './runCase';
import { INVARIANTS, type InvariantName, type Violation } from './invariants';

export interface CampaignOptions {
  runs: number;
  seed: number;
  /** Replay only the counterexample at this fast-check path. */
  path?: string;
  exclude: readonly DefectArea[];
  /** Fail only on these invariants (default: all). */
  only?: readonly InvariantName[];
  /** Told after every case run (shrinking included), e.g. for progress. */
  onCase?: (executed: number, violations: readonly Violation[]) => void;
  /** Told of each case too heavy to check before the first failure (before onCase for that case). */
  onTooHeavy?: (heavy: TooHeavyCase) => void;
  /** KV events past which a case is too heavy to check (default MAX_CHECKED_KV_EVENTS; tests set less). */
  max_checked_events?: number;
  /** The test double's planted defect (src/fuzz/planted.ts): a counterexample even when the simulator keeps every invariant. */
  planted_defect?: boolean;
}

/** A `--path` that is malformed, out of its bound or names no generated case; the message is complete. */
export class FuzzPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FuzzPathError';
  }
}

/**
 * The greatest part of a path: a case index (fast-check reaches case N only by generating the N
 * before it, about 0.3 µs each) or a shrink's index. No campaign runs a million cases (10,000 take
 * under a minute to an hour), nor does any shrink step offer a million smaller cases.
 */
export const MAX_FUZZ_PATH_PART = 1_000_000;

/**
 * Checks a fast-check path before a campaign runs it: whole numbers separated by colons, none
 * empty, each at most MAX_FUZZ_PATH_PART (fast-check would read "abc" as NaN and throw, "0:" as
 * "0:0", and walk 10^20 cases for a long number). Throws FuzzPathError naming the part.
 */
export function checkFuzzPath(path: string): void {
  const parts = path.split(':');
  parts.forEach((part, i) => {
    const where = parts.length === 1 ? '' : ` (part ${i + 1})`;
    if (part === '') throw new FuzzPathError(`--path ${path}: a part is empty${where}; expected whole numbers separated by colons, e.g. 22:0:3`);
    if (!/^\d+$/.test(part)) throw new FuzzPathError(`--path ${path}: "${part}"${where} is not a whole number; expected whole numbers separated by colons, e.g. 22:0:3`);
    if (part.length > 7 || Number(part) > MAX_FUZZ_PATH_PART) throw new FuzzPathError(`--path ${path}: ${part}${where} is beyond the limit of ${MAX_FUZZ_PATH_PART.toLocaleString('en-US')} (no campaign or shrink reaches it)`);
  });
}

export interface Counterexample {
  seed: number;
  path: string;
  /** Which generated case (1-based) failed first, before shrinking. */
  case_number: number;
  shrinks: number;
  fuzz_case: FuzzCase;
  violations: Violation[];
}

/** A generated case that ran but was too heavy to check (see TooHeavyToCheck): which one, and why. */
export interface TooHeavyCase {
  /** Which generated case it was (1-based, as Counterexample.case_number). */
  case_number: number;
  /** fast-check's path of the case with the campaign's seed (`npm run fuzz -- --seed S --path P` runs it alone); null when the campaign itself ran from a path. */
  path: string | null;
  /** Why it was too heavy (the message of its TooHeavyToCheck). */
  reason: string;
}

/** How many too-heavy cases a campaign names (it counts them all). */
export const NAMED_TOO_HEAVY_CASES = 10;

export interface CampaignResult {
  runs: number;
  seed: number;
  excluded_areas: DefectArea[];
  only: InvariantName[];
  /** The test double's planted defect was active (a counterexample then proves the gate, not a defect); absent in results written before it existed. */
  planted_defect?: boolean;
  /** Cases that passed before the first failure (all of them when none failed), the too heavy ones included. */
  passed: number;
  /** Of those, the cases too heavy to check (more KV events than a checked run keeps): not checked. */
  too_heavy: number;
  /** The first NAMED_TOO_HEAVY_CASES of them, in the order they ran; absent in results written before it existed. */
  too_heavy_cases?: TooHeavyCase[];
  counterexample: Counterexample | null;
}

function noCaseAt(options: CampaignOptions): FuzzPathError {
  return new FuzzPathError(`--path ${options.path}: names no generated case with seed ${options.seed} (a shrink step it names does not exist); nothing was checked`);
}

export function runFuzzCampaign(options: CampaignOptions): CampaignResult {
  const only = new Set<InvariantName>(options.only ?? INVARIANTS);
  const broken = (violations: readonly Violation[]) => violations.filter((violation) => only.has(violation.invariant));
  const checks = { max_checked_events: options.max_checked_events, planted_defect: options.planted_defect };
  let executed = 0;
  let tooHeavy = 0;
  const named: TooHeavyCase[] = [];
  // Once a case has failed, the cases that follow are its shrinks: not cases of the campaign.
  let failed = false;
  const property = fc.property(fuzzCaseArbitrary({ exclude: options.exclude }), (fuzzCase) => {
    executed++;
    const verdict = runCase(fuzzCase, checks);
    if (verdict.too_heavy && !failed) {
      tooHeavy++;
      const heavy: TooHeavyCase = { case_number: executed, path: options.path === undefined ? String(executed - 1) : null, reason: verdict.first.error?.message ?? 'too heavy to check' };
      if (named.length < NAMED_TOO_HEAVY_CASES) named.push(heavy);
      options.onTooHeavy?.(heavy);
    }
    const violations = broken(verdict.violations);
    if (violations.length > 0) failed = true;
    options.onCase?.(executed, violations);
    return violations.length === 0;
  });
  if (options.path !== undefined) checkFuzzPath(options.path);
  let result: fc.RunDetails<[FuzzCase]>;
  try {
    result = fc.check(property, { numRuns: options.runs, seed: options.seed, path: options.path });
  } catch (error) {
    // fast-check's path walk throws when a shrink step the path names does not exist.
    if (options.path !== undefined && /Unable to replay/.test((error as Error).message)) throw noCaseAt(options);
    throw error;
  }
  if (options.path !== undefined && result.numRuns === 0 && !result.failed) throw noCaseAt(options);
  const base = { runs: options.runs, seed: options.seed, excluded_areas: [...options.exclude], only: [...only], planted_defect: options.planted_defect === true };
  if (!result.failed) return { ...base, passed: result.numRuns, too_heavy: tooHeavy, too_heavy_cases: named, counterexample: null };
  if (result.counterexample === null) throw new Error(`fast-check failed without a counterexample: ${String(result.errorInstance)}`);
  const fuzzCase = result.counterexample[0];
  let violations: Violation[];
  try {
    violations = broken(runCase(fuzzCase, checks).violations);
  } catch (error) {
    // A generated config the loader rejects is a generator bug: report it as such.
    violations = [{ invariant: 'run-completed', message: `the generated case could not run: ${(error as Error).message}` }];
  }
  return {
    ...base,
    passed: result.numRuns - 1,
    too_heavy: tooHeavy,
    too_heavy_cases: named,
    counterexample: { seed: result.seed, path: result.counterexamplePath ?? '', case_number: result.numRuns, shrinks: result.numShrinks, fuzz_case: fuzzCase, violations },
  };
}
