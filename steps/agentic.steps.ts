// Steps about agentic workloads (AGX-1..6): plays written as a trace table, lanes that replay
// them, what each play instance's requests reused and from whom, and the guard that decides
// whether an agentic G2 deployment may run at all.
import { DataTable } from '@cucumber/cucumber';
import { Given, Then, When } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import type { RequestRecord } from '../src/report/report';
import { AGENTIC_SCHEMA, AGENTIC_VERSION } from '../src/agentic/trace';
import { ConfigError } from '../src/config/load';
import { parseDurationNs } from '../src/time';

type Raw = Record<string, unknown>;

const msOf = (text: string) => parseDurationNs(text) / 1_000_000;

/**
 * Who wrote the trace: kvqual, as the spec names its fields (a dependency's `predecessor`), or
 * AISimulate (a header with `hash_id_scope` and `source`, rows with `model`, a dependency naming
 * its predecessor `request_id`, and 64-bit hash ids: the table's id n is written as 2^63 + n × (2^32 + 1)).
 */
type TraceWriter = 'kvqual' | 'AISimulate';

const wideHashId = (id: number) => (1n << 63n) + BigInt(id) * 0x100000001n;

/** Turns the scenario's trace table into Agentic Mooncake v2 JSON lines, as `writer` writes them. */
function traceText(blockSize: number, table: DataTable, writer: TraceWriter = 'kvqual'): string {
  const aisimulate = writer === 'AISimulate';
  const header = aisimulate ? { hash_id_scope: 'local', source: { format: 'kvqual scenario', digest: 'none' } } : {};
  const lines = [JSON.stringify({ schema: AGENTIC_SCHEMA, version: AGENTIC_VERSION, block_size: blockSize, ...header })];
  for (const row of table.hashes()) {
    const dependencies = (row.after ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '')
      .map((predecessor) => ({ [aisimulate ? 'request_id' : 'predecessor']: predecessor, trigger: row.on || 'completion', delay_ms: msOf(row.delay || '0 ms'), relation: row.relation || 'sequence' }));
    const ids = row['hash ids'].split(',').map((id) => Number(id.trim()));
    const line = JSON.stringify({
      request_id: row.request,
      play_id: row.play,
      ...(aisimulate && row['play number'] !== undefined ? { source_play_ordinal: Number(row['play number']) } : {}),
      session_id: row.session,
      ...(aisimulate ? { model: 'scenario/model' } : {}),
      input_length: Number(row.input),
      output_length: Number(row.output),
      hash_ids: '<ids>',
      not_before_ms: msOf(row['not before'] || '0 ms'),
      dependencies,
    });
    // 64-bit ids do not fit a JavaScript number: written as digits.
    lines.push(line.replace('"<ids>"', `[${(aisimulate ? ids.map(wideHashId) : ids).join(',')}]`));
  }
  return `${lines.join('\n')}\n`;
}

Given('an agentic trace with {tokens} trace blocks:', { domain: 'agentic', level: 'engine', says: 'Gives the workload as an agentic trace (one row per request: play, session, input and output length, hash ids, dependencies), written as kvqual writes it; one lane plays it once unless a lane step says otherwise.' }, function (this: KvWorld, blockSize: number, table: DataTable) {
  this.engine.agenticTrace = traceText(blockSize, table);
  this.engine.agentic ??= { lanes: 1, assignment: 'stride', iterations: 1 };
});

Given('an agentic trace with {tokens} trace blocks, as AISimulate writes it:', { domain: 'agentic', level: 'engine', says: 'The same trace table, written as AISimulate writes it (its header, model names and 64-bit hash ids).' }, function (this: KvWorld, blockSize: number, table: DataTable) {
  this.engine.agenticTrace = traceText(blockSize, table, 'AISimulate');
  this.engine.agentic ??= { lanes: 1, assignment: 'stride', iterations: 1 };
});

