// Qualification in shards: what a shard of `npm run qualify -- --shard i/n` records about itself
// (its manifest, shard.json), the identity of the suite it ran, the checks the merge makes before
// trusting a set of shards (each of 1..n exactly once, all of one suite, one n, one commit, one
// set of options, each having run exactly its share), and the merge of their message streams
// into one stream per run, as an unsharded run would have written it. Pure: text in, text out.
//
// Cucumber's `--shard i/n` keeps the pickles whose index (in cucumber's order of the whole suite)
// modulo n is i − 1, and still writes every source, Gherkin document and pickle of the whole suite
// into the stream: so each shard's stream names the whole suite, and which pickles it ran.
import { z } from 'zod';
import { digestOf } from '../report/canonical';
import { zodIssueText } from '../sweep/spec';
import type { CampaignResult } from '../fuzz/campaign';
import type { CoverageRun, CoverageSummary } from './coverage';
import type { Subject } from './model';
import { compareText } from '../order';
import type { FaultCheck } from './faults';
import { SIMULATOR_FAULT_NAMES, type SimulatorFault } from '../fuzz/simulatorFaults';
import type { ShardTrust } from './shardTrust';

export const SHARD_MANIFEST = 'shard.json';
export const SHARD_FORMAT = 'kvqual-qualify-shard/1';

/** Shard i of n (1-based), as `--shard i/n` names it. */
export interface ShardSpec {
  index: number;
  count: number;
}

/** Parses `i/n`; returns the problem in words when it is not a shard of 1 ≤ i ≤ n. */
export function parseShardSpec(text: string): ShardSpec | string {
  const match = /^(\d{1,6})\/(\d{1,6})$/.exec(text);
  if (!match) return `--shard ${text}: expected i/n, e.g. 2/3`;
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1) return `--shard ${text}: the number of shards must be at least 1`;
  if (index < 1 || index > count) return `--shard ${text}: the shard index must be from 1 to ${count}`;
  return { index, count };
}

/** What the whole suite is: its sources and every pickle in cucumber's order (the order shards are cut by). */
export interface SuiteIdentity {
  /** Digest of the sources and the ordered pickle list. */
  digest: string;
  /** Every pickle's `uri:line`, in cucumber's order. */
  pickles: string[];
  /** The pickles this stream ran (had a test case for), in cucumber's order. */
  ran: string[];
}

/** The coverage run's outcome, as the shard that made it records it. */
export interface ShardCoverage {
  summary: CoverageSummary | null;
  run: CoverageRun;
  note: string;
}

export interface ShardManifest {
  format: typeof SHARD_FORMAT;
  shard: ShardSpec;
  suite: { digest: string; scenarios: number; features: string };
  subject: Subject;
  /** The qualify options that must be the same for every shard of one merge. */
  settings: { fuzzRuns: number; fuzzSeed: number; coverage: boolean };
  perturbation: string | null;
  command: string;
  /** The generated-workload campaign, run by shard 1 only (null in the others, or with --fuzz-runs 0). */
  generated: CampaignResult | null;
  /** The coverage run, made by shard 1 only (null in the others, or with --no-coverage). */
  coverage: ShardCoverage | null;
  /** The planted-fault check of this shard's share (faults.ts); absent in a manifest written before it was made. */
  faults?: FaultCheck | null;
  /** What the merge verifies (shardTrust.ts): stream digests and nonces, tree, registry, options, variables, channels. */
  trust?: ShardTrust;
  /** HMAC-SHA-256 of the manifest without it, with KVQUAL_SIGNING_KEY (shardTrust.ts). */
  signature?: string;
}

interface Envelope {
  pickle?: { id: string; uri: string; location?: { line: number }; name: string; steps: { id: string }[] };
  testCase?: { id: string; pickleId: string };
  source?: { uri: string; data: string };
  [key: string]: unknown;
}

