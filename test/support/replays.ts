// Router-level replays built directly (no cucumber) for unit tests of the evidence and figures:
// the lag scenario of features/router/lag_visibility.feature and variations of it.
import { namedChunk, Prompt } from '../../src/prompt';
import { RouterReplay } from '../../src/sim/routerReplay';
import { DEFAULT_ROUTER_SETTINGS } from '../../src/router/router';
import { parseDurationNs } from '../../src/time';

export const BLOCK = 4;

export interface LagOptions {
  lag?: string;
  arrival?: string;
  requestId?: string;
  /** Emit one more (unrelated) store on worker 0 at 0 ms. */
  extraEvent?: boolean;
  loseStore?: boolean;
  leaveAt?: string;
}

/** Worker 1 busy, stores a 16-token prefix in G2 at 10 ms; a request with that prefix arrives. */
export function lagReplay(options: LagOptions = {}): RouterReplay {
  const replay = new RouterReplay({
    seed: 1893,
    lag_ns: parseDurationNs(options.lag ?? '5 ms'),
    router: { ...DEFAULT_ROUTER_SETTINGS, block_size: BLOCK },
  });
  replay.addWorker(0);
  replay.addWorker(1);
  const prefix = namedChunk('system prompt', 16);
  const busy = new Prompt([namedChunk('busy', 4)]);
  replay.busy({ worker_id: 1, dp_rank: 0 }, { request_id: 'r0', isl_tokens: busy.length_tokens, block_hashes: busy.blockHashes(BLOCK) });
  if (options.extraEvent) {
    const probe = new Prompt([namedChunk('probe', 4)]).blocks(BLOCK);
    replay.emitAt(0, { worker_id: 0, dp_rank: 0 }, 'HostPinned', (s) => [s.stored('HostPinned', probe, null, 0)]);
  }
  const blocks = new Prompt([prefix]).blocks(BLOCK);
  replay.emitAt(parseDurationNs('10 ms'), { worker_id: 1, dp_rank: 0 }, 'HostPinned', (s) => [s.stored('HostPinned', blocks, null, 0)]);
  if (options.loseStore) replay.loseBatch({ worker_id: 1, dp_rank: 0 }, parseDurationNs('10 ms'));
  if (options.leaveAt) replay.removeWorkerAt(parseDurationNs(options.leaveAt), 1);
  const prompt = new Prompt([prefix, namedChunk('own', 4)]);
  replay.arriveAt(parseDurationNs(options.arrival ?? '15 ms'), {
    request_id: options.requestId ?? 'r1',
    isl_tokens: prompt.length_tokens,
    block_hashes: prompt.blockHashes(BLOCK),
  });
  replay.run();
  return replay;
}