Given('an agentic trace with {tokens} trace blocks, written once as kvqual writes it and once as AISimulate does:', { domain: 'agentic', level: 'engine', says: 'The same trace table written both ways, for a scenario that runs each and compares them.' }, function (this: KvWorld, blockSize: number, table: DataTable) {
  this.engine.agenticTrace = traceText(blockSize, table);
  this.engine.agenticTraceAsAisimulate = traceText(blockSize, table, 'AISimulate');
  this.engine.agentic ??= { lanes: 1, assignment: 'stride', iterations: 1 };
});

When('the agentic workload runs from each', { domain: 'agentic', level: 'engine', says: 'Runs the agentic workload from the kvqual trace, then from the AISimulate one.' }, function (this: KvWorld) {
  const other = this.engine.agenticTraceAsAisimulate;
  if (other === null) throw new Error("this step runs a trace written both ways, and none was given: 'Given an agentic trace with 4-token trace blocks, written once as kvqual writes it and once as AISimulate does:' gives one");
  this.engine.run(this.seed);
  this.engine.agenticTrace = other!;
  this.engine.run(this.seed);
  this.attach(`The trace as AISimulate writes it:\n${other}`, 'text/plain');
});

Given('{count} snapshot lane(s) replay(s) it {count} time(s)', { domain: 'agentic', level: 'engine', says: 'Lanes that each replay the whole trace this many times, each play instance with identities of its own.' }, function (this: KvWorld, lanes: number, iterations: number) {
  this.engine.agentic = { lanes, assignment: 'snapshot', iterations };
});

Given('{count} lane(s) take(s) its plays by stride', { domain: 'agentic', level: 'engine', says: 'Lanes that share the trace\'s plays, lane i taking plays i, i + lanes, and so on, one after another.' }, function (this: KvWorld, lanes: number) {
  this.engine.agentic = { lanes, assignment: 'stride', iterations: 1 };
});

When('the agentic workload runs', { domain: 'agentic', level: 'engine', says: 'Runs the cluster on the agentic trace with its lanes.' }, function (this: KvWorld) {
  this.engine.run(this.seed);
});

When('the agentic workload runs with {count} snapshot lane(s) and again with {count}', { domain: 'agentic', level: 'engine', says: 'Runs the agentic workload twice, with each number of snapshot lanes, to compare the runs.' }, function (this: KvWorld, first: number, second: number) {
  this.engine.agentic = { ...this.engine.agentic, assignment: 'snapshot', lanes: first };
  this.engine.run(this.seed);
  this.engine.agentic = { ...this.engine.agentic, lanes: second };
  this.engine.run(this.seed);
});

function recordsNamed(world: KvWorld, name: string): RequestRecord[] {
  const records = world.engine.outcome.report.per_request.filter((r) => r.request_id.endsWith(`/${name}`));
  expect(records.length, `requests "${name}" in the report`).to.be.greaterThan(0);
  return records;
}

Then('every play instance has exactly one cache_id, shared by all of its requests and by no other instance', { domain: 'agentic', level: 'engine', says: 'Checks each play instance\'s requests all carry one cache_id, and no two instances share one.' }, function (this: KvWorld) {
  const { report, plays } = this.engine.outcome;
  expect(plays.length, 'play instances').to.be.greaterThan(0);
  expect(new Set(plays.map((p) => p.cache_id)).size, 'distinct cache_ids').to.equal(plays.length);
  for (const play of plays) {
    const caches = new Set(report.per_request.filter((r) => r.play_id === play.play_id).map((r) => r.cache_id));
    expect([...caches], `cache_ids of the requests of ${play.play_id}`).to.deep.equal([`${play.play_id}:cache`]);
  }
  this.measure('play instances, each with one cache_id', plays.length, '');
});

