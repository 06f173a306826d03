// The agentic G2 guard (AGX-6, `validate_agentic_host_offload`): an agentic workload with G2 on
// any role runs with any number of aggregated, prefill or decode workers, but every role must use
// the vLLM backend, attention DP 1, a static pool, no speculative decoding and no G3 tier. Outside
// that guard, the features kvqual does not model are rejected too, with their own message.
import type { ReplayConfig } from '../config/schema';

export interface GuardViolation {
  path: string;
  message: string;
}

type Role = ReplayConfig['cluster']['workers'][number];

interface Requirement {
  field: string;
  broken: (role: Role) => boolean;
  rule: (role: Role) => string;
}

const AGENTIC_G2_REQUIREMENTS: Requirement[] = [
  { field: 'backend', broken: (r) => r.backend !== 'vllm', rule: (r) => `agentic G2 requires the vLLM backend on every role, not ${r.backend}` },
  { field: 'dp_size', broken: (r) => r.dp_size !== 1, rule: (r) => `agentic G2 requires attention DP = 1 on every role, not ${r.dp_size}` },
  { field: 'scaling_policy', broken: (r) => r.scaling_policy !== undefined, rule: (r) => `agentic G2 requires static worker pools; remove scaling_policy "${r.scaling_policy}"` },
  { field: 'speculative_decoding', broken: (r) => r.speculative_decoding !== undefined, rule: () => 'agentic G2 does not support speculative decoding; remove speculative_decoding' },
  { field: 'host_offload.disk_offload', broken: (r) => r.host_offload?.disk_offload !== undefined, rule: () => 'agentic G2 does not support a G3 (disk) tier; remove host_offload.disk_offload' },
];

/** Features kvqual does not simulate, whatever the workload. */
const NOT_MODELLED: Requirement[] = [
  { field: 'scaling_policy', broken: (r) => r.scaling_policy !== undefined, rule: () => 'autoscaling is not modelled by kvqual: worker pools are static' },
  { field: 'speculative_decoding', broken: (r) => r.speculative_decoding !== undefined, rule: () => 'speculative decoding is not modelled by kvqual' },
  { field: 'host_offload.disk_offload', broken: (r) => r.host_offload?.disk_offload !== undefined, rule: () => 'a G3 (disk) tier is not modelled by kvqual' },
];

export function agenticG2Enabled(config: ReplayConfig): boolean {
  return config.workload.agentic !== undefined && config.cluster.workers.some((role) => role.host_offload !== undefined);
}

/** AGX-6 violations (agentic + G2), else the features kvqual does not model. Empty when the config may run. */
export function guardViolations(config: ReplayConfig): GuardViolation[] {
  const agentic = agenticG2Enabled(config);
  const requirements = agentic ? AGENTIC_G2_REQUIREMENTS : NOT_MODELLED;
  const violations: GuardViolation[] = [];
  config.cluster.workers.forEach((role, i) => {
    for (const requirement of requirements) {
      if (!requirement.broken(role)) continue;
      violations.push({ path: `cluster.workers[${i}].${requirement.field}`, message: `${agentic ? 'AGX-6: ' : ''}${requirement.rule(role)}` });
    }
  });
  return violations;
}
