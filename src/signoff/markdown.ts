// signoff.md: the reviewed artefact, rendered from the sign-off model. Plain Markdown (GitHub /
// GitLab flavour) that also reads well as text; every scenario-supplied string is escaped, steps
// are fenced, and figures are linked from signoff-assets/. The first screen holds the verdict, the
// gates, what needs attention, what was qualified and the approval block; the requirement view
// lists each requirement once (in natural order of their ids), the traceability matrix each
// scenario once, coverage is one sentence with its figures folded, and the scenarios fold
// (<details>) unless they did not pass or changed.
import type { DeterminismRow } from './determinism';
import { formatNs } from '../time';
import type { MatrixRow, ScenarioView, SignoffModel } from './model';
import { countOf, coverageSentence, measuredText, PLANTED_BANNER, RERUN_MESSAGES, shortDigest, statusWord } from './model';
import { BaselineDiff, baselineSummary } from './baseline';
import { SLO_CHART_ALT, sloCardLines } from './sloCard';
import { escapeMarkdown as md, markdownCode as code, markdownFence, oneLine, plainWords } from './text';

export const ASSETS_DIR = 'signoff-assets';
/** The summary chart's file in the assets folder (the HTML inlines the same SVG). */
export const SUMMARY_CHART = 'summary.svg';

const mark = (ok: boolean) => (ok ? '✅' : '❌');

/** A table whose every row stays one line, whatever a cell holds. */
function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => oneLine(`| ${r.join(' | ')} |`))].join('\n');
}

function scenarioLink(view: ScenarioView): string {
  return `[${md(view.scenario.name)}](#${view.anchor})`;
}

function stepsBlock(view: ScenarioView): string {
  const lines: string[] = [];
  for (const step of view.scenario.steps) {
    const status = step.status === 'PASSED' ? '' : `   # ${statusWord(step.status)}`;
    if (step.kind !== 'step') {
      lines.push(`(${step.kind})${status}`);
      continue;
    }
    lines.push(`${step.keyword} ${step.text}${status}`);
    if (step.table) {
      const widths = step.table[0].map((_, c) => Math.max(...step.table!.map((row) => row[c].length)));
      for (const row of step.table) lines.push(`  | ${row.map((cell, c) => cell.padEnd(widths[c])).join(' | ')} |`);
    }
    if (step.docString !== null) lines.push('  """', ...step.docString.split('\n').map((l) => `  ${l}`), '  """');
  }
  return markdownFence(lines.join('\n'), 'gherkin');
}

/** The requirement view: each requirement once, its scenarios, results and measured values. */
function requirementLines(matrix: MatrixRow[]): string[] {
  const out: string[] = [];
  for (const row of matrix) {
    out.push(`- ${mark(row.ok)} **${md(row.requirement.id)}** ${md(row.requirement.title)} — ${md(row.status)} · owner: ${md(row.requirement.owner)} · ${md(row.requirement.source)}`);
    for (const { view, measured } of row.scenarios) {
      out.push(`  - ${mark(view.scenario.status === 'PASSED')} ${scenarioLink(view)}${measured.length ? `: ${measured.map((m) => md(plainWords(m))).join('; ')}` : ''}`);
    }
  }
  return out;
}

/** The traceability matrix: each scenario once, with every requirement it traces to. */
function matrixRows(model: SignoffModel): string[][] {
  return model.views.map((view) => [
    scenarioLink(view),
    view.requirements.length ? view.requirements.map(md).join(', ') : '❌ none',
    `${mark(view.scenario.status === 'PASSED')} ${statusWord(view.scenario.status)}`,
    (view.scenario.evidence?.measurements ?? []).map((m) => md(plainWords(measuredText(m)))).join('<br>') || '—',
  ]);
}

function determinismRow(row: DeterminismRow): string[] {
  return [md(row.name), code(row.key), code(shortDigest(row.first)), code(shortDigest(row.second)), row.same ? '✅ same' : `❌ ${md(row.reason)}`];
}