Then('each of the {int} {string} requests, one per lane, restores {int} tokens from G2, all stored by its own play', { domain: 'agentic', level: 'engine', says: 'Checks exactly this many requests of that name ran (one per lane and play instance), each restoring exactly this many tokens from G2, all from entries its own play stored.' }, function (this: KvWorld, count: number, name: string, tokens: number) {
  const records = recordsNamed(this, name);
  this.measure(`"${name}" requests that ran`, records.length, 'requests');
  expect(records.length, `"${name}" requests that ran (one per lane)`).to.equal(count);
  expect(new Set(records.map((record) => record.play_id)).size, `play instances of the "${name}" requests`).to.equal(count);
  for (const record of records) {
    this.measure(`${record.request_id}: tokens restored from G2`, record.host_reused_tokens, 'tokens');
    expect(record.host_reused_tokens, `G2 tokens restored by ${record.request_id}`).to.equal(tokens);
    expect(record.host_restore_sources, `whose G2 entries ${record.request_id} restored`).to.deep.equal([record.cache_id]);
  }
});

Then('the recycled instance of play {string} shares no identity with the first', { domain: 'agentic', level: 'engine', says: 'Checks the play ran more than once and its instances share no request id, session id, play id or cache_id.' }, function (this: KvWorld, play: string) {
  const instances = this.engine.outcome.plays.filter((p) => p.source_play_id === play);
  expect(instances.length, `instances of play ${play}`).to.be.greaterThan(1);
  const fields = ['request_id', 'session_id', 'play_id', 'cache_id'] as const;
  const byInstance = instances.map((instance) => this.engine.outcome.report.per_request.filter((r) => r.play_id === instance.play_id));
  for (const field of fields) {
    const [first, ...later] = byInstance.map((records) => new Set(records.map((r) => r[field])));
    for (const other of later) expect([...other].filter((value) => first.has(value)), `${field}s shared between instances`).to.deep.equal([]);
  }
  this.measure('instances of the recycled play', instances.length, '');
});

Then("no request of the recycled instance reuses a block of the first instance's play", { domain: 'agentic', level: 'engine', says: 'Checks no request of a later play instance restores a G2 entry the first instance stored, and its first request reuses nothing.' }, function (this: KvWorld) {
  const report = this.engine.outcome.report;
  const firstCaches = new Set(this.engine.outcome.plays.filter((p) => p.ordinal === 0).map((p) => p.cache_id));
  const recycled = report.per_request.filter((r) => r.cache_id !== null && !firstCaches.has(r.cache_id));
  expect(recycled.length, 'requests of recycled instances').to.be.greaterThan(0);
  for (const record of recycled) {
    expect(record.host_restore_sources.filter((source) => firstCaches.has(source)), `${record.request_id} restored another play's G2 entries`).to.deep.equal([]);
  }
  const firstOfRecycled = recycled[0];
  this.measure(`${firstOfRecycled.request_id}: tokens reused (G1 + G2)`, firstOfRecycled.g1_reused_tokens + firstOfRecycled.host_reused_tokens, 'tokens');
  expect(firstOfRecycled.g1_reused_tokens + firstOfRecycled.host_reused_tokens, `reuse of ${firstOfRecycled.request_id}, the recycled play's first request`).to.equal(0);
});

Then('the shared pool holds {int} blocks with {count} lane(s) and {int}, as many times more, with {count}', { domain: 'agentic', level: 'engine', says: 'Compares two runs (with the two lane counts): the shared pool\'s resident blocks at the end are exactly these numbers, in proportion to the lanes.' }, function (this: KvWorld, firstBlocks: number, firstLanes: number, secondBlocks: number, secondLanes: number) {
  const runs = this.engine.outcomes.map((outcome) => outcome.report.summary.g2_domains?.[0]);
  expect(runs.length, 'runs compared').to.equal(2);
  const [one, two] = runs;
  expect(one, `g2_domains of the ${firstLanes}-lane run`).to.not.equal(undefined);
  expect(two, `g2_domains of the ${secondLanes}-lane run`).to.not.equal(undefined);
  const lanes = this.engine.outcomes.map((outcome) => outcome.plays.reduce((set, play) => set.add(play.lane), new Set<number>()).size);
  expect(lanes, 'lanes that ran in each run').to.deep.equal([firstLanes, secondLanes]);
  expect(secondBlocks * firstLanes, 'the scenario itself: residency in proportion to the lanes').to.equal(firstBlocks * secondLanes);
  this.measure(`pool residency, ${firstLanes} lane(s)`, one!.resident_blocks, 'blocks');
  this.measure(`pool residency, ${secondLanes} lanes = ${two!.resident_blocks / one!.resident_blocks} × ${firstLanes} lane(s)`, two!.resident_blocks, 'blocks');
  expect(one!.resident_blocks, `${firstLanes}-lane residency (blocks)`).to.equal(firstBlocks);
  expect(two!.resident_blocks, `${secondLanes}-lane residency (blocks)`).to.equal(secondBlocks);
});

