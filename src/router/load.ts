// The router's own view of load per rank (SCORE-2): uncomputed prefill tokens and active blocks
// of the requests it placed, updated by placement, prefill-complete feedback and completion.
import type { BlockHash } from '../hash';

interface ActiveRequest {
  rank: number;
  prefill_tokens: number;
  hashes: readonly BlockHash[];
  unhashed_blocks: number;
}

export class LoadTracker {
  private readonly prefillTokens: number[] = [];
  private readonly unhashedBlocks: number[] = [];
  private readonly distinctActive: number[] = [];
  /** block hash → (rank → number of active requests on that rank using it). */
  private readonly activeHolders = new Map<BlockHash, Map<number, number>>();
  private readonly requests = new Map<string, ActiveRequest>();

  activePrefillTokens(rank: number): number {
    return this.prefillTokens[rank] ?? 0;
  }
  activeBlocks(rank: number): number {
    return (this.distinctActive[rank] ?? 0) + (this.unhashedBlocks[rank] ?? 0);
  }
  isActive(request_id: string): boolean {
    return this.requests.has(request_id);
  }
  rankOf(request_id: string): number | undefined {
    return this.requests.get(request_id)?.rank;
  }

  /** For each rank index, how many of these hashes are already active there. */
  activeHits(hashes: readonly BlockHash[], rankCount: number): Int32Array {
    const hits = new Int32Array(rankCount);
    for (const hash of hashes) {
      const holders = this.activeHolders.get(hash);
      if (!holders) continue;
      for (const rank of holders.keys()) if (rank < rankCount) hits[rank]++;
    }
    return hits;
  }

  add(request_id: string, rank: number, prefill_tokens: number, hashes: readonly BlockHash[], unhashed_blocks: number): void {
    if (this.requests.has(request_id)) throw new Error(`request ${request_id} is already active on the router`);
    this.requests.set(request_id, { rank, prefill_tokens, hashes, unhashed_blocks });
    this.prefillTokens[rank] = this.activePrefillTokens(rank) + prefill_tokens;
    this.unhashedBlocks[rank] = (this.unhashedBlocks[rank] ?? 0) + unhashed_blocks;
    for (const hash of hashes) {
      let holders = this.activeHolders.get(hash);
      if (!holders) {
        holders = new Map();
        this.activeHolders.set(hash, holders);
      }
      const count = holders.get(rank) ?? 0;
      if (count === 0) this.distinctActive[rank] = (this.distinctActive[rank] ?? 0) + 1;
      holders.set(rank, count + 1);
    }
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
    this.unhashedBlocks[request.rank] -= request.unhashed_blocks;
    for (const hash of request.hashes) {
      const holders = this.activeHolders.get(hash)!;
      const count = holders.get(request.rank)! - 1;
      if (count === 0) {
        holders.delete(request.rank);
        this.distinctActive[request.rank]--;
        if (holders.size === 0) this.activeHolders.delete(hash);
      } else holders.set(request.rank, count);
    }
    this.requests.delete(request_id);
  }

  /** Forgets every request on a rank (its worker was removed). */
  dropRank(rank: number): void {
    const gone = [...this.requests.entries()].filter(([, request]) => request.rank === rank).map(([id]) => id);
    for (const id of gone) this.free(id);
  }
}
