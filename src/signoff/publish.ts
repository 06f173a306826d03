// Publishing: the sign-off built from a run folder's streams (model, Markdown, HTML, JSON, figures)
// or a shard's manifest, written into the unpublished run folder and published as one set
// (write.ts); the names of each set, and which suite and variables the sign-off names.
import fs from 'node:fs';
import path from 'node:path';
import { renderFigure, type FigureCache } from '../report/figure';
import { compareRuns } from './determinism';
import { renderHtml, summaryChart } from './html';
import { ASSETS_DIR, renderMarkdown, SUMMARY_CHART } from './markdown';
import { RunModel } from './messages';
import { anchorsOf, buildSignoff, Gate, parseGlossary, RERUN_MESSAGES, SignoffModel, Subject, SuiteScope } from './model';
import type { CampaignResult } from '../fuzz/campaign';
import { type FaultCheck } from './faults';
import { type IsolationCheck } from './isolation';
import { toSignoffJson } from './json';
import { publishRun } from './write';
import { SHARD_FORMAT, SHARD_MANIFEST, ShardManifest, ShardSpec, suiteIdentity } from './shards';
import { sha256Of, sharedOptions, signatureOf, SIGNING_KEY_ENV } from './shardTrust';
import { narrowedReasons, RunVariable, variablesThatChangeRun } from './narrowed';
import { countOf } from './context';
import type { DriverContext } from './context';
import type { Measured } from './coverageRun';
import { commandOf } from './options';
import type { Prepared } from './prepare';
import { readRun, textOrNull } from './runStreams';
import { SET_NAMES, SHARD_SET_NAMES } from './outputSet';

/** Which suite a sign-off qualifies: the features folder and registry, and whether both are the repository's own. */
function suiteScope(prepared: Prepared, features: string): SuiteScope {
  const { file, digest } = prepared.requirements;
  return { features, requirements: file, requirements_digest: digest, repository_suite: features === 'features' && file === 'requirements.yaml' };
}

/**
 * Environment variables that change what a qualification runs, as set (narrowed.ts lists them); a
 * merge names the variables its shards recorded, and its own that change what it reads or renders.
 */
export function environmentOf(env: NodeJS.ProcessEnv, merge: boolean): RunVariable[] {
  const all = variablesThatChangeRun(env);
  return merge ? all.filter((v) => MERGE_VARIABLES.test(v.name)) : all;
}
/** The variables that change what a merge itself does (it runs no scenario): git's, Node's options, the figure cache. */
const MERGE_VARIABLES = /^(GIT_|NODE_OPTIONS$|KVQUAL_FIGURE_CACHE$)/;

/**
 * Writes a shard's manifest into its run folder and publishes the shard's set. It returns what its
 * share did, in words to print, as a preview only: the verdict belongs to the merge of all n shards.
 */
