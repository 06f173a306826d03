// signoff.html: one self-contained page rendered from the sign-off model (inline CSS, SVG figures,
// no external resource). Its first screen holds the verdict, the gates, what was qualified (the one
// place that says what ran), what needs attention and the approval block; then a chart of
// scenarios by requirement and result, a requirement view (each requirement once), the
// traceability matrix (each scenario once), the determinism proof, the gaps, coverage (one sentence,
// the figures folded), and the scenarios, folded by feature and by scenario (failed and changed ones
// open). One small inline script adds filtering by result and by tag, a text search, and opens the
// card a link or the address names, clear of the sticky filter bar; the Content-Security-Policy
// allows that script and the page's style sheet alone, each by its SHA-256 (no inline style
// elsewhere applies), and the page reads completely without the script. Figures are inlined only
// through the allow-list sanitiser (src/report/svgSanitiser.ts). Printed (A4), the page keeps the
// scenarios as they are folded: a failed or changed card in full, every other one as its line,
// with the whole matrix and table headers repeated. Every scenario-supplied string is HTML-escaped,
// so a scenario named `<script>…` reads as text.
import { createHash } from 'node:crypto';
import type { DeterminismRow } from './determinism';
import { formatNs } from '../time';
import { compareNatural } from '../order';
import type { Gate, MatrixRow, ScenarioView, SignoffModel } from './model';
import { countOf, coverageSentence, measuredText, PLANTED_BANNER, RERUN_MESSAGES, shortDigest, statusWord } from './model';
import { BaselineDiff, baselineSummary } from './baseline';
import type { RunStep } from './messages';
import { escapeHtml as h, plainWords } from './text';
import { sanitiseSvg, SvgRefused, writtenBySanitiser } from '../report/svgSanitiser';
import { sloFigureCaption } from './sloCard';

