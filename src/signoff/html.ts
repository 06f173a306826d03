// signoff.html: one self-contained page (inline CSS and SVG figures, no script, no external
// resource; a Content-Security-Policy forbids both) rendered from the sign-off model. Every
// scenario-supplied string is HTML-escaped, so a scenario named `<script>…` reads as text.
import type { DeterminismRow } from './determinism';
import { formatNs } from '../time';
import type { Gate, MatrixRow, ScenarioView, SignoffModel } from './model';
import { countOf, RERUN_MESSAGES, shortDigest, statusWord } from './model';
import type { RunStep } from './messages';
import { escapeHtml as h } from './text';

const CSS = `
:root { --ok: #2b8a3e; --ok-bg: #ebfbee; --bad: #c92a2a; --bad-bg: #fff5f5; --warn: #e67700; --ink: #212529; --muted: #6c757d; --line: #dee2e6; --head: #f1f3f5; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); background: #f8f9fa; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 48px; background: white; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 26px 0 8px; }
h4 { font-size: 15px; margin: 0 0 8px; }
p { margin: 6px 0 10px; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f8f9fa; border: 1px solid var(--line); border-radius: 4px; padding: 8px 10px; white-space: pre-wrap; word-break: break-word; margin: 6px 0; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
th, td { border: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; }
table.facts th { width: 190px; }
.subtitle { color: var(--muted); margin: 0 0 16px; }
.verdict { display: flex; align-items: center; gap: 18px; padding: 16px 20px; border-radius: 6px; margin: 12px 0 8px; border: 2px solid; }
.verdict.ok { background: var(--ok-bg); border-color: var(--ok); }
.verdict.bad { background: var(--bad-bg); border-color: var(--bad); }
.verdict .word { font-size: 28px; font-weight: 800; letter-spacing: .5px; }
.verdict.ok .word { color: var(--ok); }
.verdict.bad .word { color: var(--bad); }
.banner { background: #fff4e6; border: 2px solid var(--warn); color: #7a3e00; padding: 10px 14px; border-radius: 6px; margin: 10px 0; font-weight: 600; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 700; white-space: nowrap; }
.badge.ok { background: var(--ok-bg); color: var(--ok); border: 1px solid var(--ok); }
.badge.bad { background: var(--bad-bg); color: var(--bad); border: 1px solid var(--bad); }
.badge.warn { background: #fff9db; color: var(--warn); border: 1px solid var(--warn); }
.muted { color: var(--muted); }
.req-id { font-weight: 700; white-space: nowrap; }
ul.plain { margin: 4px 0; padding-left: 18px; }
.scenario { border: 1px solid var(--line); border-radius: 6px; padding: 14px 16px; margin: 14px 0; break-inside: avoid; }
.scenario.bad { border-left: 5px solid var(--bad); }
.scenario.ok { border-left: 5px solid var(--ok); }
.steps { list-style: none; margin: 6px 0; padding: 8px 10px; background: #f8f9fa; border: 1px solid var(--line); border-radius: 4px; }
.steps li { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; padding: 1px 0; }
.steps .kw { color: #5f3dc4; font-weight: 700; }
.steps .st { float: right; }
.steps table { width: auto; margin: 2px 0 4px 24px; }
.steps table td { padding: 1px 8px; font-size: 12px; }
figure { margin: 10px 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 12.5px; }
.feature-desc { color: #495057; border-left: 3px solid var(--line); padding-left: 10px; margin: 4px 0 10px; }
nav.toc { background: #f8f9fa; border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; margin: 14px 0; }
nav.toc a { margin-right: 14px; }
.approval td { height: 42px; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
@media print { body { background: white; } main { padding: 0; } nav.toc { display: none; } }
`;

const badge = (ok: boolean, text: string, warn = false) => `<span class="badge ${ok ? 'ok' : warn ? 'warn' : 'bad'}">${h(text)}</span>`;

function statusBadge(status: RunStep['status']): string {
  return badge(status === 'PASSED', statusWord(status).toUpperCase(), status === 'SKIPPED' || status === 'PENDING' || status === 'NOT RUN');
}

