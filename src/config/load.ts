// Reading a replay configuration: YAML text → schema validation → cross-field checks. Every
// problem is reported with the path of the field (e.g. cluster.workers[0].host_offload.scope).
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { ReplayConfig, ReplayConfigSchema } from './schema';
import { checkDisaggregation, checkSharedContract, ClusterSetupError } from '../sim/cluster';
import { clusterSpec, roleSpecs } from './build';
import { guardViolations } from '../agentic/guard';

export interface ConfigProblem {
  path: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: ConfigProblem[],
  ) {
    super(`${source}: invalid configuration\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : `${text ? '.' : ''}${String(part)}`;
  return text || '(top level)';
}

function zodProblems(error: z.ZodError): ConfigProblem[] {
  return error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return { path: formatPath([...issue.path, issue.keys[0]]), message: `unknown field${issue.keys.length > 1 ? `s ${issue.keys.join(', ')}` : ''}` };
    }
    return { path: formatPath(issue.path), message: issue.message };
  });
}

/** Parses and validates a config given as YAML (or JSON) text. */
export function parseReplayConfig(text: string, source = 'config'): ReplayConfig {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new ConfigError(source, document.errors.map((e) => ({ path: `line ${e.linePos?.[0].line ?? '?'}`, message: e.message.split('\n')[0] })));
  }
  return validateReplayConfig(document.toJS(), source);
}

/** Validates an already-parsed object. */
export function validateReplayConfig(raw: unknown, source = 'config'): ReplayConfig {
  const parsed = ReplayConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(source, zodProblems(parsed.error));
  const problems = crossFieldProblems(parsed.data);
  if (problems.length > 0) throw new ConfigError(source, problems);
  return parsed.data;
}

function crossFieldProblems(config: ReplayConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  config.cluster.workers.forEach((role, i) => {
    if (role.host_offload && role.engine.kv_cache_bytes_per_token === undefined) {
      problems.push({ path: `cluster.workers[${i}].engine.kv_cache_bytes_per_token`, message: 'required when host_offload is set (block bytes = block_size × kv_cache_bytes_per_token)' });
    }
  });
  if (!config.cluster.workers.some((role) => role.role !== 'decode')) {
    problems.push({ path: 'cluster.workers', message: 'needs an aggregated or prefill role for the router to place requests on' });
  }
  problems.push(...workloadProblems(config));
  problems.push(...guardViolations(config));
  if (config.cluster.workers.some((role) => role.role === 'prefill') && config.cluster.kv_transfer_bandwidth_gbps === undefined) {
    problems.push({ path: 'cluster.kv_transfer_bandwidth_gbps', message: 'required when the cluster has prefill and decode workers (PD-1)' });
  }
  if (problems.length === 0) {
    try {
      checkSharedContract(roleSpecs(config));
    checkDisaggregation(clusterSpec(config));
    } catch (error) {
      if (!(error instanceof ClusterSetupError)) throw error;
      problems.push({ path: error.path, message: error.message.slice(error.path.length + 2) });
    }
  }
  return problems;
}

/** Routed (aggregated or prefill) workers come first in worker-id order only if listed first; count those ids. */
function routedWorkers(config: ReplayConfig): number {
  let id = 0;
  let routed = 0;
  for (const role of config.cluster.workers) {
    for (let i = 0; i < role.replicas; i++, id++) if (role.role !== 'decode') routed = id + 1;
  }
  return routed;
}

function workloadProblems(config: ReplayConfig): ConfigProblem[] {
  const { requests, agentic, mooncake } = config.workload;
  const given = [requests && 'requests', agentic && 'agentic', mooncake && 'mooncake'].filter(Boolean);
  if (given.length === 0) return [{ path: 'workload', message: 'give one of requests, agentic or mooncake' }];
  if (given.length > 1) return [{ path: 'workload', message: `give one of requests, agentic or mooncake, not ${given.join(' and ')}` }];
  return requests === undefined ? [] : requestProblems(config, requests);
}

function requestProblems(config: ReplayConfig, requests: NonNullable<ReplayConfig['workload']['requests']>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  requests.forEach((request, i) => {
    const at = (field: string) => `workload.requests[${i}]${field ? `.${field}` : ''}`;
    if (seen.has(request.id)) problems.push({ path: at('id'), message: `duplicate request id "${request.id}"` });
    if (request.extends !== undefined && !seen.has(request.extends)) {
      problems.push({ path: at('extends'), message: `"${request.extends}" is not an earlier request` });
    }
    seen.add(request.id);
    const hasParts = request.prompt !== undefined;
    const hasTrace = request.hash_ids !== undefined;
    if (hasParts === hasTrace && request.extends === undefined) problems.push({ path: at(''), message: 'give either prompt or hash_ids' });
    if (hasParts && hasTrace) problems.push({ path: at(''), message: 'give either prompt or hash_ids, not both' });
    if (hasTrace && request.input_length === undefined) problems.push({ path: at('input_length'), message: 'required with hash_ids' });
    if (hasTrace && request.input_length !== undefined && request.hash_ids!.length !== Math.ceil(request.input_length / config.workload.trace_block_size)) {
      problems.push({
        path: at('hash_ids'),
        message: `${request.hash_ids!.length} ids for ${request.input_length} tokens; expected ${Math.ceil(request.input_length / config.workload.trace_block_size)} at ${config.workload.trace_block_size} tokens per id`,
      });
    }
    if (request.target_worker !== undefined && request.target_worker >= routedWorkers(config)) {
      problems.push({ path: at('target_worker'), message: `worker ${request.target_worker} does not exist or takes no routed requests (workers 0 to ${routedWorkers(config) - 1} do)` });
    }
    request.prompt?.forEach((part, j) => {
      if ('prefix' in part && !(part.prefix in config.workload.prefixes)) {
        problems.push({ path: at(`prompt[${j}].prefix`), message: `no prefix named "${part.prefix}" in workload.prefixes` });
      }
    });
  });
  return problems;
}
