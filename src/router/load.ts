// The router's own view of load per rank (SCORE-2): uncomputed prefill tokens and active blocks
// of the requests it placed, updated by placement, prefill-complete feedback and completion.
// Blocks are a prompt's complete blocks, counted by block id (see BlockIds). Each active request
// holds its blocks' ids while it is active: the request's held run of ids with one count when it
// comes with one (a cluster's requests), else each id; its active blocks keep no holds of their own.
import type { BlockHash } from '../hash';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import { grownInt32, Int32Pool } from '../collections/typedArrays';
import { IdWords } from './rankSets';
import type { IdRun } from '../collections/idRun';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;

/** A cell of ActiveUsers: no rank uses the block (zero, so that cells never written need no filling). */
const UNUSED = 0;
/** Bits of a cell for its rank + 1 when one rank uses the block (ranks below 4,095); its count takes the bits above. */
const RANK_BITS = 12;

/**
 * How many active requests on each rank use each block, by block id. Most blocks are used on one
 * rank, so each id has one 32-bit word, its cell: the rank + 1 that uses it in the low `rankBits`
 * bits and its count of users there above them; or, when several ranks do (or a rank or a count
 * too large for the word), −(row + 1), with each rank's count in that row of `rows` (one word per
 * rank; rows are made when a second rank joins and given back when one rank that fits the word is
 * left). A block's placement, its release and the score's walk each read one word per block, where
 * a set of ranks by id, a table of each rank's blocks and the counts by slot were three or four
 * random reads; one word, not the rank and the count side by side, as the array spans every id
 * a run has held (about 5 MB fewer at the peak of the whole trace on 64 workers).
 */
class ActiveUsers {
  /** By block id, its cell (IdWords: zero where never written). */
  private readonly cells = new IdWords(1);
  private readonly rankMask: number;
  /** One user more in a cell: its count goes up by this much. */
  private readonly countUnit: number;
  /** Cells below this can count one user more (the count stays within 31 bits). */
  private readonly countLimit: number;
  private rows = new Int32Array(0);
  /** Words per row: one per rank, for ranks below it. */
  private rowWidth = 0;
  private rowsIssued = 0;
  private readonly freeRows: number[] = [];
  /** By row: how many ranks have a count in it. */
  private readonly rowRanks: number[] = [];
  /** Per rank: how many distinct blocks its active requests use. */
  private readonly distinct: number[] = [];

  /** `rankBits`: bits of a cell for the rank (fewer in tests, to reach the rows with small ranks and counts). */
  constructor(rankBits = RANK_BITS) {
    this.countUnit = 2 ** rankBits;
    this.rankMask = this.countUnit - 1;
    this.countLimit = Math.floor((2 ** 31 - 1) / this.countUnit - 1) * this.countUnit;
  }

  /** Distinct blocks in use on a rank. */
  blocksOn(rank: number): number {
    return this.distinct[rank] ?? 0;
  }

  /** One more user of a block on a rank. */
  add(id: BlockId, rank: number): void {
    if (id >= this.cells.words.length) this.cells.fit(id);
    const words = this.cells.words;
    const cell = words[id];
    if (cell > 0 && (cell & this.rankMask) === rank + 1) {
      if (cell < this.countLimit) words[id] = cell + this.countUnit;
      // A count the cell cannot hold: it moves into a row of its own.
      else words[id] = -this.rowOf(rank, Math.floor(cell / this.countUnit) + 1, -1, 0) - 1;
      return;
    }
    if (cell === UNUSED) {
      words[id] = rank < this.rankMask ? this.countUnit + rank + 1 : -this.rowOf(rank, 1, -1, 0) - 1;
    } else if (cell > 0) {
      // A second rank: both counts move into a row.
      words[id] = -this.rowOf((cell & this.rankMask) - 1, Math.floor(cell / this.countUnit), rank, 1) - 1;
    } else {
      const row = -cell - 1;
      if (rank >= this.rowWidth) this.widen(rank + 1);
      // A rank already in the row: one more user there, the block is not new to it.
      if (this.rows[row * this.rowWidth + rank]++ > 0) return;
      this.rowRanks[row]++;
    }
    this.distinct[rank] = this.blocksOn(rank) + 1;
  }

  /** One user fewer of a block on a rank (it has one). */
  remove(id: BlockId, rank: number): void {
    const words = this.cells.words;
    const cell = words[id];
    if (cell > 0 && (cell & this.rankMask) === rank + 1) {
      const left = cell - this.countUnit;
      if (left > this.rankMask) words[id] = left;
      else {
        words[id] = UNUSED;
        this.distinct[rank]--;
      }
      return;
    }
    const row = -cell - 1;
    if (cell >= 0 || rank >= this.rowWidth || this.rows[row * this.rowWidth + rank] === 0) throw new Error(`block id ${id} is not in use on rank ${rank}`);
    if (--this.rows[row * this.rowWidth + rank] > 0) return;
    this.distinct[rank]--;
    const ranksLeft = --this.rowRanks[row];
    if (ranksLeft > 1) return;
    const first = row * this.rowWidth;
    if (ranksLeft === 0) {
      words[id] = UNUSED;
      this.freeRows.push(row);
      return;
    }
    // One rank left: its count goes back into the id's cell, when the cell can hold it, and the row is given back.
    let left = 0;
    while (this.rows[first + left] === 0) left++;
    const count = this.rows[first + left];
    if (left >= this.rankMask || count * this.countUnit > this.countLimit) return;
    words[id] = count * this.countUnit + left + 1;
    this.rows[first + left] = 0;
    this.freeRows.push(row);
  }

