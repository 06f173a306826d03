// Steps that describe an engine-level cluster in a table and send it traffic: conversations
// that start on a worker, other requests that keep workers busy, and resumes the router places.
import { DataTable, Given, When } from '@cucumber/cucumber';
import type { KvWorld } from './support/world';
import { RANK_PROFILES } from './support/profiles';
import { passTimeTable } from './support/engineScenario';
import type { Nanos } from '../src/time';

Given('a cluster of {count} aggregated worker(s) with these settings:', function (this: KvWorld, workers: number, table: DataTable) {
  this.engine.workers = workers;
  for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
});

function applyProfile(world: KvWorld, name: string): void {
  const rows = RANK_PROFILES[name];
  if (!rows) throw new Error(`unknown rank profile "${name}"; known: ${Object.keys(RANK_PROFILES).join(', ')}`);
  for (const [setting, value] of rows) world.engine.applySetting(setting, value);
}

Given('a cluster of {count} aggregated worker(s) with the {word} rank profile', function (this: KvWorld, workers: number, profile: string) {
  this.engine.workers = workers;
  applyProfile(this, profile);
});

Given('a cluster of {count} aggregated worker(s) with the {word} rank profile and these settings:', function (this: KvWorld, workers: number, profile: string, table: DataTable) {
  this.engine.workers = workers;
  applyProfile(this, profile);
  for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
});

Given(
  'a disaggregated cluster of {count} prefill and {count} decode worker(s) with the {word} rank profile and these settings:',
  function (this: KvWorld, prefill: number, decode: number, profile: string, table: DataTable) {
    this.engine.workers = prefill;
    this.engine.decodeWorkers = decode;
    applyProfile(this, profile);
    for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
  },
);

Given('the workers have no host memory', function (this: KvWorld) {
  this.engine.applySetting('host memory', 'none');
});

Given('each worker has private host memory of {int} blocks', function (this: KvWorld, blocks: number) {
  this.engine.applySetting('host memory', `private, ${blocks} blocks`);
});

Given('the workers share one host memory pool of {int} blocks', function (this: KvWorld, blocks: number) {
  this.engine.applySetting('host memory', `shared, ${blocks} blocks`);
});

Given(
  'conversation {string} starts on worker {int} at {duration} with a {tokens} prompt and {int} output token(s)',
  function (this: KvWorld, session: string, worker: number, at: Nanos, tokens: number, output: number) {
    this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: output, worker, continues: false });
  },
);

Given(
  'worker {int} serves a {tokens} request with {int} output token(s) at {duration}',
  function (this: KvWorld, worker: number, tokens: number, output: number, at: Nanos) {
    this.engine.addRequest({ session: null, arrival_ns: at, own_tokens: tokens, output_length: output, worker, continues: false });
  },
);

When('conversation {string} resumes at {duration} with {int} more tokens', function (this: KvWorld, session: string, at: Nanos, tokens: number) {
  this.engine.focus = [this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: 2, continues: true })];
  this.engine.run(this.seed);
});

When(
  /^(one request|two requests) continuing conversation "([^"]+)" with the same (\d+) new tokens arrive(?:s)? at (.+?)(, in two runs)?$/,
  function (this: KvWorld, how: string, session: string, tokens: string, at: string, twice: string | undefined) {
    const count = how === 'one request' ? 1 : 2;
    const shared = `${session} follow-up`;
    this.engine.prefixes[shared] = Number(tokens);
    const arrival_ns = this.parseDuration(at);
    this.engine.focus = [];
    for (let i = 0; i < count; i++) {
      this.engine.focus.push(this.engine.addRequest({ session, arrival_ns, own_tokens: 0, shared_part: shared, output_length: 2, continues: true }));
    }
    this.engine.run(this.seed);
    if (twice) this.engine.run(this.seed);
  },
);

When('the replay runs twice', function (this: KvWorld) {
  this.engine.run(this.seed);
  this.engine.run(this.seed);
});

