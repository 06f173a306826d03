// Steps that check what an engine-level run did: where a resume ran and why, how much it reused
// from G1 and G2, its H2D wait and time to first token, shared-pool residency, reconciliation of
// router predictions with realised reuse, and report digests across runs.
import { Then } from '@cucumber/cucumber';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import type { Nanos } from '../src/time';
import { formatNs } from '../src/time';
import type { RequestRecord } from '../src/report/report';
import { explainPlacement } from '../src/router/explain';

function focusRecords(world: KvWorld): RequestRecord[] {
  const report = world.engine.outcome.report;
  return world.engine.focus.map((id) => {
    const record = report.per_request.find((r) => r.request_id === id);
    if (!record) throw new Error(`request ${id} is not in the report`);
    return record;
  });
}

function theResume(world: KvWorld): RequestRecord {
  const [record] = focusRecords(world);
  return record;
}

function decision(record: RequestRecord): string {
  const placement = record.routing_history.at(-1);
  if (!placement) return `${record.request_id} was sent straight to worker ${record.worker_id}`;
  return explainPlacement({ ...placement, request_id: record.request_id, ordinal: record.ordinal });
}

const msOf = (ns: Nanos) => ns / 1_000_000;

Then('the resume is placed on worker {int} by load, the router seeing no cached blocks', function (this: KvWorld, worker: number) {
  const record = theResume(this);
  const placement = record.routing_history.at(-1)!;
  expect(record.worker_id, decision(record)).to.equal(worker);
  const seen = placement.candidates.filter((c) => c.device_blocks + c.host_blocks > 0);
  expect(seen, `the router should have seen no cached blocks: ${decision(record)}`).to.deep.equal([]);
  this.measure('resume placed on worker', worker, '');
});

Then('the resume is placed on worker {int}, which holds its prefix in G2', function (this: KvWorld, worker: number) {
  const record = theResume(this);
  const placement = record.routing_history.at(-1)!;
  expect(record.worker_id, decision(record)).to.equal(worker);
  expect(placement.host_blocks, `G2 blocks the router counted on worker ${worker}: ${decision(record)}`).to.be.greaterThan(0);
  this.measure('G2 blocks visible on the chosen worker', placement.host_blocks, 'blocks');
});

Then('the resume is placed on worker {int}, the less loaded of the workers that all see its prefix in G2', function (this: KvWorld, worker: number) {
  const record = theResume(this);
  const placement = record.routing_history.at(-1)!;
  expect(record.worker_id, decision(record)).to.equal(worker);
  for (const candidate of placement.candidates) {
    expect(candidate.host_blocks, `worker ${candidate.worker_id} should see the shared prefix: ${decision(record)}`).to.be.greaterThan(0);
  }
  const chosen = placement.candidates.find((c) => c.worker_id === worker)!;
  const lightest = Math.min(...placement.candidates.map((c) => c.decode_blocks + c.prefill_blocks));
  expect(chosen.decode_blocks + chosen.prefill_blocks, `load of worker ${worker}: ${decision(record)}`).to.equal(lightest);
});

Then('it restores {int} tokens from G2', function (this: KvWorld, tokens: number) {
  const record = theResume(this);
  expect(record.host_reused_tokens, `host_reused_tokens of ${record.request_id}`).to.equal(tokens);
  this.measure('tokens restored from G2', record.host_reused_tokens, 'tokens');
});

Then('it reuses {int} tokens from G1', function (this: KvWorld, tokens: number) {
  const record = theResume(this);
  expect(record.g1_reused_tokens, `g1_reused_tokens of ${record.request_id}`).to.equal(tokens);
  this.measure('tokens reused from G1', record.g1_reused_tokens, 'tokens');
});

Then('it recomputes its whole prompt', function (this: KvWorld) {
  const record = theResume(this);
  expect({ g1: record.g1_reused_tokens, host: record.host_reused_tokens }, `reuse of ${record.request_id}`).to.deep.equal({ g1: 0, host: 0 });
  this.measure('tokens reused (G1 + G2)', 0, 'tokens');
});

Then('its H2D wait is {duration}', function (this: KvWorld, wait: Nanos) {
  const record = theResume(this);
  expect(record.h2d_wait_ms, `H2D wait of ${record.request_id} in ms`).to.equal(msOf(wait));
  this.measure('H2D wait', record.h2d_wait_ms, 'ms');
});

Then('its time to first token is {duration}', function (this: KvWorld, ttft: Nanos) {
  const record = theResume(this);
  expect(record.ttft_ms, `TTFT of ${record.request_id} in ms`).to.equal(msOf(ttft));
  this.measure('time to first token', record.ttft_ms!, 'ms');
});

Then("each request's H2D wait is {duration}, twice the solo wait of {duration}", function (this: KvWorld, wait: Nanos, solo: Nanos) {
  const records = focusRecords(this);
  expect(records.length, 'concurrent consumers').to.equal(2);
  expect(new Set(records.map((r) => r.worker_id)).size, 'the two consumers should run on different workers').to.equal(2);
  for (const record of records) expect(record.h2d_wait_ms, `H2D wait of ${record.request_id} on worker ${record.worker_id} in ms`).to.equal(msOf(wait));
  const soloOutcome = this.engine.soloOutcome(this.seed);
  const soloRecord = soloOutcome.report.per_request.find((r) => r.request_id === this.engine.focus[0])!;
  expect(soloRecord.h2d_wait_ms, 'H2D wait of the same request alone, in ms').to.equal(msOf(solo));
  expect(msOf(wait)).to.equal(2 * soloRecord.h2d_wait_ms);
  this.measure(`H2D wait ${formatNs(wait)} = 2 × ${formatNs(solo)} solo`, records[0].h2d_wait_ms, 'ms');
});

