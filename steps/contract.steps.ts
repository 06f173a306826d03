// Steps about the shared-pool contract (G2-10): groups of workers that join one pool, setup that
// rejects participants who disagree, and the documentation page that explains the contract.
import { Given, Then, When } from '@cucumber/cucumber';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KvWorld } from './support/world';
import { ConfigError } from '../src/config/load';
import { clusterSpec } from '../src/config/build';
import { Cluster } from '../src/sim/cluster';

type Raw = Record<string, unknown>;

const CONTRACT_FIELDS: Record<string, (role: Raw, value: string) => void> = {
  kv_layout_id: (role, value) => ((role.host_offload as Raw).kv_layout_id = value),
  'block size': (role, value) => ((role.engine as Raw).block_size = Number(value)),
  block_size: (role, value) => ((role.engine as Raw).block_size = Number(value)),
  num_host_blocks: (role, value) => ((role.host_offload as Raw).num_host_blocks = Number(value)),
  shared_h2d_bandwidth_gbps: (role, value) => ((role.host_offload as Raw).shared_h2d_bandwidth_gbps = Number(value)),
  shared_d2h_bandwidth_gbps: (role, value) => ((role.host_offload as Raw).shared_d2h_bandwidth_gbps = Number(value)),
  tensor_parallel_size: (role, value) => (role.tensor_parallel_size = Number(value)),
  kv_cache_bytes_per_token: (role, value) => ((role.engine as Raw).kv_cache_bytes_per_token = Number(value)),
};

Given('a second group of {int} aggregated workers joins the same pool', function (this: KvWorld, replicas: number) {
  this.engine.extraRoles.push({ ...this.engine.role(), replicas });
});

Given(
  'a second group of {int} aggregated workers joins the pool but with {word} set to {word}',
  function (this: KvWorld, replicas: number, field: string, value: string) {
    const change = CONTRACT_FIELDS[field.replaceAll('_', ' ')] ?? CONTRACT_FIELDS[field];
    if (!change) throw new Error(`unknown contract field "${field}"; known: ${Object.keys(CONTRACT_FIELDS).join(', ')}`);
    const role = { ...this.engine.role(), replicas };
    change(role, value);
    this.engine.extraRoles.push(role);
  },
);

When('the cluster is set up', function (this: KvWorld) {
  try {
    this.engine.cluster = new Cluster(clusterSpec(this.engine.config(this.seed)));
    this.engine.setupError = null;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    this.engine.setupError = error;
  }
});

Then('setup fails with an error naming {string}', function (this: KvWorld, named: string) {
  const error = this.engine.setupError;
  expect(error, 'setup should have failed').to.not.equal(null);
  expect(error!.message, 'the error a user reads').to.contain(named);
  expect(error!.message, 'the error says what kind of mismatch').to.contain('shared G2 pool participants disagree');
  this.measure(`rejected: ${error!.problems[0].message}`, 1, '');
});

Then('one shared pool serves all {int} ranks', function (this: KvWorld, ranks: number) {
  expect(this.engine.setupError?.message ?? null, 'setup error').to.equal(null);
  const cluster = this.engine.cluster!;
  const domains = new Set(cluster.ranks.map((rank) => rank.host?.pool.domain_id));
  expect([...domains], 'G2 domains of the ranks').to.deep.equal(['shared-0']);
  expect(cluster.ranks.length, 'ranks').to.equal(ranks);
});

Then('the shared-pool contract page explains:', function (this: KvWorld, table: { raw(): string[][] }) {
  const page = readFileSync(join(process.cwd(), 'docs', 'shared-g2-pool.md'), 'utf8');
  const headings = [...page.matchAll(/^##+ (.+)$/gm)].map((match) => match[1].trim().toLowerCase());
  for (const [topic] of table.raw()) {
    expect(headings, `docs/shared-g2-pool.md needs a section on "${topic}"`).to.include(topic.toLowerCase());
  }
});
