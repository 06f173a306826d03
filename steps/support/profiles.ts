// Named rank profiles: one settings table a scenario refers to by name ("with the reference rank
// profile") instead of copying it. Every row is a setting of the engine-level settings table
// (docs/steps.md lists them); docs/glossary.md prints each profile, and a unit test keeps the two equal.

/** The settings of each named profile, as rows of the engine-level settings table. */
export const RANK_PROFILES: Record<string, readonly (readonly [string, string])[]> = {
  reference: [
    ['block size', '4 tokens'],
    ['GPU blocks per rank', '8'],
    ['KV bytes per token', '250000'],
    ['prefill pass', '1 ms'],
    ['decode pass', '0.5 ms'],
    ['host bandwidth per rank', '1 GB/s'],
  ],
};
