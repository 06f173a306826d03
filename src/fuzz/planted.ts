// The fuzz pipeline's test double: a planted defect. With it, the invariant checker also counts
// every request that reused cached tokens (G1 or G2) as breaking "no request reuses more tokens
// than its prompt", so a campaign finds, shrinks, writes and reproduces a counterexample even
// when the simulator keeps every invariant. The scripts and steps turn it on from the environment
// (PLANTED_DEFECT_ENV=1); every violation it makes says it was planted. The sign-off's other test
// double, planted faults in the simulator itself, is simulatorFaults.ts (a leaf the engine imports).
import type { ObservedRun, Violation } from './invariants';

/** The environment variable that plants the defect in `npm run fuzz`, the generated scenarios' steps and `npm run qualify`. */
export const PLANTED_DEFECT_ENV = 'KVQUAL_FUZZ_PLANT';

/** What the planted defect does, in words, for the console and the sign-off. */
export const PLANTED_DEFECT_MEANING = 'every request that reuses cached tokens is counted as breaking "no request reuses more tokens than its prompt"';

/** What a printed command starts with to plant the defect again ("KVQUAL_FUZZ_PLANT=1 "), or nothing. */
export function plantedCommandPrefix(planted: boolean | undefined): string {
  return planted ? `${PLANTED_DEFECT_ENV}=1 ` : '';
}

/** True when the environment plants the defect ("1"); any other value than unset, "" or "0" is a usage error for the caller to report. */
export function plantedDefectAsked(env: NodeJS.ProcessEnv): boolean {
  const value = env[PLANTED_DEFECT_ENV];
  if (value === undefined || value === '' || value === '0') return false;
  if (value === '1') return true;
  throw new Error(`${PLANTED_DEFECT_ENV}="${value}": expected 1 (plant the test double's defect) or 0`);
}

/** The planted defect's violations of one run: one per request that reused cached tokens. */
export function plantedViolations(run: ObservedRun): Violation[] {
  const requests = run.outcome?.result.requests ?? [];
  return requests
    .filter((request) => request.g1_reused_tokens + request.host_reused_tokens > 0)
    .map((request) => ({
      invariant: 'reuse-within-prompt' as const,
      message: `planted defect (test double ${PLANTED_DEFECT_ENV}=1): request ${request.request_id} reused ${request.g1_reused_tokens + request.host_reused_tokens} cached tokens`,
    }));
}

