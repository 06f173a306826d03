// One request's life in the simulated cluster: its prompt blocks, where it was routed, how it
// was admitted (G1 / G2 reuse, H2D wait), its token timestamps and its terminal status.
import type { BlockHash, BlockWords } from '../hash';
import { WORDS_PER_BLOCK as IMPORTED_WORDS_PER_BLOCK } from '../hash';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { InvariantError } from '../kernel';
import type { Placement } from '../router/router';
import type { Nanos } from '../time';
import { ValueCounts } from '../collections/valueCounts';
import type { Int32Pool } from '../collections/typedArrays';
import { IdRun } from '../collections/idRun';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const WORDS_PER_BLOCK = IMPORTED_WORDS_PER_BLOCK;

export type RequestState = 'created' | 'waiting' | 'loading' | 'loaded' | 'running' | 'transferring' | 'finished' | 'failed' | 'skipped';

/** whole: one rank does everything; prefill/decode: the two halves of a disaggregated request (PD-1). */
export type RequestStage = 'whole' | 'prefill' | 'decode';


export interface AdmissionAttempt {
  time_ns: Nanos;
  worker_id: number;
  dp_rank: number;
  outcome: 'admitted' | 'deferred' | 'loading' | 'no-blocks';
  g1_blocks: number;
  host_blocks: number;
  /** For a deferral: why the G2 lookup could not be used yet. */
  reason: string | null;
}

export interface Reconciliation {
  predicted_tokens: number;
  realised_tokens: number;
  agree: boolean;
  reason: 'lag' | 'stale entry' | 'queued request' | 'last-token rule' | 'host weight' | null;
}

/** What the chosen rank would reuse for a request when it was placed (see RankEngine.truthOverlap). */
export interface EngineTruth {
  device_blocks: number;
  host_blocks: number;
}

export interface RequestIdentity {
  request_id: string;
  ordinal: number;
  session_id: string | null;
  play_id: string | null;
  cache_id: string | null;
  lane: number | null;
}

const NO_ENTRIES = new Int32Array(0);

/** Admission attempts a request keeps in its history (see SimRequest.addAttempt). */
export const ADMISSION_ATTEMPTS_KEPT = 1000;

/** The empty list every request starts with (frozen: a list gets its own array when it gets an item). */
const NONE: readonly never[] = Object.freeze([]);

/**
 * A list with one more item: the first makes an array of exactly one (a push onto an empty array
 * reserves room for 17; most requests are placed and admitted once, and a run keeps them all).
 */
function appended<T>(list: readonly T[], item: T): readonly T[] {
  if (list.length === 0) return [item];
  (list as T[]).push(item);
  return list;
}

