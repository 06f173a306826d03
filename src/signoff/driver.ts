// The run driver of `npm run qualify`: checks its arguments and inputs before touching anything,
// runs the feature suite twice with cucumber's reports, runs generated workloads against the
// simulator's invariants (src/fuzz, as `npm run fuzz`, on a worker thread), measures coverage over
// the compiled JavaScript (any failure there fails a gate), builds the sign-off and publishes the
// whole output set at once (see write.ts). Independent phases run at once on the two cores: run 1
// (tsx), the generated workloads, tsc's type check, and as soon as esbuild has compiled build/ the
// second run, which is the suite on the compiled JavaScript under c8 (so the determinism proof
// compares tsx with compiled and no third suite run is needed; the sign-off's coverage is what the
// scenarios exercised, the unit tests being npm test's). Each phase is printed in number order
// once it and those before it have ended (phaseConsole.ts). With `--shard i/n`
// it runs only its share of the scenarios (both runs through tsx; shard 1 also the generated
// workloads and a coverage run of its own over the whole suite) and publishes its streams with a
// shard manifest instead of a sign-off; with `--merge DIR…` it runs nothing and builds the one
// sign-off from the shards' streams (shards.ts). The clock, git facts, the console and cucumber's
// report formatters come from the caller (scripts/qualify.ts), so this module reads no clock itself.
//
// The work is split by phase, each file saying what it owns: options.ts (arguments and usage),
// context.ts (what the caller gives), prepare.ts (checks before the run), spawn.ts (the tools
// started), runStreams.ts (reading cucumber's streams), coverageRun.ts (the compiled coverage run),
// suiteRunner.ts (the suite runs, the planted faults and isolation's alone runs), publish.ts (the sign-off or shard manifest published),
// outputSet.ts (the names published), merge.ts (--merge), phaseConsole.ts (the console) and
// qualifyRun.ts (the phases run). This module
// is the entry point: it exports the same names as before.
export { PERTURB_ENV, FUZZ_TEST_RUNS_ENV, UsageError, QUALIFY_USAGE, parseQualifyArgs, commandOf, secondRunOrder, DEFAULT_FUZZ_RUNS, DEFAULT_FUZZ_SEED } from './options';
export type { QualifyOptions } from './options';
export type { DriverContext } from './context';
export { prepare } from './prepare';
export type { Prepared } from './prepare';
export { stopChildren } from './spawn';
export { buildOrphans } from './coverageRun';
export { SET_NAMES, SHARD_SET_NAMES } from './outputSet';
export { environmentOf } from './publish';
export { coverageClaimProblems, mergedSubject } from './merge';
export { qualify } from './qualifyRun';
