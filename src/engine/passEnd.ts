// Ending a rank's pass (ENG-2, ENG-3, G2-2..4, G2-6, PD-1): the prompt blocks its prefill chunks
// completed become G1 entries with their Device Stored, the tokens it produced are stamped, the G2
// write-through stores what G2 lacks, the requests it completed leave the running queue (finished,
// or handed off to a decode worker), its events go out as one batch, and G2 loads that landed
// during it take effect.
import { InvariantError } from '../kernel';
import type { SimRequest } from './request';
import { DECODE as IMPORTED_DECODE } from './passPlan';
import { storeBlocks as importedStoreBlocks } from './rankBlocks';
import { markLoaded as importedMarkLoaded } from './admission';
import { releaseEnded as importedReleaseEnded } from './blockHolds';
import type { RankState } from './rankState';
// Read per request of every pass: copied into this module once (every read of an imported binding is a getter call, esbuild's live bindings).
const DECODE = IMPORTED_DECODE;
const storeBlocks = importedStoreBlocks;
const markLoaded = importedMarkLoaded;
const releaseEnded = importedReleaseEnded;

/** The rank's pass-completion action (and the end of a decode run's last pass). */
export function endPass(rank: RankState): void {
  const plan = rank.planned;
  const requests = plan.requests;
  const work = plan.work;
  const count = plan.count;
  for (let i = 0; i < count; i++) {
    if (work[i] === DECODE) finishDecodeStep(rank, requests[i]);
    else finishPrefillChunk(rank, requests[i], work[i]);
  }
  for (let i = 0; i < count; i++) writeThrough(rank, requests[i]);
  for (let i = 0; i < count; i++) if (isComplete(requests[i])) finish(rank, requests[i]);
  plan.clear();
  rank.flushOutbox();
  rank.busy = false;
  if (rank.loadsDoneMidPass.length > 0) for (const request of rank.loadsDoneMidPass.splice(0)) markLoaded(rank, request);
  rank.kick();
}

function finishPrefillChunk(rank: RankState, request: SimRequest, tokens: number): void {
  const B = rank.settings.block_size;
  const before = Math.floor(request.computed_tokens / B);
  request.computed_tokens += tokens;
  const after = Math.min(Math.floor(request.computed_tokens / B), request.blockCount);
  storeBlocks(rank, request, before, after);
  if (!request.prefillDone) return;
  if (request.first_token_ns === null) rank.listener.prefillComplete(request);
  if (request.output_tokens < request.output_length) stampToken(rank, request);
}

function finishDecodeStep(rank: RankState, request: SimRequest): void {
  stampToken(rank, request);
}

function stampToken(rank: RankState, request: SimRequest): void {
  request.stampToken(rank.kernel.now);
}

/** G2-2..4: the request's complete prompt blocks G2 lacks are stored (see HostWriter). */
function writeThrough(rank: RankState, request: SimRequest): void {
  if (rank.writer !== null) rank.writer.writeThrough(request);
}

function isComplete(request: SimRequest): boolean {
  if (!request.prefillDone) return false;
  return request.stage === 'prefill' || request.output_tokens >= request.output_length;
}

/** A completed request leaves the running queue: finished, or (a prefill worker's) handed off to its decode worker. */
function finish(rank: RankState, request: SimRequest): void {
  const index = rank.running.indexOf(request);
  if (index < 0) throw new InvariantError(`finishing request ${request.request_id} that is not running on ${rank.rank.worker_id}/${rank.rank.dp_rank}`);
  rank.running.splice(index, 1);
  const handingOff = request.stage === 'prefill' && request.output_tokens < request.output_length;
  releaseEnded(rank, request, handingOff);
  if (handingOff) {
    request.state = 'transferring';
    rank.listener.handoff(request);
    return;
  }
  request.state = 'finished';
  request.finished_ns = rank.kernel.now;
  rank.listener.finished(request);
}
