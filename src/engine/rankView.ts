// What a rank shows of itself without changing it: the engine truth for a prompt as the rank's
// events have told it so far (truthOverlap, LAG-3), where an unfinished request is held (whereIs, for
// a stalled run's report), and what a pass observer is shown as a pass starts (observePass).
import type { BlockId } from '../collections/blockIds';
import type { Nanos } from '../time';
import type { PassShape } from './passTime';
import type { EngineTruth, SimRequest } from './request';
import type { PassObservation } from './rankInterfaces';
import type { RankState } from './rankState';

/**
 * Engine truth for a prompt, as the rank's events have told it so far (LAG-3: residency changes
 * at emission): G1 prefix blocks (none with prefix caching off) as its events say, and the
 * resident G2 run after them (G2 is looked up whatever the prefix-caching setting: see
 * admission.ts). A pass under way changes G1 when it is planned (evictions, blocks restored at
 * admission) and reports the changes at its end; counted at once, a placement during the pass
 * found the router's view unlike the truth, and reconciliation put the difference down to lag in
 * a run without lag (found by the fuzzer's invariant).
 */
export function truthOverlap(rank: RankState, ids: ArrayLike<BlockId>): EngineTruth {
  const device_blocks = reportedPrefixLength(rank, ids);
  const host_blocks = rank.host ? rank.host.pool.residentRun(ids, device_blocks) : 0;
  return { device_blocks, host_blocks };
}

/**
 * The G1 prefix of `ids` as the rank has reported it: a block whose first event still in the
 * outbox (due at the pass end) is a Removed was held; one whose first is a Stored (a block
 * restored from G2 at admission, say) was not; any other block is as G1 holds it now.
 */
function reportedPrefixLength(rank: RankState, ids: ArrayLike<BlockId>): number {
  if (!rank.settings.enable_prefix_caching) return 0;
  const pending = rank.outbox.pendingDeviceChanges();
  if (pending === null) return rank.g1.prefixLength(ids);
  let length = 0;
  while (length < ids.length && (pending.get(ids[length]) ?? rank.g1.has(ids[length]))) length++;
  return length;
}

/** Where an unfinished request is held on this rank, in words ("waiting at position 2 of 3 in the queue"). */
export function whereIs(rank: RankState, request: SimRequest): string {
  const running = rank.running.indexOf(request);
  if (running >= 0) return `running (${running + 1} of ${rank.running.length})`;
  const waiting = rank.waiting.indexOf(request);
  if (waiting < 0) return `in state ${request.state}, in neither queue`;
  const what = request.state === 'loading' ? 'loading its G2 prefix' : request.state === 'loaded' ? 'loaded from G2, not yet admitted' : 'waiting';
  return `${what} at position ${waiting + 1} of ${rank.waiting.length} in the queue`;
}

/** What the pass observer is shown of a pass starting at `time_ns`. */
export function observePass(rank: RankState, time_ns: Nanos, shape: PassShape, duration_ns: Nanos): PassObservation {
  return {
    time_ns,
    running_requests: rank.running.length,
    scheduled_tokens: rank.planned.scheduledTokens(),
    g1_occupied_blocks: rank.settings.num_gpu_blocks - rank.g1.freeBlocks,
    host_used_blocks: rank.host === null ? null : rank.host.pool.usedBlocks,
    shape: { ...shape },
    duration_ns,
  };
}
