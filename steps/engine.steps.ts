// Steps that describe an engine-level cluster in a table and send it traffic: conversations
// that start on a worker, other requests that keep workers busy, and resumes the router places.
import { DataTable } from '@cucumber/cucumber';
import { Given, When } from './support/catalogue';
import type { KvWorld } from './support/world';
import { RANK_PROFILES } from './support/profiles';
import { passTimeTable } from './support/engineScenario';
import type { Nanos } from '../src/time';

Given('a cluster of {count} aggregated worker(s) with these settings:', { domain: 'cluster', level: 'engine', says: 'Begins an engine-level scenario: this many aggregated workers, with the settings in the table (one setting and its value a row; see the settings table below).' }, function (this: KvWorld, workers: number, table: DataTable) {
  this.engine.workers = workers;
  for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
});

function applyProfile(world: KvWorld, name: string): void {
  const rows = RANK_PROFILES[name];
  if (!rows) throw new Error(`unknown rank profile "${name}"; known: ${Object.keys(RANK_PROFILES).join(', ')}`);
  for (const [setting, value] of rows) world.engine.applySetting(setting, value);
}

Given('a cluster of {count} aggregated worker(s) with the {word} rank profile', { domain: 'cluster', level: 'engine', says: 'Begins an engine-level scenario: this many aggregated workers with a named rank profile\'s settings.' }, function (this: KvWorld, workers: number, profile: string) {
  this.engine.workers = workers;
  applyProfile(this, profile);
});

Given('a cluster of {count} aggregated worker(s) with the {word} rank profile and these settings:', { domain: 'cluster', level: 'engine', says: 'A rank profile, with the table\'s settings changed or added.' }, function (this: KvWorld, workers: number, profile: string, table: DataTable) {
  this.engine.workers = workers;
  applyProfile(this, profile);
  for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
});

Given(
  'a disaggregated cluster of {count} prefill and {count} decode worker(s) with the {word} rank profile and these settings:', { domain: 'cluster', level: 'engine', says: 'Begins an engine-level scenario of prefill and decode workers (numbered prefill first), with a rank profile and the table\'s settings.' },
  function (this: KvWorld, prefill: number, decode: number, profile: string, table: DataTable) {
    this.engine.workers = prefill;
    this.engine.decodeWorkers = decode;
    applyProfile(this, profile);
    for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
  },
);

Given('the workers have no host memory', { domain: 'cluster', level: 'engine', says: 'Gives the workers no host memory (no G2).' }, function (this: KvWorld) {
  this.engine.applySetting('host memory', 'none');
});

Given('each worker has private host memory of {int} blocks', { domain: 'cluster', level: 'engine', says: 'Gives each rank its own host memory (G2) of this many blocks.' }, function (this: KvWorld, blocks: number) {
  this.engine.applySetting('host memory', `private, ${blocks} blocks`);
});

Given('the workers share one host memory pool of {int} blocks', { domain: 'cluster', level: 'engine', says: 'Gives the workers one shared host memory pool (cluster-shared G2) of this many blocks.' }, function (this: KvWorld, blocks: number) {
  this.engine.applySetting('host memory', `shared, ${blocks} blocks`);
});

Given(
  'conversation {string} starts on worker {int} at {duration} with a {tokens} prompt and {int} output token(s)', { domain: 'requests', level: 'engine', says: 'Sends a conversation\'s first turn straight to this worker (not routed) at this instant.' },
  function (this: KvWorld, session: string, worker: number, at: Nanos, tokens: number, output: number) {
    this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: output, worker, continues: false });
  },
);

Given(
  'worker {int} serves a {tokens} request with {int} output token(s) at {duration}', { domain: 'requests', level: 'engine', says: 'Sends a request that shares nothing straight to this worker at this instant, to keep it busy.' },
  function (this: KvWorld, worker: number, tokens: number, output: number, at: Nanos) {
    this.engine.addRequest({ session: null, arrival_ns: at, own_tokens: tokens, output_length: output, worker, continues: false });
  },
);

When('conversation {string} resumes at {duration} with {int} more tokens', { domain: 'requests', level: 'engine', says: 'Sends the conversation\'s next turn (its history and this many new tokens, 2 output tokens) through the router at this instant and runs the cluster; `Then the resume …` and `Then it …` check this request.' }, function (this: KvWorld, session: string, at: Nanos, tokens: number) {
  this.engine.focus = [this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: 2, continues: true })];
  this.engine.run(this.seed);
});

When(
  /^(one request|two requests) continuing conversation "([^"]+)" with the same (\d+) new tokens arrive(?:s)? at (.+?)(, in two runs)?$/, { domain: 'requests', level: 'engine', says: 'Sends one or two requests that continue the conversation with the same new tokens at this instant and runs the cluster (twice with `, in two runs`).', words: '<one request or two requests> continuing conversation "<conversation>" with the same <number> new tokens arrive(s) at <time>[, in two runs]' },
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

When('the replay runs twice', { domain: 'requests', level: 'engine', says: 'Runs the engine-level cluster twice with the same seed.' }, function (this: KvWorld) {
  this.engine.run(this.seed);
  this.engine.run(this.seed);
});