function facts(rows: [string, string][]): string {
  return `<table class="facts">${rows.map(([k, v]) => `<tr><th>${h(k)}</th><td>${v}</td></tr>`).join('')}</table>`;
}

function link(view: ScenarioView): string {
  return `<a href="#${h(view.anchor)}">${h(view.scenario.name)}</a>`;
}

function gateRow(gate: Gate): string {
  return `<tr><td>${h(gate.title)}</td><td>${h(gate.summary)}</td><td>${badge(gate.passed, gate.passed ? 'PASS' : 'FAIL')}</td></tr>`;
}

function matrix(rows: MatrixRow[]): string {
  const body: string[] = [];
  for (const row of rows) {
    const span = Math.max(1, row.scenarios.length);
    const head =
      `<td rowspan="${span}"><span class="req-id">${h(row.requirement.id)}</span> ${h(row.requirement.title)}` +
      `<div class="muted">${h(row.requirement.source)} · owner: ${h(row.requirement.owner)}</div>` +
      `<div>${badge(row.ok, row.status)}</div></td>`;
    if (row.scenarios.length === 0) {
      body.push(`<tr>${head}<td class="muted">no scenario</td><td>${badge(false, 'NOT COVERED')}</td><td class="muted">—</td></tr>`);
      continue;
    }
    row.scenarios.forEach(({ view, measured }, i) => {
      const values = measured.length ? `<ul class="plain">${measured.map((m) => `<li>${h(m)}</li>`).join('')}</ul>` : '<span class="muted">—</span>';
      body.push(`<tr>${i === 0 ? head : ''}<td>${link(view)}</td><td>${statusBadge(view.scenario.status)}</td><td>${values}</td></tr>`);
    });
  }
  return `<table id="traceability-matrix"><thead><tr><th style="width:30%">Requirement</th><th style="width:30%">Scenario</th><th>Result</th><th>Measured values</th></tr></thead><tbody>${body.join('')}</tbody></table>`;
}

function determinismRow(row: DeterminismRow): string {
  return (
    `<tr><td>${h(row.name)}</td><td class="mono">${h(row.key)}</td><td class="mono">${h(shortDigest(row.first))}</td>` +
    `<td class="mono">${h(shortDigest(row.second))}</td><td>${row.same ? badge(true, 'same') : `${badge(false, 'DIFFERENT')} ${h(row.reason)}`}</td></tr>`
  );
}

function determinismTable(rows: DeterminismRow[]): string {
  return `<table><thead><tr><th>Scenario</th><th>Where</th><th>Run 1 digest</th><th>Run 2 digest</th><th>Same?</th></tr></thead><tbody>${rows.map(determinismRow).join('')}</tbody></table>`;
}

function steps(view: ScenarioView): string {
  const items = view.scenario.steps.map((step) => {
    const status = step.status === 'PASSED' ? '' : `<span class="st">${statusBadge(step.status)}</span>`;
    if (step.kind !== 'step') return `<li><span class="kw">(${h(step.kind)})</span>${status}</li>`;
    const table = step.table ? `<table>${step.table.map((row) => `<tr>${row.map((c) => `<td>${h(c)}</td>`).join('')}</tr>`).join('')}</table>` : '';
    const doc = step.docString !== null ? `<pre>${h(step.docString)}</pre>` : '';
    return `<li><span class="kw">${h(step.keyword)}</span> ${h(step.text)}${status}${table}${doc}</li>`;
  });
  return `<ol class="steps">${items.join('')}</ol>`;
}

