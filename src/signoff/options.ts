// The options of `npm run qualify` (and `kvqual qualify`): the usage text, the parse of its
// arguments into QualifyOptions (a wrong one is a UsageError, exit status 2, before anything runs),
// the command line the sign-off prints back, and the order of the second run.
import { shellWord } from '../report/replayCommand';
import { DEFAULT_FUZZ_RUNS, DEFAULT_FUZZ_SEED } from './model';
import { plantedCommandPrefix } from '../fuzz/planted';
import { parseShardSpec, ShardSpec } from './shards';
import { NARROWED_EXIT_STATUS, NARROWED_VERDICT, RUN_CHANGING_VARIABLES } from './narrowed';

export const PERTURB_ENV = 'KVQUAL_PERTURB';
/** How many generated workloads test/unit/fuzz.test.ts checks (default: DEFAULT_FUZZ_RUNS). */
export const FUZZ_TEST_RUNS_ENV = 'KVQUAL_FUZZ_TEST_RUNS';

/** Wrong arguments or unreadable inputs: reported in one line, exit status 2, nothing deleted. */
export class UsageError extends Error {}

export interface QualifyOptions {
  features: string;
  requirements: string;
  out: string;
  campaign: string | null;
  coverage: boolean;
  baseline: string | null;
  /** Generated workloads to run (npm run fuzz); 0 leaves the campaign and its gate out. */
  fuzzRuns: number;
  /** `--shard i/n`: run only this share of the scenarios and write its streams, no sign-off. */
  shard: ShardSpec | null;
  /** `--merge DIR…`: the shard folders to build one sign-off from (nothing runs). */
  merge: string[] | null;
  /** `--isolation`: replay every scenario that passed alone, in a process of its own (isolation.ts). */
  isolation: boolean;
  argv: string[];
}

export { DEFAULT_FUZZ_RUNS, DEFAULT_FUZZ_SEED };

const OPTIONS_HELP = '--features DIR, --requirements FILE, --out DIR, --campaign NAME, --baseline FILE, --no-coverage, --fuzz-runs N, --isolation, --shard i/n, --merge DIR…';

/** What `npm run qualify -- --help` prints (the README's qualification section says more). */
export const QUALIFY_USAGE = [
  'usage: npm run qualify -- [options]',
  '  --features DIR       the feature files to run (default features)',
  '  --requirements FILE  the requirement registry (default requirements.yaml)',
  '  --out DIR            where the sign-off set is published (default reports)',
  '  --campaign NAME      the campaign named in the sign-off',
  '  --baseline FILE      an earlier signoff.json to compare with',
  '  --no-coverage        skip the compiled coverage run',
  `  --fuzz-runs N        generated workloads to check (default ${DEFAULT_FUZZ_RUNS}; 0: none)`,
  '  --isolation          also replay every scenario alone, each in a process of its own (order independence)',
  '  --shard i/n          run shard i of n (writes shard.json, no sign-off)',
  '  --merge DIR…         build one sign-off from the shard folders',
  `exit status: 0 QUALIFIED, 1 NOT QUALIFIED, 2 usage or input error, ${NARROWED_EXIT_STATUS} ${NARROWED_VERDICT}`,
  `  (${NARROWED_VERDICT}: every gate passed, but the run was narrowed: another features`,
  '  folder or registry, --no-coverage, fewer --fuzz-runs than the default, a working tree that is not',
  `  its commit, or a variable that changes what runs: ${['GIT_* (but git\'s network ones)', ...Object.keys(RUN_CHANGING_VARIABLES)].join(', ')})`,
].join('\n');

/** Parses `npm run qualify -- …`; throws UsageError naming the problem. */
export function parseQualifyArgs(argv: string[]): QualifyOptions {
  const options: QualifyOptions = {
    features: 'features',
    requirements: 'requirements.yaml',
    out: 'reports',
    campaign: null,
    coverage: true,
    baseline: null,
    fuzzRuns: DEFAULT_FUZZ_RUNS,
    shard: null,
    merge: null,
    isolation: false,
    argv,
  };
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    given.add(arg);
    const value = () => {
      const next = argv[++i];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${arg} needs a value (options: ${OPTIONS_HELP})`);
      return next;
    };
    if (arg === '--features') options.features = value();
    else if (arg === '--requirements') options.requirements = value();
    else if (arg === '--out') options.out = value();
    else if (arg === '--campaign') options.campaign = value();
    else if (arg === '--baseline') options.baseline = value();
    else if (arg === '--no-coverage') options.coverage = false;
    else if (arg === '--isolation') options.isolation = true;
    else if (arg === '--fuzz-runs') {
      const text = value();
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--fuzz-runs ${text}: expected a whole number`);
      options.fuzzRuns = Number(text);
    } else if (arg === '--shard') {
      const spec = parseShardSpec(value());
      if (typeof spec === 'string') throw new UsageError(spec);
      options.shard = spec;
    } else if (arg === '--merge') {
      const dirs: string[] = [];
      while (argv[i + 1] !== undefined && !argv[i + 1].startsWith('--')) dirs.push(argv[++i]);
      if (dirs.length === 0) throw new UsageError('--merge needs the shard folders to merge (--merge DIR…)');
      options.merge = [...(options.merge ?? []), ...dirs];
    } else throw new UsageError(`unknown option "${arg}" (options: ${OPTIONS_HELP})`);
  }
  if (options.shard !== null && options.merge !== null) throw new UsageError('--shard and --merge cannot be combined: a shard runs its share, the merge runs nothing');
  if (options.merge !== null) {
    const shardOnly = ['--features', '--no-coverage', '--fuzz-runs'].filter((o) => given.has(o));
    if (shardOnly.length > 0) throw new UsageError(`${shardOnly[0]} belongs to the shard runs, not to --merge (it merges what the shards ran)`);
  }
  if (options.isolation && (options.shard !== null || options.merge !== null)) throw new UsageError('--isolation is not made by a shard or a merge: run it on the whole suite, unsharded');
  if (options.shard !== null) {
    const mergeOnly = ['--campaign', '--baseline'].filter((o) => given.has(o));
    if (mergeOnly.length > 0) throw new UsageError(`${mergeOnly[0]} belongs to --merge, not to a --shard run (a shard writes no sign-off)`);
  }
  return options;
}

/**
 * The command line that made the run, the test doubles set in its environment included (a merge's
 * own command sets none: its shards ran them).
 */
export function commandOf(options: QualifyOptions, doubles: { perturbation: string | null; planted: boolean }, variables: { name: string; value: string }[] = []): string {
  const set = variables.map((v) => `${v.name}=${shellWord(v.value)} `).join('');
  const environment = `${set}${doubles.perturbation === null ? '' : `${PERTURB_ENV}=${shellWord(doubles.perturbation)} `}${plantedCommandPrefix(doubles.planted)}`;
  // Each argument as a shell reads it back: a folder with a space, a quote or a $ in its name stays one word, unexpanded.
  return environment + ['npm run qualify', ...(options.argv.length ? ['--', ...options.argv.map(shellWord)] : [])].join(' ');
}

/**
 * The order of the second run: shuffled, seeded by the generated workloads' seed (KVQUAL_SEED), so
 * a scenario that passes or gives its digest only after the scenarios before it in file order (a
 * module's state left over, a cache filled by another) differs between the runs, as its one-line
 * replay command, which runs it alone, would. Cucumber shuffles after it has cut a shard's share.
 */
export function secondRunOrder(seed: number): string {
  return `random:${seed}`;
}