  /** Calls `each` with every rank that uses the block, ascending. */
  forEachRank(id: BlockId, each: (rank: number) => void): void {
    const words = this.cells.words;
    if (id >= words.length) return;
    const cell = words[id];
    if (cell > 0) each((cell & this.rankMask) - 1);
    else if (cell < 0) {
      const first = (-cell - 1) * this.rowWidth;
      for (let rank = 0; rank < this.rowWidth; rank++) if (this.rows[first + rank] > 0) each(rank);
    }
  }

  /** A row holding `count` for `rank` and, unless `other` is −1, `otherCount` for `other`. */
  private rowOf(rank: number, count: number, other: number, otherCount: number): number {
    const row = this.takeRow(Math.max(rank, other) + 1);
    this.rows[row * this.rowWidth + rank] = count;
    if (other !== -1) this.rows[row * this.rowWidth + other] = otherCount;
    this.rowRanks[row] = other === -1 ? 1 : 2;
    return row;
  }

  /** An all-zero row (rows given back are zero: every count went to zero or back into a cell), with room for ranks below `ranks`. */
  private takeRow(ranks: number): number {
    if (ranks > this.rowWidth) this.widen(ranks);
    const reused = this.freeRows.pop();
    if (reused !== undefined) return reused;
    const row = this.rowsIssued++;
    if ((row + 1) * this.rowWidth > this.rows.length) this.rows = grownInt32(this.rows, (row + 1) * this.rowWidth);
    return row;
  }

  /** Rows of `width` words: every row's counts move. */
  private widen(width: number): void {
    const widened = new Int32Array(Math.max(this.rowsIssued, 1) * width);
    for (let row = 0; row < this.rowsIssued; row++) widened.set(this.rows.subarray(row * this.rowWidth, (row + 1) * this.rowWidth), row * width);
    this.rows = widened;
    this.rowWidth = width;
  }
}

interface ActiveRequest {
  rank: number;
  prefill_tokens: number;
  /** The ids of its blocks, each counted once among its rank's users (see ActiveUsers). */
  ids: Int32Array;
  /** The held run of its ids the tracker holds once, or null when it holds each id (see LoadTracker.add). */
  run: IdRun | null;
}

export class LoadTracker {
  private readonly prefillTokens: number[] = [];
  /** How many active requests on each rank use each block. */
  private readonly users: ActiveUsers;
  private readonly requests = new Map<string, ActiveRequest>();
  /** Id arrays of freed requests, reused by later ones of the same length. */
  private readonly idArrays = new Int32Pool();

  /** `rankBits`: see ActiveUsers (tests give fewer). */
  constructor(
    private readonly blockIds: BlockIds,
    rankBits?: number,
  ) {
    this.users = new ActiveUsers(rankBits);
  }

  activePrefillTokens(rank: number): number {
    return this.prefillTokens[rank] ?? 0;
  }
  activeBlocks(rank: number): number {
    return this.users.blocksOn(rank);
  }
  isActive(request_id: string): boolean {
    return this.requests.has(request_id);
  }
  rankOf(request_id: string): number | undefined {
    return this.requests.get(request_id)?.rank;
  }

  /** Adds to `hits` (by rank index, zeroed by the caller) how many of these blocks are already active on each rank (NO_BLOCK_ID: nowhere). */
  activeHits(ids: ArrayLike<BlockId>, hits: Int32Array): Int32Array {
    const rankCount = hits.length;
    const tally = (rank: number) => {
      if (rank < rankCount) hits[rank]++;
    };
    for (let i = 0; i < ids.length; i++) if (ids[i] !== NO_BLOCK_ID) this.users.forEachRank(ids[i], tally);
    return hits;
  }

  /** `ids[i]` is the id of the request's block i, or NO_BLOCK_ID when the table does not have it yet (its hash is then read). */
  add(request_id: string, rank: number, prefill_tokens: number, request: { readonly block_hashes: readonly BlockHash[]; readonly held_ids?: IdRun }, ids: ArrayLike<BlockId>): void {
    if (this.requests.has(request_id)) throw new Error(`request ${request_id} is already active on the router`);
    const held = this.idArrays.take(ids.length);
    // The request's blocks are held while it is active: its run with one count, or each id (acquired if new).
    const run = request.held_ids ?? null;
    if (run !== null) run.hold();
    for (let i = 0; i < ids.length; i++) {
      const known = ids[i] !== NO_BLOCK_ID;
      const id = known ? ids[i] : this.blockIds.acquire(request.block_hashes[i]);
      if (known && run === null) this.blockIds.retain(id);
      this.users.add(id, rank);
      held[i] = id;
    }
    this.requests.set(request_id, { rank, prefill_tokens, ids: held, run });
    this.prefillTokens[rank] = this.activePrefillTokens(rank) + prefill_tokens;
  }

  prefillComplete(request_id: string): void {
    const request = this.requests.get(request_id);
    if (!request) return;
    this.prefillTokens[request.rank] -= request.prefill_tokens;
    request.prefill_tokens = 0;
  }

  free(request_id: string): void {
    const request = this.requests.get(request_id);
    if (!request) return;
    this.prefillComplete(request_id);
    const ids = request.ids;
    for (let i = 0; i < ids.length; i++) {
      this.users.remove(ids[i], request.rank);
      if (request.run === null) this.blockIds.release(ids[i]);
    }
    request.run?.letGo();
    this.requests.delete(request_id);
    this.idArrays.give(ids);
  }

  /** Forgets every request on a rank (its worker was removed). */
  dropRank(rank: number): void {
    const gone = [...this.requests.entries()].filter(([, request]) => request.rank === rank).map(([id]) => id);
    for (const id of gone) this.free(id);
  }
}
