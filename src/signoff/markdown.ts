// signoff.md: the reviewed artefact, rendered from the sign-off model. Plain Markdown (GitHub /
// GitLab flavour) that also reads well as text; every scenario-supplied string is escaped, steps
// are fenced, and figures are linked from signoff-assets/.
import type { DeterminismRow } from './determinism';
import { formatNs } from '../time';
import type { MatrixRow, ScenarioView, SignoffModel } from './model';
import { countOf, RERUN_MESSAGES, shortDigest, statusWord } from './model';
import { escapeMarkdown as md, markdownCode as code, markdownFence } from './text';

export const ASSETS_DIR = 'signoff-assets';

const mark = (ok: boolean) => (ok ? '✅' : '❌');

function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
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

function matrixRows(matrix: MatrixRow[]): string[][] {
  const rows: string[][] = [];
  for (const row of matrix) {
    const head = `**${md(row.requirement.id)}** ${md(row.requirement.title)}<br>${md(row.requirement.source)} · owner: ${md(row.requirement.owner)}`;
    if (row.scenarios.length === 0) {
      rows.push([head, '—', `${mark(false)} ${md(row.status)}`, '—']);
      continue;
    }
    row.scenarios.forEach(({ view, measured }, i) => {
      rows.push([
        i === 0 ? `${head}<br>${mark(row.ok)} ${md(row.status)}` : '',
        scenarioLink(view),
        `${mark(view.scenario.status === 'PASSED')} ${statusWord(view.scenario.status)}`,
        measured.length === 0 ? '—' : measured.map(md).join('<br>'),
      ]);
    });
  }
  return rows;
}

function determinismRow(row: DeterminismRow): string[] {
  return [md(row.name), code(row.key), code(shortDigest(row.first)), code(shortDigest(row.second)), row.same ? '✅ same' : `❌ ${md(row.reason)}`];
}

function scenarioSection(view: ScenarioView): string {
  const s = view.scenario;
  const ev = s.evidence;
  const parts: string[] = [
    `<a id="${view.anchor}"></a>`,
    `#### ${mark(s.status === 'PASSED')} ${md(s.name)}`,
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
      ],
    ),
    '',
    stepsBlock(view),
  ];
  const failures = s.steps.filter((step) => step.message);
  for (const step of failures) {
    parts.push('', `**${step.kind === 'step' ? `${md(step.keyword)} ${md(step.text)}` : md(step.kind)} — ${statusWord(step.status)}:**`, '', markdownFence(step.message!));
  }
  for (const { step, phrases } of view.suggestions) {
    parts.push('', `**${md(step.keyword)} ${md(step.text)} — undefined. Did you mean:**`, '', ...phrases.map((p) => `- ${code(p)}`), '', 'Every phrase is listed in `docs/steps.md` of the repository.');
  }
  if (ev && ev.measurements.length > 0) parts.push('', '**Measured:**', '', ...ev.measurements.map((m) => `- ${md(m.text)}`));
  if (ev && ev.timeline.placements.length > 0) {
    parts.push('', '**Routing decisions, in plain words:**', '', ...ev.timeline.placements.map((p) => `- ${md(p.sentence)}`));
  }
  if (ev?.timeline.failure) parts.push('', `**The replay stopped at ${formatNs(ev.timeline.failure.at_ns)}:** ${md(ev.timeline.failure.message)}`);
  if (view.figureFile) parts.push('', `![Timeline and residency of this scenario](${ASSETS_DIR}/${view.figureFile})`);
  for (const note of view.notes) parts.push('', `**${md(note.title)}:**`, '', markdownFence(note.text));
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
    'The verdict is computed from the results below, never typed by hand: QUALIFIED only when every gate passes.',
    '',
    table(['Gate', 'Result', ''], model.gates.map((g) => [g.title, md(g.summary), mark(g.passed)])),
    '',
  );

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
        ['Scenario set', `${code(model.scenarioSet.digest)} — ${countOf(model.scenarioSet.files, 'feature file')}, ${countOf(model.scenarioSet.scenarios, 'scenario')}`],
        ['Produced by', code(input.command)],
        ['Beside this report', input.companions.map((c) => `${md(c.label)}: ${code(c.file)}`).join(', ')],
      ],
    ),
    '',
  );

  const det = input.determinism;
  push('## Determinism', '');
  push(
    'The suite ran twice. Each scenario attaches the canonical digest (SHA-256 of the canonical JSON) of what its simulation did: ' +
      'placements with their cost breakdowns, KV event batches (emitted, visible, applied or lost), membership changes and failures. ' +
      'The two runs must agree on every digest and every result.',
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
  push('Requirement → scenarios → result, with the values each scenario measured when it asserted them.', '');
  push(table(['Requirement', 'Scenario', 'Result', 'Measured'], matrixRows(model.matrix)), '');

  push('## Gaps', '', 'Everything that keeps this report from QUALIFIED is listed here; nothing is folded into "passed".', '');
  push('### Requirements without a scenario', '');
  push(...(model.uncovered.length ? model.uncovered.map((r) => `- **${md(r.id)}** ${md(r.title)} — source: ${md(r.source)} · owner: ${md(r.owner)} · status: ${r.status}`) : ['None.']), '');
  push('### Scenarios without a requirement tag', '');
  push(...(model.untraced.length ? model.untraced.map((v) => `- ${scenarioLink(v)} (${code(v.scenario.key)})`) : ['None.']), '');
  push('### Tags naming no registered requirement', '');
  push(...(model.unknownTags.length ? model.unknownTags.map(({ view, tag }) => `- ${md(tag)} on ${scenarioLink(view)}`) : ['None.']), '');
  push('### Scenarios that did not pass', '');
  push(...(model.notPassed.length ? model.notPassed.map((v) => `- **${statusWord(v.scenario.status)}**: ${scenarioLink(v)} (${code(v.scenario.key)})`) : ['None.']), '');
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
  if (input.coverageRun !== null) {
    const run = input.coverageRun;
    push('### Failures of the compiled coverage run', '');
    const lines = [
      ...run.failures.map((f) => `- ${f.kind} "${md(f.name)}" (${code(f.where)})${f.why ? `: ${md(f.why)}` : ''}`),
      ...run.problems.map((p) => `- the run could not complete: ${md(p)}`),
    ];
    push(...(lines.length ? lines : ['None.']), '');
  }

  push('## Coverage of src/', '');
  const cov = input.coverage;
  if (cov) {
    push(`**Lines ${cov.lines.pct}%** (${cov.lines.covered}/${cov.lines.total}), **branches ${cov.branches.pct}%** (${cov.branches.covered}/${cov.branches.total}), functions ${cov.functions.pct}% (${cov.functions.covered}/${cov.functions.total}).`, '');
    push(md(cov.scope), '');
    push(table(['Directory', 'Files', 'Lines', 'Branches', 'Functions'], cov.groups.map((g) => [code(g.path), String(g.files), `${g.lines.pct}%`, `${g.branches.pct}%`, `${g.functions.pct}%`])), '');
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
  push('## Approval', '', 'To be completed by people. A signature approves the verdict above for the commit and scenario set named in this report.', '');
  push(table(['Role', 'Name', 'Date', 'Signature'], [['Prepared by', '', '', ''], ['Reviewed by', '', '', ''], ['Approved by', '', '', '']]), '');
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
}
