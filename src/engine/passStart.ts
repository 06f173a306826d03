// Starting a rank's pass: planning it (ENG-1: running requests first, then requests whose load has
// landed, then waiting ones, under the token budget and the sequence cap), how long it lasts, showing
// it to the pass observer, and how it goes through the kernel: alone, as the first of a run of
// identical decode passes (decodeRunLength, DecodeRun), or fenced until D2H copies of requests it
// preempted are done (blockHolds.ts).
import { Phase } from '../kernel';
import { passDurationNs as importedPassDurationNs } from './passTime';
import * as simulatorFaults from '../fuzz/simulatorFaults';
import { DECODE as IMPORTED_DECODE } from './passPlan';
import { continueRunning as importedContinueRunning } from './preemption';
import { admitLoadedRequests as importedAdmitLoadedRequests, admitWaiting as importedAdmitWaiting } from './admission';
import { fencePass as importedFencePass } from './blockHolds';
import type { RankState } from './rankState';
// Read per pass or per running request (the planted-fault hook too): copied into this module once
// (every read of an imported binding is a getter call, esbuild's live bindings).
const DECODE = IMPORTED_DECODE;
const plantedPassDelayNs = simulatorFaults.plantedPassDelayNs;
const passDurationNs = importedPassDurationNs;
const continueRunning = importedContinueRunning;
const admitLoadedRequests = importedAdmitLoadedRequests;
const admitWaiting = importedAdmitWaiting;
const fencePass = importedFencePass;

/** The rank's pass-start action: plans a pass and starts it, unless one is running or there is nothing to do. */
export function startPass(rank: RankState): void {
  rank.startScheduled = false;
  if (rank.busy) return;
  plan(rank);
  const count = rank.planned.count;
  if (count === 0) {
    rank.flushOutbox();
    return;
  }
  rank.busy = true;
  const shape = rank.planned.passShape();
  const duration = passDurationNs(rank.settings.pass_time, shape) + plantedPassDelayNs(); // planted fault (src/fuzz/simulatorFaults.ts)
  if (rank.preemptedWhileCopying.length > 0) {
    fencePass(rank, shape, duration);
    return;
  }
  rank.showPass(rank.kernel.now, shape, duration);
  const runPasses = rank.batchDecodeRuns ? decodeRunLength(rank) : 1;
  if (runPasses > 1) rank.decodeRun.start(runPasses, shape, duration);
  else rank.kernel.at(rank.kernel.now + duration, Phase.PassCompletion, rank.rank_index, rank.endPassAction);
}

/**
 * ENG-1: running requests first, then (as vLLM does) requests whose G2 load has finished, then
 * waiting ones in FCFS order under the caps (into the pass plan). As in vLLM, a restore
 * starts only while a running slot is free, but takes none while it loads (max_num_seqs caps the
 * running requests); once loaded it waits for a slot, ahead of the ordinary queue.
 */
function plan(rank: RankState): void {
  let budget = rank.settings.max_num_batched_tokens;
  rank.planned.clear();
  const preemptionsAtStart = rank.preemptionCount;
  for (let i = 0; i < rank.running.length && budget > 0; i++) {
    const request = rank.running[i];
    const work = continueRunning(rank, request, budget);
    if (work === null) {
      if (rank.running[i] !== request) i--;
      continue;
    }
    rank.planned.add(request, work);
    budget -= work === DECODE ? 1 : work;
  }
  // As vLLM does, a pass that had to preempt admits nothing new; but when the preemptions left
  // nothing to run, this is vLLM's next (immediate) step, which admits as usual.
  if (rank.preemptionCount !== preemptionsAtStart && rank.planned.count > 0) return;
  budget = admitLoadedRequests(rank, budget);
  admitWaiting(rank, budget);
}

/**
 * How many passes, from the one just planned, are the same decode-only pass: every running
 * request takes one decode step, none needs a new G1 block or has anything to write to G2, no
 * request waits, and no event is due. The run stops at the first pass that finishes a request.
 * Nothing from outside changes such passes but a request joining this rank (DecodeRun.cut).
 */
function decodeRunLength(rank: RankState): number {
  const plan = rank.planned;
  const count = plan.count;
  if (count === 0 || count !== rank.running.length || rank.waiting.length > 0 || !rank.outbox.isEmpty || rank.loadsDoneMidPass.length > 0) return 1;
  const B = rank.settings.block_size;
  let passes = Number.MAX_SAFE_INTEGER;
  for (let i = 0; i < count; i++) {
    if (plan.work[i] !== DECODE) return 1;
    const request = plan.requests[i];
    if (rank.host !== null && Math.min(Math.floor(request.computed_tokens / B), request.blockCount) > request.write_through_blocks) return 1;
    const untilFinished = request.output_length - request.output_tokens;
    // Pass p plans input + outputs + p − 1 tokens of KV: within the blocks held while p ≤ room + 1.
    const untilNewBlock = request.heldBlocks * B - (request.input_length + request.output_tokens) + 1;
    passes = Math.min(passes, untilFinished, untilNewBlock);
  }
  return Math.max(passes, 1);
}
