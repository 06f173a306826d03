// Test double for the sign-off's determinism proof: when KVQUAL_PERTURB names part of a
// scenario's name (several parts may be given, separated by "|"), that scenario's simulation is changed a little, whatever it drives, so its
// canonical digest differs from an unperturbed run:
//   - a router-level replay gets one extra KV event (worker 0 stores a probe block in host memory
//     at 0 ms);
//   - an engine-level scenario (explicit requests, an agentic trace, prefill/decode, or a cluster
//     that is only set up or rejected) gets one extra 1-token request at 0 ms in its configuration
//     (PROBE_REQUEST in engineScenario.ts);
//   - a scenario that computes without simulating (blocks cut from prompts, a config's times)
//     records a probe beside what it computed (KvWorld.recordComputation).
// A named scenario that drives none of these has nothing to perturb: its After hook fails it, so the
// test double can never pass silently. Every perturbed scenario attaches a note the sign-off reads.
// `npm run qualify` passes the variable to its second run only; it is read here, never in src/.
import type { KvWorld } from './world';
import { namedChunk } from '../../src/prompt';
import { hashPromptBlocks } from '../../src/hash';

export const PERTURB_ENV = 'KVQUAL_PERTURB';

/** True when KVQUAL_PERTURB names this scenario: part of its name, or of one of several names separated by "|". */
export function perturbationAsked(scenarioName: string): boolean {
  const targets = (process.env[PERTURB_ENV] ?? '').split('|').filter((t) => t !== '');
  return targets.some((target) => scenarioName.includes(target));
}

/** Arms both perturbations when this scenario is the one KVQUAL_PERTURB names (before any step). */
export function perturbIfAsked(world: KvWorld, scenarioName: string): void {
  if (!perturbationAsked(scenarioName)) return;
  world.perturbEngine = true;
  world.perturbComputation = true;
  world.later((replay) => {
    const size = world.setup.block_size;
    const probe = hashPromptBlocks([namedChunk('kvqual perturbation probe', size)], size);
    replay.emitAt(0, { worker_id: 0, dp_rank: 0 }, 'HostPinned', (stream) => [stream.stored('HostPinned', probe, null, 0)]);
  });
}

/** What was perturbed, in words, or null when the scenario drove nothing that could be. */
export function perturbationApplied(world: KvWorld): string | null {
  if (world.hasReplay) return 'one extra KV event in the router-level replay';
  if (world.hasEngine && world.engine.configured) return 'one extra 1-token request in the engine-level configuration';
  if (world.computation !== null) return `one extra probe in what the scenario computed (${world.computation.kind})`;
  return null;
}
