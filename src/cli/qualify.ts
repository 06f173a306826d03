// `kvqual qualify`: the sign-off, as `npm run qualify` runs it (scripts/qualify.ts, which runs
// src/signoff/driver.ts). Owns the command's options, its help and its place among kvqual's
// commands (an unknown option gets commander's did-you-mean); the run itself is given by
// bin/kvqual.js through CliIo.qualify, because it needs cucumber's own report formatters, which
// nothing under src/ imports. The options are handed to the driver as `npm run qualify -- …` would
// pass them, so both check them alike and exit alike: 0 QUALIFIED, 1 NOT QUALIFIED, 2 usage or input.
import type { Command } from 'commander';
import type { CliIo } from './io';
import { ExitCode } from './io';

/** What commander parsed; absent options were not given (the driver has the defaults). */
export interface QualifyCommandOptions {
  features?: string;
  requirements?: string;
  out?: string;
  campaign?: string;
  baseline?: string;
  coverage: boolean;
  fuzzRuns?: string;
  isolation?: boolean;
  shard?: string;
  merge?: string[];
}

/** Each option of `npm run qualify`: its flags for commander and what it does. */
export const QUALIFY_OPTIONS: readonly { flags: string; help: string }[] = [
  { flags: '--features <dir>', help: 'the folder of feature files to run (default: features)' },
  { flags: '--requirements <file>', help: 'the requirement registry the scenarios are tagged against (default: requirements.yaml)' },
  { flags: '--out <dir>', help: 'where the sign-off set is published: signoff.md, signoff.html, signoff.json and the reports (default: reports)' },
  { flags: '--campaign <name>', help: 'the campaign named in the sign-off' },
  { flags: '--baseline <file>', help: "an earlier sign-off's signoff.json to compare with (what changed since)" },
  { flags: '--no-coverage', help: 'skip the compiled coverage run (quicker; the sign-off then says coverage was not measured)' },
  { flags: '--fuzz-runs <n>', help: 'how many generated workloads to check against the invariants (0: none)' },
  { flags: '--isolation', help: 'also replay every scenario that passed alone, in a process of its own (proves order independence; not with shards)' },
  { flags: '--shard <i/n>', help: 'run shard i of n of the scenarios and write its share (shard.json), no sign-off' },
  { flags: '--merge <dirs...>', help: 'build one sign-off from the shard folders (runs nothing)' },
];

const HELP_AFTER = `
Runs what \`npm run qualify\` runs, from the kvqual checkout (relative paths are read from the working
folder): the feature suite twice (the second run must give the same results), the generated
workloads, the coverage run, then publishes the sign-off (signoff.md, signoff.html) into --out.

Exit status: 0 QUALIFIED, 1 NOT QUALIFIED, 2 a usage or input error (nothing is deleted then),
3 PASSED — NOT A RELEASE SIGN-OFF (every gate passed, but the run was narrowed: another suite,
--no-coverage, fewer generated workloads, a tree that is not its commit, or a variable that changes
what runs).

Examples:
  kvqual qualify                              the whole sign-off into reports/
  kvqual qualify --no-coverage --fuzz-runs 0  a quicker check: no coverage run, no generated workloads
  kvqual qualify --shard 1/2 --out shard-1    half of the scenarios (then --merge shard-1 shard-2)`;

export function registerQualify(program: Command, io: CliIo, finish: (code: ExitCode) => void): void {
  const command = program.command('qualify').description('run the qualification and publish the sign-off (what `npm run qualify` runs)');
  for (const option of QUALIFY_OPTIONS) command.option(option.flags, option.help);
  command.addHelpText('after', HELP_AFTER).action(async (options: QualifyCommandOptions) => {
    if (io.qualify === undefined) {
      io.stderr('kvqual qualify: the sign-off cannot run here (it runs through bin/kvqual.js); use `npm run qualify`\n');
      finish(ExitCode.usage);
      return;
    }
    finish((await io.qualify(qualifyArgs(options))) as ExitCode);
  });
}

/** The options as `npm run qualify -- …` takes them, in a fixed order. */
export function qualifyArgs(options: QualifyCommandOptions): string[] {
  const valued: [string, string | undefined][] = [
    ['--features', options.features],
    ['--requirements', options.requirements],
    ['--out', options.out],
    ['--campaign', options.campaign],
    ['--baseline', options.baseline],
  ];
  const args = valued.flatMap(([flag, value]) => (value === undefined ? [] : [flag, value]));
  if (!options.coverage) args.push('--no-coverage');
  if (options.fuzzRuns !== undefined) args.push('--fuzz-runs', options.fuzzRuns);
  if (options.isolation === true) args.push('--isolation');
  if (options.shard !== undefined) args.push('--shard', options.shard);
  if (options.merge !== undefined) args.push('--merge', ...options.merge);
  return args;
}