export class SimRequest {
  state: RequestState = 'created';
  arrival_ns: Nanos = 0;
  /** The kernel's handle of its scheduled arrival (-1: none), cancelled if it is withdrawn first. */
  arrival_action = -1;
  dispatch_ns: Nanos | null = null;
  first_admission_ns: Nanos | null = null;
  first_token_ns: Nanos | null = null;
  /** When its second output token was produced (TTST), if it has one. */
  second_token_ns: Nanos | null = null;
  last_token_ns: Nanos | null = null;
  finished_ns: Nanos | null = null;
  /**
   * Gaps between consecutive output tokens (ITL), counted per value: made at the second token, and
   * dropped when the request ends (a finished request's gaps join the run's distribution first).
   */
  token_gaps_ns: ValueCounts | null = null;
  computed_tokens = 0;
  output_tokens = 0;
  g1_reused_tokens = 0;
  host_reused_tokens = 0;
  h2d_wait_ns = 0;
  /** Leading prompt blocks an earlier request of the run had (the infinite-cache ceiling's hit); null until it arrives. */
  ceiling_hit_blocks: number | null = null;
  h2d_started_ns: Nanos | null = null;
  /** Placements in order (see addPlacement); one frozen empty list for every request until its first. */
  routing_history: readonly Placement[] = NONE;
  /** Admission attempts in order (see addAttempt). */
  admission_history: readonly AdmissionAttempt[] = NONE;
  /** Attempts between the first kept ones and the latest that were counted, not kept (see addAttempt). */
  admission_attempts_omitted = 0;
  reconciliation: Reconciliation | null = null;
  /** G1 cache entries this request uses (their slots in the rank's G1), in prompt order: the first entryCount of entryStore. */
  private entryStore: Int32Array | null = null;
  private entryCount = 0;
  /** G1 blocks it holds that are not cache entries. */
  private_blocks = 0;
  /** G2 entries pinned for its restore (block ids). */
  pinned_host_ids: ArrayLike<BlockId> = NONE;
  /** Engine truth of the chosen rank at placement (device, host blocks), for reconciliation. */
  truth_at_placement: EngineTruth | null = null;
  rank_index = -1;
  /** Where it was dispatched (routed or sent directly). */
  worker_id: number | null = null;
  dp_rank: number | null = null;
  /** Leading prompt blocks already handed to G2 write-through (G2-2). */
  write_through_blocks = 0;
  /** Output tokens already produced when the request was last preempted: they are recomputed as prefill. */
  recompute_output_tokens = 0;
  preemptions = 0;
  /** A restore in flight or done: the G1 prefix and G2 blocks it covers. */
  restore: { g1_blocks: number; host_blocks: number } | null = null;
  failure_reason: string | null = null;
  /** Why a skipped request was never sent (e.g. its play failed first, AGX-2). */
  skip_reason: string | null = null;
  /** cache_ids (or request ids) of whoever stored the G2 entries this request restored. */
  host_restore_sources: readonly string[] = NONE;
  stage: RequestStage = 'whole';
  /** Set on a decode-stage request whose prompt KV comes from its prefill worker, until it is admitted on its decode rank (PD-1). */
  kv_from_prefill = false;
  /** How long its KV took to move to its decode worker; null while it has not moved (it never does when it ends at its prefill, or fails on its decode rank first). */
  kv_transfer_ns: number | null = null;
  decode_routing: Placement | null = null;
  decode_worker_id: number | null = null;
  decode_dp_rank: number | null = null;
  /** The tokens-only hash words (low, high) of the prompt's complete blocks, while the request holds them. */
  private tokensWords: Int32Array | null = null;
  private idList: Int32Array | null = null;
  private blockIds: BlockIds | null = null;
  /** idList held as one run (with the buffer behind idList, tokensWords and at first entryStore, and the pool it goes back to). */
  private idRun: IdRun | null = null;

  constructor(
    readonly identity: RequestIdentity,
    readonly input_length: number,
    readonly output_length: number,
  ) {}

  /** The router placed it (again, for a request routed more than once). */
  addPlacement(placement: Placement): void {
    this.routing_history = appended(this.routing_history, placement);
  }

  /**
   * A rank tried to admit it. The first ADMISSION_ATTEMPTS_KEPT − 1 attempts are kept, then only
   * the latest in the last place, the others counted: a request preempted and readmitted every
   * nanosecond-long pass for a long stretch of virtual time is tried millions of times.
   */
  addAttempt(attempt: AdmissionAttempt): void {
    if (this.admission_history.length < ADMISSION_ATTEMPTS_KEPT) {
      this.admission_history = appended(this.admission_history, attempt);
      return;
    }
    (this.admission_history as AdmissionAttempt[])[ADMISSION_ATTEMPTS_KEPT - 1] = attempt;
    this.admission_attempts_omitted++;
  }

  /** The prompt's complete blocks, attached when the request arrives (their ids held in the run's table) and dropped when it ends. */
  attachBlocks(words: BlockWords, blockIds: BlockIds, pool: Int32Pool | null = null): void {
    const count = words.length / WORDS_PER_BLOCK;
    // One buffer for both: the block ids, then the tokens-only hash words (the sequence hash words
    // are not kept: the ids stand for them).
    // The G1 entries it uses (a subsequence of its block ids) take the rest of the buffer.
    const store = pool ? pool.take(4 * count) : new Int32Array(4 * count);
    const ids = store.subarray(0, count);
    const tokens = store.subarray(count, 3 * count);
    this.entryStore = store.subarray(3 * count);
    this.entryCount = 0;
    blockIds.acquireAllWords(words, WORDS_PER_BLOCK, ids);
    for (let i = 0; i < count; i++) {
      const at = WORDS_PER_BLOCK * i;
      tokens[2 * i] = words[at + 2];
      tokens[2 * i + 1] = words[at + 3];
    }
    this.tokensWords = tokens;
    this.idList = ids;
    this.blockIds = blockIds;
    this.idRun = new IdRun(blockIds, ids, store, pool);
  }