function scenario(view: ScenarioView): string {
  const s = view.scenario;
  const ev = s.evidence;
  const ok = s.status === 'PASSED';
  const parts: string[] = [`<section class="scenario ${ok ? 'ok' : 'bad'}" id="${h(view.anchor)}">`, `<h4>${statusBadge(s.status)} ${h(s.name)}</h4>`];
  parts.push(
    facts([
      ['Where', `<span class="mono">${h(s.key)}</span>${s.rule ? ` — rule: ${h(s.rule)}` : ''}`],
      ['Requirements', view.requirements.length ? view.requirements.map(h).join(', ') : badge(false, 'NONE')],
      ...(view.otherTags.length ? ([['Other tags', view.otherTags.map(h).join(', ')]] as [string, string][]) : []),
      ['Seed', view.seed === null ? '—' : h(String(view.seed))],
      ['Replay it', `<code>${h(view.replay)}</code>`],
      ['Digest', ev?.digest ? `<span class="mono">${h(ev.digest)}</span>` : `<span class="muted">— (${h(s.evidenceError ?? 'no simulation ran')})</span>`],
    ]),
  );
  parts.push(steps(view));
  for (const step of s.steps.filter((st) => st.message)) {
    const what = step.kind === 'step' ? `${step.keyword} ${step.text}` : step.kind;
    parts.push(`<p><strong>${h(what)} — ${h(statusWord(step.status))}:</strong></p><pre>${h(step.message!)}</pre>`);
  }
  for (const { step, phrases } of view.suggestions) {
    parts.push(`<p><strong>${h(step.keyword)} ${h(step.text)} — undefined. Did you mean:</strong></p><ul class="plain">${phrases.map((p) => `<li><code>${h(p)}</code></li>`).join('')}</ul>`);
  }
  if (ev && ev.measurements.length) parts.push(`<p><strong>Measured:</strong></p><ul class="plain">${ev.measurements.map((m) => `<li>${h(m.text)}</li>`).join('')}</ul>`);
  if (ev && ev.timeline.placements.length) {
    parts.push(`<p><strong>Routing decisions, in plain words:</strong></p><ul class="plain">${ev.timeline.placements.map((p) => `<li>${h(p.sentence)}</li>`).join('')}</ul>`);
  }
  if (ev?.timeline.failure) parts.push(`<p><strong>The replay stopped at ${h(formatNs(ev.timeline.failure.at_ns))}:</strong> ${h(ev.timeline.failure.message)}</p>`);
  if (view.figure) {
    parts.push(
      `<figure class="timeline">${view.figure}<figcaption>Top: arrivals, KV event batches from emission to the instant the router saw them, and placements per worker. ` +
        `Bottom: per rank, the blocks the engine held (engine truth) and the blocks the router could see (router view); dashed orange lines mark placements.</figcaption></figure>`,
    );
  }
  for (const note of view.notes) parts.push(`<p><strong>${h(note.title)}:</strong></p><pre>${h(note.text)}</pre>`);
  parts.push('</section>');
  return parts.join('\n');
}

function list(items: string[]): string {
  return items.length ? `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>` : '<p class="muted">None.</p>';
}