Then("the shared pool's residency matches the solo run", function (this: KvWorld) {
  const concurrent = this.engine.outcome.report.summary.g2_domains;
  const solo = this.engine.soloOutcome(this.seed).report.summary.g2_domains;
  expect(concurrent, 'g2_domains of the concurrent run').to.not.equal(undefined);
  expect(concurrent, 'g2_domains: concurrent run vs solo run').to.deep.equal(solo);
  this.measure('shared pool resident blocks', concurrent![0].resident_blocks, 'blocks');
});

Then('the shared pool holds {int} of its {int} blocks', function (this: KvWorld, resident: number, capacity: number) {
  const domains = this.engine.outcome.report.summary.g2_domains;
  expect(domains, 'g2_domains').to.not.equal(undefined);
  expect({ resident: domains![0].resident_blocks, capacity: domains![0].capacity_blocks }).to.deep.equal({ resident, capacity });
});

Then('the report lists no shared G2 domain', function (this: KvWorld) {
  expect(this.engine.outcome.report.summary.g2_domains, 'g2_domains of a private-only run').to.equal(undefined);
});

Then("at every admission the router's reported overlap equals the realised G1 + G2 reuse", function (this: KvWorld) {
  const report = this.engine.outcome.report;
  const routed = report.per_request.filter((r) => r.routed);
  expect(routed.length, 'routed requests').to.be.greaterThan(0);
  for (const record of routed) {
    const rec = record.reconciliation!;
    expect(rec, `${record.request_id} was never admitted`).to.not.equal(null);
    expect(rec.realised_tokens, `${record.request_id}: router reported ${rec.predicted_tokens} tokens, realised ${rec.realised_tokens} (${rec.reason ?? 'agree'})`).to.equal(rec.predicted_tokens);
    this.measure(`${record.request_id}: reported overlap = realised reuse`, rec.realised_tokens, 'tokens');
  }
});

Then('the reconciliation of the resume says {string}, reported {int} tokens vs realised {int}', function (this: KvWorld, reason: string, predicted: number, realised: number) {
  const rec = theResume(this).reconciliation;
  expect(rec, 'reconciliation').to.not.equal(null);
  expect({ reason: rec!.reason, predicted: rec!.predicted_tokens, realised: rec!.realised_tokens }).to.deep.equal({ reason, predicted, realised });
  this.measure(`reported ${predicted} vs realised ${realised} tokens (${reason})`, realised, 'tokens');
});

Then('both runs produce the same report digest', function (this: KvWorld) {
  const [first, second] = this.engine.outcomes.map((outcome) => outcome.report.digest);
  expect(this.engine.outcomes.length, 'runs').to.equal(2);
  expect(second, 'digest of the second run').to.equal(first);
  this.measure('runs with the same report digest', 2, 'runs', `both runs gave report digest ${first}`);
});

Then("the router's event-stream check passes", function (this: KvWorld) {
  expect(this.engine.outcome.result.failure?.message ?? null, 'event-stream failure').to.equal(null);
});

Then("the resume's decode worker is chosen by load alone", function (this: KvWorld) {
  const record = theResume(this);
  const placement = record.decode_routing;
  expect(placement, `${record.request_id} was never placed on a decode worker`).to.not.equal(null);
  const decodeIds = new Set(placement!.candidates.map((c) => c.worker_id));
  expect(decodeIds.has(record.worker_id!), 'prefill and decode candidates must differ').to.equal(false);
  for (const candidate of placement!.candidates) {
    expect({ worker: candidate.worker_id, credit: candidate.credit, device: candidate.device_blocks, host: candidate.host_blocks }, 'decode candidates get no cache credit').to.deep.equal({
      worker: candidate.worker_id,
      credit: 0,
      device: 0,
      host: 0,
    });
  }
  this.measure('decode worker chosen', record.decode_worker_id!, '');
  this.measure('KV handoff', record.kv_transfer_ms!, 'ms');
});

Then("no decode worker's KV event reaches the router", function (this: KvWorld) {
  const { result, report } = this.engine.outcome;
  const decodeWorkers = new Set(result.ranks.filter((rank) => rank.role === 'decode').map((rank) => rank.rank.worker_id));
  expect(decodeWorkers.size, 'decode workers').to.be.greaterThan(0);
  const reached = result.batches.filter(({ batch }) => decodeWorkers.has(batch.worker_id));
  expect(reached.length, 'event batches from decode workers applied by the router').to.equal(0);
  this.measure('KV events withheld from the router (decode workers)', report.summary.kv_events.withheld_from_router, 'events');
  expect(report.summary.kv_events.withheld_from_router, 'decode workers emitted events that were withheld').to.be.greaterThan(0);
});
