// When a qualification that passed every gate is still not a release sign-off: it ran another
// suite than the project's (features/ and requirements.yaml), left the coverage run out, ran fewer
// generated workloads than the default, ran from a tree that is not its commit, or ran under an
// environment variable that changes what runs. Such a run gets its own verdict (NARROWED_VERDICT),
// its own exit status (NARROWED_EXIT_STATUS), `"qualified": false` and its reasons, never an
// approval block. Also owns the list of those variables. Pure: facts in, words out.
import { DEFAULT_FUZZ_RUNS, DEFAULT_FUZZ_SEED } from './model';

import { NARROWED_VERDICT } from './verdicts';

export { NARROWED_VERDICT };
/** Exit statuses of `npm run qualify`. */
export const EXIT_QUALIFIED = 0;
export const EXIT_NOT_QUALIFIED = 1;
export const NARROWED_EXIT_STATUS = 3;

/** An environment variable set for a run, with what it changed. */
export interface RunVariable {
  name: string;
  value: string;
  meaning: string;
}

/**
 * Variables that change what a qualification runs, by name, with what each changes. GIT_* (any
 * name but TRANSPORT_GIT_VARIABLES) is added by variablesThatChangeRun. KVQUAL_SEED counts only
 * when it is not the default.
 */
export const RUN_CHANGING_VARIABLES: Record<string, string> = {
  NODE_OPTIONS: 'every Node.js process of the run (cucumber, tsc, c8) started with these options, which can load code into it',
  KVQUAL_SEED: 'the scenarios and the generated workloads ran with another seed than the default',
  KVQUAL_FIGURE_CACHE: 'the figures were taken from, or not from, another figure cache than the per-user default',
};
// The unit tests' own variables (KVQUAL_TRACE_MUTATIONS, KVQUAL_FUZZ_TEST_RUNS, …) are not here: qualify runs no unit test (npm test does).
// The test doubles (KVQUAL_PERTURB, KVQUAL_FUZZ_PLANT) are not here: each has its own gate, which fails the run.

/**
 * git variables that only say how git reaches a remote or asks for credentials (a machine's CA
 * bundle, an SSH command): nothing a qualification runs uses the network, so they change nothing.
 */
export const TRANSPORT_GIT_VARIABLES = ['GIT_SSL_CAINFO', 'GIT_SSL_CAPATH', 'GIT_ASKPASS', 'GIT_TERMINAL_PROMPT', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_HTTP_USER_AGENT', 'GIT_PROXY_COMMAND'];

/** The variables of `env` that change what a run does, in name order, each with its meaning. */
export function variablesThatChangeRun(env: NodeJS.ProcessEnv): RunVariable[] {
  const out: RunVariable[] = [];
  const names = Object.keys(env)
    .filter((name) => env[name] !== undefined && (name in RUN_CHANGING_VARIABLES || (name.startsWith('GIT_') && !TRANSPORT_GIT_VARIABLES.includes(name))))
    .sort();
  for (const name of names) {
    const value = env[name]!;
    if (name === 'KVQUAL_SEED' && (value === '' || Number(value) === DEFAULT_FUZZ_SEED)) continue;
    const meaning = name.startsWith('GIT_')
      ? 'a git variable: it can make git describe another checkout or commit than the one that ran (qualify runs git without it)'
      : name === 'KVQUAL_SEED'
        ? `the scenarios and the generated workloads ran with seed ${value}, not the default ${DEFAULT_FUZZ_SEED}`
        : RUN_CHANGING_VARIABLES[name];
    out.push({ name, value, meaning });
  }
  return out;
}

/** What a run was, as far as narrowing goes. */
export interface RunFacts {
  features: string;
  requirements: string;
  coverage: boolean;
  fuzzRuns: number;
  worktree: string;
  variables: readonly RunVariable[];
}

/** Why a run is not a release sign-off, in words; empty when it is the project's whole qualification. */
export function narrowedReasons(facts: RunFacts): string[] {
  const reasons: string[] = [];
  if (facts.features !== 'features') reasons.push(`the features of ${facts.features}/ ran, not the project's features/`);
  if (facts.requirements !== 'requirements.yaml') reasons.push(`the requirements of ${facts.requirements} were checked, not the project's requirements.yaml`);
  if (!facts.coverage) reasons.push('--no-coverage: the compiled coverage run, which runs the suite again on the compiled JavaScript and checks the types, did not run');
  if (facts.fuzzRuns < DEFAULT_FUZZ_RUNS) reasons.push(`--fuzz-runs ${facts.fuzzRuns}: fewer generated workloads than the ${DEFAULT_FUZZ_RUNS} of a release sign-off`);
  if (facts.worktree !== 'clean working tree') reasons.push(`${facts.worktree}: what ran may not be the commit named`);
  for (const variable of facts.variables) reasons.push(`${variable.name} is set (${variable.name}=${variable.value}): ${variable.meaning}`);
  return reasons;
}

/** The exit status of a sign-off: 0 QUALIFIED, 3 passed but narrowed, 1 otherwise. */
export function exitStatusOf(model: { qualified: boolean; verdict: string }): number {
  if (model.qualified) return EXIT_QUALIFIED;
  return model.verdict === NARROWED_VERDICT ? NARROWED_EXIT_STATUS : EXIT_NOT_QUALIFIED;
}
