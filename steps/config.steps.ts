// Steps about the replay config as its author writes it (TIME-1, G2-1, TOPO-2): the values it
// gives, what the loader makes of them (exact nanoseconds, defaults filled in) and what it refuses,
// naming where.
import { DataTable } from '@cucumber/cucumber';
import { Given, Then, When } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import { ConfigError, parseReplayConfig } from '../src/config/load';
import { requestSpecs } from '../src/config/build';
import { formatNs } from '../src/time';

type Raw = Record<string, unknown>;

/** A whole config, as a file holds it, with one request arriving at `arrival` (written as given). */
function configWithArrival(arrival: string): string {
  return [
    'cluster:',
    '  workers:',
    '    - role: aggregated',
    '      replicas: 1',
    '      engine: { block_size: 4, num_gpu_blocks: 16, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }',
    'workload:',
    '  requests:',
    `    - { id: r1, arrival_ms: ${arrival}, prompt: [{ tokens: 8 }], output_length: 1 }`,
    '',
  ].join('\n');
}

When(/^a replay config has a request arrive at (\S+) ms$/, { domain: 'configuration', level: 'either', says: 'Reads a replay config (as a file holds it) whose one request arrives at this time in ms, written as given (`0.1`, `1e-3`), and keeps what the loader made of it or why it refused it.', words: 'a replay config has a request arrive at <time as written in the config> ms' }, function (this: KvWorld, arrival: string) {
  const text = configWithArrival(arrival);
  try {
    const config = parseReplayConfig(text, 'scenario config');
    this.engine.setupError = null;
    this.arrival_ns = requestSpecs(config)[0].arrival_ns;
    this.recordComputation('config', { text, arrival_ns: this.arrival_ns });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    this.engine.setupError = error;
    this.recordComputation('config', { text, rejected: error.problems });
  }
});

Then('the request arrives at exactly {count} ns of virtual time', { domain: 'configuration', level: 'either', says: 'Checks the config was read and its request arrives at exactly this many nanoseconds.' }, function (this: KvWorld, nanoseconds: number) {
  expect(this.engine.setupError?.message ?? null, 'the config should have been read').to.equal(null);
  if (this.arrival_ns === null) throw new Error("this step checks the config a When such as 'When a replay config has a request arrive at 14.999 ms' read, and none was read");
  this.measure('arrival', this.arrival_ns!, 'ns', `arrival = ${this.arrival_ns} ns (${formatNs(this.arrival_ns!)})`);
  expect(this.arrival_ns, 'arrival in ns of virtual time').to.equal(nanoseconds);
});

Then('setup is refused at {string}: {string}', { domain: 'configuration', level: 'either', says: 'Checks setup was refused with exactly one problem, at this place in the config, with this message.' }, function (this: KvWorld, where: string, why: string) {
  const error = this.engine.setupError;
  expect(error, 'the config should have been refused').to.not.equal(null);
  const problems = error!.problems.map((problem) => `${problem.path}: ${problem.message}`);
  this.measure('problems', problems.length, 'problem(s)', `refused: ${problems.join('; ')}`);
  expect(problems, 'what the user reads, each problem at its place').to.deep.equal([`${where}: ${why}`]);
});

Given("the workers' host memory is given no number of blocks", { domain: 'configuration', level: 'engine', says: 'Leaves the workers\' host memory without its number of blocks, as a config author might.' }, function (this: KvWorld) {
  this.engine.roleChanges.push((role) => {
    if (!role.host_offload) throw new Error("the workers have no host memory to leave without a number of blocks: give them some first, e.g. 'Given each worker has private host memory of 16 blocks'");
    delete (role.host_offload as Raw).num_host_blocks;
  });
});

Given('the workers are given no KV bytes per token', { domain: 'configuration', level: 'engine', says: 'Leaves the workers without their KV bytes per token, as a config author might.' }, function (this: KvWorld) {
  this.engine.roleChanges.push((role) => delete (role.engine as Raw).kv_cache_bytes_per_token);
});

/** A host_offload setting in a reader's words, and how its value reads. */
const HOST_SETTINGS: Record<string, (offload: Raw) => string> = {
  blocks: (offload) => String(offload.num_host_blocks),
  'shared by': (offload) => (offload.scope === 'cluster_shared' ? 'every rank of the pool' : 'each rank its own'),
  'D2H bandwidth per rank': (offload) => `${offload.d2h_bandwidth_gbps} GB/s`,
  'H2D bandwidth per rank': (offload) => `${offload.h2d_bandwidth_gbps} GB/s`,
  'time to first byte': (offload) => `${offload.latency_to_first_byte_ms} ms`,
  'pool D2H bandwidth': (offload) => `${offload.shared_d2h_bandwidth_gbps} GB/s`,
  'pool H2D bandwidth': (offload) => `${offload.shared_h2d_bandwidth_gbps} GB/s`,
  'KV layout': (offload) => String(offload.kv_layout_id),
};

Then('its host memory is set up as:', { domain: 'configuration', level: 'engine', says: 'Checks the first role\'s host memory settings, as set up from the scenario, are the values in the table (blocks, shared by, bandwidths, time to first byte, KV layout).' }, function (this: KvWorld, table: DataTable) {
  expect(this.engine.setupError?.message ?? null, 'setup error').to.equal(null);
  const offload = this.engine.config(this.seed).cluster.workers[0].host_offload;
  expect(offload, 'the first role has host memory').to.not.equal(undefined);
  const rows = table.rowsHash();
  delete rows.setting;
  const actual: Record<string, string> = {};
  for (const setting of Object.keys(rows)) {
    const read = HOST_SETTINGS[setting];
    if (!read) throw new Error(`unknown host memory setting "${setting}"; use: ${Object.keys(HOST_SETTINGS).join(', ')}`);
    actual[setting] = read(offload as unknown as Raw);
  }
  this.measure('host memory settings', Object.keys(actual).length, 'setting(s)', `host memory: ${Object.entries(actual).map(([setting, value]) => `${setting} ${value}`).join(', ')}`);
  expect(actual, 'host memory as set up').to.deep.equal(rows);
});