export function publishShard(
  prepared: Prepared,
  ctx: DriverContext,
  runDir: string,
  made: {
    shard: ShardSpec;
    perturbation: string | null;
    generated: CampaignResult | null;
    measured: Measured | null;
    faults: FaultCheck | null;
    channels: (first: RunModel | null, second: RunModel | null) => string[];
    nonces: { first: string; second: string };
  },
): string {
  const { shard } = made;
  const firstFile = path.join(runDir, 'messages.ndjson');
  const firstText = fs.existsSync(firstFile) ? fs.readFileSync(firstFile, 'utf8') : '';
  const secondText = textOrNull(path.join(runDir, RERUN_MESSAGES));
  const identity = suiteIdentity(firstText);
  const first = readRun(firstFile);
  const second = readRun(path.join(runDir, RERUN_MESSAGES));
  const manifest: ShardManifest = {
    format: SHARD_FORMAT,
    shard,
    suite: { digest: identity.digest, scenarios: identity.pickles.length, features: prepared.features },
    subject: ctx.subject(),
    settings: { fuzzRuns: prepared.options.fuzzRuns, fuzzSeed: prepared.fuzzSeed, coverage: prepared.options.coverage },
    perturbation: made.perturbation,
    command: commandOf(prepared.options, { perturbation: made.perturbation, planted: prepared.plantedDefect }),
    generated: made.generated,
    coverage: made.measured === null ? null : { summary: made.measured.summary, run: made.measured.run, note: made.measured.note },
    faults: made.faults,
    trust: {
      tree: ctx.git?.(['rev-parse', 'HEAD^{tree}']) ?? null,
      requirements: prepared.requirements,
      options: sharedOptions(prepared.options.argv),
      environment: environmentOf(ctx.env, false),
      channels: made.channels(first.run, second.run),
      streams: {
        first: fs.existsSync(firstFile) ? { sha256: sha256Of(firstText), nonce: made.nonces.first } : null,
        second: secondText === null ? null : { sha256: sha256Of(secondText), nonce: made.nonces.second },
      },
    },
  };
  const key = ctx.env[SIGNING_KEY_ENV];
  if (key !== undefined && key !== '') manifest.signature = signatureOf(manifest, key);
  fs.writeFileSync(path.join(runDir, SHARD_MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
  publishRun(prepared.out, runDir, SHARD_SET_NAMES, SET_NAMES);
  const ran = new Set(identity.ran);
  const mine = (first.run?.scenarios ?? []).filter((s) => ran.has(s.key));
  const passed = mine.filter((s) => s.status === 'PASSED').length;
  const determinism = first.run === null ? null : compareRuns({ ...first.run, scenarios: mine }, second.run === null ? null : { ...second.run, scenarios: second.run.scenarios.filter((s) => ran.has(s.key)) }, second.problem);
  return (
    `its share: ${passed} of ${countOf(mine.length, 'scenario')} passed (of ${identity.pickles.length} in the suite); ` +
    `${determinism === null ? 'no first run to compare' : determinism.identical ? 'both runs identical' : `determinism: ${determinism.problem ?? `${countOf(determinism.differences.length, 'scenario')} differed`}`}\n` +
    `not a verdict: merge all ${shard.count} shards with npm run qualify -- --merge <their --out folders>`
  );
}

interface SignoffParts {
  first: { run: RunModel | null; problem: string | null };
  second: { run: RunModel | null; problem: string | null };
  perturbation: string | null;
  generated: CampaignResult | null;
  measured: Measured | null;
  /** Gaps of a merge (missing, repeated or foreign shards); empty otherwise. */
  shardProblems: string[];
  /** The coverage note when the coverage run was not made here (a merge). */
  coverageNote?: string;
  /** The figures of the first run's scenarios, when already rendered (while other phases ran). */
  figures?: Map<string, string>;
  /** What was qualified, when not this checkout (a merge: the commit, tree and versions the shards ran). */
  subject?: Subject;
  /** The features folder the shards ran (a merge), when not this run's --features. */
  features?: string;
  /** The planted-fault check (faults.ts; a merge's: its shards' merged). */
  faults?: FaultCheck | null;
  /** The order-independence proof (isolation.ts); null when it was not asked for (--isolation). */
  isolation?: IsolationCheck | null;
  /** The options the shards ran with (a merge), when not this run's. */
  settings?: { coverage: boolean; fuzzRuns: number };
  /** The variables the shards recorded (a merge). */
  environment?: RunVariable[];
  /** Gates decided outside the model (channels.ts). */
  checks?: Gate[];
  /** Reasons the run is narrowed besides those of its options, tree and variables (a merge's own checkout). */
  narrowed?: string[];
}


/** Two lists of variables as one, each name=value once, in name order. */
function mergeVariables(a: readonly RunVariable[], b: readonly RunVariable[]): RunVariable[] {
  const byKey = new Map([...a, ...b].map((v) => [`${v.name}=${v.value}`, v]));
  return [...byKey.values()].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

/** Each scenario's figure (SVG) by its key, from its evidence. */
export async function renderFigures(run: RunModel, cache: FigureCache | undefined): Promise<Map<string, string>> {
  const figures = new Map<string, string>();
  const anchors = anchorsOf(run.scenarios);
  for (const scenario of run.scenarios) {
    if (!scenario.evidence) continue;
    const svg = await renderFigure(scenario.evidence, anchors.get(scenario.key)!, cache);
    if (svg !== null) figures.set(scenario.key, svg);
  }
  return figures;
}

/** Builds the sign-off from the run folder's streams, writes it there and publishes the set. */
export async function publishSignoff(prepared: Prepared, ctx: DriverContext, runDir: string, parts: SignoffParts): Promise<SignoffModel> {
  const { options, registry } = prepared;
  const { first, second, measured } = parts;
  const runModel: RunModel = first.run ?? { scenarios: [], sources: [], cucumberVersion: null, phrases: [], runErrors: [first.problem!], finished: false };
  const determinism = compareRuns(runModel, second.run, second.problem);
  const figures = parts.figures ?? (await renderFigures(runModel, ctx.figureCache));
  const subject = parts.subject ?? ctx.subject();
  const environment = mergeVariables(parts.environment ?? [], environmentOf(ctx.env, options.merge !== null));
  const scope = suiteScope(prepared, parts.features ?? prepared.features);
  const settings = parts.settings ?? { coverage: options.coverage, fuzzRuns: options.fuzzRuns };
  const narrowed = [...narrowedReasons({ features: scope.features, requirements: scope.requirements, ...settings, worktree: subject.worktree, variables: environment }), ...(parts.narrowed ?? [])];
  const built = buildSignoff({
    campaign: options.campaign ?? `${subject.packageName} ${subject.packageVersion} release qualification`,
    date: ctx.date(),
    subject,
    command: commandOf(options, options.merge === null ? { perturbation: parts.perturbation, planted: prepared.plantedDefect } : { perturbation: null, planted: false }, environment),
    scope,
    environment,
    narrowed,
    run: runModel,
    determinism,
    registry,
    coverage: measured?.summary ?? null,
    coverageNote: parts.coverageNote ?? (measured === null ? 'not requested (--no-coverage)' : measured.note),
    coverageRun: measured?.run ?? null,
    perturbation: parts.perturbation,
    figures,
    companions: [
      { label: "cucumber's HTML report", file: 'cucumber.html' },
      { label: 'JUnit XML', file: 'junit.xml' },
      { label: 'message stream', file: 'messages.ndjson' },
      { label: 'message stream of the second run', file: RERUN_MESSAGES },
    ],
    baseline: prepared.baseline,
    generated: parts.generated,
    glossary: fs.existsSync(path.join(ctx.root, 'docs', 'glossary.md')) ? parseGlossary(fs.readFileSync(path.join(ctx.root, 'docs', 'glossary.md'), 'utf8')) : [],
    shardProblems: parts.shardProblems,
    faults: parts.faults,
    isolation: parts.isolation,
    checks: parts.checks,
  });
  // Everything is written into the unpublished run folder, then published in one rename.
  fs.mkdirSync(path.join(runDir, ASSETS_DIR), { recursive: true });
  for (const view of built.views) if (view.figure !== null) fs.writeFileSync(path.join(runDir, ASSETS_DIR, view.figureFile!), view.figure);
  fs.writeFileSync(path.join(runDir, ASSETS_DIR, SUMMARY_CHART), summaryChart(built.matrix));
  fs.writeFileSync(path.join(runDir, 'signoff.md'), renderMarkdown(built));
  fs.writeFileSync(path.join(runDir, 'signoff.html'), renderHtml(built));
  fs.writeFileSync(path.join(runDir, 'signoff.json'), `${JSON.stringify(toSignoffJson(built), null, 1)}\n`);
  publishRun(prepared.out, runDir, SET_NAMES, SHARD_SET_NAMES);
  return built;
}