const CSS = `
:root { --ok: #2b8a3e; --ok-bg: #ebfbee; --bad: #c92a2a; --bad-bg: #fff5f5; --warn: #e67700; --ink: #212529; --muted: #6c757d; --line: #dee2e6; --head: #f1f3f5; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 14px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); background: #f8f9fa; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 28px 40px; background: white; }
h1 { font-size: 21px; margin: 0; }
h2 { font-size: 18px; margin: 28px 0 8px; padding-bottom: 3px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; }
h4 { font-size: 14px; margin: 0; display: inline; }
p { margin: 4px 0 8px; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f8f9fa; border: 1px solid var(--line); border-radius: 4px; padding: 6px 8px; white-space: pre-wrap; word-break: break-word; margin: 4px 0; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 10px; }
th, td { border: 1px solid var(--line); padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; }
table.facts th { width: 170px; }
#first-screen table.facts th { width: 120px; }
.digest { font-size: 11px; }
.digest { word-break: break-all; }
.w-110px { width: 110px; }
.w-150px { width: 150px; }
.w-16pct { width: 16%; }
.w-38pct { width: 38%; }
.w-45pct { width: 45%; }
.w-56px { width: 56px; }
.w-90px { width: 90px; }
.subtitle { color: var(--muted); margin: 0; }
.first { display: grid; grid-template-columns: 1fr 1fr; gap: 6px 22px; margin-top: 8px; }
.first h3 { margin: 4px 0 4px; }
.verdict { display: flex; align-items: center; gap: 14px; padding: 8px 14px; border-radius: 6px; border: 2px solid; }
.verdict.ok { background: var(--ok-bg); border-color: var(--ok); }
.verdict.bad { background: var(--bad-bg); border-color: var(--bad); }
.verdict .word { font-size: 24px; font-weight: 800; letter-spacing: .5px; white-space: nowrap; }
.verdict.ok .word { color: var(--ok); }
.verdict.bad .word { color: var(--bad); }
.banner { background: #fff4e6; border: 2px solid var(--warn); color: #7a3e00; padding: 6px 12px; border-radius: 6px; margin: 6px 0; font-weight: 600; }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 11.5px; font-weight: 700; white-space: nowrap; }
.badge.ok { background: var(--ok-bg); color: var(--ok); border: 1px solid var(--ok); }
.badge.bad { background: var(--bad-bg); color: var(--bad); border: 1px solid var(--bad); }
.badge.warn { background: #fff9db; color: var(--warn); border: 1px solid var(--warn); }
.muted { color: var(--muted); }
.req-id { font-weight: 700; white-space: nowrap; }
ul.plain { margin: 2px 0; padding-left: 18px; }
#traceability-matrix ul.plain { margin: 0; padding: 0; list-style: none; }
#traceability-matrix ul.plain li { display: inline; }
#traceability-matrix ul.plain li + li::before { content: " · "; color: var(--muted); }
ul.attention { margin: 2px 0; padding-left: 18px; }
ul.attention li { margin: 2px 0; }
.approval td { height: 30px; }
details > summary { cursor: pointer; }
details.req, details.feature { border: 1px solid var(--line); border-radius: 5px; margin: 4px 0; padding: 3px 10px; }
details.req > summary, details.feature > summary { padding: 2px 0; }
details.feature > summary { font-weight: 600; }
details.scenario { border: 1px solid var(--line); border-radius: 5px; padding: 4px 12px; margin: 6px 0; break-inside: avoid; }
details.scenario.bad { border-left: 5px solid var(--bad); }
details.scenario.ok { border-left: 5px solid var(--ok); }
details.scenario[open] { padding-bottom: 10px; }
.steps { list-style: none; margin: 6px 0; padding: 6px 10px; background: #f8f9fa; border: 1px solid var(--line); border-radius: 4px; }
.steps li { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; padding: 1px 0; }
.steps .kw { color: #5f3dc4; font-weight: 700; }
.steps .st { float: right; }
.steps table { width: auto; margin: 2px 0 4px 24px; }
.steps table td { padding: 1px 8px; font-size: 12px; }
.suggest { color: var(--bad); font-size: 12px; }
.bad-note { color: var(--bad); font-weight: 600; }
figure { margin: 8px 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 12px; }
.feature-desc { color: #495057; border-left: 3px solid var(--line); padding-left: 10px; margin: 4px 0 8px; font-weight: normal; }
nav.toc { background: #f8f9fa; border: 1px solid var(--line); border-radius: 6px; padding: 5px 12px; margin: 12px 0 0; }
nav.toc a { margin-right: 12px; }
#filters { position: sticky; top: 0; z-index: 2; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; margin: 10px 0; display: flex; gap: 14px; align-items: center; flex-wrap: wrap; }
#filters input[type=search] { width: 280px; }
.chart svg { max-width: 100%; height: auto; }
footer { margin-top: 28px; color: var(--muted); font-size: 12px; }
/* A link into the page lands clear of the sticky filter bar (the script scrolls by the bar's measured height; this is its one-line height). */
[id] { scroll-margin-top: 64px; }
@page { size: A4; margin: 12mm; }
/* Printing: the first screen, the chart, each requirement's line (those not covered and passed in full), the whole matrix, and the
   scenarios as they are folded: a failed or changed card in full, every other one as its one line. */
@media print {
  body { background: white; font-size: 11.5px; line-height: 1.3; }
  main { padding: 0; max-width: none; }
  code, pre, .mono { font-size: 10.5px; }
  td { overflow-wrap: anywhere; }
  th, td { padding: 2px 5px; }
  #traceability-matrix { table-layout: fixed; font-size: 10.5px; }
  #traceability-matrix .w-38pct { width: 40%; }
  #traceability-matrix .w-16pct { width: 14%; }
  #traceability-matrix .w-90px { width: 58px; }
  .badge { font-size: 9.5px; padding: 0 4px; }
  h4 { font-size: 11.5px; font-weight: 600; }
  details.feature:not([open]) .feature-desc { display: none; }
  h2 { margin-top: 18px; break-after: avoid; }
  h3 { break-after: avoid; }
  nav.toc, #filters { display: none !important; }
  #matrix-fold::details-content, details.feature::details-content { content-visibility: visible; display: contents; }
  details > summary { list-style: none; }
  details.scenario { margin: 0; padding: 1px 10px; border-radius: 0; }
  details.scenario:not([open]) + details.scenario:not([open]) { border-top: 0; }
  details.scenario[open] { margin: 6px 0; padding: 4px 12px 10px; }
  details.req { margin: 0; padding: 1px 10px; border-radius: 0; }
  details.req:not([open]) + details.req:not([open]) { border-top: 0; }
  details.req[open] { margin: 4px 0; }
  details.feature { padding: 3px 8px; }
  tr[hidden] { display: table-row !important; }
  details[hidden] { display: block !important; }
  thead { display: table-header-group; }
  tr, figure { break-inside: avoid; }
  .first { display: block; }
}
`;

/**
 * The page's one script: filters by result and tag, text search, and links into the page: the
 * card (or section) a link or the address names is opened, with the folds around it, and scrolled
 * clear of the sticky filter bar (on load, on a change of the address's #, and on a click of a
 * link to where the address already points). Printing is left to the style sheet.
 */