function envelopes(ndjson: string): Envelope[] {
  const out: Envelope[] = [];
  for (const line of ndjson.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as Envelope);
    } catch {
      // A broken line is reported by parseRun when the merged stream is read; nothing to identify here.
    }
  }
  return out;
}

/** A stream's lines that are not blank, trimmed: two that differ only in blank space are one copy. */
function meaningfulLines(ndjson: string): string {
  return ndjson
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('\n');
}

/** The number (from 1) of the first line of a message stream that is not JSON, or null. */
function firstLineNotJson(ndjson: string): number | null {
  const lines = ndjson.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') continue;
    try {
      JSON.parse(lines[i]);
    } catch {
      return i + 1;
    }
  }
  return null;
}

const keyOf = (pickle: NonNullable<Envelope['pickle']>) => `${pickle.uri}:${pickle.location?.line ?? 0}`;

/** The suite a message stream names, and which of its pickles the stream ran. */
export function suiteIdentity(ndjson: string): SuiteIdentity {
  const all = envelopes(ndjson);
  const sources = all.flatMap((e) => (e.source ? [{ uri: e.source.uri, data: e.source.data }] : [])).sort((a, b) => compareText(a.uri, b.uri));
  const pickles = all.flatMap((e) => (e.pickle ? [e.pickle] : []));
  const withCase = new Set(all.flatMap((e) => (e.testCase ? [e.testCase.pickleId] : [])));
  return {
    digest: digestOf({ sources, pickles: pickles.map((p) => ({ key: keyOf(p), name: p.name })) }),
    pickles: pickles.map(keyOf),
    ran: pickles.filter((p) => withCase.has(p.id)).map(keyOf),
  };
}

/** The pickles shard `index` of `count` runs: those whose index modulo count is index − 1. */
export function shareOf(pickles: string[], shard: ShardSpec): string[] {
  return pickles.filter((_, i) => i % shard.count === shard.index - 1);
}

