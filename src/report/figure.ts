// Pictures of a scenario's evidence, drawn with vega-lite and rendered to SVG in Node (no
// browser, no network, no fonts fetched): a timeline (arrivals, KV batches emitted and the
// instant each became visible to the router, placements per worker, H2D/D2H transfers) above a
// residency strip per rank (engine truth vs router view) on the same time axis, so a reviewer
// sees why a request went where it went. The time axis is fitted to the activity; tick labels
// never use exponents; labels that would overlap go to another row (or are joined); two instants
// closer than a pixel (a boundary claim: 14.999 ms vs 15 ms) get a zoomed panel of their own; a
// scenario that compares runs ("twice", "double") shows every run it compares, one above the
// other on the same axis. An SLO scenario's figure is its CDF chart instead (sloChart.ts). The SVG is deterministic: same evidence, same bytes, and passes the
// allow-list sanitiser (svgSanitiser.ts) before anyone gets it. Rendering (vega, loaded on first
// use) can be memoised by a FigureCache keyed by the spec and the renderer's versions, so a suite
// run again draws nothing it drew before and gets the same bytes.
import { FIGURE_CONFIG, FIGURE_SPEC_HEAD } from './figureStyle';
import { createHash } from 'node:crypto';
import type { TopLevelSpec } from 'vega-lite';
import type { RankRef, Tier } from '../events/model';
import type { ScenarioEvidence } from './evidence';
import { sanitiseSvg, SvgRefused } from './svgSanitiser';
import { sloChartSpec } from './sloChart';

const WIDTH = 600;
const LANE_HEIGHT = 22;
/** A lane's height when some of its labels take a second row (below the marks). */
const LANE_HEIGHT_TWO_ROWS = 36;
const STRIP_HEIGHT = 30;

const TIER_NAME: Record<Tier, string> = { Device: 'G1 (GPU)', HostPinned: 'G2 (host)' };
const TIER_COLOR: Record<Tier, string> = { Device: '#2f9e44', HostPinned: '#1c7ed6' };

/** Point marks of the timeline: legend label, shape and colour, in legend order. */
const POINT_KINDS: { label: string; shape: string; color: string }[] = [
  { label: 'request arrives', shape: 'triangle-down', color: '#495057' },
  { label: 'G1 (GPU) batch emitted', shape: 'circle', color: TIER_COLOR.Device },
  { label: 'G2 (host) batch emitted', shape: 'circle', color: TIER_COLOR.HostPinned },
  { label: 'G1 (GPU) batch visible to router', shape: 'diamond', color: TIER_COLOR.Device },
  { label: 'G2 (host) batch visible to router', shape: 'diamond', color: TIER_COLOR.HostPinned },
  { label: 'batch lost on the way', shape: 'cross', color: '#e03131' },
  { label: 'batch reached the router, not applied', shape: 'diamond', color: '#e03131' },
  { label: 'request placed', shape: 'square', color: '#f08c00' },
  { label: 'worker left the cluster', shape: 'triangle-left', color: '#868e96' },
  { label: 'worker joined the cluster', shape: 'triangle-right', color: '#868e96' },
];

const LANE_AXIS = { title: null, labelLimit: 240, labelFontSize: 11, labelColor: '#343a40' };
const LEGEND = { labelLimit: 320, columns: 2, columnPadding: 28, orient: 'bottom', direction: 'horizontal' };

const TRANSFER_COLOR: Record<'H2D' | 'D2H', string> = { H2D: '#ae3ec9', D2H: '#0c8599' };

function rankName(rank: RankRef, multiRank: boolean): string {
  return multiRank ? `worker ${rank.worker_id} rank ${rank.dp_rank}` : `worker ${rank.worker_id}`;
}

const ms = (ns: number) => ns / 1_000_000;

/** Rounds an axis end up to 1, 2, 2.5 or 5 × 10^k. */
export function niceCeil(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value - 1e-12) return step * power;
  return 10 * power;
}

/** The time axis end (ms) for a piece of evidence: the last instant plus room, rounded. */
export function axisEndMs(evidence: ScenarioEvidence): number {
  const t = evidence.timeline;
  const instants = [
    evidence.end_ns,
    ...t.arrivals.map((a) => a.at_ns),
    ...t.emissions.flatMap((e) => [e.at_ns, e.visible_ns ?? 0]),
    ...t.placements.map((p) => p.at_ns),
    ...t.transfers.map((x) => x.end_ns),
    ...t.membership.map((m) => m.at_ns),
    ...evidence.residency.flatMap((s) => [s.from_ns, s.to_ns ?? 0]),
  ];
  const last = ms(Math.max(0, ...instants));
  return niceCeil(last * 1.08 + 0.5);
}