export const FILTER_SCRIPT = `(function () {
  var bar = document.getElementById('filters');
  if (!bar) return;
  bar.hidden = false;
  var search = document.getElementById('filter-text'), result = document.getElementById('filter-result'), tag = document.getElementById('filter-tag'), shown = document.getElementById('filter-shown');
  function apply() {
    var text = search.value.trim().toLowerCase(), wanted = result.value, wantedTag = tag.value, count = 0;
    document.querySelectorAll('[data-result]').forEach(function (el) {
      var ok = (wanted === 'all' || el.getAttribute('data-result') === wanted) &&
        (wantedTag === '' || (' ' + el.getAttribute('data-tags') + ' ').indexOf(' ' + wantedTag + ' ') >= 0) &&
        (text === '' || el.getAttribute('data-text').indexOf(text) >= 0);
      el.hidden = !ok;
      if (ok && el.classList.contains('scenario')) count++;
      if (ok && text !== '' && el.tagName === 'DETAILS') el.open = true;
    });
    var fold = document.getElementById('matrix-fold');
    if (fold && (text !== '' || wanted !== 'all' || wantedTag !== '')) fold.open = true;
    document.querySelectorAll('details.feature, details.req').forEach(function (group) {
      group.hidden = group.querySelector('[data-result]:not([hidden])') === null;
      if (!group.hidden && (text !== '' || wanted !== 'all' || wantedTag !== '') && group.classList.contains('feature')) group.open = true;
    });
    shown.textContent = count + ' of ' + document.querySelectorAll('details.scenario').length + ' scenarios shown';
  }
  function reveal() {
    var target = null;
    try { target = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null; } catch (error) { return; }
    if (target === null) return;
    if (target.closest('[hidden]') !== null) {
      search.value = ''; result.value = 'all'; tag.value = '';
      apply();
    }
    for (var el = target; el !== null; el = el.parentElement) if (el.tagName === 'DETAILS') el.open = true;
    window.scrollTo(0, window.scrollY + target.getBoundingClientRect().top - bar.getBoundingClientRect().height - 12);
  }
  [search, result, tag].forEach(function (el) { el.addEventListener('input', apply); el.addEventListener('change', apply); });
  window.addEventListener('hashchange', reveal);
  window.addEventListener('load', reveal);
  document.addEventListener('click', function (event) {
    var link = event.target.closest ? event.target.closest('a[href^="#"]') : null;
    if (link !== null && link.getAttribute('href') === location.hash) { event.preventDefault(); reveal(); }
  });
  apply();
  reveal();
})();`;

/** The CSP source of the page's script or style sheet: its SHA-256, base64. */
export function scriptHash(script: string): string {
  return `sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}`;
}

/**
 * The page's Content-Security-Policy: nothing loads, and only the page's own script and style
 * sheet apply, each by its hash (no 'unsafe-inline': a style element or attribute that got into a
 * figure or a name would be ignored, not applied).
 */
export const CONTENT_SECURITY_POLICY = `default-src 'none'; style-src '${scriptHash(CSS)}'; img-src data:; script-src '${scriptHash(FILTER_SCRIPT)}'`;

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

/** The attributes the filter reads: result, tags and searchable text. */
function filterData(view: ScenarioView): string {
  const s = view.scenario;
  const text = [s.name, s.key, s.feature.name, ...s.tags, ...s.steps.map((st) => st.text)].join(' ').toLowerCase();
  return `data-result="${s.status === 'PASSED' ? 'passed' : 'not-passed'}" data-tags="${h(s.tags.join(' '))}" data-text="${h(text)}"`;
}

function gateRow(gate: Gate): string {
  return `<tr><td>${h(gate.title)}</td><td>${h(gate.summary)}</td><td>${badge(gate.passed, gate.passed ? 'PASS' : 'FAIL')}</td></tr>`;
}

function measuredList(measured: string[]): string {
  return measured.length ? `<ul class="plain">${measured.map((m) => `<li>${h(plainWords(m))}</li>`).join('')}</ul>` : '<span class="muted">—</span>';
}

/** Measured values shown in the matrix before the rest fold under "N more" (printed unfolded). */
const MATRIX_MEASURED_SHOWN = 3;

/** A scenario's measured values in the matrix: the first few, the others folded, so a row stays a few lines high. */
function matrixMeasured(measured: string[]): string {
  if (measured.length <= MATRIX_MEASURED_SHOWN + 1) return measuredList(measured);
  const rest = measured.slice(MATRIX_MEASURED_SHOWN);
  return `${measuredList(measured.slice(0, MATRIX_MEASURED_SHOWN))}<details class="more"><summary>${rest.length} more</summary>${measuredList(rest)}</details>`;
}

/** The requirement view: each requirement once, folded unless it is not covered and passed. */
function requirementView(rows: MatrixRow[]): string {
  return rows
    .map((row) => {
      const head =
        `<summary><span class="req-id">${h(row.requirement.id)}</span> ${h(row.requirement.title)} ${badge(row.ok, row.status)} ` +
        `<span class="muted">owner: ${h(row.requirement.owner)}</span></summary>`;
      const body =
        row.scenarios.length === 0
          ? `<p class="muted">No scenario. Source: ${h(row.requirement.source)}.</p>`
          : `<p class="muted">Source: ${h(row.requirement.source)}</p><table><thead><tr><th class="w-45pct">Scenario</th><th class="w-110px">Result</th><th>Measured values</th></tr></thead><tbody>${row.scenarios
              .map(({ view, measured }) => `<tr ${filterData(view)}><td>${link(view)}</td><td>${statusBadge(view.scenario.status)}</td><td>${measuredList(measured)}</td></tr>`)
              .join('')}</tbody></table>`;
      return `<details class="req" id="req-${h(row.requirement.id)}"${row.ok ? '' : ' open'}>${head}${body}</details>`;
    })
    .join('\n');
}

