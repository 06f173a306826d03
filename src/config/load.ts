// Reading a replay configuration: YAML text → schema validation → cross-field checks. Every
// problem is reported with the path of the field (e.g. cluster.workers[0].host_offload.scope).
import { type Document, parseDocument, visit } from 'yaml';
import type { z } from 'zod';
import { ReplayConfig, ReplayConfigSchema, type RequestConfig } from './schema';
import { checkRoles, checkSharedContract, ClusterSetupError } from '../sim/cluster';
import { clusterSpec, PASS_TIME_UNUSED, roleSpecs } from './build';
import { guardViolations } from '../agentic/guard';
import { budgetProblem, type BudgetItem } from './budget';
import { LIMITS, limitText } from '../limits';
import { didYouMean } from '../suggest';
import { collectionKeyAt, mergeKeyAt } from '../inputFiles';
import { faultPlanted, plantHostBandwidthFault } from '../fuzz/simulatorFaults';

export interface ConfigProblem {
  path: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: ConfigProblem[],
  ) {
    if (faultPlanted('config')) problems = problems.map(() => ({ path: '(planted fault)', message: 'planted fault' })); // planted fault (src/fuzz/simulatorFaults.ts)
    super(`${source}: invalid configuration\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : `${text ? '.' : ''}${String(part)}`;
  return text || '(top level)';
}

/** The schema a field path leads to (through optional, default, array and record wrappers). */
type Walkable = { _zod: { def: Record<string, unknown> & { type: string } } };

function unwrap(schema: Walkable): Walkable {
  let current = schema;
  for (;;) {
    const def: Walkable['_zod']['def'] = current._zod.def;
    if ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable' || def.type === 'prefault') && def.innerType) current = def.innerType as Walkable;
    else if (def.type === 'pipe' && def.in) current = def.in as Walkable;
    else return current;
  }
}

/** The field names an object at `path` may have, for "did you mean"; empty when unknown. */
function knownKeys(path: readonly PropertyKey[]): string[] {
  let schema: Walkable | undefined = ReplayConfigSchema as unknown as Walkable;
  for (const part of path) {
    if (!schema) return [];
    const def: Walkable['_zod']['def'] = unwrap(schema)._zod.def;
    if (def.type === 'object') schema = (def.shape as Record<string, Walkable>)[String(part)];
    else if (def.type === 'array') schema = def.element as Walkable;
    else if (def.type === 'record') schema = def.valueType as Walkable;
    else return [];
  }
  if (!schema) return [];
  const def = unwrap(schema)._zod.def;
  if (def.type === 'object') return Object.keys(def.shape as object);
  if (def.type === 'union') {
    return (def.options as Walkable[]).flatMap((option) => {
      const inner = unwrap(option)._zod.def;
      return inner.type === 'object' ? Object.keys(inner.shape as object) : [];
    });
  }
  return [];
}

function unknownFields(path: readonly PropertyKey[], keys: readonly string[]): ConfigProblem[] {
  const known = knownKeys(path);
  return keys.map((key) => ({ path: formatPath([...path, key]), message: `unknown field${didYouMean(key, known)}` }));
}

/** One problem per field (the first zod found): "too big" and "not a whole number" of one value say the same thing twice. */
function zodProblems(error: z.ZodError): ConfigProblem[] {
  const seen = new Set<string>();
  return issueProblems(error).filter((problem) => !seen.has(problem.path) && seen.add(problem.path));
}

function issueProblems(error: z.ZodError): ConfigProblem[] {
  return error.issues.flatMap((issue): ConfigProblem[] => {
    if (issue.code === 'unrecognized_keys') return unknownFields(issue.path, issue.keys);
    if (issue.code === 'invalid_union') {
      // A prompt part with a misspelt key fails every branch on that key: say so, not "invalid input".
      const branches = issue.errors.map((branch) => branch.filter((inner) => inner.code === 'unrecognized_keys' && inner.path.length === 0));
      if (branches.length > 0 && branches.every((branch) => branch.length > 0)) {
        const keys = [...new Set(branches.flatMap((branch) => (branch[0] as { keys: string[] }).keys))];
        return unknownFields(issue.path, keys);
      }
    }
    if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) return [{ path: formatPath(issue.path), message: 'required, but missing' }];
    return [{ path: formatPath(issue.path), message: issue.message }];
  });
}

/** Alias expansions a config may use (the YAML library's default): anchors for shared settings, never an exponential blow-up. */
const YAML_MAX_ALIAS_COUNT = 100;

/** The YAML 1.2 core schema's tags: one of them left unresolved means its value is not of its type (`!!float 5`). */
const CORE_TAGS = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq']);

/**
 * The YAML library's message as a config's author reads it: its advice to programmers ("please
 * use YAML.parseAllDocuments()") and the engine's stack overflow on deep nesting said in words.
 */
export function yamlProblem(message: string): string {
  if (/^Source contains multiple documents/.test(message)) return "the file holds more than one YAML document (a '---' line starts another); give one";
  if (/Maximum call stack size exceeded/.test(message)) return 'the YAML is nested too deeply to read';
  const tag = /^Unresolved tag: (?:tag:yaml\.org,2002:)?(.*)$/.exec(message);
  if (tag && CORE_TAGS.has(tag[1])) return `the value does not read as !!${tag[1]} (e.g. !!float needs a decimal point: 5.0); write it without the tag`;
  if (tag) return `the tag ${tag[1].startsWith('!') ? tag[1] : `!!${tag[1]}`} is not one a config may use; write the value without it`;
  return message;
}

/**
 * What the YAML reader found wrong with a document, each where it is ("line 4, column 17"; null
 * when it does not say) and what, in words (see yamlProblem). A tag the reader does not know
 * (!!float, !foo) is one: it would leave its value a string that reads as the wrong type.
 */
export function yamlDocumentProblems(document: Document): { where: string | null; message: string }[] {
  return [...document.errors, ...document.warnings.filter((w) => w.code === 'TAG_RESOLVE_FAILED')].map((e) => ({
    where: e.linePos ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : null,
    message: yamlProblem(e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')),
  }));
}

/** "line L, column C" of the document's first alias `*name`, or "(top level)" when it has none. */
function aliasPlace(document: Document, text: string, name: string): string {
  let offset: number | null = null;
  visit(document, {
    Alias(_key, node) {
      if (node.source !== name || node.range === undefined || node.range === null) return undefined;
      offset = node.range[0];
      return visit.BREAK;
    },
  });
  if (offset === null) return '(top level)';
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/** Parses and validates a config given as YAML (or JSON) text. */
export function parseReplayConfig(text: string, source = 'config'): ReplayConfig {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const problems = yamlDocumentProblems(document);
  if (problems.length > 0) throw new ConfigError(source, problems.map(({ where, message }) => ({ path: where ?? 'line ?', message })));
  const mergeKey = mergeKeyAt(document, text);
  if (mergeKey) throw new ConfigError(source, [{ path: `line ${mergeKey.line}, column ${mergeKey.column}`, message: 'a YAML merge key (<<) is not read (kvqual reads YAML 1.2); write the fields out, or give the whole mapping an anchor and an alias (*name)' }]);
  const collectionKey = collectionKeyAt(document, text);
  if (collectionKey) throw new ConfigError(source, [{ path: `line ${collectionKey.line}, column ${collectionKey.column}`, message: 'a key must be a name, not a list or a map' }]);
  let raw: unknown;
  try {
    raw = document.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
  } catch (error) {
    // The YAML library refuses a document whose aliases expand too much ("billion laughs"), and an alias with no anchor before it.
    const message = (error as Error).message;
    const unresolved = /^Unresolved alias[^:]*: (.+)$/.exec(message);
    if (unresolved) throw new ConfigError(source, [{ path: aliasPlace(document, text, unresolved[1]), message: `the alias *${unresolved[1]} names no anchor &${unresolved[1]} before it` }]);
    const problem = /alias/i.test(message) ? `the YAML aliases (*name) expand too much (${message})` : `cannot read the YAML: ${message}`;
    throw new ConfigError(source, [{ path: '(top level)', message: problem }]);
  }
  if (raw === null || raw === undefined) throw new ConfigError(source, [{ path: '(top level)', message: 'the config is empty; it needs cluster and workload' }]);
  return validateReplayConfig(raw, source);
}

/** Validates an already-parsed object. */
export function validateReplayConfig(raw: unknown, source = 'config'): ReplayConfig {
  const proto = protoKeyPath(raw, []);
  if (proto !== null) throw new ConfigError(source, [{ path: formatPath(proto), message: 'no field or name may be __proto__ (it would be read as the object\'s prototype, not as a value)' }]);
  const parsed = ReplayConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(source, zodProblems(parsed.error));
  const problems = crossFieldProblems(parsed.data);
  if (problems.length > 0) throw new ConfigError(source, problems);
  plantHostBandwidthFault(parsed.data.cluster.workers); // planted fault (src/fuzz/simulatorFaults.ts)
  return parsed.data;
}

/**
 * The path of the first own key "__proto__" in a parsed config, or null. The YAML reader keeps it
 * as a key; the schema's records drop it without a word, and a lookup by that name then reads the
 * prototype (a prefix named __proto__ once hung a replay).
 */
function protoKeyPath(value: unknown, at: PropertyKey[]): PropertyKey[] | null {
  if (typeof value !== 'object' || value === null) return null;
  // `at` is the path so far, extended and restored in place: a copy only for the path found.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (typeof value[i] !== 'object' || value[i] === null) continue;
      at.push(i);
      const found = protoKeyPath(value[i], at);
      at.pop();
      if (found !== null) return found;
    }
    return null;
  }
  if (Object.hasOwn(value, '__proto__')) return [...at, '__proto__'];
  for (const key of Object.keys(value)) {
    at.push(key);
    const found = protoKeyPath((value as Record<string, unknown>)[key], at);
    at.pop();
    if (found !== null) return found;
  }
  return null;
}

function crossFieldProblems(config: ReplayConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  config.cluster.workers.forEach((role, i) => {
    if (role.host_offload && role.engine.kv_cache_bytes_per_token === undefined) {
      problems.push({ path: `cluster.workers[${i}].engine.kv_cache_bytes_per_token`, message: 'required when host_offload is set (block bytes = block_size × kv_cache_bytes_per_token)' });
    }
  });
  const ranks = config.cluster.workers.reduce((total, role) => total + role.replicas * role.dp_size, 0);
  if (ranks > LIMITS.ranks) {
    problems.push({ path: 'cluster.workers', message: `${ranks} engine ranks (replicas × dp_size over the roles) is above the limit of ${limitText(LIMITS.ranks)}` });
  }
  if (!config.cluster.workers.some((role) => role.role !== 'decode')) {
    problems.push({ path: 'cluster.workers', message: 'needs an aggregated or prefill role for the router to place requests on' });
  }
  problems.push(...workloadProblems(config));
  problems.push(...guardViolations(config));
  // Without a decode role the bandwidth is not the problem: checkRoles below names the missing role.
  const hasRole = (name: string) => config.cluster.workers.some((role) => role.role === name);
  if (hasRole('prefill') && hasRole('decode') && config.cluster.kv_transfer_bandwidth_gbps === undefined) {
    problems.push({ path: 'cluster.kv_transfer_bandwidth_gbps', message: 'required when the cluster has prefill and decode workers (PD-1)' });
  }
  if (problems.length === 0) {
    try {
      checkSharedContract(roleSpecs(config, PASS_TIME_UNUSED));
      checkRoles(clusterSpec(config, PASS_TIME_UNUSED));
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
  /** Context tokens (prompt + output) a later request extends, by id. */
  const contextTokens = new Map<string, number>();
  const budgeted: BudgetItem[] = [];
  /** Arrival (ms, as written) of each request so far, by id. */
  const arrivals = new Map<string, number>();
  requests.forEach((request, i) => {
    const at = (field: string) => `workload.requests[${i}]${field ? `.${field}` : ''}`;
    if (seen.has(request.id)) problems.push({ path: at('id'), message: `duplicate request id "${request.id}"` });
    const promptTokens = promptLength(config, request, contextTokens);
    contextTokens.set(request.id, promptTokens + request.output_length);
    budgeted.push({ where: at(''), prompt_tokens: promptTokens, output_tokens: request.output_length });
    if (promptTokens > LIMITS.prompt_tokens) {
      problems.push({ path: at(request.extends === undefined ? 'prompt' : 'extends'), message: `the prompt is ${promptTokens} tokens, above the limit of ${limitText(LIMITS.prompt_tokens)} tokens` });
    }
    if (request.extends !== undefined && !seen.has(request.extends)) {
      problems.push({ path: at('extends'), message: `"${request.extends}" is not an earlier request` });
    } else if (request.extends !== undefined && arrivals.has(request.extends) && arrivals.get(request.extends)! > request.arrival_ms) {
      problems.push({ path: at('extends'), message: `"${request.extends}" arrives at ${arrivals.get(request.extends)} ms, after this request (${request.arrival_ms} ms): a prompt cannot continue a turn that has not been sent` });
    }
    arrivals.set(request.id, request.arrival_ms);
    seen.add(request.id);
    const hasParts = request.prompt !== undefined;
    const hasTrace = request.hash_ids !== undefined;
    if (!hasParts && !hasTrace && request.extends === undefined) problems.push({ path: at(''), message: 'give either prompt or hash_ids' });
    if (hasParts && hasTrace) problems.push({ path: at(''), message: 'give either prompt or hash_ids, not both' });
    // A hash_ids prompt names every block of its own: it cannot also continue another request's prompt.
    if (hasTrace && request.extends !== undefined) problems.push({ path: at('extends'), message: 'a prompt given by hash_ids cannot also extend another request; give prompt parts to continue it, or hash_ids alone' });
    else if (promptTokens === 0 && !hasTrace) problems.push({ path: at('prompt'), message: 'the prompt has no tokens; a request needs at least one' });
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
      if ('prefix' in part && !Object.hasOwn(config.workload.prefixes, part.prefix)) {
        problems.push({ path: at(`prompt[${j}].prefix`), message: `no prefix named "${part.prefix}" in workload.prefixes` });
      }
    });
  });
  const budget = budgetProblem(budgeted, config.cluster.workers[0]?.engine.block_size ?? 1);
  if (budget !== null) problems.push({ path: budget.where ?? 'workload.requests', message: budget.message });
  return problems;
}

/** Prompt tokens of a request: what it extends (prompt and output), its prefixes and own tokens, or input_length. */
function promptLength(config: ReplayConfig, request: RequestConfig, contextTokens: ReadonlyMap<string, number>): number {
  if (request.hash_ids !== undefined) return request.input_length ?? 0;
  let total = request.extends === undefined ? 0 : (contextTokens.get(request.extends) ?? 0);
  for (const part of request.prompt ?? []) total += 'prefix' in part ? (Object.hasOwn(config.workload.prefixes, part.prefix) ? config.workload.prefixes[part.prefix] : 0) : part.tokens;
  return total;
}
