// The shape of signoff.json, versioned (`format: kvqual-signoff/1`): a zod schema, its JSON Schema
// (published as schema/kvqual-signoff.schema.json; `npm run schema` regenerates it and a unit
// test fails when it is stale) and the reader of an earlier sign-off given with --baseline.
import { z } from 'zod';
import { NARROWED_VERDICT } from './verdicts';

export const SIGNOFF_FORMAT = 'kvqual-signoff/1';

const Figure = z.strictObject({ covered: z.number().int(), total: z.number().int(), pct: z.number() });

const Step = z.strictObject({
  kind: z.enum(['step', 'before hook', 'after hook']),
  keyword: z.string(),
  text: z.string(),
  status: z.string().describe('PASSED, FAILED, UNDEFINED, PENDING, AMBIGUOUS, SKIPPED, UNKNOWN or NOT RUN'),
  message: z.string().nullable().describe('why it did not pass, in one sentence for an assertion'),
});

const Measurement = z.strictObject({ label: z.string(), value: z.number(), unit: z.string(), text: z.string(), asserted: z.boolean().optional() });

const Scenario = z.strictObject({
  key: z.string().describe('uri:line, stable across runs of the same files'),
  uri: z.string(),
  line: z.number().int(),
  name: z.string(),
  feature: z.string(),
  rule: z.string().nullable(),
  tags: z.array(z.string()),
  requirements: z.array(z.string()),
  status: z.string(),
  seed: z.number().int().nullable(),
  simulation: z.string().nullable().describe('router-replay, cluster, setup or none'),
  digest: z.string().nullable().describe('canonical digest of what its simulation did'),
  pass_times: z.string().nullable().optional().describe('a cluster run\'s pass-time fidelity: "functional" (fixed timing), "calibrated: <source>" or an uncalibrated model; null otherwise (absent in sign-offs before issue 12)'),
  replay: z.string().describe('the command that replays exactly this scenario'),
  steps: z.array(Step),
  measurements: z.array(Measurement),
  changed: z.boolean().describe('differed between the two runs, or since the baseline'),
  suggestions: z.array(z.strictObject({ step: z.string(), phrases: z.array(z.string()) })),
});

const Change = z.strictObject({
  key: z.string(),
  name: z.string(),
  before: z.string().nullable(),
  after: z.string().nullable(),
});

export const BaselineDiffSchema = z.strictObject({
  campaign: z.string(),
  date: z.string(),
  commit: z.string(),
  verdict: z.string(),
  added: z.array(Change),
  removed: z.array(Change),
  renamed: z.array(Change),
  results: z.array(Change),
  digests: z.array(Change),
  measurements: z.array(Change),
});
export type BaselineDiff = z.infer<typeof BaselineDiffSchema>;