/** Rounds an axis start down to a multiple of 1, 2, 2.5 or 5 × 10^k below it. */
export function niceFloor(value: number, span: number): number {
  if (value <= 0) return 0;
  const power = 10 ** Math.floor(Math.log10(Math.max(span, 1e-9)));
  return Math.max(0, Math.floor(value / power) * power);
}

/** The instants something happened at (ms): arrivals, emissions, visibility, placements, transfers, membership. */
function activity(evidence: ScenarioEvidence): number[] {
  const t = evidence.timeline;
  return [
    ...t.arrivals.map((a) => a.at_ns),
    ...t.emissions.flatMap((e) => (e.visible_ns === null ? [e.at_ns] : [e.at_ns, e.visible_ns])),
    ...t.placements.map((p) => p.at_ns),
    ...t.transfers.flatMap((x) => [x.start_ns, x.end_ns]),
    ...t.membership.map((m) => m.at_ns),
    ...(t.failure ? [t.failure.at_ns] : []),
  ].map(ms);
}

/**
 * The time axis start (ms): 0, unless everything happens late (after a quarter of the axis), then
 * a round number a little before the first activity, so the activity fills the figure.
 */
export function axisStartMs(evidence: ScenarioEvidence, end = axisEndMs(evidence)): number {
  const instants = activity(evidence);
  if (instants.length === 0) return 0;
  const first = Math.min(...instants);
  if (first <= end / 4) return 0;
  const last = Math.max(...instants);
  return niceFloor(first - Math.max((last - first) * 0.08, end / 100), Math.max(last - first, end / 10));
}

/**
 * Two distinct instants closer than a pixel apart on the axis (a boundary claim such as 14.999 ms
 * against 15 ms), as a window (ms) around them that shows them apart, or null.
 */
export function zoomWindow(evidence: ScenarioEvidence, start: number, end: number): { from: number; to: number } | null {
  const pixel = (end - start) / WIDTH;
  const instants = [...new Set(activity(evidence))].sort((a, b) => a - b);
  let best: [number, number] | null = null;
  for (let i = 1; i < instants.length; i++) {
    const gap = instants[i] - instants[i - 1];
    if (gap > 0 && gap < pixel && (best === null || gap < best[1] - best[0])) best = [instants[i - 1], instants[i]];
  }
  if (best === null) return null;
  const gap = best[1] - best[0];
  return { from: Math.max(0, best[0] - 2 * gap), to: best[1] + 2 * gap };
}

const TICK_FORMAT = '~f';

/** A rough width (px) of a 10 px label, to keep labels apart. */
const labelWidth = (text: string) => 6 * text.length + 8;

/**
 * Spreads labels that would overlap on one lane over two rows (above and below the marks) and joins what still does not
 * fit into the label before it, so no two labels are drawn over each other.
 */
export function spreadLabels<T extends { t: number; lane: string; label: string }>(items: T[], pxPerMs: number, rows = 2): (T & { row: number })[] {
  const out: (T & { row: number })[] = [];
  const lanes = [...new Set(items.map((i) => i.lane))];
  for (const lane of lanes) {
    const ends = new Array<number>(rows).fill(-Infinity);
    const placed: (T & { row: number })[] = [];
    for (const item of items.filter((i) => i.lane === lane && i.label !== '').sort((a, b) => a.t - b.t)) {
      const x = item.t * pxPerMs;
      const row = ends.findIndex((e) => e <= x);
      if (row >= 0) {
        ends[row] = x + labelWidth(item.label);
        placed.push({ ...item, row });
      } else {
        const previous = placed[placed.length - 1];
        previous.label = `${previous.label}, ${item.label}`;
        ends[previous.row] += labelWidth(`, ${item.label}`);
      }
    }
    out.push(...placed);
  }
  return out;
}

