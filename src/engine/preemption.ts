// Keeping a rank's running requests going (ENG-1): each one's work in the pass being planned
// (its next prefill chunk or decode step) with the G1 blocks it needs, and recompute preemption of
// the most recently admitted running requests when G1 runs out (a preempted request lets go of its
// blocks and waits at the head of the queue to be computed again).
import { InvariantError } from '../kernel';
import type { SimRequest } from './request';
import { DECODE as IMPORTED_DECODE, type PlannedWork } from './passPlan';
import { ensureBlocks as importedEnsureBlocks, releaseBlocks as importedReleaseBlocks } from './rankBlocks';
import { notePreempted as importedNotePreempted } from './blockHolds';
import type { RankState } from './rankState';
// Read per running request and pass: copied into this module once (every read of an imported binding is a getter call, esbuild's live bindings).
const DECODE = IMPORTED_DECODE;
const ensureBlocks = importedEnsureBlocks;
const releaseBlocks = importedReleaseBlocks;
const notePreempted = importedNotePreempted;

/** A running request's work in the pass being planned, its G1 blocks got; null when it was preempted instead. */
export function continueRunning(rank: RankState, request: SimRequest, budget: number): PlannedWork | null {
  const prefill = !request.prefillDone;
  const chunk = prefill ? Math.min(request.prefill_target_tokens - request.computed_tokens, budget) : 0;
  const tokens = prefill ? request.computed_tokens + chunk : request.input_length + request.output_tokens;
  if (!makeRoom(rank, request, tokens)) return null;
  return prefill ? chunk : DECODE;
}

/**
 * Gets G1 blocks for a running request, preempting the most recently admitted running requests
 * (vLLM's recompute preemption) until they fit. False when the request itself was preempted: as
 * vLLM does with the last one left, it waits until blocks are free (held by other requests,
 * waiting or ended: an ended request's blocks stay held until its D2H copies or handoff are done).
 */
function makeRoom(rank: RankState, request: SimRequest, tokens: number): boolean {
  while (!ensureBlocks(rank, request, tokens)) {
    const victim = rank.running[rank.running.length - 1];
    if (victim === request) checkFitsAlone(rank, request, tokens);
    preempt(rank, victim);
    if (victim === request) return false;
  }
  return true;
}

/** Admission refuses a request that needs more G1 blocks than the rank has (tryAdmit in admission.ts): one admitted always fits alone, or it would be preempted forever. */
function checkFitsAlone(rank: RankState, request: SimRequest, tokens: number): void {
  const needed = Math.ceil(tokens / rank.settings.block_size);
  if (needed > rank.settings.num_gpu_blocks) {
    throw new InvariantError(`request ${request.request_id} on ${rank.rank.worker_id}/${rank.rank.dp_rank} needs ${needed} G1 blocks and the rank has ${rank.settings.num_gpu_blocks}, past admission's check`);
  }
}

/** Recompute preemption: the request lets go of its G1 blocks and waits at the head of the queue. */
function preempt(rank: RankState, request: SimRequest): void {
  rank.running.splice(rank.running.indexOf(request), 1);
  releaseBlocks(rank, request);
  request.computed_tokens = 0;
  request.recompute_output_tokens = request.output_tokens;
  request.preemptions++;
  rank.preemptionCount++;
  notePreempted(rank, request);
  request.state = 'waiting';
  rank.waiting.unshift(request);
  rank.tellPreempted(request);
}
