// G1 blocks a rank's requests still have read after they left the running queue: an ended
// request's blocks stay held while the KV handoff to a decode worker (PD-1) or D2H copies to G2
// this rank started read them, and are let go when the last is done (as vLLM's KV connectors free
// a finished request's blocks); and a pass planned after preempting a request whose D2H copy is
// still under way computes only once that copy is done (the fence: vLLM's handle_preemptions waits
// for a preempted request's stores before its blocks are written again).
import { InvariantError, Phase } from '../kernel';
import type { Nanos } from '../time';
import type { PassShape } from './passTime';
import type { SimRequest } from './request';
import type { RankState } from './rankState';

/** A D2H copy of the request's blocks starts. */
export function copyStarted(rank: RankState, request: SimRequest): void {
  rank.copiesInFlight.set(request, (rank.copiesInFlight.get(request) ?? 0) + 1);
}

/** One of a request's D2H copies from this rank is done; with the last, an ended request's held blocks may go. */
export function copyDone(rank: RankState, request: SimRequest): void {
  const left = (rank.copiesInFlight.get(request) ?? 0) - 1;
  if (left < 0) throw new InvariantError(`request ${request.request_id} ended a D2H copy it never started on ${rank.rank.worker_id}/${rank.rank.dp_rank}`);
  if (left > 0) {
    rank.copiesInFlight.set(request, left);
    return;
  }
  rank.copiesInFlight.delete(request);
  if (rank.blockHolds.has(request)) endWait(rank, request);
  if (rank.fencedBy.delete(request) && rank.fencedBy.size === 0) computeFencedPass(rank);
}

/** PD-1: a handed-off request's KV has reached its decode worker; the blocks it held here are let go once nothing else reads them. */
export function handoffDone(rank: RankState, request: SimRequest): void {
  if (!rank.blockHolds.has(request)) throw new InvariantError(`request ${request.request_id} holds no handed-off blocks on ${rank.rank.worker_id}/${rank.rank.dp_rank}`);
  endWait(rank, request);
}

/** An ended request's G1 blocks: let go now, or held while its handoff or D2H copies still read them. */
export function releaseEnded(rank: RankState, request: SimRequest, handingOff: boolean): void {
  const waits = (handingOff ? 1 : 0) + (rank.copiesInFlight.has(request) ? 1 : 0);
  if (waits > 0) rank.blockHolds.set(request, { slots: Int32Array.from(request.entry_slots), private_blocks: request.private_blocks, waits });
  else rank.g1.releaseSlots(request.entry_slots, request.private_blocks);
  request.clearEntries();
  request.private_blocks = 0;
}

function endWait(rank: RankState, request: SimRequest): void {
  const held = rank.blockHolds.get(request)!;
  if (--held.waits > 0) return;
  rank.blockHolds.delete(request);
  // A run of decode passes observed its passes with the blocks still held: it stops here, as stepping would see them freed.
  rank.decodeRun.cut();
  rank.g1.releaseSlots(held.slots, held.private_blocks);
  rank.kick();
}

/** The pass being planned preempted the request: if a D2H copy of its still reads its G1 blocks, the pass waits for it. */
export function notePreempted(rank: RankState, request: SimRequest): void {
  if (rank.copiesInFlight.has(request)) rank.preemptedWhileCopying.push(request);
}

/**
 * A pass whose plan preempted requests while D2H copies of theirs were still reading their G1
 * blocks computes only when those copies are done (as vLLM's next step waits for them, and
 * AISimulate delays the rank's compute): its blocks may be the ones being read. It is planned now
 * and starts when the last copy ends.
 */
export function fencePass(rank: RankState, shape: PassShape, duration_ns: Nanos): void {
  for (const request of rank.preemptedWhileCopying) if (rank.copiesInFlight.has(request)) rank.fencedBy.add(request);
  rank.preemptedWhileCopying = [];
  rank.fencedPass = { shape, duration_ns };
  if (rank.fencedBy.size === 0) computeFencedPass(rank);
}

function computeFencedPass(rank: RankState): void {
  const { shape, duration_ns } = rank.fencedPass!;
  rank.fencedPass = null;
  rank.showPass(rank.kernel.now, shape, duration_ns);
  rank.kernel.at(rank.kernel.now + duration_ns, Phase.PassCompletion, rank.rank_index, rank.endPassAction);
}
