// Admission of a rank's waiting requests into the pass being planned (ENG-1, ENG-3, ENG-4, G2-6, PD-1):
// a request's G1 prefix and G2 lookup; a G2 restore or the KV pulled from a prefill worker, which
// holds G1 room but no running slot while it loads and is admitted ahead of the queue once loaded;
// the attempts a request's record keeps and the reuse it is credited with; and a request that can
// never fit in G1 failing.
import { InvariantError } from '../kernel';
import type { SimRequest } from './request';
import * as simulatorFaults from '../fuzz/simulatorFaults';
import { DECODE as IMPORTED_DECODE, type PlannedWork } from './passPlan';
import {
  ensureBlocks as importedEnsureBlocks,
  releaseBlocks as importedReleaseBlocks,
  storeBlocks as importedStoreBlocks,
  undoAcquire as importedUndoAcquire,
} from './rankBlocks';
import type { RankState } from './rankState';
// Read per admission (the planted-fault hooks too): copied into this module once (every read of
// an imported binding is a getter call, esbuild's live bindings).
const DECODE = IMPORTED_DECODE;
const faultPlanted = simulatorFaults.faultPlanted;
const ensureBlocks = importedEnsureBlocks;
const releaseBlocks = importedReleaseBlocks;
const storeBlocks = importedStoreBlocks;
const undoAcquire = importedUndoAcquire;

/** Requests whose G2 load has finished are scheduled ahead of the ordinary waiting queue, in queue order; returns the budget left. */
export function admitLoadedRequests(rank: RankState, budget: number): number {
  const waiting = rank.waiting;
  for (let i = 0; i < waiting.length && budget > 0 && rank.restoresInFlight > 0 && rank.running.length < rank.settings.max_num_seqs; ) {
    const request = waiting[i];
    if (request.state !== 'loaded') {
      i++;
      continue;
    }
    const work = request.kv_from_prefill ? admitPulled(rank, request) : admitLoaded(rank, request, budget);
    waiting.splice(i, 1);
    rank.restoresInFlight--;
    startRunning(rank, request);
    rank.planned.add(request, work);
    budget -= work === DECODE ? 1 : work;
  }
  return budget;
}

/** Waiting requests in FCFS order under the caps, passing over those loading or loaded, until one must wait for G1 room. */
export function admitWaiting(rank: RankState, budget: number): void {
  const waiting = rank.waiting;
  for (let i = 0; i < waiting.length && budget > 0 && rank.running.length < rank.settings.max_num_seqs; ) {
    const request = waiting[i];
    if (request.state === 'loading' || request.state === 'loaded') {
      i++;
      continue;
    }
    const work = tryAdmit(rank, request, budget);
    if (work === 'stop') break;
    if (work === 'failed') continue;
    if (work === null) {
      i++;
      continue;
    }
    waiting.splice(i, 1);
    startRunning(rank, request);
    rank.planned.add(request, work);
    budget -= work === DECODE ? 1 : work;
  }
}

/** An admitted request takes a running slot (and says so in its state, as a stalled run's report shows it). */
function startRunning(rank: RankState, request: SimRequest): void {
  rank.running.push(request);
  request.state = 'running';
}

/**
 * G2-6 admission: G1 prefix first, then consecutive G2 keys. A G2 hit starts the H2D load and
 * admits only when it completes; pending or contended keys defer the request.
 * Returns the first work, null to skip this request for now, 'stop' to stop admitting, or
 * 'failed' when it can never fit in G1 (it has left the queue).
 */
