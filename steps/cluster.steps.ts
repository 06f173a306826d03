// Steps that describe the cluster and router settings: workers, ranks, block size, lag,
// cost weights and policy, and the named prefixes prompts are made of.
import { Given } from '@cucumber/cucumber';
import type { KvWorld } from './support/world';
import type { Nanos } from '../src/time';

Given('a cluster of {count} aggregated worker(s) with {tokens} blocks', function (this: KvWorld, workers: number, block_size: number) {
  this.configure((setup) => {
    setup.workers = workers;
    setup.block_size = block_size;
  });
});

Given('each worker has {count} attention data-parallel ranks', function (this: KvWorld, dp_size: number) {
  this.configure((setup) => {
    setup.dp_size = dp_size;
  });
});

Given('KV events reach the router {duration} after they are emitted', function (this: KvWorld, lag_ns: Nanos) {
  this.configure((setup) => {
    setup.lag_ns = lag_ns;
  });
});

Given('KV events reach the router as soon as they are emitted', function (this: KvWorld) {
  this.configure((setup) => {
    setup.lag_ns = 0;
  });
});

Given('the router weighs a host-memory block at {weight} of a GPU block', function (this: KvWorld, weight: number) {
  this.configure((setup) => {
    setup.router.host_cache_hit_weight = weight;
  });
});

Given('the router uses the round-robin policy', function (this: KvWorld) {
  this.configure((setup) => {
    setup.router.policy = 'round_robin';
  });
});

Given('the router samples placements at temperature {weight}', function (this: KvWorld, temperature: number) {
  this.configure((setup) => {
    setup.router.router_temperature = temperature;
  });
});

Given('the prefix {string} is {tokens} long', function (this: KvWorld, name: string, length_tokens: number) {
  this.definePrefix(name, length_tokens);
});