/** The vega-lite spec of a scenario's figure, or null when there is nothing to draw. An SLO scenario's figure is its CDF chart (sloChart.ts). */
export function figureSpec(evidence: ScenarioEvidence): TopLevelSpec | null {
  if (evidence.slo !== undefined && evidence.slo.length > 0) return sloChartSpec(evidence.slo);
  const runs = [...(evidence.compared ?? []), { label: evidence.run_label ?? '', evidence }];
  const drawable = runs.filter((r) => r.evidence.ranks.length > 0);
  if (drawable.length === 0) return null;
  // One axis for every run compared: from the earliest start to the latest end.
  const end = Math.max(...drawable.map((r) => axisEndMs(r.evidence)));
  const start = Math.min(...drawable.map((r) => axisStartMs(r.evidence, end)));
  const panels: unknown[] = [];
  let points = 0;
  drawable.forEach((run, i) => {
    const title = drawable.length > 1 ? `${run.label || `Run ${i + 1} of ${drawable.length}`}: ` : '';
    const made = panelsOf(run.evidence, title, start, end);
    panels.push(...made.panels);
    points += made.marks;
  });
  if (panels.length === 0 || points === 0) return null;
  return {
    ...FIGURE_SPEC_HEAD,
    config: { ...FIGURE_CONFIG, legend: { labelFontSize: 11, titleFontSize: 11, symbolSize: 70, orient: 'bottom', direction: 'horizontal' } },
    vconcat: panels,
    resolve: { scale: { color: 'independent', shape: 'independent', y: 'independent', x: 'independent' }, legend: { color: 'independent', shape: 'independent' } },
  } as unknown as TopLevelSpec;
}