function tryAdmit(rank: RankState, request: SimRequest, budget: number): PlannedWork | null | 'stop' | 'failed' {
  const settings = rank.settings;
  // The last output token's KV is never computed: input + output − 1 tokens need KV at most. A
  // prefill worker computes the prompt only: the outputs are decoded (and their KV made) elsewhere.
  const decodedHere = rank.role === 'prefill' ? 0 : Math.max(request.output_length - 1, 0);
  const neededBlocks = Math.ceil((request.input_length + decodedHere) / settings.block_size);
  if (neededBlocks > settings.num_gpu_blocks) {
    rank.waiting.splice(rank.waiting.indexOf(request), 1);
    const where = request.kv_from_prefill ? ' (decode worker)' : rank.role === 'prefill' ? ' (prefill worker)' : '';
    const what = rank.role === 'prefill' ? 'its prompt' : 'its prompt and output';
    fail(rank, request, `needs ${neededBlocks} G1 blocks for ${what}; the rank${where} has ${settings.num_gpu_blocks}`);
    // Its KV never moved: the prefill worker lets its blocks go.
    if (request.kv_from_prefill) rank.listener.pullAbandoned(request);
    return 'failed';
  }
  if (request.kv_from_prefill) return startPull(rank, request);
  const limit = faultPlanted('reuse') ? 0 : reusableBlocks(rank, request); // planted fault (src/fuzz/simulatorFaults.ts)
  const g1Blocks = Math.min(rank.g1.prefixLength(request.block_ids), limit);
  // G2 is looked up with prefix caching off too (no G1 prefix then): vLLM hashes a prompt's blocks
  // whenever a KV connector is configured, and its offloading connector looks up and loads CPU
  // blocks without consulting the prefix-caching setting (docs/model.md, Engine).
  const host = rank.host;
  const lookup = host && !faultPlanted('g2-off') ? host.pool.lookup(request.block_ids, g1Blocks, limit, rank.rank_index) : null;
  if (host) host.pool.touch(request.block_ids); // (G2 lookup above: planted fault 'g2-off', src/fuzz/simulatorFaults.ts)
  if (lookup && lookup.outcome === 'deferred') {
    recordAttempt(rank, request, 'deferred', g1Blocks, lookup.blocks, `G2 block ${lookup.reason === 'pending' ? 'still being stored' : 'being loaded by another request on this rank'}`);
    return null;
  }
  const hostBlocks = lookup ? lookup.blocks : 0;
  const g1Ids = request.block_ids.subarray(0, g1Blocks);
  request.setEntries(rank.g1.acquireSlots(g1Ids));
  if (hostBlocks > 0) return startRestore(rank, request, g1Blocks, hostBlocks);
  request.computed_tokens = g1Blocks * settings.block_size;
  const chunk = Math.min(request.prefill_target_tokens - request.computed_tokens, budget);
  if (!ensureBlocks(rank, request, request.computed_tokens + chunk)) {
    undoAcquire(rank, request);
    recordAttempt(rank, request, 'no-blocks', g1Blocks, 0, 'not enough free G1 blocks');
    return 'stop';
  }
  attributeReuse(rank, request, g1Blocks, 0);
  recordAttempt(rank, request, 'admitted', g1Blocks, 0, null);
  return chunk;
}

/** ENG-4: how many prompt blocks may be reused at most. */
function reusableBlocks(rank: RankState, request: SimRequest): number {
  const tokens = request.output_length > 0 ? request.input_length - 1 : request.input_length;
  return Math.min(Math.floor(Math.max(tokens, 0) / rank.settings.block_size), request.blockCount);
}

/** A request that can never fit leaves with its blocks let go, failed. */
function fail(rank: RankState, request: SimRequest, reason: string): void {
  const index = rank.running.indexOf(request);
  if (index >= 0) rank.running.splice(index, 1);
  releaseBlocks(rank, request);
  request.state = 'failed';
  request.failure_reason = reason;
  rank.listener.finished(request);
}

/**
 * Starts a restore only when the whole prompt can be admitted once it is loaded: it reserves G1
 * room for every prefill token now (so a loaded request never waits for blocks), pins the G2
 * entries and starts the H2D load. Its load takes no running slot (as in vLLM); once loaded it waits
 * for one, ahead of the ordinary queue (admitLoadedRequests).
 */
function startRestore(rank: RankState, request: SimRequest, g1Blocks: number, hostBlocks: number): PlannedWork | null | 'stop' {
  const host = rank.host!;
  const room = Math.max(Math.ceil(request.prefill_target_tokens / rank.settings.block_size), g1Blocks + hostBlocks) - g1Blocks;
  if (!rank.g1.allocate(room)) {
    undoAcquire(rank, request);
    recordAttempt(rank, request, 'no-blocks', g1Blocks, hostBlocks, 'not enough free G1 blocks for the restore and the rest of the prompt');
    return 'stop';
  }
  request.private_blocks += room;
  rank.restoresInFlight++;
  const ids = request.block_ids.slice(g1Blocks, g1Blocks + hostBlocks);
  host.pool.pin(ids, rank.rank_index);
  // G2-6: like the reuse, the restore's sources and H2D wait are those of the first admission's
  // restore; a later one (a readmission after preemption, on a decode rank too) replaced them, so
  // a record told of one restore's reuse and another's wait (found by an outside audit).
  if (request.first_admission_ns === null) {
    request.host_restore_sources = host.pool.originsOf(ids);
    request.h2d_started_ns = rank.kernel.now;
  }
  request.pinned_host_ids = ids;
  request.restore = { g1_blocks: g1Blocks, host_blocks: hostBlocks };
  request.state = 'loading';
  attributeReuse(rank, request, g1Blocks, hostBlocks);
  recordAttempt(rank, request, 'loading', g1Blocks, hostBlocks, null);
  host.transfers.submit({
    direction: 'h2d',
    rank_index: rank.rank_index,
    worker_id: rank.rank.worker_id,
    dp_rank: rank.rank.dp_rank,
    bytes: hostBlocks * rank.block_bytes,
    blocks: hostBlocks,
    request_id: request.request_id,
    onComplete: () => restoreDone(rank, request),
  });
  return null;
}