Given(
  'conversation {string} starts at {duration} with a {tokens} prompt and {int} output token(s)', { domain: 'requests', level: 'engine', says: 'Sends a conversation\'s first turn through the router at this instant.' },
  function (this: KvWorld, session: string, at: Nanos, tokens: number, output: number) {
    this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: output, continues: false });
  },
);

Given('conversation {string} is to resume at {duration} with {int} more tokens', { domain: 'requests', level: 'engine', says: 'Plans the conversation\'s next turn (this many new tokens) at this instant without running yet; `Then the resume …` checks it.' }, function (this: KvWorld, session: string, at: Nanos, tokens: number) {
  this.engine.focus = [this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: 2, continues: true })];
});

Given('conversation {string} is to resume at {duration} with {int} more tokens as well', { domain: 'requests', level: 'engine', says: 'Plans one more resume beside the planned ones.' }, function (this: KvWorld, session: string, at: Nanos, tokens: number) {
  this.engine.focus.push(this.engine.addRequest({ session, arrival_ns: at, own_tokens: tokens, output_length: 2, continues: true }));
});

When("conversation {string}'s first prompt is sent again at {duration}", { domain: 'requests', level: 'engine', says: 'Sends the conversation\'s first prompt again, as a new request, at this instant and runs the cluster.' }, function (this: KvWorld, session: string, at: Nanos) {
  this.engine.focus = [this.engine.repeatFirst(session, at)];
  this.engine.run(this.seed);
});

When('the replay runs', { domain: 'requests', level: 'engine', says: 'Runs the engine-level cluster on everything the scenario described.' }, function (this: KvWorld) {
  this.engine.run(this.seed);
});

When(
  'the replay runs once as configured and once with shared-pool bandwidths of {float} GB\\/s and a layout id added but scope dp_rank_local', { domain: 'requests', level: 'engine', says: 'Runs the cluster as configured, then again with shared-pool-only settings added to private host memory, to show they change nothing.' },
  function (this: KvWorld, gbps: number) {
    this.engine.run(this.seed);
    this.engine.run(this.seed, (raw) => {
      const workers = (raw.cluster as { workers: Record<string, unknown>[] }).workers;
      for (const role of workers) {
        const offload = role.host_offload as Record<string, unknown> | undefined;
        if (offload?.scope !== 'dp_rank_local') throw new Error("this step compares against private host memory, and the workers have none or share one: give each its own first, e.g. 'Given each worker has private host memory of 16 blocks'");
        // Caps that differ from every rank's own rate, so that applied by mistake they would change the copies.
        for (const rate of ['d2h_bandwidth_gbps', 'h2d_bandwidth_gbps']) {
          if (offload[rate] === gbps) throw new Error(`the shared caps (${gbps} GB/s) must differ from the ranks' ${rate}, or leaking them would change nothing`);
        }
        Object.assign(offload, { shared_d2h_bandwidth_gbps: gbps, shared_h2d_bandwidth_gbps: gbps, kv_layout_id: 'layout-under-test' });
      }
    });
  },
);

Given('the cluster has these settings:', { domain: 'cluster', level: 'engine', says: 'Adds or changes settings of the engine-level cluster (same table as above).' }, function (this: KvWorld, table: DataTable) {
  for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
});

Given(
  'a disaggregated cluster of {count} prefill and {count} decode worker(s) with these settings:', { domain: 'cluster', level: 'engine', says: 'Begins an engine-level scenario of prefill and decode workers (numbered prefill first), with the table\'s settings.' },
  function (this: KvWorld, prefill: number, decode: number, table: DataTable) {
    this.engine.workers = prefill;
    this.engine.decodeWorkers = decode;
    for (const [name, value] of table.raw()) this.engine.applySetting(name.trim(), value.trim());
  },
);

Given('the workers time their passes by this measured table:', { domain: 'cluster', level: 'engine', says: 'Times each pass by measured points (prefill by new tokens; decode by sequences and context tokens), interpolated between them.' }, function (this: KvWorld, table: DataTable) {
  this.engine.engine.timing = passTimeTable(table.hashes());
});

Given('the workers time their passes by this linear model:', { domain: 'cluster', level: 'engine', says: 'Times each pass by a linear model: a time for every pass plus a time per prefill token, per decode sequence and per context token.' }, function (this: KvWorld, table: DataTable) {
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

Given('worker {int} serves {count} {tokens} requests with {int} output token(s) each at {duration}', { domain: 'requests', level: 'engine', says: 'Sends this many requests that share nothing straight to this worker at this instant.' }, function (this: KvWorld, worker: number, count: number, tokens: number, output: number, at: Nanos) {
  for (let i = 0; i < count; i++) this.engine.addRequest({ session: null, arrival_ns: at, own_tokens: tokens, output_length: output, worker, continues: false });
});

Given('the service-level objective is a time to first token of at most {duration}', { domain: 'slo', level: 'engine', says: 'Sets the run\'s service-level objective: a request meets it when its time to first token is at most this.' }, function (this: KvWorld, ttft: Nanos) {
  this.engine.slo = { ...(this.engine.slo ?? {}), ttft_ms: ttft / 1_000_000 };
});