/** Renders signoff.html. */
export function renderHtml(model: SignoffModel): string {
  const { input } = model;
  const subject = input.subject;
  const det = input.determinism;
  const cov = input.coverage;
  const out: string[] = [];
  out.push(
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${h(`Sign-off: ${input.campaign} — ${model.verdict}`)}</title>`,
    `<style>${CSS}</style></head><body><main>`,
    `<h1>Qualification sign-off</h1><p class="subtitle">${h(input.campaign)}</p>`,
  );
  if (input.perturbation !== null) {
    out.push(
      `<div class="banner" id="perturbation">⚠ TEST DOUBLE ACTIVE — not a valid sign-off. The second run was perturbed on purpose (KVQUAL_PERTURB=${h(input.perturbation)}) to prove that the determinism check catches a difference.</div>`,
    );
  }
  out.push(
    `<div class="verdict ${model.qualified ? 'ok' : 'bad'}" id="verdict"><div class="word">${h(model.verdict)}</div>` +
      `<div>Computed from the results below, never typed by hand: QUALIFIED only when every gate passes.</div></div>`,
    facts([
      ['Campaign', h(input.campaign)],
      ['Date', h(input.date)],
      ['Verdict', badge(model.qualified, model.verdict)],
    ]),
    `<table id="gates"><thead><tr><th style="width:190px">Gate</th><th>Result</th><th style="width:70px"></th></tr></thead><tbody>${model.gates.map(gateRow).join('')}</tbody></table>`,
    '<nav class="toc"><a href="#qualified">What was qualified</a><a href="#determinism">Determinism</a><a href="#matrix">Traceability matrix</a>' +
      '<a href="#gaps">Gaps</a><a href="#coverage">Coverage</a><a href="#scenarios">Scenarios</a><a href="#approval">Approval</a></nav>',
  );

  out.push(
    '<h2 id="qualified">What was qualified</h2>',
    facts([
      ['Package', h(`${subject.packageName} ${subject.packageVersion}`)],
      ['Git commit', `<span class="mono">${h(subject.commit)}</span> (${h(subject.worktree)})`],
      ['Node.js', h(subject.node)],
      ['Cucumber', h(`cucumber-js ${model.cucumberVersion}`)],
      ['Scenario set', `<span class="mono">${h(model.scenarioSet.digest)}</span><br>${h(countOf(model.scenarioSet.files, 'feature file'))}, ${h(countOf(model.scenarioSet.scenarios, 'scenario'))}`],
      ['Produced by', `<code>${h(input.command)}</code>`],
      ['Beside this report', input.companions.map((c) => `${h(c.label)}: <code>${h(c.file)}</code>`).join('<br>')],
    ]),
  );

  out.push(
    '<h2 id="determinism">Determinism</h2>',
    '<p>The suite ran twice. Each scenario attaches the canonical digest (SHA-256 of the canonical JSON) of what its simulation did: placements with their cost breakdowns, ' +
      'KV event batches (emitted, visible, applied or lost), membership changes and failures. The two runs must agree on every digest and every result.</p>',
  );
  if (det.problem) out.push(`<p>${badge(false, 'NOT PROVEN')} ${h(det.problem)}</p>`);
  else if (det.identical) out.push(`<p>${badge(true, 'IDENTICAL')} all ${det.rows.length} scenarios have the same digest and result in both runs.</p>`);
  else {
    out.push(
      `<p>${badge(false, 'DIFFERENT')} ${h(countOf(det.differences.length, 'scenario'))} differed (the second run's message stream is kept as <code>${h(RERUN_MESSAGES)}</code>):</p>`,
      determinismTable(det.differences),
    );
  }
  if (det.rows.length) out.push(`<details><summary>Digests of every scenario</summary>${determinismTable(det.rows)}</details>`);

  out.push(
    '<h2 id="matrix">Traceability matrix</h2>',
    '<p>Requirement → scenarios → result, with the values each scenario measured when it asserted them.</p>',
    matrix(model.matrix),
  );

  out.push('<h2 id="gaps">Gaps</h2>', '<p>Everything that keeps this report from QUALIFIED is listed here; nothing is folded into "passed".</p>');
  out.push('<h3>Requirements without a scenario</h3>', list(model.uncovered.map((r) => `<strong>${h(r.id)}</strong> ${h(r.title)} <span class="muted">— source: ${h(r.source)} · owner: ${h(r.owner)} · status: ${h(r.status)}</span>`)));
  out.push('<h3>Scenarios without a requirement tag</h3>', list(model.untraced.map((v) => `${link(v)} <span class="mono muted">${h(v.scenario.key)}</span>`)));
  out.push('<h3>Tags naming no registered requirement</h3>', list(model.unknownTags.map(({ view, tag }) => `${h(tag)} on ${link(view)}`)));
  out.push('<h3>Scenarios that did not pass</h3>', list(model.notPassed.map((v) => `${statusBadge(v.scenario.status)} ${link(v)} <span class="mono muted">${h(v.scenario.key)}</span>`)));
  out.push('<h3>Steps that did not pass (failed, undefined, pending, ambiguous, skipped, not run)</h3>');
  out.push(
    model.stepsNotPassed.length
      ? `<table id="steps-not-passed"><thead><tr><th>Scenario</th><th>Step</th><th>Status</th></tr></thead><tbody>${model.stepsNotPassed
          .map(
            ({ view, step, suggestions }) =>
              `<tr><td>${link(view)}</td><td>${step.kind === 'step' ? `${h(step.keyword)} ${h(step.text)}` : h(step.kind)}` +
              (suggestions.length ? `<div class="suggest">did you mean: ${suggestions.map((p) => `<code>${h(p)}</code>`).join(' · ')}</div>` : '') +
              `</td><td>${statusBadge(step.status)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '<p class="muted">None.</p>',
  );
  if (input.run.runErrors.length) out.push('<h3>Problems of the run itself</h3>', list(input.run.runErrors.map(h)));
  if (input.coverageRun !== null) {
    const run = input.coverageRun;
    out.push(
      '<h3>Failures of the compiled coverage run</h3>',
      list([
        ...run.failures.map((f) => `${h(f.kind)} “${h(f.name)}” <span class="mono muted">${h(f.where)}</span>${f.why ? `: ${h(f.why)}` : ''}`),
        ...run.problems.map((p) => `the run could not complete: ${h(p)}`),
      ]),
    );
  }

  out.push('<h2 id="coverage">Coverage of src/</h2>');
  if (cov) {
    out.push(
      `<p><strong>Lines ${cov.lines.pct}%</strong> (${cov.lines.covered}/${cov.lines.total}), <strong>branches ${cov.branches.pct}%</strong> (${cov.branches.covered}/${cov.branches.total}), ` +
        `functions ${cov.functions.pct}% (${cov.functions.covered}/${cov.functions.total}).</p><p class="muted">${h(cov.scope)}</p>`,
      `<table><thead><tr><th>Directory</th><th>Files</th><th>Lines</th><th>Branches</th><th>Functions</th></tr></thead><tbody>${cov.groups
        .map((g) => `<tr><td class="mono">${h(g.path)}</td><td>${g.files}</td><td>${g.lines.pct}%</td><td>${g.branches.pct}%</td><td>${g.functions.pct}%</td></tr>`)
        .join('')}</tbody></table>`,
    );
  } else out.push(`<p class="muted">Not measured: ${h(input.coverageNote)}</p>`);

  out.push('<h2 id="scenarios">Scenarios</h2>');
  for (const feature of model.features) {
    out.push(`<h3>${h(feature.name)} <span class="mono muted">${h(feature.uri)}</span></h3>`);
    if (feature.description) out.push(`<div class="feature-desc">${h(feature.description).replace(/\n/g, '<br>')}</div>`);
    for (const view of feature.views) out.push(scenario(view));
  }

  if (input.glossary.length > 0) {
    out.push(
      '<h2 id="glossary">Glossary</h2>',
      `<details><summary>The domain words of this report (from docs/glossary.md)</summary><table><thead><tr><th>Term</th><th>Meaning</th></tr></thead><tbody>${input.glossary
        .map((g) => `<tr><td><strong>${h(g.term)}</strong></td><td>${h(g.meaning.replace(/\x60/g, '').replace(/\[([^\]]+)\]\([^)]+\)/g, '$1'))}</td></tr>`)
        .join('')}</tbody></table></details>`,
    );
  }
  out.push(
    '<h2 id="approval">Approval</h2>',
    '<p>To be completed by people. A signature approves the verdict above for the commit and scenario set named in this report.</p>',
    '<table class="approval"><thead><tr><th style="width:160px">Role</th><th>Name</th><th style="width:160px">Date</th><th>Signature</th></tr></thead><tbody>' +
      ['Prepared by', 'Reviewed by', 'Approved by'].map((role) => `<tr><td>${role}</td><td></td><td></td><td></td></tr>`).join('') +
      '</tbody></table>',
    `<footer>Generated by <code>${h(input.command)}</code> from cucumber's message streams (two runs), the requirement registry and c8's coverage summary.</footer>`,
    '</main></body></html>',
  );
  return `${out.join('\n')}\n`;
}
