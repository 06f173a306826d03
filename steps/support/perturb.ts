// Test double for the sign-off's determinism proof: when KVQUAL_PERTURB names part of a
// scenario's name, that scenario's simulation gets one extra KV event (worker 0 stores a probe
// block in host memory at 0 ms; an engine-level run gets one extra 1-token request at 0 ms), so
// its canonical digest differs from an unperturbed run.
// `npm run qualify` passes the variable to its second run only; it is read here, never in src/.
import type { KvWorld } from './world';
import { namedChunk } from '../../src/prompt';
import { hashPromptBlocks } from '../../src/hash';

export const PERTURB_ENV = 'KVQUAL_PERTURB';

/** Queues the extra event when this scenario is the one KVQUAL_PERTURB names. */
export function perturbIfAsked(world: KvWorld, scenarioName: string): void {
  const target = process.env[PERTURB_ENV];
  if (!target || !scenarioName.includes(target)) return;
  process.stderr.write(`\n${PERTURB_ENV}: perturbing the simulation of "${scenarioName}" (one extra KV event)\n`);
  world.perturbEngine = true;
  world.later((replay) => {
    const size = world.setup.block_size;
    const probe = hashPromptBlocks([namedChunk('kvqual perturbation probe', size)], size);
    replay.emitAt(0, { worker_id: 0, dp_rank: 0 }, 'HostPinned', (stream) => [stream.stored('HostPinned', probe, null, 0)]);
  });
}
