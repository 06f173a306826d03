// A request's G1 blocks on its rank: the blocks its KV needs, allocated as it grows (ensureBlocks);
// the prompt blocks a pass completes (or a G2 restore or a KV pull lands) becoming G1 cache entries
// with their Device Stored (ENG-3), or using the entry another request stored first (storeBlocks); the
// Stored's ids, held until the router has it (storedData); an admission's G1 prefix given back as it
// was (undoAcquire); and a request letting go of all its blocks (releaseBlocks).
import type { BlockId } from '../collections/blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import { NO_SLOT as IMPORTED_NO_SLOT } from '../collections/blockSlots';
import { StoredIds as ImportedStoredIds } from '../events/model';
import type { SimRequest } from './request';
import type { RankState } from './rankState';
// Read per block: copied into this module once (every read of an imported binding is a getter call, esbuild's live bindings).
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;
const NO_SLOT = IMPORTED_NO_SLOT;
/** Made per Stored: copied too. */
const StoredIds = ImportedStoredIds;
type StoredIds = ImportedStoredIds;

/** Blocks needed to hold `tokens` tokens of KV, allocated now if missing. */
export function ensureBlocks(rank: RankState, request: SimRequest, tokens: number): boolean {
  const needed = Math.ceil(tokens / rank.settings.block_size) - request.heldBlocks;
  if (needed <= 0) return true;
  if (!rank.g1.allocate(needed)) return false;
  request.private_blocks += needed;
  return true;
}

/** The admission did not happen: its G1 prefix goes back as it was, LRU order included (no touch). */
export function undoAcquire(rank: RankState, request: SimRequest): void {
  rank.g1.undoAcquire(request.entry_slots);
  request.clearEntries();
}

/** The request lets go of its G1 entries and private blocks at once (preempted, or failed). */
export function releaseBlocks(rank: RankState, request: SimRequest): void {
  rank.g1.releaseSlots(request.entry_slots, request.private_blocks);
  request.clearEntries();
  request.private_blocks = 0;
}

/** Blocks [from, to) of the prompt became complete this pass: cache entries and Device Stored. */
export function storeBlocks(rank: RankState, request: SimRequest, from: number, to: number): void {
  let runStart = from;
  let runLength = 0;
  for (let i = from; i < to; i++) {
    if (promoteBlock(rank, request, request.block_ids[i])) {
      if (runLength === 0) runStart = i;
      runLength++;
    } else if (runLength > 0) {
      storedRun(rank, request, runStart, runLength);
      runLength = 0;
    }
  }
  if (runLength > 0) storedRun(rank, request, runStart, runLength);
}

/**
 * Turns a private block into a cache entry if it is new (true: a Device Stored is then due), or
 * makes the request use the entry another request already stored for it (its copy is freed).
 */
function promoteBlock(rank: RankState, request: SimRequest, id: BlockId): boolean {
  const made = rank.g1.promoteToSlot(id);
  if (made !== NO_SLOT) {
    request.private_blocks--;
    request.addEntry(made);
    return true;
  }
  const adopted = rank.g1.adoptSlot(id);
  if (adopted !== NO_SLOT) {
    request.private_blocks--;
    request.addEntry(adopted);
  }
  return false;
}

/** A Device Stored is due for `length` new cache entries from prompt block `start`. */
function storedRun(rank: RankState, request: SimRequest, start: number, length: number): void {
  const data = storedData(rank, request, start, start + length);
  rank.outbox.add('Device', data);
}

/** A Stored of prompt blocks [from, to) of a request, holding their ids (and the parent's) until the router has it. */
export function storedData(rank: RankState, request: SimRequest, from: number, to: number): StoredIds {
  const parent = from === 0 ? NO_BLOCK_ID : request.block_ids[from - 1];
  if (!rank.holdIdRuns) return new StoredIds(rank.blockIds, request.block_ids.slice(from, to), request.tokenWordsView(from, to).slice(), parent, from);
  return new StoredIds(rank.blockIds, request.block_ids.subarray(from, to), request.tokenWordsView(from, to), parent, from, request.heldIds);
}