Given(
  'conversation {string} starts at {duration} with a {tokens} prompt and {int} output token(s)',
  function (this: KvWorld, session: string, at: Nanos, tokens: number, output: number) {
    this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: output, continues: false });
  },
);

Given('conversation {string} is to resume at {duration} with {int} more tokens', function (this: KvWorld, session: string, at: Nanos, tokens: number) {
  this.engine.focus = [this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: 2, continues: true })];
});

Given('conversation {string} is to resume at {duration} with {int} more tokens as well', function (this: KvWorld, session: string, at: Nanos, tokens: number) {
  this.engine.focus.push(this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: 2, continues: true }));
});

When("conversation {string}'s first prompt is sent again at {duration}", function (this: KvWorld, session: string, at: Nanos) {
  this.engine.focus = [this.engine.repeatFirst(session, at)];
  this.engine.run(this.seed);
});

When('the replay runs', function (this: KvWorld) {
  this.engine.run(this.seed);
});

When(
  'the replay runs once as configured and once with shared-pool bandwidths of {float} GB\\/s and a layout id added but scope dp_rank_local',
  function (this: KvWorld, gbps: number) {
    this.engine.run(this.seed);
    this.engine.run(this.seed, (raw) => {
      const workers = (raw.cluster as { workers: Record<string, unknown>[] }).workers;
      for (const role of workers) {
        const offload = role.host_offload as Record<string, unknown>;
        if (offload.scope !== 'dp_rank_local') throw new Error('this step compares against a private (dp_rank_local) baseline');
        // Caps that differ from every rank's own rate, so that applied by mistake they would change the copies.
        for (const rate of ['d2h_bandwidth_gbps', 'h2d_bandwidth_gbps']) {
          if (offload[rate] === gbps) throw new Error(`the shared caps (${gbps} GB/s) must differ from the ranks' ${rate}, or leaking them would change nothing`);
        }
        Object.assign(offload, { shared_d2h_bandwidth_gbps: gbps, shared_h2d_bandwidth_gbps: gbps, kv_layout_id: 'layout-under-test' });
      }
    });
  },
);

Given('the cluster has these settings:', function (this: KvWorld, table: DataTable) {
  for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
});

Given(
  'a disaggregated cluster of {count} prefill and {count} decode worker(s) with these settings:',
  function (this: KvWorld, prefill: number, decode: number, table: DataTable) {
    this.engine.workers = prefill;
    this.engine.decodeWorkers = decode;
    for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
  },
);

Given('the workers time their passes by this measured table:', function (this: KvWorld, table: DataTable) {
  this.engine.engine.timing = passTimeTable(table.hashes());
});

Given('the workers time their passes by this linear model:', function (this: KvWorld, table: DataTable) {
  const names: Record<string, string> = {
    'every pass': 'base_ms',
    'each new prefill token': 'prefill_token_ms',
    'each decode sequence': 'decode_seq_ms',
    'each context token': 'context_token_ms',
  };
  const linear: Record<string, number> = {};
  for (const [name, value] of table.raw()) {
    const field = names[name.trim()];
    if (!field) throw new Error(`linear model term "${name}": write one of ${Object.keys(names).join(', ')}`);
    linear[field] = Number(/^\s*(\d+(?:\.\d+)?)\s*ms\s*$/.exec(value)?.[1] ?? NaN);
    if (Number.isNaN(linear[field])) throw new Error(`linear model term "${name}": "${value}" is not a time in ms`);
  }
  this.engine.engine.timing = { linear };
});

Given('worker {int} serves {count} {tokens} requests with {int} output token(s) each at {duration}', function (this: KvWorld, worker: number, count: number, tokens: number, output: number, at: Nanos) {
  for (let i = 0; i < count; i++) this.engine.addRequest({ session: null, arrival_ns: at, own_tokens: tokens, output_length: output, worker, continues: false });
});

Given('the service-level objective is a time to first token of at most {duration}', function (this: KvWorld, ttft: Nanos) {
  this.engine.slo = { ...(this.engine.slo ?? {}), ttft_ms: ttft / 1_000_000 };
});