function scenarioSection(view: ScenarioView): string {
  const s = view.scenario;
  const ev = s.evidence;
  const parts: string[] = [
    `<a id="${view.anchor}"></a>`,
    `#### ${mark(s.status === 'PASSED')} ${md(s.name)}${view.changed ? ' (changed)' : ''}`,
    '',
    `<details${view.open ? ' open' : ''}><summary>${statusWord(s.status)}: steps, seed, digest, measured values, figure</summary>`,
    '',
    table(
      ['', ''],
      [
        ['Result', `**${statusWord(s.status).toUpperCase()}**`],
        ['Where', code(s.key) + (s.rule ? ` (rule: ${md(s.rule)})` : '')],
        ['Requirements', view.requirements.length ? view.requirements.map(md).join(', ') : '❌ none'],
        ...(view.otherTags.length ? [['Other tags', view.otherTags.map(md).join(', ')]] : []),
        ['Seed', view.seed === null ? '—' : String(view.seed)],
        ['Replay', code(view.replay)],
        ['Digest', ev?.digest ? code(ev.digest) : `— (${md(s.evidenceError ?? 'no simulation ran')})`],
        ...(ev?.pass_times ? [['Pass times', md(ev.pass_times)]] : []),
      ],
    ),
    '',
    stepsBlock(view),
  ];
  const failures = s.steps.filter((step) => step.message);
  for (const step of failures) {
    parts.push('', `**${step.kind === 'step' ? `${md(step.keyword)} ${md(step.text)}` : md(step.kind)} — ${statusWord(step.status)}:**`, '', markdownFence(plainWords(step.message!)));
  }
  for (const { step, phrases } of view.suggestions) {
    parts.push('', `**${md(step.keyword)} ${md(step.text)} — undefined. Did you mean:**`, '', ...phrases.map((p) => `- ${code(p)}`), '', 'Every phrase is listed in `docs/steps.md` of the repository.');
  }
  if (ev && ev.measurements.length > 0) parts.push('', '**Measured:**', '', ...ev.measurements.map((m) => `- ${md(plainWords(measuredText(m)))}`));
  if (ev && ev.timeline.placements.length > 0) {
    parts.push('', '**Routing decisions, in plain words:**', '', ...ev.timeline.placements.map((p) => `- ${md(plainWords(p.sentence))}`));
  }
  if (ev?.timeline.failure) parts.push('', `**The replay stopped at ${formatNs(ev.timeline.failure.at_ns)}:** ${md(plainWords(ev.timeline.failure.message))}`);
  if (ev?.slo?.length) parts.push(...sloCardLines(ev.slo).flatMap((line) => ['', `**SLO:** ${md(line)}`]));
  if (view.figureFile) parts.push('', `![${ev?.slo?.length ? SLO_CHART_ALT : 'Timeline and residency of this scenario'}](${ASSETS_DIR}/${view.figureFile})`);
  for (const note of view.notes) parts.push('', `**${md(note.title)}:**`, '', markdownFence(note.text));
  parts.push('', '</details>');
  return parts.join('\n');
}