export const SignoffJsonSchema = z
  .strictObject({
    format: z.literal(SIGNOFF_FORMAT),
    campaign: z.string(),
    date: z.string(),
    command: z.string(),
    subject: z.strictObject({ packageName: z.string(), packageVersion: z.string(), commit: z.string(), worktree: z.string(), node: z.string() }),
    cucumber_version: z.string(),
    verdict: z.enum(['QUALIFIED', 'NOT QUALIFIED', NARROWED_VERDICT]),
    qualified: z.boolean(),
    narrowed: z
      .array(z.string())
      .optional()
      .describe('why the run is not a release sign-off (another suite, --no-coverage, fewer generated workloads, a tree that is not its commit, a variable that changes what runs); empty for a release sign-off, absent before it was recorded'),
    gates: z.array(z.strictObject({ title: z.string(), passed: z.boolean(), summary: z.string() })),
    attention: z.array(z.string()),
    perturbation: z.string().nullable(),
    scenario_set: z.strictObject({ digest: z.string(), files: z.number().int(), scenarios: z.number().int() }),
    scope: z
      .strictObject({ features: z.string(), requirements: z.string(), requirements_digest: z.string(), repository_suite: z.boolean() })
      .optional()
      .describe("the features folder and requirement registry that ran, the registry's SHA-256, and whether both are the repository's own (absent before it was recorded)"),
    environment: z
      .array(z.strictObject({ name: z.string(), value: z.string(), meaning: z.string() }))
      .optional()
      .describe('environment variables that changed what ran (NODE_OPTIONS, GIT_*, KVQUAL_SEED, KVQUAL_FIGURE_CACHE, …); absent before they were recorded'),
    counts: z.record(z.string(), z.number().int()),
    requirements: z.array(
      z.strictObject({
        id: z.string(),
        title: z.string(),
        source: z.string(),
        owner: z.string(),
        status: z.string(),
        result: z.string(),
        ok: z.boolean(),
        scenarios: z.array(z.string()).describe('keys of its scenarios'),
      }),
    ),
    scenarios: z.array(Scenario),
    determinism: z.strictObject({
      identical: z.boolean(),
      problem: z.string().nullable(),
      differences: z.array(z.strictObject({ key: z.string(), name: z.string(), reason: z.string() })),
    }),
    gaps: z.strictObject({
      uncovered_requirements: z.array(z.string()),
      untraced_scenarios: z.array(z.string()),
      unknown_tags: z.array(z.strictObject({ key: z.string(), tag: z.string() })),
      not_passed: z.array(z.string()),
      /** Passed scenarios that checked nothing, and why (absent in sign-offs written before it was reported). */
      checked_nothing: z.array(z.strictObject({ key: z.string(), why: z.string() })).optional(),
      run_errors: z.array(z.string()),
    }),
    coverage: z
      .strictObject({ scope: z.string(), lines: Figure, branches: Figure, functions: Figure, groups: z.array(z.strictObject({ path: z.string(), files: z.number().int(), lines: Figure, branches: Figure, functions: Figure })) })
      .nullable(),
    coverage_run: z
      .strictObject({
        unitFiles: z.number().int(),
        unitTests: z.number().int(),
        unitPassed: z.number().int().optional().describe('unit tests that passed (absent before it was counted)'),
        scenarios: z.number().int(),
        failures: z.array(z.strictObject({ kind: z.enum(['unit test', 'scenario']), name: z.string(), where: z.string(), why: z.string() })),
        skipped: z
          .array(z.strictObject({ name: z.string(), why: z.string() }))
          .optional()
          .describe('unit tests the compiled run skipped or left to do, with their reasons (absent before it was counted)'),
        problems: z.array(z.string()),
      })
      .nullable(),
    baseline: BaselineDiffSchema.nullable().describe('what changed since the sign-off given with --baseline'),
  })
  .describe('a kvqual qualification sign-off (npm run qualify): verdict, gates, requirements, scenarios and their evidence');

export type SignoffJson = z.infer<typeof SignoffJsonSchema>;

/** The JSON Schema of signoff.json. */
export function signoffJsonSchema(): unknown {
  return z.toJSONSchema(SignoffJsonSchema, { io: 'output' });
}

/** Reads an earlier signoff.json; throws a one-line error when it is not one this version reads. */
export function parseSignoffJson(text: string, where: string): SignoffJson {
  let raw: unknown;
  try {
    // A byte-order mark at the start (an editor's) is not part of the JSON.
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new Error(`${where}: not JSON (${(error as Error).message})`);
  }
  const format = (raw as { format?: unknown } | null)?.format;
  if (format !== SIGNOFF_FORMAT) throw new Error(`${where}: not a ${SIGNOFF_FORMAT} sign-off (format ${JSON.stringify(format ?? null)})`);
  const result = SignoffJsonSchema.safeParse(raw);
  if (!result.success) {
    const first = result.error.issues[0];
    throw new Error(`${where}: invalid sign-off: ${first.path.join('.') || '(top)'}: ${first.message}`);
  }
  const inconsistency = signoffInconsistency(result.data);
  if (inconsistency !== null) throw new Error(`${where}: not a sign-off kvqual wrote: ${inconsistency}`);
  return result.data;
}

/**
 * What in a sign-off contradicts itself (a hand edit, or a file damaged), or null: its verdict,
 * its qualified flag and its gates must agree, and each scenario be listed once.
 */
function signoffInconsistency(signoff: SignoffJson): string | null {
  const gatesPassed = signoff.gates.every((gate) => gate.passed);
  const narrowed = (signoff.narrowed ?? []).length > 0;
  if ((signoff.verdict === 'QUALIFIED') !== signoff.qualified) return `its verdict is ${signoff.verdict} but qualified is ${signoff.qualified}`;
  if ((signoff.verdict === NARROWED_VERDICT) !== (gatesPassed && narrowed)) return `it is ${signoff.verdict} but ${gatesPassed ? (narrowed ? 'every gate passed and it names why it is not a release sign-off' : 'every gate passed and it names nothing that narrowed it') : `the gate "${signoff.gates.find((gate) => !gate.passed)!.title}" failed`}`;
  if (signoff.qualified !== (gatesPassed && !narrowed)) return `it is ${signoff.verdict} but ${gatesPassed ? 'every gate passed' : `the gate "${signoff.gates.find((gate) => !gate.passed)!.title}" failed`}`;
  const seen = new Set<string>();
  for (const scenario of signoff.scenarios) {
    if (seen.has(scenario.key)) return `the scenario ${scenario.key} is listed twice`;
    seen.add(scenario.key);
  }
  return null;
}