/** The traceability matrix: each scenario once, with all the requirements it traces to. */
function matrix(model: SignoffModel): string {
  const rows = model.views.map((view) => {
    const requirements = view.requirements.length ? view.requirements.map((id) => `<a href="#req-${h(id)}">${h(id)}</a>`).join(', ') : badge(false, 'NONE');
    return `<tr ${filterData(view)}><td>${link(view)} <span class="muted mono">${h(view.scenario.key)}</span></td><td>${requirements}</td><td>${statusBadge(view.scenario.status)}</td><td>${matrixMeasured((view.scenario.evidence?.measurements ?? []).map(measuredText))}</td></tr>`;
  });
  return `<table id="traceability-matrix"><thead><tr><th class="w-38pct">Scenario</th><th class="w-16pct">Requirements</th><th class="w-90px">Result</th><th>Measured values</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
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
  const changed = view.changed ? ` ${badge(false, 'CHANGED', true)}` : '';
  const parts: string[] = [
    `<details class="scenario ${ok ? 'ok' : 'bad'}" id="${h(view.anchor)}" ${filterData(view)}${view.open ? ' open' : ''}>`,
    `<summary>${statusBadge(s.status)}${changed} <h4>${h(s.name)}</h4></summary>`,
  ];
  parts.push(
    facts([
      ['Where', `<span class="mono">${h(s.key)}</span>${s.rule ? ` — rule: ${h(s.rule)}` : ''}`],
      ['Requirements', view.requirements.length ? view.requirements.map(h).join(', ') : badge(false, 'NONE')],
      ...(view.otherTags.length ? ([['Other tags', view.otherTags.map(h).join(', ')]] as [string, string][]) : []),
      ['Seed', view.seed === null ? '—' : h(String(view.seed))],
      ['Replay it', `<code>${h(view.replay)}</code>`],
      ['Digest', ev?.digest ? `<span class="mono">${h(ev.digest)}</span>` : `<span class="muted">— (${h(s.evidenceError ?? 'no simulation ran')})</span>`],
      ...(ev?.pass_times ? ([['Pass times', h(ev.pass_times)]] as [string, string][]) : []),
    ]),
  );
  parts.push(steps(view));
  for (const step of s.steps.filter((st) => st.message)) {
    const what = step.kind === 'step' ? `${step.keyword} ${step.text}` : step.kind;
    parts.push(`<p><strong>${h(what)} — ${h(statusWord(step.status))}:</strong></p><pre>${h(plainWords(step.message!))}</pre>`);
  }
  for (const { step, phrases } of view.suggestions) {
    parts.push(`<p><strong>${h(step.keyword)} ${h(step.text)} — undefined. Did you mean:</strong></p><ul class="plain">${phrases.map((p) => `<li><code>${h(p)}</code></li>`).join('')}</ul>`);
  }
  if (ev && ev.measurements.length) parts.push(`<p><strong>Measured:</strong></p>${measuredList(ev.measurements.map(measuredText))}`);
  if (ev && ev.timeline.placements.length) {
    parts.push(`<p><strong>Routing decisions, in plain words:</strong></p><ul class="plain">${ev.timeline.placements.map((p) => `<li>${h(plainWords(p.sentence))}</li>`).join('')}</ul>`);
  }
  if (ev?.timeline.failure) parts.push(`<p><strong>The replay stopped at ${h(formatNs(ev.timeline.failure.at_ns))}:</strong> ${h(plainWords(ev.timeline.failure.message))}</p>`);
  if (view.figure) {
    const sloCaption = ev?.slo?.length ? h(sloFigureCaption(ev.slo)) : null;
    parts.push(
      `<figure class="timeline">${inlineFigure(view.figure, view.anchor)}<figcaption>${sloCaption ?? 'Top: arrivals, KV event batches from emission to the instant the router saw them, and placements per worker. ' +
        'Bottom: per rank, the blocks the engine held (engine truth) and the blocks the router could see (router view); dashed orange lines mark placements.'}</figcaption></figure>`,
    );
  }
  for (const note of view.notes) parts.push(`<p><strong>${h(note.title)}:</strong></p><pre>${h(note.text)}</pre>`);
  parts.push('</details>');
  return parts.join('\n');
}

/**
 * A figure as the page inlines it: through the allow-list sanitiser, or a line saying why it is
 * withheld; one the sanitiser wrote in this process for this anchor (renderFigures) as written.
 */
function inlineFigure(svg: string, anchor: string): string {
  if (writtenBySanitiser(svg, anchor)) return svg;
  try {
    return sanitiseSvg(svg, anchor);
  } catch (error) {
    if (!(error instanceof SvgRefused)) throw error;
    return `<p class="bad-note">Figure withheld — ${h(error.message)}.</p>`;
  }
}

function list(items: string[]): string {
  return items.length ? `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>` : '<p class="muted">None.</p>';
}

/** The summary chart's geometry, in CSS px: it is drawn at this width, which fits the page and a printed A4 page without shrinking its text. */
export const CHART = {
  width: 700,
  /** Every label and number: at least 11 px. */
  fontSize: 11,
  /** A bar of one scenario, passed or not, is never thinner or shorter than this. */
  minBar: 8,
  barHeight: 11,
  rowPitch: 17,
  legendHeight: 30,
  /** Requirements per column of bars before another column starts. */
  rowsPerColumn: 30,
} as const;

/** Width of `text` at the chart's font size, taken generously (0.62 em a character), for laying out labels that must not be cut off. */
const textWidth = (text: string) => Math.ceil(text.length * CHART.fontSize * 0.62);

/** The count written after a requirement's bar: its scenarios that passed, then those that did not (empty when none). */
function countWords(row: MatrixRow): [string, string] {
  const passed = row.scenarios.filter((s) => s.view.scenario.status === 'PASSED').length;
  const other = row.scenarios.length - passed;
  return [String(passed), other > 0 ? ` · ${other} not passed` : ''];
}

/**
 * Scenarios by requirement and result (inline SVG): one horizontal bar per requirement, in the
 * matrix's order, in up to a few columns side by side; green for the scenarios that passed, red for
 * the others, each part at least CHART.minBar wide so that one failed scenario shows, and the count
 * written after the bar. A requirement without a scenario gets a red outline and the words "no
 * scenario". The legend sits above the bars, inside the drawing.
 */
export function summaryChart(rows: MatrixRow[]): string {
  const { width, fontSize, minBar, barHeight, rowPitch, legendHeight } = CHART;
  const columns = Math.max(1, Math.min(3, Math.ceil(rows.length / CHART.rowsPerColumn)));
  const perColumn = Math.max(1, Math.ceil(rows.length / columns));
  const columnWidth = Math.floor(width / columns);
  const labelWidth = 6 + Math.max(0, ...rows.map((r) => textWidth(r.requirement.id)));
  const countWidth = 6 + Math.max(textWidth('no scenario'), ...rows.map((r) => textWidth(countWords(r).join(''))));
  const barRoom = columnWidth - labelWidth - countWidth - 12;
  const most = Math.max(1, ...rows.map((r) => r.scenarios.length));
  const length = (n: number) => (n === 0 ? 0 : Math.max(minBar, Math.round((n / most) * (barRoom - minBar))));
  const height = legendHeight + perColumn * rowPitch + 6;
  const text = (x: number, y: number, words: string, extra = '') => `<text x="${x}" y="${y}" font-size="${fontSize}"${extra}>${h(words)}</text>`;
  const parts: string[] = [];
  let legendX = 0;
  for (const [fill, stroke, words] of [['#2f9e44', 'none', 'passed'], ['#e03131', 'none', 'not passed'], ['none', '#e03131', 'no scenario']] as const) {
    parts.push(`<rect x="${legendX + 0.5}" y="${8.5}" width="12" height="12" fill="${fill}" stroke="${stroke}"/>`, text(legendX + 18, 19, words, ' fill="#343a40"'));
    legendX += 18 + textWidth(words) + 18;
  }
  rows.forEach((row, i) => {
    const x = Math.floor(i / perColumn) * columnWidth;
    const y = legendHeight + (i % perColumn) * rowPitch;
    const [passedWords, otherWords] = countWords(row);
    const passed = row.scenarios.filter((s) => s.view.scenario.status === 'PASSED').length;
    const other = row.scenarios.length - passed;
    const title = `<title>${h(`${row.requirement.id}: ${row.scenarios.length === 0 ? 'no scenario' : `${passed} passed, ${other} not passed`}`)}</title>`;
    const barX = x + labelWidth;
    parts.push(text(barX - 6, y + barHeight - 1, row.requirement.id, ' text-anchor="end" fill="#212529"'));
    if (row.scenarios.length === 0) {
      parts.push(`<rect x="${barX + 0.5}" y="${y + 0.5}" width="${minBar}" height="${barHeight - 1}" fill="none" stroke="#e03131">${title}</rect>`);
      parts.push(text(barX + minBar + 6, y + barHeight - 1, 'no scenario', ' fill="#c92a2a"'));
      return;
    }
    if (passed > 0) parts.push(`<rect x="${barX}" y="${y}" width="${length(passed)}" height="${barHeight}" fill="#2f9e44">${title}</rect>`);
    if (other > 0) parts.push(`<rect x="${barX + length(passed)}" y="${y}" width="${length(other)}" height="${barHeight}" fill="#e03131">${title}</rect>`);
    const countX = barX + length(passed) + length(other) + 6;
    parts.push(text(countX, y + barHeight - 1, passedWords, ' fill="#343a40"'));
    if (otherWords) parts.push(text(countX + textWidth(passedWords), y + barHeight - 1, otherWords, ' fill="#c92a2a" font-weight="700"'));
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" font-family="Helvetica, Arial, sans-serif" role="img" aria-label="Scenarios by requirement and result">${parts.join('')}</svg>`;
}

