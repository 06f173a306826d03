// Scenario hooks: every scenario attaches its evidence (application/vnd.kvqual.evidence+json:
// seed, digest, timeline, residency strips, measured values, an SLO step's CDFs) for the sign-off report, its
// figure (SVG, shown by cucumber's HTML; drawn once per machine, see figureCache.ts) and the
// router's decisions in plain words; every failing scenario also prints its seed and a one-line
// command that replays exactly it.
import { After, Before, BeforeStep, setDefaultTimeout, Status } from '@cucumber/cucumber';
import type { KvWorld } from './world';
import { emptyEvidence, EVIDENCE_MEDIA_TYPE, evidenceComparing, evidenceFromCluster, evidenceFromComputation, evidenceFromRouterReplay, evidenceFromSetup, HOOK_ATTACHMENT_FILES, ScenarioEvidence } from '../../src/report/evidence';
import { renderFigure, SCENARIO_FIGURES_ENV } from '../../src/report/figure';
import { replayCommand } from '../../src/report/replayCommand';
import { PERTURB_ENV, perturbationApplied, perturbationAsked, perturbIfAsked } from './perturb';
import { figureCacheFolder, folderFigureCache, type FolderFigureCache } from './figureCache';

/** The figure caches used, by folder (one each: a cache keeps what it has read). */
const figureCaches = new Map<string, FolderFigureCache>();

/** The cache the run's environment names, read for each scenario (runs in one process may each have their own: scripts/suiteInProcess.ts); undefined when turned off. */
function figureCache(): FolderFigureCache | undefined {
  const folder = figureCacheFolder();
  if (folder === null) return undefined;
  if (!figureCaches.has(folder)) figureCaches.set(folder, folderFigureCache(folder));
  return figureCaches.get(folder);
}

// A step's time limit is a hang guard, not a measure: cucumber's 5 s could fail an honest step only
// in the sign-off's second run, compiled under coverage at a lower priority on a loaded machine.
setDefaultTimeout(60_000);

Before(function (this: KvWorld, { pickle }) {
  perturbIfAsked(this, pickle.name);
});

// The step's own words, for a message that quotes the step which fixed the scenario's level (catalogue.ts).
BeforeStep(function (this: KvWorld, { pickleStep }) {
  this.stepText = pickleStep.text;
});

function evidenceOf(world: KvWorld): ScenarioEvidence {
  if (world.hasReplay) return evidenceFromRouterReplay(world.replay, world.seed, world.measurements);
  const outcomes = world.hasEngine ? world.engine.outcomes : [];
  if (outcomes.length > 0) {
    // A claim that compares runs shows (and digests) every run it compares.
    const n = outcomes.length;
    const runs = outcomes.map((outcome, i) => ({ label: n > 1 ? `Run ${i + 1} of ${n}` : 'The run', evidence: evidenceFromCluster(outcome, world.seed, i === n - 1 ? world.measurements : []) }));
    const solo = world.engine.soloBaseline;
    const others = [...(solo ? [{ label: 'Solo baseline', evidence: evidenceFromCluster(solo, world.seed) }] : []), ...runs.slice(0, -1)];
    return evidenceComparing(runs[n - 1], others);
  }
  if (world.computation !== null) return evidenceFromComputation(world.computation.kind, world.computation.record, world.seed, world.measurements);
  if (world.hasEngine && world.engine.lastConfig !== null) {
    const rejected = world.engine.setupError?.problems.map((p) => ({ path: p.path, message: p.message })) ?? null;
    return evidenceFromSetup(world.engine.lastConfig, rejected, world.seed, world.measurements);
  }
  return emptyEvidence(world.seed, world.measurements);
}

After(async function (this: KvWorld, { pickle, result }) {
  const evidence = evidenceOf(this);
  if (this.sloCharts.length > 0) evidence.slo = [...this.sloCharts];
  this.attach(JSON.stringify(evidence), EVIDENCE_MEDIA_TYPE);
  const figure = process.env[SCENARIO_FIGURES_ENV] === 'off' ? null : await renderFigure(evidence, undefined, figureCache());
  if (figure !== null) this.attach(Buffer.from(figure, 'utf8'), { mediaType: 'image/svg+xml', fileName: HOOK_ATTACHMENT_FILES.figure });
  const decisions = evidence.timeline.placements.map((placement) => placement.sentence);
  if (decisions.length > 0) this.attach(decisions.join('\n'), { mediaType: 'text/plain', fileName: HOOK_ATTACHMENT_FILES.decisions });
  if (perturbationAsked(pickle.name)) {
    const applied = perturbationApplied(this);
    const note = applied ? `${PERTURB_ENV}: perturbed on purpose (${applied})` : `${PERTURB_ENV}: named this scenario, but it drives no simulation and sets up no cluster: nothing to perturb`;
    this.attach(note, { mediaType: 'text/plain', fileName: HOOK_ATTACHMENT_FILES.perturbation });
    process.stderr.write(`\n${note}: "${pickle.name}"\n`);
    if (!applied) throw new Error(note);
  }
  if (result?.status === Status.PASSED) return;
  const replay = replayCommand(this.seed, pickle.uri, pickle.location?.line);
  const note = `seed ${this.seed} — replay only this scenario with:\n  ${replay}`;
  this.attach(note, { mediaType: 'text/plain', fileName: HOOK_ATTACHMENT_FILES.replay });
  process.stderr.write(`\n✗ ${pickle.name}\n  ${note}\n`);
});