/** G2-6: a load finishing mid-pass takes effect at that pass's end. */
function restoreDone(rank: RankState, request: SimRequest): void {
  if (rank.busy) rank.loadsDoneMidPass.push(request);
  else markLoaded(rank, request);
}

/** A load (a G2 restore, or a KV pull from a prefill worker) has landed: the request may be admitted. */
export function markLoaded(rank: RankState, request: SimRequest): void {
  if (!request.kv_from_prefill) endHostLoad(rank, request);
  request.state = 'loaded';
  rank.kick();
}

/** A G2 restore's entries are no longer pinned (other ranks of a shared pool may evict them again); its H2D wait is known. */
function endHostLoad(rank: RankState, request: SimRequest): void {
  rank.host!.pool.unpin(request.pinned_host_ids, rank.rank_index);
  for (const subscriber of rank.host!.subscribers) if (subscriber !== rank) subscriber.kick();
  if (request.first_admission_ns === null) request.h2d_wait_ns = rank.kernel.now - request.h2d_started_ns!;
}

/** A restored request is admitted: its loaded blocks become G1 cache entries; its G1 room was reserved when the restore started. */
function admitLoaded(rank: RankState, request: SimRequest, budget: number): number {
  const B = rank.settings.block_size;
  const { g1_blocks, host_blocks } = request.restore!;
  if (request.pinned_host_ids.length > 0) storeBlocks(rank, request, g1_blocks, g1_blocks + host_blocks);
  request.pinned_host_ids = [];
  request.computed_tokens = (g1_blocks + host_blocks) * B;
  const chunk = Math.min(request.prefill_target_tokens - request.computed_tokens, budget);
  if (!ensureBlocks(rank, request, request.computed_tokens + chunk)) {
    throw new InvariantError(`request ${request.request_id} on ${rank.rank.worker_id}/${rank.rank.dp_rank}: a loaded restore lacks the G1 room reserved for it`);
  }
  request.restore = null;
  recordAttempt(rank, request, 'admitted', g1_blocks, host_blocks, null);
  return chunk;
}

/**
 * PD-1, as vLLM's decode side does: G1 room for the prompt's KV (and the first token's) is reserved
 * before the KV is pulled from the prefill worker; the request then waits for it like a G2 restore,
 * holding that room but no running slot, and is admitted ahead of the queue once it has landed.
 */
function startPull(rank: RankState, request: SimRequest): null | 'stop' {
  if (!ensureBlocks(rank, request, request.input_length + request.output_tokens)) {
    recordAttempt(rank, request, 'no-blocks', 0, 0, 'not enough free G1 blocks for the KV from the prefill worker');
    return 'stop';
  }
  rank.restoresInFlight++;
  request.state = 'loading';
  recordAttempt(rank, request, 'loading', 0, 0, 'KV moving from the prefill worker');
  rank.listener.pullKv(request, () => restoreDone(rank, request));
  return null;
}

/** A pulled request whose KV has landed: the decode half starts with the whole prompt's KV in place, its blocks become G1 entries. */
function admitPulled(rank: RankState, request: SimRequest): PlannedWork {
  request.kv_from_prefill = false;
  request.computed_tokens = request.input_length;
  storeBlocks(rank, request, 0, request.blockCount);
  recordAttempt(rank, request, 'admitted', 0, 0, 'KV transferred from the prefill worker');
  return DECODE;
}

/** G2-6: reuse is attributed at first admission only. */
function attributeReuse(rank: RankState, request: SimRequest, g1Blocks: number, hostBlocks: number): void {
  if (request.first_admission_ns !== null) return;
  request.g1_reused_tokens = g1Blocks * rank.settings.block_size;
  request.host_reused_tokens = hostBlocks * rank.settings.block_size;
}

function recordAttempt(rank: RankState, request: SimRequest, outcome: 'admitted' | 'deferred' | 'loading' | 'no-blocks', g1: number, host: number, reason: string | null): void {
  if (outcome === 'admitted' && request.first_admission_ns === null) request.first_admission_ns = rank.kernel.now;
  request.addAttempt({ time_ns: rank.kernel.now, ...rank.rank, outcome, g1_blocks: g1, host_blocks: host, reason });
}