/**
 * What ran, said once (on the first screen): the package, the commit and its working tree, the
 * scenario set and the requirement registry with their digests, the versions that ran them and
 * the command that produced the report. The campaign and date are the page's subtitle; the files
 * written beside the report, its footer.
 */
function whatRan(model: SignoffModel): string {
  const { input } = model;
  const { subject, scope } = input;
  const digest = (value: string) => `<span class="mono digest">${h(value)}</span>`;
  return facts([
    ['Package', h(`${subject.packageName} ${subject.packageVersion}`)],
    ['Git commit', `${digest(subject.commit)} (${h(subject.worktree)})`],
    ['Scenario set', `${h(countOf(model.scenarioSet.scenarios, 'scenario'))} in ${h(countOf(model.scenarioSet.files, 'feature file'))}${scope ? ` of <code>${h(scope.features)}/</code>` : ''}: ${digest(model.scenarioSet.digest)}`],
    ...(scope ? [['Requirements', `<code>${h(scope.requirements)}</code> ${digest(scope.requirements_digest)}${scope.repository_suite ? '' : ' — not the repository\'s suite'}`] as [string, string]] : []),
    ['Run with', h(`Node.js ${subject.node}, cucumber-js ${model.cucumberVersion}`)],
    ['Produced by', `<code>${h(input.command)}</code>`],
  ]);
}

