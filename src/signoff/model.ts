// The sign-off model: everything the signoff.md / signoff.html renderers print, computed from a
// cucumber run's message stream, the second run's digests, the requirement registry and the
// coverage summary. Owns the verdict: QUALIFIED only when every scenario passed, every scenario
// traces to a registered requirement and every requirement has a scenario, both runs did exactly
// the same thing, the compiled coverage run (when made) passed every test and scenario again, and
// the determinism test double was not active, (when a fuzz campaign ran) every generated
// workload kept every invariant, (when merged from shards) the shards were one complete set, every
// scenario that passed failed under some planted simulator fault (faults.ts) and (with --isolation)
// every scenario passed alone (isolation.ts). Pure: the date, versions and git facts come from the caller.
import { createHash } from 'node:crypto';
import { digestOf } from '../report/canonical';
import { HOOK_ATTACHMENT_FILES, type Measurement } from '../report/evidence';
import { figure as coverageFigure, type CoverageFigure, type CoverageRun, type CoverageSummary, type SkippedTest } from './coverage';
import { NOT_RUN_IN_EITHER, type Determinism } from './determinism';
import type { Registry, Requirement, Traceability } from './requirements';
import { traceRequirements, uncoveredRequirements } from './requirements';
import { replayCommand } from '../report/replayCommand';
import type { RunModel, RunScenario, RunStep, ScenarioStatus } from './messages';
import { BaselineDiff, baselineSummary, diffBaseline, stepsText } from './baseline';
import type { SignoffJson } from './jsonSchema';
import { nearestPhrases } from './suggest';
import { slug } from './text';
import { compareNatural } from '../order';
import type { CampaignResult } from '../fuzz/campaign';
import { TOO_HEAVY_MEANING } from '../fuzz/runCase';
import { INVARIANT_CLAIMS } from '../fuzz/invariants';
import { PLANTED_DEFECT_ENV, PLANTED_DEFECT_MEANING } from '../fuzz/planted';
import { fuzzCaseCommand } from '../fuzz/command';
import { faultSummary, type FaultCheck } from './faults';
import { isolationSummary, type IsolationCheck } from './isolation';
import { NARROWED_VERDICT } from './verdicts';

const HOOK_ATTACHMENT_NAMES: string[] = Object.values(HOOK_ATTACHMENT_FILES);

export interface Subject {
  packageName: string;
  packageVersion: string;
  commit: string;
  /** "clean", or what differs from the commit. */
  worktree: string;
  node: string;
}

export interface SignoffInput {
  campaign: string;
  /** The one line that differs between two sign-offs of the same run. */
  date: string;
  subject: Subject;
  /** The command that produced the report, as a reader would type it. */
  command: string;
  run: RunModel;
  determinism: Determinism;
  registry: Registry;
  /** Null when coverage was not measured; `coverageNote` then says why. */
  coverage: CoverageSummary | null;
  coverageNote: string;
  /** The compiled run that measured coverage (its failures fail a gate); null when coverage was not requested. */
  coverageRun: CoverageRun | null;
  /** KVQUAL_PERTURB of the second run, when the determinism test double was active. */
  perturbation: string | null;
  /** Scenario key → its figure (SVG). */
  figures: Map<string, string>;
  /** File names of the cucumber reports written beside the sign-off. */
  companions: { label: string; file: string }[];
  /** The generated-workload campaign (npm run fuzz) that ran with the suite; absent when skipped. */
  generated?: CampaignResult | null;
  /** The domain words (docs/glossary.md), shown folded at the end of the report. */
  glossary: GlossaryEntry[];
  /** An earlier signoff.json (--baseline) to compare with, or null. */
  baseline: SignoffJson | null;
  /**
   * Which suite ran: the features folder and the requirement registry as given (relative to the
   * repository), the registry's digest, and whether both are the repository's own (`features/`,
   * `requirements.yaml`); anything else qualifies a subset, which Needs attention says. Absent in
   * sign-offs made before it was recorded.
   */
  scope?: SuiteScope;
  /**
   * Environment variables that changed what ran (KVQUAL_SEED, KVQUAL_FIGURE_CACHE), each named
   * under Needs attention and on the "Produced by" line.
   */
  environment?: { name: string; value: string; meaning: string }[];
  /**
   * A merge of shards (`--merge`): each gap of the shard set in words ("shard 2 of 3 missing"); any
   * fails the *Shards* gate, which appears only then. Absent or empty for an unsharded run.
   */
  shardProblems?: string[];
  /**
   * The planted-fault check (faults.ts): its survivors checked nothing and cover no requirement; it
   * is a gate of its own (a merge's is its shards' checks merged). Null when it did not run; absent in older callers.
   */
  faults?: FaultCheck | null;
  /**
   * The order-independence proof (isolation.ts, `--isolation`): a gate of its own when it ran; null
   * when it did not (the Determinism gate says order independence was not proven); absent in older callers.
   */
  isolation?: IsolationCheck | null;
  /**
   * Why this run is not a release sign-off (narrowed.ts): another suite, no coverage run, fewer
   * generated workloads, a tree that is not its commit, a variable that changes what runs. When
   * every gate passes, any of them makes the verdict NARROWED_VERDICT, never QUALIFIED.
   */
  narrowed?: string[];
  /** Gates computed outside the model (the channels' agreement, the shards' provenance), each failing the verdict when failed. */
  checks?: Gate[];
}