/** The panels of one run: its timeline, a zoom on two instants a pixel apart, its residency strips. */
function panelsOf(evidence: ScenarioEvidence, titlePrefix: string, start: number, end: number): { panels: unknown[]; marks: number } {
  if (evidence.ranks.length === 0) return { panels: [], marks: 0 };
  const multiRank = evidence.ranks.some((rank) => rank.dp_rank !== 0);
  const xScale = { domain: [start, end], nice: false, zero: start === 0 };
  const xAxis = { title: 'virtual time (ms)', format: TICK_FORMAT, grid: true, gridColor: '#eef0f2' };
  const pxPerMs = WIDTH / (end - start);
  const nameOf = (rank: RankRef) => rankName(rank, multiRank);
  const t = evidence.timeline;

  // ── timeline panel ──
  const ARRIVALS = 'requests arrive';
  const lanes = [ARRIVALS];
  for (const rank of evidence.ranks) {
    lanes.push(`${nameOf(rank)}: emits KV events`, `${nameOf(rank)}: visible to router`, `${nameOf(rank)}: requests placed`);
  }
  const emitsLane = (rank: RankRef) => `${nameOf(rank)}: emits KV events`;
  const seesLane = (rank: RankRef) => `${nameOf(rank)}: visible to router`;
  const placedLane = (rank: RankRef) => `${nameOf(rank)}: requests placed`;

  const points: { t: number; lane: string; kind: string; label: string }[] = [];
  const links: { t: number; t2: number; lane: string; lane2: string; kind: string }[] = [];
  for (const a of t.arrivals) points.push({ t: ms(a.at_ns), lane: ARRIVALS, kind: 'request arrives', label: a.request_id });
  for (const e of t.emissions) {
    const tier = e.tier === 'Device' ? 'G1 (GPU)' : 'G2 (host)';
    points.push({ t: ms(e.at_ns), lane: emitsLane(e), kind: `${tier} batch emitted`, label: '' });
    if (e.visible_ns === null) continue;
    const kind = e.fate === 'lost' ? 'batch lost on the way' : e.fate === 'pending' ? 'batch reached the router, not applied' : `${tier} batch visible to router`;
    const label = e.fate === 'lost' ? 'lost' : e.fate === 'pending' ? 'not applied' : '';
    points.push({ t: ms(e.visible_ns), lane: seesLane(e), kind, label });
    links.push({ t: ms(e.at_ns), t2: ms(e.visible_ns), lane: emitsLane(e), lane2: seesLane(e), kind: 'lag' });
  }
  for (const p of t.placements) {
    points.push({ t: ms(p.at_ns), lane: placedLane(p), kind: 'request placed', label: p.request_id });
    links.push({ t: ms(p.at_ns), t2: ms(p.at_ns), lane: ARRIVALS, lane2: placedLane(p), kind: 'placement' });
  }
  for (const m of t.membership) {
    for (const rank of evidence.ranks.filter((r) => r.worker_id === m.worker_id)) {
      points.push({ t: ms(m.at_ns), lane: seesLane(rank), kind: `worker ${m.change} the cluster`, label: m.change });
    }
  }
  const kinds = POINT_KINDS.filter((k) => points.some((p) => p.kind === k.label));
  const transfers = t.transfers.map((x) => ({
    t: ms(x.start_ns),
    t2: ms(x.end_ns),
    lane: emitsLane(x),
    direction: x.direction,
    label: `${x.direction} ${x.blocks} blocks`,
  }));
  const failureRule = t.failure ? [{ t: ms(t.failure.at_ns), label: 'event stream rejected' }] : [];

  const y = { field: 'lane', type: 'nominal', scale: { domain: lanes }, axis: LANE_AXIS };
  const x = { field: 't', type: 'quantitative', scale: xScale, axis: xAxis };
  const timelineLayers: unknown[] = [
    {
      data: { values: links },
      mark: { type: 'rule', strokeDash: [3, 3], strokeWidth: 1, color: '#adb5bd', clip: true },
      encoding: { x, x2: { field: 't2' }, y: { ...y }, y2: { field: 'lane2' } },
    },
  ];
  if (transfers.length > 0) {
    timelineLayers.push({
      data: { values: transfers },
      mark: { type: 'bar', height: 10, cornerRadius: 2, clip: true },
      encoding: {
        x,
        x2: { field: 't2' },
        y,
        color: {
          field: 'direction',
          type: 'nominal',
          title: 'transfers',
          scale: { domain: ['H2D', 'D2H'], range: [TRANSFER_COLOR.H2D, TRANSFER_COLOR.D2H] },
        },
      },
    });
  }
  const timelineLabels = spreadLabels(points, pxPerMs);
  timelineLayers.push(
    {
      data: { values: points },
      mark: { type: 'point', filled: true, size: 70, opacity: 1 },
      encoding: {
        x,
        y,
        shape: { field: 'kind', type: 'nominal', title: null, legend: LEGEND, scale: { domain: kinds.map((k) => k.label), range: kinds.map((k) => k.shape) } },
        color: { field: 'kind', type: 'nominal', title: null, legend: LEGEND, scale: { domain: kinds.map((k) => k.label), range: kinds.map((k) => k.color) } },
      },
    },
    ...labelLayers(timelineLabels, x, y),
  );
  if (failureRule.length > 0) timelineLayers.push(...failureLayers(failureRule, x));
  const laneHeight = timelineLabels.some((l) => l.row > 0) ? LANE_HEIGHT_TWO_ROWS : LANE_HEIGHT;
  const timelineTitle = `${titlePrefix}Timeline: arrivals, KV event batches (emitted → visible to the router), placements`;
  const timeline = {
    ...panel(timelineTitle, lanes.length * laneHeight, drawn(timelineLayers)),
    resolve: { scale: { color: 'independent', shape: 'independent' }, legend: { color: 'independent', shape: 'independent' } },
  };
  const panels: unknown[] = [timeline];
  const zoom = zoomWindow(evidence, start, end);
  if (zoom !== null) {
    const inWindow = <T extends { t: number }>(items: T[]) => items.filter((item) => item.t >= zoom.from && item.t <= zoom.to);
    const zx = { field: 't', type: 'quantitative', scale: { domain: [zoom.from, zoom.to], nice: false, zero: false }, axis: { ...xAxis, title: 'virtual time (ms), zoomed', tickCount: 5 } };
    const zoomPoints = inWindow(points).map((p) => ({ ...p, label: p.label || `${Number(p.t.toFixed(6))} ms` }));
    panels.push({
      ...panel(
        `${titlePrefix}Zoom on ${Number(zoom.from.toFixed(6))}–${Number(zoom.to.toFixed(6))} ms: instants less than a pixel apart above`,
        lanes.length * LANE_HEIGHT_TWO_ROWS,
        drawn([
          {
            data: { values: zoomPoints },
            mark: { type: 'point', filled: true, size: 70, opacity: 1 },
            encoding: {
              x: zx,
              y,
              shape: { field: 'kind', type: 'nominal', legend: null, scale: { domain: kinds.map((k) => k.label), range: kinds.map((k) => k.shape) } },
              color: { field: 'kind', type: 'nominal', legend: null, scale: { domain: kinds.map((k) => k.label), range: kinds.map((k) => k.color) } },
            },
          },
          ...labelLayers(spreadLabels(zoomPoints, WIDTH / (zoom.to - zoom.from)), zx, y),
        ]),
      ),
      resolve: { scale: { color: 'independent', shape: 'independent' } },
    });
  }

  // ── residency strips ──
  const rows: string[] = [];
  for (const rank of evidence.ranks) rows.push(`${nameOf(rank)}: engine truth`, `${nameOf(rank)}: router view`);
  const spans = evidence.residency.map((s) => {
    const t1 = ms(s.from_ns);
    const t2 = s.to_ns === null ? end : ms(s.to_ns);
    return {
      t: t1,
      t2,
      row: `${nameOf(s)}: ${s.view === 'engine' ? 'engine truth' : 'router view'}`,
      tier: TIER_NAME[s.tier],
      label: t2 - t1 >= (end - start) / 40 ? `${s.blocks}` : '',
    };
  });
  const placementsAt = spreadLabels(
    t.placements.map((p) => ({ t: ms(p.at_ns), lane: 'placements', label: p.request_id })),
    pxPerMs,
    1,
  );
  const rowY = { field: 'row', type: 'nominal', scale: { domain: rows }, axis: LANE_AXIS };
  const tierOffset = { field: 'tier', type: 'nominal', scale: { domain: [TIER_NAME.Device, TIER_NAME.HostPinned], paddingInner: 0.15 } };
  const residencyLayers: unknown[] = [
    {
      data: { values: spans },
      mark: { type: 'bar', opacity: 0.85, clip: true },
      encoding: {
        x,
        x2: { field: 't2' },
        y: rowY,
        yOffset: tierOffset,
        color: {
          field: 'tier',
          type: 'nominal',
          title: 'resident blocks',
          scale: { domain: [TIER_NAME.Device, TIER_NAME.HostPinned], range: [TIER_COLOR.Device, TIER_COLOR.HostPinned] },
        },
      },
    },
    {
      data: { values: spans.filter((s) => s.label !== '') },
      mark: { type: 'text', align: 'left', dx: 3, fontSize: 9, color: 'white', fontWeight: 'bold' },
      encoding: { x, y: rowY, yOffset: tierOffset, text: { field: 'label' } },
    },
  ];
  if (placementsAt.length > 0) {
    residencyLayers.push(
      { data: { values: placementsAt }, mark: { type: 'rule', color: '#f08c00', strokeDash: [4, 2], strokeWidth: 1.5 }, encoding: { x } },
      {
        data: { values: placementsAt },
        mark: { type: 'text', align: 'left', baseline: 'bottom', dx: 3, y: -2, fontSize: 10, color: '#d9480f' },
        encoding: { x, text: { field: 'label' } },
      },
    );
  }
  if (failureRule.length > 0) residencyLayers.push(...failureLayers(failureRule, x));
  const residency = panel(`${titlePrefix}Residency per rank: what the engine held vs what the router could see (blocks)`, rows.length * STRIP_HEIGHT, drawn(residencyLayers));
  panels.push(residency);
  return { panels: panels.filter((p) => ((p as { layer: unknown[] }).layer ?? []).length > 0), marks: points.length + transfers.length + spans.length };
}

