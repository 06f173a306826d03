// What a capacity search shows: the answer as text (the candidates run, the Pareto front, the
// winner or plainly that no point meets the constraints), as search.json, and the Pareto chart
// (pareto.svg: every candidate run, the objective against the front metric, the front as a line,
// the winner ringed, a constraint on the front metric as a rule). Same answer, same bytes.
import type { TopLevelSpec } from 'vega-lite';
import { normaliseSvgIds, vegaRenderer } from '../report/figure';
import type { CandidateRecord, SearchAnswer } from './search';
import { pointLabel } from './spec';

export const SEARCH_FILES = ['search.json', 'winner.yaml', 'pareto.svg'] as const;

const labelOf = (record: CandidateRecord) => pointLabel(Object.entries(record.parameters));
const shown = (value: number | null) => (value === null ? '-' : String(value));

/** "p99 ttft_ms 901, goodput 0.97": the metrics the search read of a candidate (means over its seeds). */
const valuesText = (record: CandidateRecord) =>
  Object.entries(record.values)
    .map(([key, value]) => `${key} ${shown(value)}`)
    .join(', ');

/** "minimise cluster.workers[0].replicas subject to p99 ttft_ms <= 2000, goodput >= 0.95" */
export function questionText(answer: SearchAnswer): string {
  return `${answer.direction} ${answer.objective}${answer.constraints.length > 0 ? ` subject to ${answer.constraints.join(', ')}` : ''}`;
}

/** The answer in lines for the terminal: the question, how it was searched, each candidate run, the front and the winner. */
export function searchText(answer: SearchAnswer, winnerFile: string | null): string {
  const lines = [`search: ${questionText(answer)}`, `  ${answer.method === 'bisect' ? answer.assumption : `grid: every point run`}; ${answer.evaluated.length} candidate(s) run`];
  const front = new Set(answer.pareto_front.map((record) => record.points[0]));
  for (const record of answer.evaluated) {
    const mark = record === answer.winner || (answer.winner !== null && record.points[0] === answer.winner.points[0]) ? 'WINNER' : record.meets ? 'meets' : `misses: ${record.unmet}`;
    lines.push(`  ${front.has(record.points[0]) ? '*' : ' '} ${labelOf(record)}: ${valuesText(record)}; ${mark}`);
  }
  lines.push(`  * on the Pareto front of ${answer.objective} against ${answer.front_metric} (${answer.pareto_front.length} candidate(s))`);
  for (const warning of answer.not_monotone) lines.push(`  not monotone (bisection would not be safe on this sweep): ${warning}`);
  if (answer.winner === null) lines.push(`search: no point meets the constraints (${answer.constraints.join(', ')}); no winner.yaml written`);
  else lines.push(`search: winner ${labelOf(answer.winner)} (point${answer.winner.points.length > 1 ? 's' : ''} ${answer.winner.points.join(', ')}): ${valuesText(answer.winner)}${winnerFile ? `; its config is ${winnerFile}` : ''}`);
  return `${lines.join('\n')}\n`;
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The search's part of sweep.html: the question, the winner (or that none met), how it searched, and the Pareto chart. */
export function searchHtml(answer: SearchAnswer, pointsRun: number, pointsTotal: number): string {
  const winner = answer.winner === null ? `<p><strong>No point meets the constraints.</strong></p>` : `<p>Winner: <strong>${escapeHtml(labelOf(answer.winner))}</strong> (${escapeHtml(valuesText(answer.winner))}); its config: <a href="winner.yaml">winner.yaml</a>.</p>`;
  const how = answer.method === 'bisect' ? answer.assumption! : 'grid: every point run';
  return `<h2>Capacity search</h2>
<p>${escapeHtml(questionText(answer))}.</p>
${winner}
<p>${escapeHtml(how)}; ${pointsRun} of ${pointsTotal} points run. The answer: <a href="search.json">search.json</a>.</p>
<img src="pareto.svg" alt="${escapeHtml(`${answer.front_metric} vs ${answer.objective}: the Pareto front`)}">
`;
}

/** search.json: the answer, two-space indent, a final newline. */
export function searchJsonText(answer: SearchAnswer): string {
  return `${JSON.stringify({ format: 'kvqual-search/1', ...answer }, null, 2)}\n`;
}

/** The vega-lite spec of the Pareto chart. */
export function paretoSpec(answer: SearchAnswer, frontLimit: number | null): TopLevelSpec {
  const front = new Set(answer.pareto_front.map((record) => record.points[0]));
  const rows = answer.evaluated
    .filter((record) => record.objective !== null && record.front !== null)
    .map((record) => ({ x: record.objective, y: record.front, label: labelOf(record), status: record.meets ? 'meets the constraints' : 'misses', front: front.has(record.points[0]), winner: answer.winner !== null && record.points[0] === answer.winner.points[0] }));
  const x = { field: 'x', type: 'quantitative' as const, title: answer.objective, scale: { zero: false } };
  const y = { field: 'y', type: 'quantitative' as const, title: answer.front_metric, scale: { zero: false } };
  const layers: TopLevelSpec[] = [
    { mark: { type: 'line', color: '#888' }, transform: [{ filter: 'datum.front' }], encoding: { x, y, order: { field: 'x' } } } as unknown as TopLevelSpec,
    { mark: { type: 'point', filled: true, size: 70 }, encoding: { x, y, color: { field: 'status', type: 'nominal', title: null, scale: { domain: ['meets the constraints', 'misses'], range: ['#54a24b', '#e45756'] }, legend: { orient: 'bottom', labelLimit: 200 } } } } as unknown as TopLevelSpec,
    { mark: { type: 'point', size: 300, strokeWidth: 2, color: '#000' }, transform: [{ filter: 'datum.winner' }], encoding: { x, y } } as unknown as TopLevelSpec,
  ];
  if (frontLimit !== null) layers.push({ mark: { type: 'rule', strokeDash: [4, 4], color: '#e45756' }, data: { values: [{ limit: frontLimit }] }, encoding: { y: { field: 'limit', type: 'quantitative' } } } as unknown as TopLevelSpec);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: `${answer.front_metric} vs ${answer.objective}`, subtitle: `line: Pareto front; ring: winner${frontLimit === null ? '' : '; dashed: limit'}`, anchor: 'start', limit: 460, subtitleLimit: 460 },
    width: 380,
    height: 240,
    background: 'white',
    data: { values: rows },
    layer: layers,
  } as unknown as TopLevelSpec;
}

/** Renders the Pareto chart to SVG. */
export async function renderPareto(answer: SearchAnswer, frontLimit: number | null): Promise<string> {
  const { vega, vegaLite } = vegaRenderer();
  const view = new vega.View(vega.parse(vegaLite.compile(paretoSpec(answer, frontLimit)).spec), { renderer: 'none', logLevel: vega.Error });
  try {
    return normaliseSvgIds(await view.toSVG(), 'pareto');
  } finally {
    view.finalize();
  }
}