export interface SuiteScope {
  features: string;
  requirements: string;
  requirements_digest: string;
  /** Both are the repository's own: `features/` and `requirements.yaml`. */
  repository_suite: boolean;
}

/** Generated workloads the sign-off runs by default, as `npm test` does, and their seed when KVQUAL_SEED is not set. */
export const DEFAULT_FUZZ_RUNS = 1000;
export const DEFAULT_FUZZ_SEED = 1893;

export interface GlossaryEntry {
  term: string;
  meaning: string;
}

/** The rows of docs/glossary.md's table (`| Term | Meaning |`). */
export function parseGlossary(markdown: string): GlossaryEntry[] {
  const rows: GlossaryEntry[] = [];
  for (const line of markdown.split('\n')) {
    const match = /^\| (.+?) \| (.+) \|$/.exec(line.trim());
    if (!match || match[1] === 'Term' || /^-+$/.test(match[1].replace(/\|/g, ''))) continue;
    rows.push({ term: match[1].trim(), meaning: match[2].trim() });
  }
  return rows;
}

export interface Gate {
  title: string;
  passed: boolean;
  summary: string;
}

export interface ScenarioView {
  scenario: RunScenario;
  anchor: string;
  seed: number | null;
  replay: string;
  /** Asset file name of its figure (under signoff-assets/), or null. */
  figureFile: string | null;
  figure: string | null;
  requirements: string[];
  otherTags: string[];
  notes: { title: string; text: string }[];
  /** Its undefined steps, each with the three nearest existing phrases. */
  suggestions: { step: RunStep; phrases: string[] }[];
  /** It did something different the second time (determinism), or changed since the baseline. */
  changed: boolean;
  /** Shown unfolded: it did not pass, or it changed. */
  open: boolean;
}

export interface MatrixRow {
  requirement: Requirement;
  status: string;
  ok: boolean;
  scenarios: { view: ScenarioView; measured: string[] }[];
}

export interface SignoffModel {
  input: SignoffInput;
  qualified: boolean;
  verdict: 'QUALIFIED' | 'NOT QUALIFIED' | typeof NARROWED_VERDICT;
  /** Why the run is not a release sign-off (empty for the project's whole qualification). */
  narrowed: string[];
  gates: Gate[];
  scenarioSet: { digest: string; files: number; scenarios: number };
  cucumberVersion: string;
  trace: Traceability;
  matrix: MatrixRow[];
  views: ScenarioView[];
  features: { name: string; description: string; uri: string; views: ScenarioView[] }[];
  notPassed: ScenarioView[];
  /** Scenarios that passed but checked nothing, each with why (see whyCheckedNothing). */
  checkedNothing: { view: ScenarioView; why: string }[];
  /** Every step that did not pass; an undefined one with the three nearest existing phrases ("did you mean"). */
  stepsNotPassed: { view: ScenarioView; step: RunStep; suggestions: string[] }[];
  untraced: ScenarioView[];
  unknownTags: { view: ScenarioView; tag: string }[];
  uncovered: Requirement[];
  counts: Record<ScenarioStatus, number>;
  /** What a reader must look at first, in words, each with the section that explains it. */
  attention: { text: string; href: string }[];
  /** What changed since the baseline sign-off, or null without one. */
  baseline: BaselineDiff | null;
}

const STATUSES: ScenarioStatus[] = ['PASSED', 'FAILED', 'UNDEFINED', 'PENDING', 'AMBIGUOUS', 'SKIPPED', 'UNKNOWN', 'NOT RUN'];

/** Words for a status in a sentence. */
export function statusWord(status: ScenarioStatus | RunStep['status']): string {
  return status === 'NOT RUN' ? 'not run' : status.toLowerCase();
}