Then('request {string} of the play arrives at {duration}', { domain: 'agentic', level: 'engine', says: 'Checks every request of that name arrives at exactly this instant.' }, function (this: KvWorld, name: string, at: number) {
  for (const record of recordsNamed(this, name)) {
    this.measure(`${record.request_id} arrives at`, record.arrival_ms, 'ms');
    expect(record.arrival_ms, `arrival of ${record.request_id} in ms`).to.equal(at / 1_000_000);
  }
});

Then('the requests of play {string} end as:', { domain: 'agentic', level: 'engine', says: 'Checks the terminal status of each request of the play (a table of request and status).' }, function (this: KvWorld, play: string, table: DataTable) {
  const records = this.engine.outcome.report.per_request.filter((r) => r.play_id?.startsWith(`${play}@`));
  const actual = Object.fromEntries(records.map((r) => [r.request_id.split('/').at(-1)!, r.status]));
  const expected = Object.fromEntries(table.hashes().map((row) => [row.request, row.status]));
  expect(actual, `terminal status of play ${play}'s requests`).to.deep.equal(expected);
  this.measure(`requests of ${play} skipped`, records.filter((r) => r.status === 'skipped').length, '');
});

Then('the lanes play:', { domain: 'agentic', level: 'engine', says: 'Checks which plays each lane ran, in order, and when each started (at 0 ms or when the named play ended).' }, function (this: KvWorld, table: DataTable) {
  const plays = this.engine.outcome.plays;
  const expected = table.hashes().map((row) => ({ lane: Number(row.lane), play: row.play, starts: row.starts }));
  const actual = plays
    .map((p) => ({ lane: p.lane, play: p.source_play_id, start_ns: p.start_ns }))
    .sort((a, b) => a.lane - b.lane || a.start_ns - b.start_ns);
  expect(actual.map((p) => ({ lane: p.lane, play: p.play })), 'plays by lane, in order').to.deep.equal(expected.map((p) => ({ lane: p.lane, play: p.play })));
  expected.forEach((row, i) => {
    if (row.starts === 'at 0 ms') return expect(actual[i].start_ns, `start of ${row.play}`).to.equal(0);
    const previous = plays.find((p) => p.lane === row.lane && p.source_play_id === row.starts.replace(/^when (\S+) ends$/, '$1'));
    expect(previous, `"${row.starts}" names a play on lane ${row.lane}`).to.not.equal(undefined);
    expect(actual[i].start_ns, `start of ${row.play} = end of ${previous!.source_play_id}`).to.equal(previous!.end_ns);
  });
});

// ── the guard (AGX-6) ───────────────────────────────────────────────────────────────────────

const GUARD_CHANGES: Record<string, (world: KvWorld) => void> = {
  'every role uses the sglang backend': (world) => world.engine.roleChanges.push((role) => (role.backend = 'sglang')),
  'only the decode role uses the sglang backend': (world) =>
    world.engine.roleChanges.push((role) => {
      if (role.role === 'decode') role.backend = 'sglang';
    }),
  'only the decode role has host memory': (world) =>
    world.engine.roleChanges.push((role) => {
      if (role.role !== 'decode') delete role.host_offload;
    }),
  'every worker has 2 attention data-parallel ranks': (world) => world.engine.roleChanges.push((role) => (role.dp_size = 2)),
  'the workers scale with the "planner" policy': (world) => world.engine.roleChanges.push((role) => (role.scaling_policy = 'planner')),
  'the workers use speculative decoding': (world) => world.engine.roleChanges.push((role) => (role.speculative_decoding = { method: 'eagle', num_speculative_tokens: 3 })),
  'host memory has a disk tier below it': (world) =>
    world.engine.roleChanges.push((role) => {
      if (role.host_offload) (role.host_offload as Raw).disk_offload = { num_disk_blocks: 1024 };
    }),
};

