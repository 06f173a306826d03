// Checks shared by the steps that claim a placement was decided by load: the chosen candidate's
// load is strictly below every other candidate's, so load, not the seeded tie-break, decided it
// (a step that checked only the worker id passed with the busy worker's load switched off).
import { expect } from 'chai';
import type { CandidateScore } from '../../src/router/router';
import type { RankRef } from '../../src/events/model';
import type { KvWorld } from './world';

/** A candidate's load as SCORE-2 weighs it: its whole cost when no candidate has cache credit. */
export const costWithoutCredit = (c: CandidateScore): number => c.cost;
/** A candidate's blocks of work, prefill and decode, whatever its credit (candidates that all see one prefix). */
export const blocksOfWork = (c: CandidateScore): number => c.prefill_blocks + c.decode_blocks;

export function expectChosenByLoad(world: KvWorld, candidates: readonly CandidateScore[], chosen: RankRef, context: string, loadOf: (c: CandidateScore) => number = costWithoutCredit): void {
  const mine = candidates.find((c) => c.worker_id === chosen.worker_id && c.dp_rank === chosen.dp_rank);
  expect(mine, `worker ${chosen.worker_id} dp rank ${chosen.dp_rank} among the candidates: ${context}`).to.not.equal(undefined);
  const others = candidates.filter((c) => c !== mine);
  expect(others.length, `other candidates to be less loaded than: ${context}`).to.be.greaterThan(0);
  const lightestOther = Math.min(...others.map(loadOf));
  world.measure('load of the chosen worker', loadOf(mine!), 'blocks', `load of the chosen worker = ${loadOf(mine!)} blocks, the least of the others ${lightestOther}`);
  expect(loadOf(mine!), `the chosen worker's load against the least loaded other (${lightestOther}): load, not a tie-break, must decide. ${context}`).to.be.lessThan(lightestOther);
}
