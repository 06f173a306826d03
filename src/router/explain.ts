// Routing decisions in plain words, built from a placement's breakdown, for failure messages
// and reports: "placed on worker 1 (dp rank 0) at 15 ms: 4 host blocks, cost 9 vs 10 on worker 0".
import { formatNs } from '../time';
import type { CandidateScore, Placement } from './router';

function number(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(4)));
}

function where(candidate: { worker_id: number; dp_rank: number }): string {
  return candidate.dp_rank === 0 ? `worker ${candidate.worker_id}` : `worker ${candidate.worker_id} dp rank ${candidate.dp_rank}`;
}

function cached(candidate: CandidateScore): string {
  const parts: string[] = [];
  if (candidate.device_blocks > 0) parts.push(`${candidate.device_blocks} GPU block(s)`);
  if (candidate.host_blocks > 0) parts.push(`${candidate.host_blocks} host block(s)`);
  return parts.length === 0 ? 'nothing cached' : parts.join(' + ');
}

/** One sentence: where it went, what the router saw there, and how its cost compared. */
export function explainPlacement(placement: Placement): string {
  const chosen = placement.candidates.find((c) => c.worker_id === placement.worker_id && c.dp_rank === placement.dp_rank)!;
  const others = placement.candidates.filter((c) => c !== chosen).map((c) => `${number(c.cost)} on ${where(c)}`);
  const why =
    placement.policy === 'round_robin'
      ? 'round robin (cache ignored)'
      : `${cached(chosen)}, cost ${number(chosen.cost)}${others.length ? ` vs ${others.join(', ')}` : ''}`;
  const tie = placement.tied_candidates > 1 ? `; a seeded draw broke a ${placement.tied_candidates}-way tie` : '';
  return `${placement.request_id} placed on ${where(chosen)} at ${formatNs(placement.time_ns)}: ${why}${tie}`;
}

/** The sentence plus a per-candidate table, for failure messages. */
export function describePlacement(placement: Placement): string {
  const header = 'candidate            GPU  host  credit  prefill  decode  cost';
  const rows = placement.candidates.map(
    (c) =>
      `${where(c).padEnd(20)} ${String(c.device_blocks).padStart(3)}  ${String(c.host_blocks).padStart(4)}  ${number(c.credit).padStart(6)}  ` +
      `${number(c.prefill_blocks).padStart(7)}  ${number(c.decode_blocks).padStart(6)}  ${number(c.cost).padStart(4)}`,
  );
  return [explainPlacement(placement), header, ...rows].join('\n');
}