/** Label layers, one per row of spreadLabels (above the mark, below it). */
function labelLayers(labels: { t: number; lane: string; label: string; row: number }[], x: unknown, y: unknown): unknown[] {
  const offsets = [-7, 12];
  return offsets.map((dy, row) => ({
    data: { values: labels.filter((l) => l.row === row) },
    mark: { type: 'text', align: 'left', dx: 6, dy, fontSize: 10, color: '#212529' },
    encoding: { x, y, text: { field: 'label' } },
  }));
}

// A layer without data draws nothing but makes vega compute bounds from ±Number.MAX_VALUE
// (invalid SVG coordinates): such layers are left out.
function drawn(layers: unknown[]): unknown[] {
  return layers.filter((layer) => (layer as { data: { values: unknown[] } }).data.values.length > 0);
}

function panel(title: string, height: number, layer: unknown[]): Record<string, unknown> {
  return { title: { text: title, anchor: 'start', fontSize: 12 }, width: WIDTH, height, layer };
}

function failureLayers(values: { t: number; label: string }[], x: unknown): unknown[] {
  return [
    { data: { values }, mark: { type: 'rule', color: '#e03131', strokeWidth: 2 }, encoding: { x } },
    {
      data: { values },
      mark: { type: 'text', align: 'right', baseline: 'top', dx: -4, y: 2, fontSize: 10, color: '#c92a2a', fontWeight: 'bold' },
      encoding: { x, text: { field: 'label' } },
    },
  ];
}

