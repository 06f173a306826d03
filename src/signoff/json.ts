// signoff.json: the whole sign-off model as versioned JSON, for CI dashboards and archives, and
// the baseline a later `npm run qualify -- --baseline <earlier signoff.json>` compares with. The
// shape is jsonSchema.ts; figures stay in signoff-assets/, everything else a report shows is here.
import type { SignoffModel } from './model';
import { SIGNOFF_FORMAT, SignoffJson } from './jsonSchema';

/** The sign-off model as signoff.json. */
export function toSignoffJson(model: SignoffModel): SignoffJson {
  const { input } = model;
  return {
    format: SIGNOFF_FORMAT,
    campaign: input.campaign,
    date: input.date,
    command: input.command,
    subject: { ...input.subject },
    cucumber_version: model.cucumberVersion,
    verdict: model.verdict,
    qualified: model.qualified,
    narrowed: [...model.narrowed],
    gates: model.gates.map((g) => ({ ...g })),
    attention: model.attention.map((a) => a.text),
    perturbation: input.perturbation,
    scenario_set: { ...model.scenarioSet },
    ...(input.scope ? { scope: { ...input.scope } } : {}),
    ...(input.environment ? { environment: input.environment.map((v) => ({ ...v })) } : {}),
    counts: { ...model.counts },
    requirements: model.matrix.map((row) => ({
      id: row.requirement.id,
      title: row.requirement.title,
      source: row.requirement.source,
      owner: row.requirement.owner,
      status: row.requirement.status,
      result: row.status,
      ok: row.ok,
      scenarios: row.scenarios.map((s) => s.view.scenario.key),
    })),
    scenarios: model.views.map((view) => {
      const s = view.scenario;
      return {
        key: s.key,
        uri: s.uri,
        line: s.line,
        name: s.name,
        feature: s.feature.name,
        rule: s.rule,
        tags: s.tags,
        requirements: view.requirements,
        status: s.status,
        seed: view.seed,
        simulation: s.evidence?.simulation ?? null,
        digest: s.evidence?.digest ?? null,
        pass_times: s.evidence?.pass_times ?? null,
        replay: view.replay,
        steps: s.steps.map((step) => ({ kind: step.kind, keyword: step.keyword, text: step.text, status: step.status, message: step.message })),
        measurements: (s.evidence?.measurements ?? []).map((m) => ({ ...m })),
        changed: view.changed,
        suggestions: view.suggestions.map((sg) => ({ step: `${sg.step.keyword} ${sg.step.text}`, phrases: sg.phrases })),
      };
    }),
    determinism: {
      identical: input.determinism.identical,
      problem: input.determinism.problem,
      differences: input.determinism.differences.map((d) => ({ key: d.key, name: d.name, reason: d.reason })),
    },
    gaps: {
      uncovered_requirements: model.uncovered.map((r) => r.id),
      untraced_scenarios: model.untraced.map((v) => v.scenario.key),
      unknown_tags: model.unknownTags.map(({ view, tag }) => ({ key: view.scenario.key, tag })),
      not_passed: model.notPassed.map((v) => v.scenario.key),
      checked_nothing: model.checkedNothing.map(({ view, why }) => ({ key: view.scenario.key, why })),
      run_errors: [...input.run.runErrors],
    },
    coverage: input.coverage === null ? null : structuredClone(input.coverage),
    coverage_run: input.coverageRun === null ? null : structuredClone(input.coverageRun),
    baseline: model.baseline,
  };
}

