// Configs for tests that run small replays, as YAML text: one aggregated role (4-token blocks, 1 ms
// prefill and 0.5 ms decode passes, optional host memory) or one prefill and some decode workers,
// with requests as YAML flow maps; and the two-request run whose figures a test computes by hand.
export interface EngineOverrides {
  num_gpu_blocks?: number;
  max_num_seqs?: number;
  max_num_batched_tokens?: number;
}

/** One aggregated role's engine (4-token blocks, 1 ms prefill, 0.5 ms decode), as YAML under `- role: …`. */
export const aggregatedEngine = (overrides: EngineOverrides = {}) => `
      engine:
        block_size: 4
        num_gpu_blocks: ${overrides.num_gpu_blocks ?? 6}
        max_num_seqs: ${overrides.max_num_seqs ?? 4}
        max_num_batched_tokens: ${overrides.max_num_batched_tokens ?? 64}
        kv_cache_bytes_per_token: 250000
        timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } }`;

/** The KV router and the requests (YAML flow maps), the end of every config here. */
function routerAndRequests(requests: string[]): string[] {
  return ['router: { policy: kv }', 'workload:', '  requests:', ...requests.map((request) => `    - ${request}`), ''];
}

/** A config of one aggregated role: `replicas` workers, optional host memory, requests as YAML flow maps. */
export function aggregated(options: { replicas?: number; engine?: EngineOverrides; host?: string; requests: string[] }): string {
  return [
    'seed: 1',
    'cluster:',
    '  workers:',
    '    - role: aggregated',
    `      replicas: ${options.replicas ?? 1}${aggregatedEngine(options.engine)}`,
    ...(options.host ? [`      host_offload: { ${options.host} }`] : []),
    ...routerAndRequests(options.requests),
  ].join('\n');
}

/** A prefill/decode engine (4-token blocks, 1 ms passes, 250 bytes a token) with this many GPU blocks, as a YAML flow map. */
const pdEngine = (blocks: number) => `{ block_size: 4, num_gpu_blocks: ${blocks}, max_num_seqs: 4, max_num_batched_tokens: 64, kv_cache_bytes_per_token: 250, timing: { fixed: { prefill_ms: 1, decode_ms: 1 } } }`;

/** One prefill worker and `decodeReplicas` decode workers, the KV handoff's bandwidth and latency, requests as YAML flow maps. */
export function disaggregated(options: { bandwidth_gbps: number; latency_ms: number; prefillBlocks: number; decodeReplicas: number; decodeBlocks: number; requests: string[] }): string {
  return [
    'seed: 1',
    'cluster:',
    `  kv_transfer_bandwidth_gbps: ${options.bandwidth_gbps}`,
    `  kv_transfer_latency_ms: ${options.latency_ms}`,
    '  workers:',
    '    - role: prefill',
    '      replicas: 1',
    `      engine: ${pdEngine(options.prefillBlocks)}`,
    '    - role: decode',
    `      replicas: ${options.decodeReplicas}`,
    `      engine: ${pdEngine(options.decodeBlocks)}`,
    ...routerAndRequests(options.requests),
  ].join('\n');
}

/** One prefill worker with room to spare and one decode worker of 6 blocks, over a 1 GB/s link with 1 ms latency: a decode worker that must wait for room. */
export function tightDecodeWorker(requests: string[]): string {
  return disaggregated({ bandwidth_gbps: 1, latency_ms: 1, prefillBlocks: 32, decodeReplicas: 1, decodeBlocks: 6, requests });
}

/**
 * Two requests on one rank with fixed timing (prefill 2 ms, decode 1 ms), whose figures
 * test/unit/request-metrics.test.ts computes by hand; `slo` is appended (an `slo:` block or nothing).
 */
export const handComputedRun = (slo = '') => `
cluster:
  workers:
    - role: aggregated
      engine: { block_size: 4, num_gpu_blocks: 16, max_num_seqs: 2, max_num_batched_tokens: 64, timing: { fixed: { prefill_ms: 2, decode_ms: 1 } } }
workload:
  requests:
    - { id: a, arrival_ms: 0, prompt: [{ tokens: 4 }], output_length: 5 }
    - { id: b, arrival_ms: 2.5, prompt: [{ tokens: 4 }], output_length: 2 }
${slo}`;
