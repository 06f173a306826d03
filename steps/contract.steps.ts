// Steps about the shared-pool contract (G2-10): groups of workers that join one pool, setup that
// rejects participants who disagree.
import { Given, Then, When } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import { ConfigError } from '../src/config/load';
import { clusterSpec } from '../src/config/build';
import { Cluster } from '../src/sim/cluster';

type Raw = Record<string, unknown>;

/** The terms of the shared-pool contract (G2-10) in a reader's words, and the config field each sets. */
const CONTRACT_FIELDS: Record<string, (role: Raw, value: string) => void> = {
  'KV layout': (role, value) => ((role.host_offload as Raw).kv_layout_id = value),
  'tensor-parallel size': (role, value) => (role.tensor_parallel_size = Number(value)),
  'block size': (role, value) => ((role.engine as Raw).block_size = Number(value)),
  'KV bytes per token': (role, value) => ((role.engine as Raw).kv_cache_bytes_per_token = Number(value)),
  'host memory blocks': (role, value) => ((role.host_offload as Raw).num_host_blocks = Number(value)),
  'pool D2H bandwidth': (role, value) => ((role.host_offload as Raw).shared_d2h_bandwidth_gbps = Number(value)),
  'pool H2D bandwidth': (role, value) => ((role.host_offload as Raw).shared_h2d_bandwidth_gbps = Number(value)),
};

/** The first group's role, which a second group copies: it must have a shared pool to join. */
function pooledRole(world: KvWorld): Raw {
  const role = world.engine.role();
  if ((role.host_offload as Raw | undefined)?.scope !== 'cluster_shared') throw new Error("a second group joins a shared host memory pool, and the workers have none: give them one first with 'Given the workers share one host memory pool of 64 blocks'");
  return role;
}

Given('a second group of {int} aggregated workers joins the same pool', { domain: 'cluster', level: 'engine', says: 'Adds a second group of this many workers, set up like the first, to the same shared host memory pool.' }, function (this: KvWorld, replicas: number) {
  this.engine.extraRoles.push({ ...pooledRole(this), replicas });
});

Given(
  'a second group of {int} aggregated workers joins the pool but with its {string} set to {word}', { domain: 'cluster', level: 'engine', says: 'Adds a second group to the shared pool with one term of the pool\'s contract set differently (KV layout, tensor-parallel size, block size, KV bytes per token, host memory blocks, a pool bandwidth).' },
  function (this: KvWorld, replicas: number, field: string, value: string) {
    const change = CONTRACT_FIELDS[field];
    if (!change) throw new Error(`unknown contract field "${field}"; known: ${Object.keys(CONTRACT_FIELDS).join(', ')}`);
    const role = { ...pooledRole(this), replicas };
    change(role, value);
    this.engine.extraRoles.push(role);
  },
);

When('the cluster is set up', { domain: 'configuration', level: 'engine', says: 'Sets the cluster up without running it, keeping the setup error if there is one.' }, function (this: KvWorld) {
  try {
    this.engine.cluster = new Cluster(clusterSpec(this.engine.config(this.seed)));
    this.engine.setupError = null;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    this.engine.setupError = error;
  }
});

Then('setup fails with an error naming {string}', { domain: 'configuration', level: 'engine', says: 'Checks setup failed because shared pool participants disagree, with an error naming this text.' }, function (this: KvWorld, named: string) {
  const error = this.engine.setupError;
  expect(error, 'setup should have failed').to.not.equal(null);
  expect(error!.message, 'the error a user reads').to.contain(named);
  expect(error!.message, 'the error says what kind of mismatch').to.contain('shared G2 pool participants disagree');
  this.measure('problems', error!.problems.length, 'problem(s)', `rejected: ${error!.problems[0].message}`);
});

Then('one shared pool serves all {int} ranks', { domain: 'configuration', level: 'engine', says: 'Checks setup succeeded and exactly this many ranks all use one shared pool.' }, function (this: KvWorld, ranks: number) {
  expect(this.engine.setupError?.message ?? null, 'setup error').to.equal(null);
  const cluster = this.engine.cluster;
  if (cluster === null) throw new Error("this step checks the cluster as set up, and it was not set up: 'When the cluster is set up' does that");
  const domains = new Set(cluster.ranks.map((rank) => rank.host?.pool.domain_id));
  expect([...domains], 'G2 domains of the ranks').to.deep.equal(['shared-0']);
  expect(cluster.ranks.length, 'ranks').to.equal(ranks);
});
