// Steps that describe the cluster and router settings: workers, ranks, block size, lag,
// cost weights and policy, and the named prefixes prompts are made of.
import { Given } from './support/catalogue';
import type { KvWorld } from './support/world';
import type { Nanos } from '../src/time';

Given('a cluster of {count} aggregated worker(s) with {tokens} blocks', { domain: 'cluster', level: 'router', says: 'Begins a router-level scenario: this many workers (numbered from 0), each cutting prompts into blocks of this many tokens.' }, function (this: KvWorld, workers: number, block_size: number) {
  this.configure((setup) => {
    setup.workers = workers;
    setup.block_size = block_size;
  });
});

Given('each worker has {count} attention data-parallel ranks', { domain: 'cluster', level: 'router', says: 'Gives every worker this many data-parallel ranks (numbered from 0), each a placement candidate of its own.' }, function (this: KvWorld, dp_size: number) {
  this.configure((setup) => {
    setup.dp_size = dp_size;
  });
});

Given('KV events reach the router {duration} after they are emitted', { domain: 'events', level: 'either', says: 'Sets the event lag: a batch of KV events becomes visible to the router exactly this long after a worker emits it.' }, function (this: KvWorld, lag_ns: Nanos) {
  this.configure((setup) => {
    setup.lag_ns = lag_ns;
  });
});

Given('KV events reach the router as soon as they are emitted', { domain: 'events', level: 'either', says: 'Sets the event lag to zero.' }, function (this: KvWorld) {
  this.configure((setup) => {
    setup.lag_ns = 0;
  });
});

Given('the router weighs a host-memory block at {weight} of a GPU block', { domain: 'cluster', level: 'either', says: 'Sets how much a cached block in host memory (G2) counts against one in GPU memory (G1) when the router scores a worker.' }, function (this: KvWorld, weight: number) {
  this.configure((setup) => {
    setup.router.host_cache_hit_weight = weight;
  });
});

Given('the router uses the round-robin policy', { domain: 'cluster', level: 'either', says: 'Makes the router place requests in turn over its candidates, ignoring caches and load.' }, function (this: KvWorld) {
  this.configure((setup) => {
    setup.router.policy = 'round_robin';
  });
});

Given('the router samples placements at temperature {weight}', { domain: 'cluster', level: 'either', says: 'Makes the router draw a candidate (seeded) with weights from its costs at this temperature, instead of taking the cheapest.' }, function (this: KvWorld, temperature: number) {
  this.configure((setup) => {
    setup.router.router_temperature = temperature;
  });
});

Given('the prefix {string} is {tokens} long', { domain: 'requests', level: 'either', says: 'Names a run of this many tokens that prompts can start with; the same name always gives the same tokens.' }, function (this: KvWorld, name: string, length_tokens: number) {
  this.definePrefix(name, length_tokens);
});