  /** The request lets go of its prompt blocks; their ids (and the buffer) are released once no event names them either. */
  releaseBlocks(): void {
    const run = this.idRun;
    this.tokensWords = null;
    this.idList = null;
    this.idRun = null;
    if (this.entryCount > 0) {
      run?.keepBuffer(); // (never after a finish) the entries still use the buffer
      run?.letGo();
      return;
    }
    this.entryStore = null;
    run?.letGo();
  }

  /** The prompt's block ids as one held run (events naming some of them hold it: see IdRun). */
  get heldIds(): IdRun {
    if (this.idRun === null) throw new InvariantError(`request ${this.request_id} has no prompt blocks (not arrived, or already finished)`);
    return this.idRun;
  }

  /** The token-hash words (low, high) of prompt blocks [from, to): a view, valid while the request's id run is held. */
  tokenWordsView(from: number, to: number): Int32Array {
    return this.tokensWords!.subarray(2 * from, 2 * to);
  }

  /**
   * Sequence hashes of the complete prompt blocks, as a new array (the request keeps only their
   * ids, which stand for the hashes while it holds them; see blockCount).
   */
  get hashes(): readonly BlockHash[] {
    const ids = this.block_ids;
    const hashes: BlockHash[] = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) hashes[i] = this.blockIds!.hashOf(ids[i]);
    return hashes;
  }

  /** How many complete prompt blocks the prompt has. */
  get blockCount(): number {
    return this.block_ids.length;
  }

  /** Block ids of the complete prompt blocks (same order as `hashes`). */
  get block_ids(): Int32Array {
    if (this.idList === null) throw new InvariantError(`request ${this.request_id} has no prompt blocks (not arrived, or already finished)`);
    return this.idList;
  }

  get request_id(): string {
    return this.identity.request_id;
  }
  get ordinal(): number {
    return this.identity.ordinal;
  }
  get heldBlocks(): number {
    return this.entryCount + this.private_blocks;
  }

  /** The G1 cache entries this request uses (G1 slots), in prompt order: a view, valid until they change. */
  get entry_slots(): Int32Array {
    return this.entryStore === null ? NO_ENTRIES : this.entryStore.subarray(0, this.entryCount);
  }

  /** The request now uses these G1 entries (they replace any it had). */
  setEntries(slots: ArrayLike<number>): void {
    this.entryCount = 0;
    for (let i = 0; i < slots.length; i++) this.addEntry(slots[i]);
  }

  /** One more G1 entry (its slot), after the others. */
  addEntry(slot: number): void {
    if (this.entryStore === null || this.entryCount === this.entryStore.length) {
      const grown = new Int32Array(Math.max(16, 2 * this.entryCount));
      if (this.entryStore !== null) grown.set(this.entryStore.subarray(0, this.entryCount));
      this.entryStore = grown;
    }
    this.entryStore[this.entryCount++] = slot;
  }

  /** The request uses no G1 entries any more. */
  clearEntries(): void {
    this.entryCount = 0;
  }

  /** An output token is out at `now`: the first, the second, and each gap after the first are recorded. */
  stampToken(now: Nanos): void {
    if (this.first_token_ns === null) this.first_token_ns = now;
    else {
      if (this.second_token_ns === null) this.second_token_ns = now;
      (this.token_gaps_ns ??= new ValueCounts()).add(now - this.last_token_ns!);
    }
    this.last_token_ns = now;
    this.output_tokens++;
  }

  /**
   * Output tokens out one after another after a first one (stamped already): `counts[g]` tokens each
   * `gaps[g]` after the one before, for each group g < `groups`, the last at `last_ns`. The same as
   * stamping each in turn.
   */
  stampTokenGroups(gaps: ArrayLike<number>, counts: ArrayLike<number>, groups: number, last_ns: Nanos): void {
    if (groups === 0) return;
    if (this.first_token_ns === null) throw new InvariantError(`request ${this.request_id}: tokens stamped in groups before its first`);
    if (this.second_token_ns === null) this.second_token_ns = this.last_token_ns! + gaps[0];
    const recorded = (this.token_gaps_ns ??= new ValueCounts());
    let tokens = 0;
    for (let g = 0; g < groups; g++) {
      recorded.addRepeated(gaps[g], counts[g]);
      tokens += counts[g];
    }
    this.last_token_ns = last_ns;
    this.output_tokens += tokens;
  }

  /** Tokens the prefill must cover: the prompt, plus outputs to recompute after a preemption. */
  get prefill_target_tokens(): number {
    return this.input_length + this.recompute_output_tokens;
  }
  get prefillDone(): boolean {
    return this.computed_tokens >= this.prefill_target_tokens;
  }
}