Given('the cluster is changed to {count} aggregated worker(s)', { domain: 'agentic', level: 'engine', says: 'Changes the engine-level cluster to this many aggregated workers.' }, function (this: KvWorld, workers: number) {
  this.engine.workers = workers;
  this.engine.decodeWorkers = 0;
});

Given('the cluster is changed to {count} prefill and {count} decode worker(s)', { domain: 'agentic', level: 'engine', says: 'Changes the engine-level cluster to this many prefill and decode workers.' }, function (this: KvWorld, prefill: number, decode: number) {
  this.engine.workers = prefill;
  this.engine.decodeWorkers = decode;
});

Given('the deployment is changed so that {}', { domain: 'agentic', level: 'engine', says: 'Changes the deployment in one of the named ways the agentic G2 guard judges (the backend, host memory, ranks, scaling, speculative decoding, a disk tier).' }, function (this: KvWorld, change: string) {
  const apply = GUARD_CHANGES[change];
  if (!apply) throw new Error(`unknown change "${change}"; known: ${Object.keys(GUARD_CHANGES).join('; ')}`);
  apply(this);
});

When('the agentic workload is submitted', { domain: 'agentic', level: 'engine', says: 'Submits the agentic workload: runs it if the guard accepts the deployment, keeps the guard\'s refusal otherwise.' }, function (this: KvWorld) {
  try {
    this.engine.run(this.seed);
    this.engine.setupError = null;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    this.engine.setupError = error;
  }
});

Then('it is accepted and every request finishes', { domain: 'agentic', level: 'engine', says: 'Checks the guard accepted the deployment and every request of the run finished.' }, function (this: KvWorld) {
  expect(this.engine.setupError?.message ?? null, 'guard error').to.equal(null);
  const summary = this.engine.outcome.report.summary;
  this.measure('requests finished', summary.requests.finished, '');
  expect(summary.requests.finished, 'finished requests').to.equal(summary.requests.total);
});

Then('it is rejected before the run: {string}', { domain: 'agentic', level: 'engine', says: 'Checks the guard refused the deployment before any run, with a message containing this text.' }, function (this: KvWorld, message: string) {
  const error = this.engine.setupError;
  expect(error, 'the guard should have rejected the deployment').to.not.equal(null);
  expect(this.engine.outcomes.length, 'runs started').to.equal(0);
  expect(error!.message, 'the message a user reads').to.contain(message);
  this.measure(`rejected: ${error!.problems[0].path}: ${error!.problems[0].message}`, error!.problems.length, 'problem(s)');
});

Then('each {string} request reuses {int} tokens, and any G2 blocks it restored were stored by its own play', { domain: 'agentic', level: 'engine', says: 'Checks every request of that name reuses exactly this many tokens (G1 + G2) and restores G2 entries of its own play only.' }, function (this: KvWorld, name: string, tokens: number) {
  for (const record of recordsNamed(this, name)) {
    this.measure(`${record.request_id}: tokens reused (G1 ${record.g1_reused_tokens} + G2 ${record.host_reused_tokens})`, record.g1_reused_tokens + record.host_reused_tokens, 'tokens');
    expect(record.g1_reused_tokens + record.host_reused_tokens, `tokens reused by ${record.request_id}`).to.equal(tokens);
    expect(record.host_restore_sources.filter((source) => source !== record.cache_id), `other plays' G2 entries restored by ${record.request_id}`).to.deep.equal([]);
  }
});