/** Renders signoff.md. */
export function renderMarkdown(model: SignoffModel): string {
  const { input } = model;
  const out: string[] = [];
  const push = (...lines: string[]) => out.push(...lines);

  push(`# Qualification sign-off: ${md(input.campaign)}`, '');
  if (input.perturbation !== null) {
    push(
      `> **⚠ TEST DOUBLE ACTIVE — not a valid sign-off.** The second run was perturbed on purpose (KVQUAL_PERTURB=${code(input.perturbation)}) to prove that the determinism check catches a difference.`,
      '',
    );
  }
  if (input.generated?.planted_defect) {
    push(`> **⚠ TEST DOUBLE ACTIVE — not a valid sign-off.** ${PLANTED_BANNER}`, '');
  }
  push(
    table(
      ['', ''],
      [
        ['Campaign', md(input.campaign)],
        ['Date', md(input.date)],
        ['Verdict', `**${model.verdict}** ${mark(model.qualified)}`],
      ],
    ),
    '',
    'The verdict is computed from the results below, never typed by hand: QUALIFIED only when every gate passes and the run was the project\'s whole qualification.',
    '',
    table(['Gate', 'Result', ''], model.gates.map((g) => [g.title, md(g.summary), mark(g.passed)])),
    '',
  );

  push('## Needs attention', '');
  push(...(model.attention.length ? model.attention.map((a) => `- ${md(a.text)}`) : ['Nothing: every gate passed, the working tree is clean and coverage was measured.']), '');

  push('## What was qualified', '');
  const subject = input.subject;
  push(
    table(
      ['', ''],
      [
        ['Package', `${md(subject.packageName)} ${md(subject.packageVersion)}`],
        ['Git commit', `${code(subject.commit)} (${md(subject.worktree)})`],
        ['Node.js', md(subject.node)],
        ['Cucumber', md(`cucumber-js ${model.cucumberVersion}`)],
        ['Scenario set', `${code(model.scenarioSet.digest)} — ${countOf(model.scenarioSet.files, 'feature file')}, ${countOf(model.scenarioSet.scenarios, 'scenario')}${input.scope ? ` of ${code(`${input.scope.features}/`)}` : ''}`],
        ...(input.scope ? [['Requirements', `${code(input.scope.requirements)} ${code(input.scope.requirements_digest)}${input.scope.repository_suite ? '' : ' — not the repository\'s suite'}`]] : []),
        ['Produced by', code(input.command)],
        ['Beside this report', input.companions.map((c) => `${md(c.label)}: ${code(c.file)}`).join(', ')],
      ],
    ),
    '',
  );

  if (model.narrowed.length > 0 && model.verdict !== 'NOT QUALIFIED') {
    push('## Not a release sign-off', '', `Every gate passed, but this run is not the project's whole qualification, so it has no approval block:`, '', ...model.narrowed.map((reason) => `- ${md(reason)}`), '');
  } else {
    push('## Approval', '', 'To be completed by people. A signature approves the verdict above for the commit and scenario set named in this report.', '');
    push(table(['Role', 'Name', 'Date', 'Signature'], [['Prepared by', '', '', ''], ['Reviewed by', '', '', ''], ['Approved by', '', '', '']]), '');
  }

  push('## Scenarios by requirement and result', '', `![Scenarios by requirement and result: passed and not passed per requirement](${ASSETS_DIR}/${SUMMARY_CHART})`, '');

  if (model.baseline !== null) {
    const b = model.baseline;
    push('## Since the baseline', '', `Compared with the sign-off of ${md(b.date)} (${md(b.campaign)}, commit ${code(b.commit)}, ${b.verdict}): ${md(baselineSummary(b))}.`, '');
    const section = (title: string, rows: BaselineDiff['added'], show: (c: BaselineDiff['added'][number]) => string) => {
      if (rows.length === 0) return;
      push(`### ${title}`, '', ...rows.map((c) => `- ${show(c)}`), '');
    };
    section('Scenarios added', b.added, (c) => `${md(c.name)} (${code(c.key)}): ${statusWord(c.after as 'PASSED')}`);
    section('Scenarios removed', b.removed, (c) => `${md(c.name)} (${code(c.key)}), was ${statusWord(c.before as 'PASSED')}`);
    section('Scenarios renamed', b.renamed, (c) => `${code(c.key)}: "${md(c.before ?? '')}" → "${md(c.after ?? '')}"`);
    section('Results changed', b.results, (c) => `${md(c.name)}: ${statusWord(c.before as 'PASSED')} → ${statusWord(c.after as 'PASSED')}`);
    section('Digests changed', b.digests, (c) => `${md(c.name)}: ${code(shortDigest(c.before))} → ${code(shortDigest(c.after))}`);
    section('Measured values changed', b.measurements, (c) => `${md(c.name)}: ${md(plainWords(c.before ?? '(not measured)'))} → ${md(plainWords(c.after ?? '(not measured)'))}`);
  }

  push('## Requirements', '', 'Each requirement once, with its scenarios and the values they measured.', '');
  push('<details><summary>Every requirement and its scenarios</summary>', '', ...requirementLines(model.matrix), '', '</details>', '');

  const det = input.determinism;
  push('## Determinism', '');
  push(
    'The suite ran twice, the second time in a shuffled order (a scenario that depends on what ran before it differs). Each scenario attaches the canonical digest (SHA-256 of the canonical JSON) of what its simulation did: ' +
      'placements with their cost breakdowns, KV event batches (emitted, visible, applied or lost), membership changes and failures. ' +
      'The two runs must agree on every digest, every measured value and every result.',
    '',
  );
  if (det.problem) push(`**${mark(false)} Not proven:** ${md(det.problem)}`, '');
  else if (det.identical) push(`**${mark(true)} Identical:** all ${det.rows.length} scenarios have the same digest and result in both runs.`, '');
  else {
    push(`**${mark(false)} ${det.differences.length === 1 ? '1 scenario' : `${det.differences.length} scenarios`} differed** (the second run's message stream is kept as ${code(RERUN_MESSAGES)}):`, '');
    push(table(['Scenario', 'Where', 'Run 1', 'Run 2', 'Difference'], det.differences.map(determinismRow)), '');
  }
  if (det.rows.length > 0) {
    push('<details><summary>Digests of every scenario</summary>', '', table(['Scenario', 'Where', 'Run 1', 'Run 2', 'Same'], det.rows.map(determinismRow)), '', '</details>', '');
  }

  push('## Traceability matrix', '');
  push('Each scenario once: the requirements it traces to, its result, and the values it measured when it asserted them.', '');
  push(table(['Scenario', 'Requirements', 'Result', 'Measured'], matrixRows(model)), '');

  push('## Gaps', '', 'Everything that keeps this report from QUALIFIED is listed here; nothing is folded into "passed".', '');
  push('### Requirements without a scenario', '');
  push(...(model.uncovered.length ? model.uncovered.map((r) => `- **${md(r.id)}** ${md(r.title)} — source: ${md(r.source)} · owner: ${md(r.owner)} · status: ${r.status}`) : ['None.']), '');
  push('### Scenarios without a requirement tag', '');
  push(...(model.untraced.length ? model.untraced.map((v) => `- ${scenarioLink(v)} (${code(v.scenario.key)})`) : ['None.']), '');
  push('### Tags naming no registered requirement', '');
  push(...(model.unknownTags.length ? model.unknownTags.map(({ view, tag }) => `- ${md(tag)} on ${scenarioLink(view)}`) : ['None.']), '');
  push('### Scenarios that did not pass', '');
  push(...(model.notPassed.length ? model.notPassed.map((v) => `- **${statusWord(v.scenario.status)}**: ${scenarioLink(v)} (${code(v.scenario.key)})`) : ['None.']), '');
  push('### Passed scenarios that checked nothing', '');
  push(...(model.checkedNothing.length ? model.checkedNothing.map(({ view, why }) => `- ${scenarioLink(view)} (${code(view.scenario.key)}): ${md(why)}`) : ['None.']), '');
  if (input.faults) {
    push('### Planted simulator faults', '', 'The scenarios that passed, run again under each fault in turn; only those that passed again ran under the next.', '');
    push(...input.faults.trials.map((t) => `- ${code(t.fault)} (${md(t.meaning)}): ${t.ran} run, ${t.caught} failed`));
    push(...input.faults.exempt.map((e) => `- not tried: ${code(e.key)} "${md(e.name)}": ${md(e.why)}`));
    push(...input.faults.problems.map((p) => `- the check could not complete: ${md(p)}`), '');
  }
  push('### Steps that did not pass (failed, undefined, pending, ambiguous, skipped, not run)', '');
  push(
    ...(model.stepsNotPassed.length
      ? [
          table(
            ['Scenario', 'Step', 'Status'],
            model.stepsNotPassed.map(({ view, step, suggestions }) => [
              scenarioLink(view),
              step.kind === 'step' ? `${md(step.keyword)} ${md(step.text)}` : md(step.kind),
              statusWord(step.status) + (suggestions.length ? `; did you mean: ${suggestions.map((p) => code(p)).join(' · ')}` : ''),
            ]),
          ),
        ]
      : ['None.']),
    '',
  );
  if (input.run.runErrors.length) push('### Problems of the run itself', '', ...input.run.runErrors.map((e) => `- ${md(e)}`), '');
  if (input.shardProblems?.length) push('### Gaps of the shard set (merged with --merge)', '', ...input.shardProblems.map((p) => `- ${md(p)}`), '');
  if (input.coverageRun !== null) {
    const run = input.coverageRun;
    push('### Failures of the compiled coverage run', '');
    const lines = [
      ...run.failures.map((f) => `- ${f.kind} "${md(f.name)}" (${code(f.where)})${f.why ? `: ${md(f.why)}` : ''}`),
      ...run.problems.map((p) => `- the run could not complete: ${md(p)}`),
      ...(run.skipped ?? []).map((t) => `- unit test "${md(t.name)}" skipped, not checked again${t.why ? `: ${md(t.why)}` : ''}`),
    ];
    push(...(lines.length ? lines : ['None.']), '');
  }

  push('## Coverage of src/', '');
  const cov = input.coverage;
  if (cov) {
    push(md(coverageSentence(cov)), '');
    push('<details><summary>For developers: lines, branches and functions, what ran, and each folder of src/</summary>', '');
    push(`Lines ${cov.lines.pct}% (${cov.lines.covered}/${cov.lines.total}), branches ${cov.branches.pct}% (${cov.branches.covered}/${cov.branches.total}), functions ${cov.functions.pct}% (${cov.functions.covered}/${cov.functions.total}).`, '');
    push(md(cov.scope), '');
    push(table(['Directory', 'Files', 'Lines', 'Branches', 'Functions'], cov.groups.map((g) => [code(g.path), String(g.files), `${g.lines.pct}%`, `${g.branches.pct}%`, `${g.functions.pct}%`])), '', '</details>', '');
  } else push(`Not measured: ${md(input.coverageNote)}`, '');

  push('## Scenarios', '');
  for (const feature of model.features) {
    push(`### ${md(feature.name)}`, '', `${code(feature.uri)}`, '');
    if (feature.description) push(...feature.description.split('\n').map((l) => `> ${md(l.trim())}`), '');
    for (const view of feature.views) push(scenarioSection(view), '');
  }

  if (input.glossary.length > 0) {
    push('## Glossary', '', 'The domain words of this report (from `docs/glossary.md` of the repository).', '');
    push('<details><summary>Glossary</summary>', '', table(['Term', 'Meaning'], input.glossary.map((g) => [g.term, g.meaning])), '', '</details>', '');
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
}