/** "1 scenario", "3 scenarios". */
export function countOf(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** File name of the second run's message stream, kept beside the report for a determinism inquiry. */
export const RERUN_MESSAGES = 'messages-rerun.ndjson';

/** Digest of the scenario set: the feature sources the run read, by path. */
export function scenarioSetDigest(run: RunModel): string {
  return digestOf(run.sources.map((s) => ({ uri: s.uri, data: s.data })));
}

/** The scenario's anchor in the reports (and its figure's file name and SVG id prefix), before any clash with another's is resolved (see anchorsOf). */
export function anchorOf(scenario: { uri: string; line: number }): string {
  return `sc-${slug(scenario.uri.replace(/\.feature$/, ''))}-${scenario.line}`;
}

/**
 * Every scenario's anchor, by its key (`uri:line`): anchorOf, except where two files slug alike
 * (`same_instant.feature` and `same-instant.feature`): then each of those takes a short hash of its
 * file's path as well, so no card, link or figure file stands for two scenarios.
 */
export function anchorsOf(scenarios: readonly { uri: string; line: number }[]): Map<string, string> {
  const uris = new Map<string, Set<string>>();
  for (const scenario of scenarios) {
    const plain = anchorOf(scenario);
    const seen = uris.get(plain) ?? new Set<string>();
    seen.add(scenario.uri);
    uris.set(plain, seen);
  }
  const anchors = new Map<string, string>();
  for (const scenario of scenarios) {
    const plain = anchorOf(scenario);
    const clash = uris.get(plain)!.size > 1;
    anchors.set(`${scenario.uri}:${scenario.line}`, clash ? `${plain}-${createHash('sha256').update(scenario.uri).digest('hex').slice(0, 8)}` : plain);
  }
  return anchors;
}

function viewOf(scenario: RunScenario, registry: Registry, figures: Map<string, string>, anchor: string): ScenarioView {
  const known = new Set(registry.requirements.map((r) => `@${r.id}`));
  const seed = scenario.evidence?.seed ?? null;
  const figure = figures.get(scenario.key) ?? null;
  const notes = scenario.attachments
    .filter((a) => a.mediaType.startsWith('text/') && !HOOK_ATTACHMENT_NAMES.includes(a.fileName ?? ''))
    .map((a) => ({ title: a.fileName ?? `attachment (${a.mediaType})`, text: a.text }));
  return {
    scenario,
    anchor,
    seed,
    replay: replayCommand(seed, scenario.uri, scenario.line),
    figureFile: figure === null ? null : `${anchor}.svg`,
    figure,
    requirements: scenario.tags
      .filter((t) => known.has(t))
      .map((t) => t.slice(1))
      .sort(compareNatural),
    otherTags: scenario.tags.filter((t) => !known.has(t)),
    notes,
    suggestions: [],
    changed: false,
    open: scenario.status !== 'PASSED',
  };
}

/** Computes the sign-off: verdict, matrix, gaps and per-scenario views. */
export function buildSignoff(input: SignoffInput): SignoffModel {
  const { run, registry, determinism } = input;
  const anchors = anchorsOf(run.scenarios);
  const views = run.scenarios.map((s) => viewOf(s, registry, input.figures, anchors.get(s.key)!));
  const byKey = new Map(views.map((v) => [v.scenario.key, v]));
  // The registry in natural order of its ids (TIME-1, TIME-2, TIME-10): every list of requirements a reader meets follows it.
  const trace = traceRequirements(
    { requirements: [...registry.requirements].sort((a, b) => compareNatural(a.id, b.id)) },
    run.scenarios.map((s) => ({ name: s.name, uri: s.uri, line: s.line, tags: s.tags })),
  );
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<ScenarioStatus, number>;
  for (const view of views) counts[view.scenario.status]++;

  const vacuous = checkedNothing(views, new Set(input.faults?.survivors.map((s) => s.key) ?? []));
  const checkedNothingViews = new Set(vacuous.map(({ view }) => view));
  const matrix: MatrixRow[] = trace.rows.map((row) => {
    const its = row.scenarios.map((s) => byKey.get(`${s.uri}:${s.line}`)!);
    const failing = its.filter((v) => v.scenario.status !== 'PASSED').length;
    const empty = its.filter((v) => checkedNothingViews.has(v)).length;
    const status =
      its.length === 0
        ? row.requirement.status === 'planned'
          ? 'NOT COVERED (planned)'
          : 'NOT COVERED'
        : failing === 0 && empty === 0
          ? `covered: ${its.length}/${its.length} passed`
          : [failing > 0 ? `${failing} of ${its.length} not passed` : '', empty > 0 ? `${empty} of ${its.length} passed but checked nothing` : ''].filter(Boolean).join('; ');
    return {
      requirement: row.requirement,
      status,
      ok: its.length > 0 && failing === 0 && empty === 0,
      scenarios: its.map((view) => ({ view, measured: (view.scenario.evidence?.measurements ?? []).map(measuredText) })),
    };
  });

  const notPassed = views.filter((v) => v.scenario.status !== 'PASSED');
  const stepsNotPassed = views.flatMap((view) =>
    view.scenario.steps
      .filter((step) => step.status !== 'PASSED')
      .map((step) => ({ view, step, suggestions: step.status === 'UNDEFINED' && step.kind === 'step' ? nearestPhrases(step.text, run.phrases) : [] })),
  );
  for (const { view, step, suggestions } of stepsNotPassed) if (suggestions.length > 0) view.suggestions.push({ step, phrases: suggestions });
  const untraced = trace.findings.filter((f) => f.kind === 'untraced-scenario').map((f) => byKey.get(`${f.scenario!.uri}:${f.scenario!.line}`)!);
  const unknownTags = trace.findings
    .filter((f) => f.kind === 'unknown-tag')
    .map((f) => ({ view: byKey.get(`${f.scenario!.uri}:${f.scenario!.line}`)!, tag: `@${f.requirement}` }));
  const uncovered = uncoveredRequirements(trace);

  const total = views.length;
  // A survivor of every planted fault fails the Planted faults gate, which names it: not this one again.
  const emptyHere = vacuous.filter((v) => v.why !== CHECKED_NOTHING_WHY[3]);
  const scenariosGate: Gate = {
    title: 'Scenarios',
    passed: total > 0 && counts.PASSED === total && emptyHere.length === 0 && run.runErrors.length === 0,
    summary:
      total === 0
        ? 'no scenario ran'
        : `${counts.PASSED} of ${countOf(total, 'scenario')} passed` +
          (counts.PASSED < total
            ? ` (${STATUSES.filter((s) => s !== 'PASSED' && counts[s] > 0)
                .map((s) => `${counts[s]} ${statusWord(s)}`)
                .join(', ')})`
            : '') +
          CHECKED_NOTHING_WHY.map((why) => emptyHere.filter((v) => v.why === why))
            .filter((some) => some.length > 0)
            .map((some) => `; ${countOf(some.length, some[0].why === CHECKED_NOTHING_WHY[2] ? 'Examples table' : 'passed scenario')} ${some[0].why}: ${some.map((v) => `"${v.view.scenario.name}"`).join(', ')}`)
            .join('') +
          (run.runErrors.length > 0 ? `; the run itself reported ${countOf(run.runErrors.length, 'problem')}` : ''),
  };
  const traceProblems = untraced.length + unknownTags.length + uncovered.length;
  const traceGate: Gate = {
    title: 'Requirement traceability',
    passed: traceProblems === 0,
    summary:
      traceProblems === 0
        ? `every scenario traces to a registered requirement; all ${registry.requirements.length} requirements have scenarios`
        : [
            untraced.length > 0 ? `${countOf(untraced.length, 'scenario')} without a requirement tag` : '',
            unknownTags.length > 0 ? `${countOf(unknownTags.length, 'unknown requirement tag')}` : '',
            uncovered.length > 0 ? `${countOf(uncovered.length, 'requirement')} without a scenario (${uncovered.map((r) => r.id).join(', ')})` : '',
          ]
            .filter(Boolean)
            .join('; '),
  };
  const neverRan = determinism.differences.filter((d) => d.reason === NOT_RUN_IN_EITHER);
  const differed = determinism.differences.filter((d) => d.reason !== NOT_RUN_IN_EITHER);
  const determinismGate: Gate = {
    title: 'Determinism',
    passed: determinism.identical,
    summary: determinism.problem
      ? `not proven: ${determinism.problem}`
      : determinism.identical
        ? `both runs identical for all ${countOf(determinism.rows.length, 'scenario')}`
        : [
            differed.length > 0 ? `${countOf(differed.length, 'scenario')} differed between the two runs: ${differed.map((d) => `"${d.name}"`).join(', ')}` : '',
            neverRan.length > 0 ? `${countOf(neverRan.length, 'scenario')} not run in either run, so not proven: ${neverRan.map((d) => `"${d.name}"`).join(', ')}` : '',
          ]
            .filter(Boolean)
            .join('; '),
  };
  // Without --isolation the shuffled run 2 is all there is: it says what it does not prove.
  if (input.isolation === null) determinismGate.summary += '; order independence not proven (no --isolation)';
  const gates = [scenariosGate, traceGate, determinismGate];
  if (input.generated) gates.push({ title: 'Generated workloads', passed: generatedPassed(input.generated), summary: generatedSummary(input.generated) });
  const coverageRun = input.coverageRun;
  if (coverageRun !== null) {
    const tests = coverageRun.failures.filter((f) => f.kind === 'unit test');
    const scenarios = coverageRun.failures.filter((f) => f.kind === 'scenario');
    const failed = [
      tests.length > 0 ? `${countOf(tests.length, 'unit test')} failed` : '',
      scenarios.length > 0 ? `${countOf(scenarios.length, 'scenario')} did not pass` : '',
    ].filter(Boolean);
    gates.push({
      title: 'Coverage run',
      passed: coverageRun.problems.length === 0 && coverageRun.failures.length === 0,
      summary:
        coverageRun.problems.length > 0
          ? `could not complete: ${coverageRun.problems.join('; ')}`
          : failed.length > 0
            ? `on the compiled JavaScript, ${failed.join(' and ')}: ${coverageRun.failures.map((f) => `"${f.name}"`).join(', ')}`
            : coverageRunPassedSummary(coverageRun),
    });
  }
  if (input.faults) {
    const survivors = input.faults.survivors.length > 0 ? `: ${input.faults.survivors.map((s) => `"${s.name}"`).join(', ')}` : '';
    gates.push({ title: 'Planted faults', passed: input.faults.survivors.length === 0 && input.faults.problems.length === 0, summary: faultSummary(input.faults) + survivors });
  }
  if (input.isolation) gates.push({ title: 'Order independence', passed: input.isolation.dependent.length === 0 && input.isolation.problems.length === 0, summary: isolationSummary(input.isolation) });
  const shardProblems = input.shardProblems ?? [];
  if (shardProblems.length > 0) gates.push({ title: 'Shards', passed: false, summary: `the merged shards are not one complete set: ${shardProblems.join('; ')}` });
  gates.push(...(input.checks ?? []));
  const testDoubles = testDoubleSummaries(input, determinism);
  if (testDoubles.length > 0) gates.push({ title: 'Test double', passed: false, summary: testDoubles.join('; ') });
  const gatesPassed = gates.every((g) => g.passed);
  const narrowed = input.narrowed ?? [];
  const qualified = gatesPassed && narrowed.length === 0;

  for (const row of determinism.differences) {
    const view = byKey.get(row.key);
    if (view) {
      view.changed = true;
      view.open = true;
    }
  }
  const baseline =
    input.baseline === null
      ? null
      : diffBaseline(
          input.baseline,
          views.map((v) => ({
            key: v.scenario.key,
            uri: v.scenario.uri,
            name: v.scenario.name,
            status: v.scenario.status,
            digest: v.scenario.evidence?.digest ?? null,
            measurements: v.scenario.evidence?.measurements ?? [],
            steps: stepsText(v.scenario.steps),
          })),
        );
  if (baseline !== null) {
    for (const change of [...baseline.added, ...baseline.renamed, ...baseline.results, ...baseline.digests, ...baseline.measurements]) {
      const view = byKey.get(change.key);
      if (view) {
        view.changed = true;
        view.open = true;
      }
    }
  }
  const attention: SignoffModel['attention'] = [];
  if (gatesPassed && narrowed.length > 0) attention.push({ text: `Not a release sign-off: ${narrowed.join('; ')}.`, href: '#qualified' });
  if (input.perturbation !== null) attention.push({ text: `The determinism test double is active (KVQUAL_PERTURB="${input.perturbation}"): this run is not a sign-off.`, href: '#determinism' });
  if (input.generated?.planted_defect) attention.push({ text: `The generated workloads' test double is active (${PLANTED_DEFECT_ENV}=1, a planted defect): this run is not a sign-off.`, href: '#gaps' });
  for (const gate of gates) if (!gate.passed && gate.title !== 'Test double') attention.push({ text: `${gate.title}: ${gate.summary}`, href: GATE_SECTIONS[gate.title] ?? '#gaps' });
  if (!input.generated) attention.push({ text: 'No generated workloads ran (--fuzz-runs 0): the simulator\'s invariants were checked by the scenarios alone, and the sign-off has no generated-workloads gate.', href: '#gaps' });
  else if (input.generated.runs < DEFAULT_FUZZ_RUNS) attention.push({ text: `Only ${countOf(input.generated.runs, 'generated workload')} ran (--fuzz-runs ${input.generated.runs}), fewer than the ${DEFAULT_FUZZ_RUNS} a sign-off runs by default: a counterexample further into the campaign would not be seen.`, href: '#gaps' });
  if (input.scope && !input.scope.repository_suite) {
    attention.push({
      text: `Not the repository's suite: the features of ${input.scope.features}/ and the requirements of ${input.scope.requirements} (${shortDigest(input.scope.requirements_digest)}) ran, where the repository's are features/ and requirements.yaml: this sign-off qualifies that suite only.`,
      href: '#qualified',
    });
  }
  if (input.faults === null) attention.push({ text: 'The planted-fault check did not run: nothing shows that each scenario can fail.', href: '#gaps' });
  for (const variable of input.environment ?? []) attention.push({ text: `${variable.name}=${variable.value}: ${variable.meaning}.`, href: '#qualified' });
  const unchecked = input.generated ? tooHeavyAttention(input.generated) : null;
  if (unchecked !== null) attention.push({ text: unchecked, href: '#gaps' });
  const planned = trace.findings.filter((f) => f.kind === 'planned-requirement');
  if (planned.length > 0) attention.push({ text: `${countOf(planned.length, 'requirement')} still planned, without scenarios: ${planned.map((f) => f.requirement).join(', ')}`, href: '#gaps' });
  if (input.subject.worktree !== 'clean working tree') attention.push({ text: `The ${input.subject.worktree}: the report may not match the commit it names.`, href: '#qualified' });
  if (baseline !== null) attention.push({ text: `Since the baseline (${baseline.date}, commit ${baseline.commit.slice(0, 12)}, ${baseline.verdict}): ${baselineSummary(baseline)}.`, href: '#baseline' });
  if (baseline !== null && views.length > 0 && baseline.added.length === views.length && baseline.removed.length > 0) {
    attention.push({
      text: `The baseline shares no scenario with this run (none of its ${countOf(baseline.removed.length, 'scenario')} has this run's file and name, steps or place): is it a sign-off of another suite? Its comparison lists every scenario as added and removed.`,
      href: '#baseline',
    });
  }
  const skippedUnits = input.coverageRun?.skipped ?? [];
  if (skippedUnits.length > 0) attention.push({ text: `The coverage run skipped ${countOf(skippedUnits.length, 'unit test')}: ${skippedNames(skippedUnits)}.`, href: '#coverage' });
  if (input.coverageRun === null) attention.push({ text: `Coverage was not measured: ${input.coverageNote}. The compiled run did not check the suite again.`, href: '#coverage' });
  else if (input.coverage === null && input.coverageRun.problems.length === 0) attention.push({ text: `Coverage was not measured: ${input.coverageNote}.`, href: '#coverage' });

  const features: SignoffModel['features'] = [];
  for (const view of views) {
    let group = features[features.length - 1];
    if (!group || group.uri !== view.scenario.uri) {
      group = { name: view.scenario.feature.name, description: view.scenario.feature.description, uri: view.scenario.uri, views: [] };
      features.push(group);
    }
    group.views.push(view);
  }

  return {
    input,
    qualified,
    verdict: qualified ? 'QUALIFIED' : gatesPassed ? NARROWED_VERDICT : 'NOT QUALIFIED',
    narrowed,
    gates,
    scenarioSet: { digest: scenarioSetDigest(run), files: run.sources.length, scenarios: total },
    cucumberVersion: run.cucumberVersion ?? 'unknown',
    trace,
    matrix,
    views,
    features,
    notPassed,
    checkedNothing: vacuous,
    stepsNotPassed,
    untraced,
    unknownTags,
    uncovered,
    counts,
    attention,
    baseline,
  };
}

/**
 * A measured value as the sign-off shows it: its sentence, or, when the step that recorded it made
 * no assertion on it (Measurement.asserted false), the sentence marked as recorded, not asserted.
 */
export function measuredText(m: Measurement): string {
  return m.asserted === false ? `${m.text} (recorded by its step, not asserted)` : m.text;
}

/** Why a passed scenario checked nothing, in the words of the scenarios gate (see whyCheckedNothing). */
export const CHECKED_NOTHING_WHY = [
  'had no Then step, so nothing was asserted',
  'checked nothing (no simulation ran and no computation was recorded, so nothing its Then steps could have checked)',
  'of an outline has no rows, so the outline made no scenario of it and checked nothing',
  'passed under every planted simulator fault: Then steps that cannot tell a broken simulator from a working one',
] as const;

/**
 * Why a scenario that passed checked nothing, or null when it did check: it has no Then (no step
 * Gherkin typed an outcome; by the keyword in a stream without step types), or its evidence has
 * no digest (it ran no simulation, set up no cluster and recorded no computation with
 * KvWorld.recordComputation; every honest scenario of the suite has one). The project's steps fail a
 * scenario without a Then before it runs (steps/support/assertions.ts); this is the sign-off's
 * own check, which does not trust the steps to.
 */
export function whyCheckedNothing(scenario: RunScenario, survivedEveryFault = false): (typeof CHECKED_NOTHING_WHY)[number] | null {
  if (scenario.emptyExamples !== undefined) return CHECKED_NOTHING_WHY[2];
  if (scenario.status !== 'PASSED') return null;
  const steps = scenario.steps.filter((step) => step.kind === 'step');
  const typed = steps.some((step) => step.type !== null);
  const hasThen = typed ? steps.some((step) => step.type === 'Outcome') : steps.some((step) => step.keyword === 'Then');
  if (!hasThen) return CHECKED_NOTHING_WHY[0];
  if (scenario.evidence !== null && scenario.evidence.digest === null) return CHECKED_NOTHING_WHY[1];
  if (survivedEveryFault) return CHECKED_NOTHING_WHY[3];
  return null;
}

function checkedNothing(views: readonly ScenarioView[], faultSurvivors: ReadonlySet<string>): { view: ScenarioView; why: string }[] {
  return views.flatMap((view) => {
    const why = whyCheckedNothing(view.scenario, faultSurvivors.has(view.scenario.key));
    return why === null ? [] : [{ view, why }];
  });
}

/**
 * The share of a campaign's cases that may be too heavy to check before its gate stops passing:
 * about 1 in 10,000 has been seen (seeds 344 and 404 of 10,000 cases each), so a campaign with more
 * than 1 in 100 unchecked is not the campaign it claims to be.
 */
export const MAX_UNCHECKED_SHARE = 0.01;

/** The gate passes when no case broke an invariant and nearly every case run was checked (see MAX_UNCHECKED_SHARE). */
function generatedPassed(campaign: CampaignResult): boolean {
  return campaign.counterexample === null && !tooManyUnchecked(campaign);
}

/** The banner of a sign-off whose generated workloads ran with the planted defect (after "TEST DOUBLE ACTIVE — not a valid sign-off."). */
export const PLANTED_BANNER = `The generated workloads ran with a planted defect on purpose (${PLANTED_DEFECT_ENV}=1: ${PLANTED_DEFECT_MEANING}) to prove that their gate catches a counterexample.`;

/**
 * A coverage run with no failure: every test passed again, or, when the compiled run skipped some
 * (or left them to do), how many passed and which were skipped with their reasons.
 */
function coverageRunPassedSummary(run: CoverageRun): string {
  const skipped = run.skipped ?? [];
  const scenarios = countOf(run.scenarios, 'scenario');
  // The coverage run of the scenarios alone (the unit tests are npm test's): no unit test to count.
  if (skipped.length === 0 && run.unitFiles === 0 && run.unitTests === 0) return `all ${scenarios} passed again on the compiled JavaScript`;
  if (skipped.length === 0) return `all ${countOf(run.unitTests, 'unit test')} and ${scenarios} passed again on the compiled JavaScript`;
  return `${run.unitPassed ?? run.unitTests - skipped.length} of ${countOf(run.unitTests, 'unit test')} and all ${scenarios} passed again on the compiled JavaScript; ${countOf(skipped.length, 'unit test')} skipped, not checked again: ${skippedNames(skipped)}`;
}

/** Skipped tests by name, each with its reason when it gave one. */
function skippedNames(skipped: readonly SkippedTest[]): string {
  return skipped.map((test) => `"${test.name}"${test.why ? ` (${test.why})` : ''}`).join(', ');
}

/** What each active test double did, in words: it makes the run NOT QUALIFIED whatever it shows, and says whether its gate caught it. */
function testDoubleSummaries(input: SignoffInput, determinism: Determinism): string[] {
  const summaries: string[] = [];
  if (input.perturbation !== null) {
    const perturbed = determinism.perturbed;
    const missed = perturbed.filter((p) => !p.caught);
    summaries.push(
      perturbed.length === 0
        ? `KVQUAL_PERTURB="${input.perturbation}" is set but named no scenario: this run is not a sign-off`
        : `KVQUAL_PERTURB="${input.perturbation}" perturbed ${countOf(perturbed.length, 'scenario')} on purpose in the second run; ` +
            (missed.length === 0 ? 'the determinism check caught every one: this run is not a sign-off' : `the determinism check MISSED ${missed.map((p) => `"${p.name}"`).join(', ')}`),
    );
  }
  if (input.generated?.planted_defect) {
    summaries.push(
      `${PLANTED_DEFECT_ENV}=1 planted a defect in the generated workloads' checker (${PLANTED_DEFECT_MEANING}); ` +
        (input.generated.counterexample !== null ? 'the generated-workloads gate caught it: this run is not a sign-off' : 'the generated-workloads gate MISSED it'),
    );
  }
  return summaries;
}

function tooManyUnchecked(campaign: CampaignResult): boolean {
  const heavy = campaign.too_heavy ?? 0;
  return heavy > 0 && (heavy >= campaign.passed || heavy > MAX_UNCHECKED_SHARE * campaign.passed);
}

/**
 * The generated workloads that ran but were too heavy to check, each named with the command that
 * runs it alone and why it was too heavy; null when there were none. Several named cases are
 * joined by "; " (a campaign names at most NAMED_TOO_HEAVY_CASES and counts the rest).
 */
export function tooHeavyAttention(campaign: CampaignResult): string | null {
  const heavy = campaign.too_heavy ?? 0;
  if (heavy === 0) return null;
  const named = campaign.too_heavy_cases ?? [];
  const command = (path: string) => fuzzCaseCommand({ seed: campaign.seed, path, alone: true, exclude: campaign.excluded_areas, planted: campaign.planted_defect });
  const cases = named.map((one) => `case ${one.case_number}${one.path === null ? '' : ` (${command(one.path)})`}: ${one.reason}`);
  const rest = named.length > 0 && heavy > named.length ? `; ${heavy - named.length} more not named` : '';
  return `${heavy === 1 ? 'One generated workload was' : `${heavy} generated workloads were`} too heavy to check and not checked${cases.length > 0 ? `: ${cases.join('; ')}` : ''}${rest}.`;
}

/** How many generated workloads ran and were checked, with which seed, and the first broken invariant if any. */
export function generatedSummary(campaign: CampaignResult): string {
  const left = campaign.excluded_areas.length > 0 ? `; left out for known engine defects: ${campaign.excluded_areas.join(', ')}` : '';
  const heavy = campaign.too_heavy ?? 0;
  const over = tooManyUnchecked(campaign) ? `: more than ${MAX_UNCHECKED_SHARE * 100} % of the cases run, so the gate does not pass` : '';
  const unchecked = heavy > 0 ? `; ${heavy} too heavy to check (${TOO_HEAVY_MEANING}), not checked${over}` : '';
  const found = campaign.counterexample;
  if (found === null) {
    const checked = campaign.passed - heavy;
    return `${checked} generated workloads (fast-check seed ${campaign.seed}) kept every invariant${heavy > 0 ? ` of ${campaign.passed} run` : ''}${unchecked}${left}`;
  }
  const first = found.violations[0];
  const broke = first ? `${INVARIANT_CLAIMS[first.invariant]}: ${first.message}` : 'an invariant';
  const replay = fuzzCaseCommand({ seed: found.seed, path: found.path, exclude: campaign.excluded_areas, planted: campaign.planted_defect });
  return (
    `${campaign.planted_defect ? 'with the planted defect (test double), ' : ''}generated workload ${found.case_number} of ${campaign.runs} (fast-check seed ${campaign.seed}) broke ${found.violations.length > 1 ? `${found.violations.length} invariants, first: ` : ''}${broke}` +
    `; shrunk counterexample { seed: ${found.seed}, path: "${found.path}" }, replay with ${replay}${unchecked}${left}`
  );
}

/** The section of the report that explains a failed gate. */
const GATE_SECTIONS: Record<string, string> = {
  Scenarios: '#gaps',
  'Requirement traceability': '#gaps',
  Determinism: '#determinism',
  'Coverage run': '#coverage-run',
  'Generated workloads': '#gaps',
  Shards: '#gaps',
  'Planted faults': '#gaps',
  'Order independence': '#determinism',
};

/**
 * The folders of src/ that are tools around the simulator rather than the simulator the scenarios
 * qualify: the command line, sweeps, the generated workloads and planted faults, and this sign-off.
 * npm test's unit and integration tests check them; the scenarios are not meant to run them.
 */
export const TOOL_FOLDERS: readonly string[] = ['src/cli/', 'src/fuzz/', 'src/signoff/', 'src/sweep/'];

/** The lines of src/ outside TOOL_FOLDERS (folders below a tool folder count with it). */
export function simulatorLines(coverage: CoverageSummary): CoverageFigure {
  let covered = 0;
  let total = 0;
  for (const group of coverage.groups) {
    if (TOOL_FOLDERS.some((tool) => group.path.startsWith(tool))) continue;
    covered += group.lines.covered;
    total += group.lines.total;
  }
  return coverageFigure(covered, total);
}

/**
 * Coverage in one plain sentence, for approvers: how much of the simulator the scenarios ran, and
 * of src/ in all. The figures developers read (branches, functions, what ran, each folder) follow
 * it, folded.
 */
export function coverageSentence(coverage: CoverageSummary): string {
  const simulator = simulatorLines(coverage);
  if (simulator.total === 0 || simulator.total === coverage.lines.total) {
    return `The scenarios exercised ${coverage.lines.pct} % of the lines of kvqual's code (src/); each of its folders is listed in the details below.`;
  }
  return `The scenarios exercised ${simulator.pct} % of the lines of the simulator they qualify; the tools around it (command line, sweeps, generated workloads, this sign-off) are checked by the unit tests instead, so of all of src/ it is ${coverage.lines.pct} %. Each folder is listed in the details below.`;
}

/** "sha256:0123456789ab…" for tables; the full digest appears in each scenario's section. */
export function shortDigest(digest: string | null): string {
  if (digest === null) return '—';
  const match = /^sha256:([0-9a-f]{12})[0-9a-f]+$/.exec(digest);
  return match ? `sha256:${match[1]}…` : digest;
}