/**
 * Renames every id in an SVG (vega numbers clip paths with a process-wide counter) to
 * `<prefix>-1`, `<prefix>-2`, … in order of appearance, so the output depends only on the
 * picture and several SVGs can be inlined in one HTML page without clashing.
 */
export function normaliseSvgIds(svg: string, prefix: string): string {
  const ids = [...new Set([...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]))];
  let out = svg;
  ids.forEach((id, i) => {
    const next = `${prefix}-${i + 1}`;
    const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out
      .replace(new RegExp(`(\\sid=")${escaped}(")`, 'g'), `$1${next}$2`)
      .replace(new RegExp(`url\\(#${escaped}\\)`, 'g'), `url(#${next})`)
      .replace(new RegExp(`(href=")#${escaped}(")`, 'g'), `$1#${next}$2`);
  });
  return out;
}

/**
 * Remembers what vega drew for a figure spec (its SVG before ids are normalised), by a key that
 * names the spec and the renderer's versions: the same key always stands for the same picture.
 */
export interface FigureCache {
  get(key: string): string | null;
  set(key: string, svg: string): void;
}

type Vega = typeof import('vega');
type VegaLite = typeof import('vega-lite');
let renderer: { vega: Vega; vegaLite: VegaLite } | null = null;

/**
 * vega and vega-lite, loaded on first use: a run whose figures all come from a cache, and a command
 * that draws nothing, never loads them (together about 45 MB and a fifth of a second).
 */
export function vegaRenderer(): { vega: Vega; vegaLite: VegaLite } {
  renderer ??= { vega: require('vega') as Vega, vegaLite: require('vega-lite') as VegaLite };
  return renderer;
}

/** The versions of vega and vega-lite, read from their package.json without loading them. */
let versions: string | null = null;
function rendererVersions(): string {
  versions ??= ['vega', 'vega-lite'].map((name) => `${name}@${(require(`${name}/package.json`) as { version: string }).version}`).join(' ');
  return versions;
}

/** The cache key of a figure spec: a SHA-256 of the renderer's versions and the spec. */
export function figureCacheKey(spec: TopLevelSpec): string {
  return createHash('sha256').update(`${rendererVersions()}\n${JSON.stringify(spec)}`).digest('hex');
}

/** What vega draws for a spec, with vega's own (process-wide numbered) ids. */
async function drawSvg(spec: TopLevelSpec): Promise<string> {
  const { vega, vegaLite } = vegaRenderer();
  const compiled = vegaLite.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logLevel: vega.Error });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * The variable that, set to `off`, has the cucumber steps attach no figure to a scenario (its
 * evidence is attached all the same): for the runs whose figures nobody reads, which qualify makes
 * (the planted-fault runs and a second run that is not the coverage run; the sign-off draws its
 * figures from run 1's evidence, and only run 1's cucumber.html shows the attached ones). Under a
 * planted fault most figures are new pictures, each drawn by vega.
 */
export const SCENARIO_FIGURES_ENV = 'KVQUAL_SCENARIO_FIGURES';

/**
 * Renders a scenario's figure to SVG, through the allow-list sanitiser (svgSanitiser.ts: drawing
 * elements only, ids `<idPrefix>-N`); null when the evidence has nothing to draw. With a cache, a
 * spec drawn before is not drawn again; an entry the sanitiser refuses (tampered or damaged) is
 * drawn again and replaced. The SVG is the same bytes either way.
 */
export async function renderFigure(evidence: ScenarioEvidence, idPrefix = 'fig', cache?: FigureCache): Promise<string | null> {
  const spec = figureSpec(evidence);
  if (spec === null) return null;
  const key = cache === undefined ? null : figureCacheKey(spec);
  const cached = key === null ? null : cache!.get(key);
  if (cached !== null) {
    try {
      return sanitiseSvg(cached, idPrefix);
    } catch (error) {
      if (!(error instanceof SvgRefused)) throw error;
    }
  }
  const svg = await drawSvg(spec);
  if (key !== null) cache!.set(key, svg);
  return sanitiseSvg(svg, idPrefix);
}