/** Reads a shard.json; throws an Error naming the problem when it is not one. */
export function parseShardManifest(text: string, where: string): ShardManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${where}: not JSON`);
  }
  const manifest = value as Partial<ShardManifest> | null;
  if (manifest === null || typeof manifest !== 'object' || manifest.format !== SHARD_FORMAT) {
    throw new Error(`${where}: not a ${SHARD_FORMAT} shard manifest`);
  }
  const shard = manifest.shard;
  if (!shard || !Number.isInteger(shard.index) || !Number.isInteger(shard.count) || shard.index < 1 || shard.index > shard.count) {
    throw new Error(`${where}: the shard number is missing or out of range`);
  }
  if (!manifest.suite || typeof manifest.suite.digest !== 'string' || !manifest.subject || !manifest.settings) {
    throw new Error(`${where}: the suite, subject or settings are missing`);
  }
  const checked = ManifestShape.safeParse(manifest);
  if (!checked.success) throw new Error(`${where}: ${zodIssueText(checked.error.issues[0])}`);
  return manifest as ShardManifest;
}

const count = z.number().int().min(0);
const Seal = z.object({ sha256: z.string(), nonce: z.string() });
/**
 * The fields of a manifest the merge reads, with their types (checked, not copied: the manifest is
 * used as written). A damaged one is refused naming its field, never read into a crash.
 */
const ManifestShape = z.object({
  suite: z.object({ digest: z.string(), scenarios: count, features: z.string() }),
  subject: z.object({ packageName: z.string(), packageVersion: z.string(), commit: z.string().min(1), worktree: z.string(), node: z.string() }),
  settings: z.object({ fuzzRuns: count, fuzzSeed: z.number().int(), coverage: z.boolean() }),
  perturbation: z.string().nullable(),
  command: z.string(),
  generated: z
    .object({
      runs: count,
      seed: z.number().int(),
      excluded_areas: z.array(z.string()),
      only: z.array(z.string()),
      planted_defect: z.boolean().optional(),
      passed: count,
      too_heavy: count,
      too_heavy_cases: z.array(z.object({ case_number: count, path: z.string(), reason: z.string() })).optional(),
      counterexample: z.object({ seed: z.number().int(), path: z.string(), case_number: count, shrinks: count, violations: z.array(z.object({ invariant: z.string(), message: z.string() })).min(1) }).nullable(),
    })
    .nullable(),
  coverage: z
    .object({
      summary: z.object({ scope: z.string(), groups: z.array(z.unknown()) }).nullable(),
      run: z.object({ unitFiles: count, unitTests: count, scenarios: count, failures: z.array(z.unknown()), problems: z.array(z.string()) }),
      note: z.string(),
    })
    .nullable(),
  faults: z
    .object({
      trials: z.array(z.object({ fault: z.enum(SIMULATOR_FAULT_NAMES as [SimulatorFault, ...SimulatorFault[]]), meaning: z.string(), ran: count, caught: count })),
      survivors: z.array(z.object({ key: z.string(), name: z.string() })),
      exempt: z.array(z.object({ key: z.string(), name: z.string(), why: z.string() })),
      problems: z.array(z.string()),
    })
    .nullable()
    .optional(),
  trust: z
    .object({
      tree: z.string().nullable(),
      requirements: z.object({ file: z.string(), digest: z.string() }),
      options: z.array(z.string()),
      environment: z.array(z.object({ name: z.string(), value: z.string(), meaning: z.string() })),
      channels: z.array(z.string()),
      streams: z.object({ first: Seal.nullable(), second: Seal.nullable() }),
    })
    .optional(),
  signature: z.string().optional(),
});

/**
 * What is wrong with shard 1's generated-workload campaign for the settings all shards ran with,
 * or null: it must be there when cases were asked for, of that many cases and that seed, and
 * whole (every case passed, or a counterexample ended it; too heavy ones among the passed).
 */
export function campaignProblem(manifest: ShardManifest): string | null {
  const { fuzzRuns, fuzzSeed } = manifest.settings;
  const campaign = manifest.generated;
  if (fuzzRuns === 0) return campaign === null ? null : `it records a generated-workload campaign although it ran with --fuzz-runs 0`;
  if (campaign === null) return `it ran with --fuzz-runs ${fuzzRuns} but records no generated-workload campaign`;
  if (campaign.runs !== fuzzRuns || campaign.seed !== fuzzSeed) return `its generated-workload campaign is of ${campaign.runs} cases with seed ${campaign.seed}, not the ${fuzzRuns} with seed ${fuzzSeed} it ran with`;
  if (campaign.passed > campaign.runs || campaign.too_heavy > campaign.passed) return `its generated-workload campaign counts ${campaign.passed} cases passed and ${campaign.too_heavy} too heavy of ${campaign.runs}: not possible`;
  if (campaign.counterexample === null && campaign.passed !== campaign.runs) return `its generated-workload campaign counts ${campaign.passed} of ${campaign.runs} cases passed and no counterexample: not a whole campaign`;
  return null;
}

/** One shard as the merge found it: its folder (as given), manifest and both message streams. */
export interface ShardInput {
  dir: string;
  manifest: ShardManifest;
  /** Null when the shard's folder has no such stream. */
  first: string | null;
  second: string | null;
}

export interface ShardCheck {
  /** The shards the merge uses, one per index, in shard order. */
  used: ShardInput[];
  /** The reference all shards are compared with (the most common suite, settings, commit and n). */
  reference: ShardManifest;
  /** Each gap in words ("shard 2 of 3 missing"); empty when the set is complete and consistent. */
  problems: string[];
}

const settingsText = (m: ShardManifest) => `--fuzz-runs ${m.settings.fuzzRuns}, seed ${m.settings.fuzzSeed}, ${m.settings.coverage ? 'with' : 'without'} the coverage run`;

/** How a shard differs from the reference, in words, or null when it belongs to the same set. */
function mismatch(shard: ShardManifest, reference: ShardManifest): string | null {
  const reasons: string[] = [];
  if (shard.shard.count !== reference.shard.count) reasons.push(`it is one of ${shard.shard.count} shards, not ${reference.shard.count}`);
  if (shard.suite.digest !== reference.suite.digest) reasons.push(`it ran another suite (${shard.suite.digest.slice(0, 19)}… vs ${reference.suite.digest.slice(0, 19)}…)`);
  if (shard.subject.commit !== reference.subject.commit) reasons.push(`it ran commit ${shard.subject.commit.slice(0, 12)}, not ${reference.subject.commit.slice(0, 12)}`);
  if (settingsText(shard) !== settingsText(reference)) reasons.push(`it ran with ${settingsText(shard)}, not ${settingsText(reference)}`);
  return reasons.length > 0 ? reasons.join('; ') : null;
}

/**
 * Checks a set of shards before merging: the reference is the most common (count, suite, commit,
 * settings), ties going to the shard given first; a shard that differs from it is left out and
 * named; each index of 1..n must appear exactly once (a second copy is named and left out); each
 * shard's streams must exist and have run exactly its share.
 */
export function checkShards(shards: ShardInput[]): ShardCheck {
  if (shards.length === 0) throw new Error('no shard to merge');
  const identity = (m: ShardManifest) => `${m.shard.count}|${m.suite.digest}|${m.subject.commit}|${settingsText(m)}`;
  const tally = new Map<string, { count: number; first: number }>();
  shards.forEach((s, i) => {
    const key = identity(s.manifest);
    const entry = tally.get(key) ?? { count: 0, first: i };
    entry.count++;
    tally.set(key, entry);
  });
  const [bestKey] = [...tally.entries()].sort((a, b) => b[1].count - a[1].count || a[1].first - b[1].first)[0];
  const reference = shards.find((s) => identity(s.manifest) === bestKey)!.manifest;
  const n = reference.shard.count;
  const problems: string[] = [];
  const byIndex = new Map<number, ShardInput>();
  for (const shard of shards) {
    const name = `${shard.dir} (shard ${shard.manifest.shard.index} of ${shard.manifest.shard.count})`;
    const why = mismatch(shard.manifest, reference);
    if (why !== null) {
      problems.push(`${name} is not of this set and was left out: ${why}`);
      continue;
    }
    const earlier = byIndex.get(shard.manifest.shard.index);
    if (earlier) {
      problems.push(`shard ${shard.manifest.shard.index} of ${n} given twice (${earlier.dir} and ${shard.dir}); only the first was used`);
      continue;
    }
    byIndex.set(shard.manifest.shard.index, shard);
  }
  for (let index = 1; index <= n; index++) {
    if (byIndex.has(index)) continue;
    const extra = index === 1 && (reference.settings.fuzzRuns > 0 || reference.settings.coverage) ? ' (it runs the generated workloads and the coverage run)' : '';
    problems.push(`shard ${index} of ${n} missing: its scenarios did not run${extra}`);
  }
  const used = [...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, shard]) => shard);
  const first = byIndex.get(1);
  const campaign = first === undefined ? null : campaignProblem(first.manifest);
  if (campaign !== null) problems.push(`shard 1 of ${n} (${first!.dir}): ${campaign}`);
  for (const shard of used) {
    const label = `shard ${shard.manifest.shard.index} of ${n} (${shard.dir})`;
    // Two runs of cucumber never write the same ids and times: a copy would prove determinism without a second run.
    if (shard.first !== null && shard.second !== null && meaningfulLines(shard.first) === meaningfulLines(shard.second)) {
      problems.push(`${label}: the message stream of its second run is a copy of its first (the same ids and times), not a second run; it was left out`);
      shard.second = null;
    }
    for (const [run, text] of [
      ['first', shard.first],
      ['second', shard.second],
    ] as const) {
      if (text === null) {
        problems.push(`${label} has no message stream of its ${run} run`);
        continue;
      }
      const broken = firstLineNotJson(text);
      if (broken !== null) {
        // Left out of the merge: a stream cut short or damaged is a gap, never read into a crash.
        problems.push(`${label}: line ${broken} of the message stream of its ${run} run is not JSON (cut short or damaged); the stream was left out`);
        shard[run] = null;
        continue;
      }
      const seen = suiteIdentity(text);
      if (seen.digest !== shard.manifest.suite.digest) {
        problems.push(`${label}: the message stream of its ${run} run is of another suite than its manifest names`);
        continue;
      }
      const share = shareOf(seen.pickles, shard.manifest.shard);
      if (share.join('\n') !== seen.ran.join('\n')) {
        problems.push(`${label}: its ${run} run ran ${seen.ran.length} scenarios, not exactly its share of ${share.length}`);
      }
    }
  }
  return { used, reference, problems };
}

/** Replaces every quoted id of `map` in an envelope's JSON text. */
function remap(line: string, map: Map<string, string>): string {
  if (map.size === 0) return line;
  return line.replace(/"([0-9A-Za-z-]{8,})"/g, (whole, id: string) => {
    const to = map.get(id);
    return to === undefined ? whole : JSON.stringify(to);
  });
}

const DEFINITIONS = ['meta', 'source', 'gherkinDocument', 'pickle', 'stepDefinition', 'hook', 'parameterType', 'undefinedParameterType', 'parseError'];

/**
 * Merges the message streams of one run of every shard into the stream an unsharded run writes:
 * the first stream's definitions (meta, sources, Gherkin documents, pickles, step definitions,
 * hooks) and run start; every shard's test cases and their results, with the ids of its own
 * pickles, steps, hooks and step definitions mapped onto the first stream's, ordered by the
 * pickles' order; one testRunFinished that succeeded only when every shard's did (with each
 * failure's message). Streams of shards that were never given leave their pickles without a
 * test case: not run.
 */
export function mergeStreams(streams: { shard: number; text: string }[]): string {
  if (streams.length === 0) return '';
  const parsed = streams.map((s) => ({ shard: s.shard, lines: s.text.split('\n').filter((line) => line.trim() !== '') }));
  const kindOf = (line: string): string => {
    const match = /^\{"([A-Za-z]+)"/.exec(line);
    return match ? match[1] : '';
  };
  const reference = parsed[0];
  const refEnvelopes = reference.lines.map((line) => ({ line, kind: kindOf(line) }));
  const refParsed = (kind: string) => refEnvelopes.filter((e) => e.kind === kind).map((e) => JSON.parse(e.line) as Record<string, any>);
  const refPickles = new Map(refParsed('pickle').map((e) => [keyOf(e.pickle), e.pickle as { id: string; steps: { id: string }[] }]));
  const pickleOrder = new Map([...refPickles.keys()].map((key, i) => [refPickles.get(key)!.id, i]));
  const refStepDefinitions = refParsed('stepDefinition').map((e) => e.stepDefinition as { id: string });
  const refHooks = refParsed('hook').map((e) => e.hook as { id: string });
  const refParameterTypes = refParsed('parameterType').map((e) => e.parameterType as { id: string });
  const refRunStarted = refParsed('testRunStarted')[0]?.testRunStarted as { id: string } | undefined;

  const definitions: string[] = [];
  let runStarted: string | null = null;
  const runLevel: string[] = [];
  const cases: { order: number; line: string }[] = [];
  const attempts: { order: number; seq: number; lines: string[] }[] = [];
  const finished: { shard: number; success: boolean; message: string | null; timestamp: unknown }[] = [];
  let seq = 0;

  for (const stream of parsed) {
    const own = stream.lines.map((line) => ({ line, kind: kindOf(line) }));
    const ownParsed = (kind: string) => own.filter((e) => e.kind === kind).map((e) => JSON.parse(e.line) as Record<string, any>);
    const map = new Map<string, string>();
    if (stream !== reference) {
      for (const e of ownParsed('pickle')) {
        const target = refPickles.get(keyOf(e.pickle));
        if (!target) continue;
        map.set(e.pickle.id, target.id);
        (e.pickle.steps as { id: string }[]).forEach((step, i) => target.steps[i] && map.set(step.id, target.steps[i].id));
      }
      ownParsed('stepDefinition').forEach((e, i) => refStepDefinitions[i] && map.set(e.stepDefinition.id, refStepDefinitions[i].id));
      ownParsed('hook').forEach((e, i) => refHooks[i] && map.set(e.hook.id, refHooks[i].id));
      ownParsed('parameterType').forEach((e, i) => refParameterTypes[i] && map.set(e.parameterType.id, refParameterTypes[i].id));
      const started = ownParsed('testRunStarted')[0]?.testRunStarted as { id: string } | undefined;
      if (started && refRunStarted) map.set(started.id, refRunStarted.id);
    }
    const caseOrder = new Map<string, number>();
    const startedOrder = new Map<string, number>();
    const groups = new Map<string, { order: number; seq: number; lines: string[] }>();
    for (const { line, kind } of own) {
      if (DEFINITIONS.includes(kind)) {
        if (stream === reference) definitions.push(line);
        continue;
      }
      if (kind === 'testRunStarted') {
        if (stream === reference) runStarted = line;
        continue;
      }
      if (kind === 'testRunFinished') {
        const f = (JSON.parse(line) as { testRunFinished: { success: boolean; message?: string; exception?: { message?: string }; timestamp: unknown } }).testRunFinished;
        finished.push({ shard: stream.shard, success: f.success, message: f.exception?.message ?? f.message ?? null, timestamp: f.timestamp });
        continue;
      }
      const mapped = remap(line, map);
      const value = JSON.parse(mapped) as Record<string, any>;
      if (kind === 'testCase') {
        const order = pickleOrder.get(value.testCase.pickleId) ?? Number.MAX_SAFE_INTEGER;
        caseOrder.set(value.testCase.id, order);
        cases.push({ order, line: mapped });
        continue;
      }
      if (kind === 'testCaseStarted') {
        const order = caseOrder.get(value.testCaseStarted.testCaseId) ?? Number.MAX_SAFE_INTEGER;
        startedOrder.set(value.testCaseStarted.id, order);
        const group = { order, seq: seq++, lines: [mapped] };
        groups.set(value.testCaseStarted.id, group);
        attempts.push(group);
        continue;
      }
      const body = value[kind] as { testCaseStartedId?: string } | undefined;
      const group = body?.testCaseStartedId ? groups.get(body.testCaseStartedId) : undefined;
      if (group) group.lines.push(mapped);
      else if (stream === reference) runLevel.push(mapped);
      else runLevel.push(mapped);
    }
  }
  cases.sort((a, b) => a.order - b.order);
  attempts.sort((a, b) => a.order - b.order || a.seq - b.seq);
  const failed = finished.filter((f) => !f.success);
  const last = finished.map((f) => f.timestamp).filter(Boolean).pop();
  const refFinished = finished.find((f) => f.shard === reference.shard);
  const out = [...definitions];
  if (runStarted !== null) out.push(runStarted);
  out.push(...cases.map((c) => c.line));
  out.push(...runLevel);
  for (const attempt of attempts) out.push(...attempt.lines);
  if (finished.length === streams.length) {
    const testRunFinished: Record<string, unknown> = {};
    if (refRunStarted) testRunFinished.testRunStartedId = refRunStarted.id;
    testRunFinished.timestamp = last ?? refFinished?.timestamp ?? { seconds: 0, nanos: 0 };
    testRunFinished.success = failed.length === 0;
    const messages = failed.filter((f) => f.message !== null).map((f) => (streams.length > 1 ? `shard ${f.shard}: ${f.message}` : f.message!));
    if (messages.length > 0) testRunFinished.message = messages.join('; ');
    out.push(JSON.stringify({ testRunFinished }));
  }
  return `${out.join('\n')}\n`;
}
