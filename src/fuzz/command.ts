// The command line that runs a generated case again: `npm run fuzz -- --seed S --path P`, with what
// else the campaign ran with (the test double's environment, the areas it left out, the invariants
// it watched). For the fuzzer's console and the sign-off, which print it for counterexamples and
// for cases too heavy to check.
import { plantedCommandPrefix } from './planted';

export interface CaseAt {
  seed: number;
  /** fast-check's path of the case (its index, for a case as found). */
  path: string;
  /** Run that case alone (`--runs 1`): fast-check otherwise runs a campaign's number of cases from the path. */
  alone?: boolean;
  exclude: readonly string[];
  /** The invariants the campaign failed on, when not all (`--only`). */
  only?: readonly string[];
  planted?: boolean;
}

export function fuzzCaseCommand(at: CaseAt): string {
  const runs = at.alone === true ? ' --runs 1' : '';
  const exclude = at.exclude.length > 0 ? ` --exclude ${at.exclude.join(',')}` : '';
  const only = at.only !== undefined && at.only.length > 0 ? ` --only ${at.only.join(',')}` : '';
  return `${plantedCommandPrefix(at.planted)}npm run fuzz -- --seed ${at.seed} --path ${at.path}${runs}${exclude}${only}`;
}