/** Renders signoff.html. */
export function renderHtml(model: SignoffModel): string {
  const { input } = model;
  const subject = input.subject;
  const det = input.determinism;
  const cov = input.coverage;
  const tags = [...new Set(model.views.flatMap((v) => v.scenario.tags))].sort(compareNatural);
  const out: string[] = [];
  out.push(
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${h(`Sign-off: ${input.campaign} — ${model.verdict}`)}</title>`,
    `<style>${CSS}</style></head><body><main>`,
    `<h1>Qualification sign-off</h1><p class="subtitle">${h(input.campaign)} · ${h(input.date)}</p>`,
  );
  if (input.perturbation !== null) {
    out.push(
      `<div class="banner" id="perturbation">⚠ TEST DOUBLE ACTIVE — not a valid sign-off. The second run was perturbed on purpose (KVQUAL_PERTURB=${h(input.perturbation)}) to prove that the determinism check catches a difference.</div>`,
    );
  }
  if (input.generated?.planted_defect) out.push(`<div class="banner" id="planted-defect">⚠ TEST DOUBLE ACTIVE — not a valid sign-off. ${h(PLANTED_BANNER)}</div>`);
  // ── the first screen ──
  const attention = model.attention.length
    ? `<ul class="attention">${model.attention.map((a) => `<li>${h(a.text)} <a href="${h(a.href)}">details</a></li>`).join('')}</ul>`
    : '<p>Nothing: every gate passed, the working tree is clean and coverage was measured.</p>';
  out.push(
    '<section class="first" id="first-screen">',
    `<div><div class="verdict ${model.qualified ? 'ok' : 'bad'}" id="verdict"><div class="word">${h(model.verdict)}</div>` +
      `<div>Computed from the results below, never typed by hand: QUALIFIED only when every gate passes and the run was the project's whole qualification.</div></div>` +
      `<table id="gates"><thead><tr><th class="w-150px">Gate</th><th>Result</th><th class="w-56px"></th></tr></thead><tbody>${model.gates.map(gateRow).join('')}</tbody></table>` +
      `<h3 id="qualified">What was qualified</h3>${whatRan(model)}</div>`,
    `<div><h3 id="attention">Needs attention</h3>${attention}` +
      (model.narrowed.length > 0 && model.verdict !== 'NOT QUALIFIED'
        ? `<div id="not-a-sign-off"><h3>Not a release sign-off</h3><p>Every gate passed, but this run is not the project's whole qualification, so it has no approval block:</p><ul>${model.narrowed.map((reason) => `<li>${h(reason)}</li>`).join('')}</ul></div>`
        : `<div id="approval"><h3>Approval</h3><p class="muted">To be completed by people. A signature approves the verdict for the commit and scenario set named in this report.</p>` +
          '<table class="approval"><thead><tr><th class="w-110px">Role</th><th>Name</th><th class="w-90px">Date</th><th>Signature</th></tr></thead><tbody>' +
          ['Prepared by', 'Reviewed by', 'Approved by'].map((role) => `<tr><td>${role}</td><td></td><td></td><td></td></tr>`).join('') +
          '</tbody></table></div>') +
      '</div>',
    '</section>',
    '<nav class="toc"><a href="#summary">Summary</a><a href="#requirements">Requirements</a><a href="#matrix">Traceability matrix</a><a href="#determinism">Determinism</a>' +
      '<a href="#gaps">Gaps</a><a href="#coverage">Coverage</a><a href="#scenarios">Scenarios</a><a href="#glossary">Glossary</a></nav>',
  );

  out.push(
    '<h2 id="summary">Scenarios by requirement and result</h2>',
    `<figure class="chart">${summaryChart(model.matrix)}<figcaption>Each bar is one requirement: how many of its scenarios passed (green) and did not (red), the count after it. A scenario counts under every requirement it traces to.</figcaption></figure>`,
  );
  out.push(
    '<div id="filters" hidden><label>Result <select id="filter-result"><option value="all">all</option><option value="passed">passed</option><option value="not-passed">not passed</option></select></label>' +
      `<label>Tag <select id="filter-tag"><option value="">any</option>${tags.map((t) => `<option value="${h(t)}">${h(t)}</option>`).join('')}</select></label>` +
      '<label>Search <input type="search" id="filter-text" placeholder="scenario, step, tag…"></label><span id="filter-shown" class="muted"></span></div>',
  );

  if (model.baseline !== null) {
    const b = model.baseline;
    const section = (title: string, rows: BaselineDiff['added'], show: (c: BaselineDiff['added'][number]) => string) =>
      rows.length === 0 ? '' : `<h3>${h(title)}</h3><ul>${rows.map((c) => `<li>${show(c)}</li>`).join('')}</ul>`;
    const name = (c: BaselineDiff['added'][number]) => `${h(c.name)} <span class="mono muted">${h(c.key)}</span>`;
    out.push(
      '<h2 id="baseline">Since the baseline</h2>',
      `<p>Compared with the sign-off of ${h(b.date)} (${h(b.campaign)}, commit <span class="mono">${h(b.commit.slice(0, 12))}</span>, ${h(b.verdict)}): <strong>${h(baselineSummary(b))}</strong>.</p>`,
      section('Scenarios added', b.added, (c) => `${name(c)}: ${h(statusWord(c.after as 'PASSED'))}`),
      section('Scenarios removed', b.removed, (c) => `${name(c)}, was ${h(statusWord(c.before as 'PASSED'))}`),
      section('Scenarios renamed', b.renamed, (c) => `<span class="mono muted">${h(c.key)}</span>: “${h(c.before ?? '')}” → “${h(c.after ?? '')}”`),
      section('Results changed', b.results, (c) => `${name(c)}: ${h(statusWord(c.before as 'PASSED'))} → ${h(statusWord(c.after as 'PASSED'))}`),
      section('Digests changed', b.digests, (c) => `${name(c)}: <span class="mono">${h(shortDigest(c.before))} → ${h(shortDigest(c.after))}</span>`),
      section('Measured values changed', b.measurements, (c) => `${name(c)}: ${h(plainWords(c.before ?? '(not measured)'))} → ${h(plainWords(c.after ?? '(not measured)'))}`),
    );
  }
  out.push(
    '<h2 id="requirements">Requirements</h2>',
    '<p>Each requirement once, with its scenarios, their results and what they measured. Requirements that are covered and passed are folded.</p>',
    requirementView(model.matrix),
  );
  const allPassed = model.notPassed.length === 0 && model.views.length > 0;
  out.push(
    '<h2 id="matrix">Traceability matrix</h2>',
    `<details id="matrix-fold"${allPassed ? '' : ' open'}><summary>Each scenario once: the requirements it traces to, its result and the values it measured when it asserted them ` +
      `(${h(countOf(model.views.length, 'scenario'))}${allPassed ? ', all passed: folded, as the filters, a search and printing open it' : ''}).</summary>${matrix(model)}</details>`,
  );

  out.push(
    '<h2 id="determinism">Determinism</h2>',
    '<p>The suite ran twice, the second time in a shuffled order (a scenario that depends on what ran before it differs). Each scenario attaches the canonical digest (SHA-256 of the canonical JSON) of what its simulation did: placements with their cost breakdowns, ' +
      'KV event batches (emitted, visible, applied or lost), membership changes and failures; a scenario that only sets up or rejects a cluster, the digest of its configuration and verdict. ' +
      'The two runs must agree on every digest, every measured value and every result.</p>',
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

  out.push('<h2 id="gaps">Gaps</h2>', '<p>Everything that keeps this report from QUALIFIED is listed here; nothing is folded into "passed".</p>');
  out.push('<h3>Requirements without a scenario</h3>', list(model.uncovered.map((r) => `<strong>${h(r.id)}</strong> ${h(r.title)} <span class="muted">— source: ${h(r.source)} · owner: ${h(r.owner)} · status: ${h(r.status)}</span>`)));
  out.push('<h3>Scenarios without a requirement tag</h3>', list(model.untraced.map((v) => `${link(v)} <span class="mono muted">${h(v.scenario.key)}</span>`)));
  out.push('<h3>Tags naming no registered requirement</h3>', list(model.unknownTags.map(({ view, tag }) => `${h(tag)} on ${link(view)}`)));
  out.push('<h3>Scenarios that did not pass</h3>', list(model.notPassed.map((v) => `${statusBadge(v.scenario.status)} ${link(v)} <span class="mono muted">${h(v.scenario.key)}</span>`)));
  out.push('<h3>Passed scenarios that checked nothing</h3>', list(model.checkedNothing.map(({ view, why }) => `${link(view)} <span class="mono muted">${h(view.scenario.key)}</span> — ${h(why)}`)));
  if (input.faults) {
    const { trials, exempt, problems } = input.faults;
    out.push(
      '<h3>Planted simulator faults</h3>',
      '<p>The scenarios that passed, run again under each fault in turn; only those that passed again ran under the next.</p>',
      list([
        ...trials.map((t) => `<span class="mono">${h(t.fault)}</span> (${h(t.meaning)}): ${t.ran} run, ${t.caught} failed`),
        ...exempt.map((e) => `not tried: <span class="mono">${h(e.key)}</span> “${h(e.name)}”: ${h(e.why)}`),
        ...problems.map((p) => `the check could not complete: ${h(p)}`),
      ]),
    );
  }
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
  if (input.shardProblems?.length) out.push('<h3>Gaps of the shard set (merged with --merge)</h3>', list(input.shardProblems.map(h)));
  if (input.coverageRun !== null) {
    const run = input.coverageRun;
    out.push(
      '<h3 id="coverage-run">Failures of the compiled coverage run</h3>',
      list([
        ...run.failures.map((f) => `${h(f.kind)} “${h(f.name)}” <span class="mono muted">${h(f.where)}</span>${f.why ? `: ${h(f.why)}` : ''}`),
        ...run.problems.map((p) => `the run could not complete: ${h(p)}`),
        ...(run.skipped ?? []).map((t) => `unit test “${h(t.name)}” skipped, not checked again${t.why ? `: ${h(t.why)}` : ''}`),
      ]),
    );
  }

  out.push('<h2 id="coverage">Coverage of src/</h2>');
  if (cov) {
    out.push(
      `<p id="coverage-sentence">${h(coverageSentence(cov))}</p>`,
      `<details id="coverage-details"><summary>For developers: lines, branches and functions, what ran, and each folder of src/</summary>` +
        `<p>Lines ${cov.lines.pct}% (${cov.lines.covered}/${cov.lines.total}), branches ${cov.branches.pct}% (${cov.branches.covered}/${cov.branches.total}), ` +
        `functions ${cov.functions.pct}% (${cov.functions.covered}/${cov.functions.total}).</p><p class="muted">${h(cov.scope)}</p>` +
        `<table><thead><tr><th>Directory</th><th>Files</th><th>Lines</th><th>Branches</th><th>Functions</th></tr></thead><tbody>${cov.groups
          .map((g) => `<tr><td class="mono">${h(g.path)}</td><td>${g.files}</td><td>${g.lines.pct}%</td><td>${g.branches.pct}%</td><td>${g.functions.pct}%</td></tr>`)
          .join('')}</tbody></table></details>`,
    );
  } else out.push(`<p class="muted">Not measured: ${h(input.coverageNote)}</p>`);

  out.push('<h2 id="scenarios">Scenarios</h2>', '<p>By feature; a feature or scenario that did not pass or changed is open, the others are folded.</p>');
  for (const feature of model.features) {
    const passed = feature.views.filter((v) => v.scenario.status === 'PASSED').length;
    const open = feature.views.some((v) => v.open);
    out.push(
      `<details class="feature"${open ? ' open' : ''}><summary>${h(feature.name)} ${badge(passed === feature.views.length, `${passed}/${feature.views.length} passed`)} <span class="mono muted">${h(feature.uri)}</span></summary>`,
    );
    if (feature.description) out.push(`<div class="feature-desc">${h(feature.description).replace(/\n/g, '<br>')}</div>`);
    for (const view of feature.views) out.push(scenario(view));
    out.push('</details>');
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
    `<footer>Beside this report: ${input.companions.map((c) => `${h(c.label)} <code>${h(c.file)}</code>`).join(', ')}. Made from cucumber's message streams (two runs), the requirement registry and c8's coverage summary.</footer>`,
    `</main><script>${FILTER_SCRIPT}</script></body></html>`,
  );
  return `${out.join('\n')}\n`;
}
