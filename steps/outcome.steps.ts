// Steps that check what an engine-level run did: where a resume ran and why, how much it reused
// from G1 and G2, its H2D wait and time to first token, shared-pool residency, reconciliation of
// router predictions with realised reuse, report digests across runs, and how often a request
// was preempted and what its admission history keeps.
import { Then } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import type { Nanos } from '../src/time';
import { formatNs } from '../src/time';
import type { RequestRecord } from '../src/report/report';
import { explainPlacement } from '../src/router/explain';
import { blocksOfWork, expectChosenByLoad } from './support/placements';

function recordOf(world: KvWorld, request_id: string): RequestRecord {
  const record = world.engine.outcome.report.per_request.find((r) => r.request_id === request_id);
  if (!record) throw new Error(`request ${request_id} is not in the report`);
  return record;
}

function focusRecords(world: KvWorld): RequestRecord[] {
  const records = world.engine.focus.map((id) => recordOf(world, id));
  if (records.length === 0) throw new Error(`this step checks the resume, and the scenario sent none: send it with a When such as 'When conversation "A" resumes at 20 ms with 4 more tokens'`);
  return records;
}

/** When a request was first admitted, in ns (its record keeps milliseconds). */
function admittedNs(record: RequestRecord): Nanos {
  if (record.first_admission_ms === null) throw new Error(`${record.request_id} was never admitted`);
  return Math.round(record.first_admission_ms * 1_000_000);
}

/** The run's H2D restores, in the order they started. */
function h2dLoads(world: KvWorld) {
  return world.engine.outcome.result.transfers.filter((t) => t.direction === 'h2d').sort((a, b) => a.started_ns - b.started_ns);
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

const DISAGGREGATED = "'Given a disaggregated cluster of 1 prefill and 2 decode workers with these settings:'";

/** Where the router placed a request's decode: only a disaggregated cluster has one. */
function decodeOf(record: RequestRecord): NonNullable<RequestRecord['decode_routing']> {
  if (!record.decode_routing) throw new Error(`${record.request_id} was never placed on a decode worker: the claim needs a disaggregated cluster, e.g. ${DISAGGREGATED}`);
  return record.decode_routing;
}

/** A request's KV handoff from its prefill worker to its decode worker. */
function handoffOf(world: KvWorld, request_id: string) {
  const handoff = world.engine.outcome.result.transfers.find((t) => t.direction === 'p2d' && t.request_id === request_id);
  if (!handoff) throw new Error(`${request_id}'s KV never moved to a decode worker: the claim needs a disaggregated cluster, e.g. ${DISAGGREGATED}`);
  return handoff;
}

/** Complete blocks of the earlier turn a resume continues: the prefix a cache can hold for it. */
function priorPrefixBlocks(world: KvWorld, resume: RequestRecord): number {
  const prior = world.engine.outcome.report.per_request.filter((r) => r.session_id === resume.session_id && r.ordinal < resume.ordinal).at(-1);
  if (!prior) throw new Error(`${resume.request_id} continues no earlier request`);
  return Math.floor(prior.input_length / world.engine.blockSize);
}

Then('the resume is placed on worker {int} by load, the router seeing no cached blocks', { domain: 'routing', level: 'engine', says: 'Checks the resume went to this worker, the router seeing no cached block on any worker and this worker carrying strictly less load than every other (a tie fails).' }, function (this: KvWorld, worker: number) {
  const record = theResume(this);
  const placement = record.routing_history.at(-1)!;
  expect(record.worker_id, decision(record)).to.equal(worker);
  const seen = placement.candidates.filter((c) => c.device_blocks + c.host_blocks > 0);
  expect(seen, `the router should have seen no cached blocks: ${decision(record)}`).to.deep.equal([]);
  expectChosenByLoad(this, placement.candidates, placement, decision(record));
  this.measure('resume placed on worker', worker, '');
});

Then('the resume is placed on worker {int}, which holds its prefix in G2', { domain: 'routing', level: 'engine', says: 'Checks the resume went to this worker and the router counted there, in G2, every block of its prefix not in G1.' }, function (this: KvWorld, worker: number) {
  const record = theResume(this);
  const placement = record.routing_history.at(-1)!;
  expect(record.worker_id, decision(record)).to.equal(worker);
  const expected = priorPrefixBlocks(this, record) - placement.device_blocks;
  expect(expected, 'blocks of the prefix not in G1').to.be.greaterThan(0);
  expect(placement.host_blocks, `G2 blocks the router counted on worker ${worker}: ${decision(record)}`).to.equal(expected);
  this.measure('G2 blocks visible on the chosen worker', placement.host_blocks, 'blocks');
});

Then('the resume is placed on worker {int}, the less loaded of the workers that all see its prefix in G2', { domain: 'routing', level: 'engine', says: 'Checks every candidate saw the whole prefix (some of it in G2) and the resume went to this worker, whose work was strictly less than every other\'s (a tie fails).' }, function (this: KvWorld, worker: number) {
  const record = theResume(this);
  const placement = record.routing_history.at(-1)!;
  expect(record.worker_id, decision(record)).to.equal(worker);
  const prefixBlocks = priorPrefixBlocks(this, record);
  for (const candidate of placement.candidates) {
    expect(candidate.device_blocks + candidate.host_blocks, `worker ${candidate.worker_id} should see the whole shared prefix: ${decision(record)}`).to.equal(prefixBlocks);
    expect(candidate.host_blocks, `worker ${candidate.worker_id} should see the shared prefix in G2: ${decision(record)}`).to.be.greaterThan(0);
  }
  expectChosenByLoad(this, placement.candidates, placement, decision(record), blocksOfWork);
});

Then('it restores {int} tokens from G2', { domain: 'engine', level: 'engine', says: 'Checks the resume restored exactly this many tokens from host memory (G2).' }, function (this: KvWorld, tokens: number) {
  const record = theResume(this);
  expect(record.host_reused_tokens, `host_reused_tokens of ${record.request_id}`).to.equal(tokens);
  this.measure('tokens restored from G2', record.host_reused_tokens, 'tokens');
});

Then('it reuses {int} tokens from G1', { domain: 'engine', level: 'engine', says: 'Checks the resume reused exactly this many tokens already in GPU memory (G1).' }, function (this: KvWorld, tokens: number) {
  const record = theResume(this);
  expect(record.g1_reused_tokens, `g1_reused_tokens of ${record.request_id}`).to.equal(tokens);
  this.measure('tokens reused from G1', record.g1_reused_tokens, 'tokens');
});

Then('it recomputes its whole prompt', { domain: 'engine', level: 'engine', says: 'Checks the resume reused nothing from G1 or G2.' }, function (this: KvWorld) {
  const record = theResume(this);
  expect({ g1: record.g1_reused_tokens, host: record.host_reused_tokens }, `reuse of ${record.request_id}`).to.deep.equal({ g1: 0, host: 0 });
  this.measure('tokens reused (G1 + G2)', 0, 'tokens');
});

Then('its H2D wait is {duration}', { domain: 'engine', level: 'engine', says: 'Checks the resume waited exactly this long for its copy from host to GPU memory.' }, function (this: KvWorld, wait: Nanos) {
  const record = theResume(this);
  expect(record.h2d_wait_ms, `H2D wait of ${record.request_id} in ms`).to.equal(msOf(wait));
  this.measure('H2D wait', record.h2d_wait_ms, 'ms');
});

Then('its time to first token is {duration}', { domain: 'engine', level: 'engine', says: 'Checks the resume\'s time to first token is exactly this.' }, function (this: KvWorld, ttft: Nanos) {
  const record = theResume(this);
  expect(record.ttft_ms, `TTFT of ${record.request_id} in ms`).to.equal(msOf(ttft));
  this.measure('time to first token', record.ttft_ms!, 'ms');
});

Then("each request's H2D wait is {duration}, twice the solo wait of {duration}", { domain: 'engine', level: 'engine', says: 'Checks two requests on different workers each waited exactly this long for their H2D copy, twice what one alone waits (a second run).' }, function (this: KvWorld, wait: Nanos, solo: Nanos) {
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

Then("the shared pool's residency matches the solo run", { domain: 'engine', level: 'engine', says: 'Checks the shared pool holds the same blocks at the end as in a run of the resume alone.' }, function (this: KvWorld) {
  const concurrent = this.engine.outcome.report.summary.g2_domains;
  const solo = this.engine.soloOutcome(this.seed).report.summary.g2_domains;
  expect(concurrent, 'g2_domains of the concurrent run').to.not.equal(undefined);
  expect(concurrent, 'g2_domains: concurrent run vs solo run').to.deep.equal(solo);
  this.measure('shared pool resident blocks', concurrent![0].resident_blocks, 'blocks');
});

Then('the shared pool holds {int} of its {int} blocks', { domain: 'engine', level: 'engine', says: 'Checks the shared pool holds exactly this many blocks at the end, of this capacity.' }, function (this: KvWorld, resident: number, capacity: number) {
  const domains = this.engine.outcome.report.summary.g2_domains;
  expect(domains, 'g2_domains').to.not.equal(undefined);
  expect({ resident: domains![0].resident_blocks, capacity: domains![0].capacity_blocks }).to.deep.equal({ resident, capacity });
});

Then('the report lists no shared G2 domain', { domain: 'engine', level: 'engine', says: 'Checks the run\'s report lists no shared host memory pool.' }, function (this: KvWorld) {
  const shared = this.engine.outcome.report.summary.g2_domains ?? [];
  expect(shared.map((domain) => domain.domain_id), 'shared G2 domains the report lists').to.deep.equal([]);
});

Then("at every admission the router's reported overlap equals the realised G1 + G2 reuse", { domain: 'routing', level: 'engine', says: 'Checks, for every routed request (each admitted once), the overlap the router reported equals the tokens it then reused from G1 and G2.' }, function (this: KvWorld) {
  const report = this.engine.outcome.report;
  const routed = report.per_request.filter((r) => r.routed);
  expect(routed.length, 'routed requests').to.be.greaterThan(0);
  for (const record of routed) {
    const rec = record.reconciliation!;
    expect(rec, `${record.request_id} was never admitted`).to.not.equal(null);
    // The report reconciles a request's first admission (G2-6 attributes reuse there): "every admission" holds only when there was no other.
    const admissions = record.admission_history.filter((a) => a.outcome === 'admitted').length;
    expect({ admissions, preemptions: record.preemptions }, `${record.request_id} was admitted more than once: only its first admission is reconciled`).to.deep.equal({ admissions: 1, preemptions: 0 });
    expect(rec.realised_tokens, `${record.request_id}: router reported ${rec.predicted_tokens} tokens, realised ${rec.realised_tokens} (${rec.reason ?? 'agree'})`).to.equal(rec.predicted_tokens);
    this.measure(`${record.request_id}: reported overlap = realised reuse`, rec.realised_tokens, 'tokens');
  }
});

Then('the reconciliation of the resume says {string}, reported {int} tokens vs realised {int}', { domain: 'routing', level: 'engine', says: 'Checks the resume\'s reconciliation: the reason for the difference, the tokens the router reported and the tokens realised.' }, function (this: KvWorld, reason: string, predicted: number, realised: number) {
  const rec = theResume(this).reconciliation;
  expect(rec, 'reconciliation').to.not.equal(null);
  expect({ reason: rec!.reason, predicted: rec!.predicted_tokens, realised: rec!.realised_tokens }).to.deep.equal({ reason, predicted, realised });
  this.measure(`reported ${predicted} vs realised ${realised} tokens (${reason})`, realised, 'tokens');
});

Then('both runs produce the same report digest', { domain: 'engine', level: 'engine', says: 'Checks two runs with the same seed gave the same report digest.' }, function (this: KvWorld) {
  const [first, second] = this.engine.outcomes.map((outcome) => outcome.report.digest);
  expect(this.engine.outcomes.length, 'runs').to.equal(2);
  expect(second, 'digest of the second run').to.equal(first);
  this.measure('runs with the same report digest', 2, 'runs', `both runs gave report digest ${first}`);
});

Then("the router's event-stream check passes", { domain: 'events', level: 'engine', says: 'Checks the router\'s strict check of the KV event streams found nothing wrong.' }, function (this: KvWorld) {
  expect(this.engine.outcome.result.failure?.message ?? null, 'event-stream failure').to.equal(null);
});

Then("the resume's decode worker is the less loaded one, chosen by load alone", { domain: 'routing', level: 'engine', says: 'Checks the resume\'s decode worker got no cache credit and carried strictly less load than every other decode worker.' }, function (this: KvWorld) {
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
  const chosen = placement!.candidates.find((c) => c.worker_id === placement!.worker_id && c.dp_rank === placement!.dp_rank)!;
  const others = placement!.candidates.filter((c) => c !== chosen);
  expect(others.length, 'other decode workers to choose from').to.be.greaterThan(0);
  // With credit 0 the cost is the load alone: the prefill term (no decode candidate has a prompt
  // left to prefill, so it is the same for all) plus the blocks of the requests it serves.
  for (const other of others) {
    expect(chosen.cost, `load of the chosen decode worker ${chosen.worker_id} vs worker ${other.worker_id}`).to.be.lessThan(other.cost);
  }
  this.measure('decode worker chosen', record.decode_worker_id!, '');
  this.measure('decode load chosen vs other', chosen.cost, `blocks (other: ${others.map((o) => o.cost).join(', ')})`);
  this.measure('KV handoff', record.kv_transfer_ms!, 'ms');
});

Then("the decode worker of conversation {string}'s first turn holds its prefix in host memory, stored there before the resume's decode worker was chosen", { domain: 'engine', level: 'engine', says: 'Checks the first turn\'s decode worker stored the prefix in its host memory, and finished before the resume\'s decode worker was chosen.' }, function (this: KvWorld, session: string) {
  const resume = theResume(this);
  const { report, result } = this.engine.outcome;
  const turns = report.per_request.filter((r) => r.session_id === session).sort((a, b) => a.ordinal - b.ordinal);
  const first = turns[0];
  expect(first, `conversation "${session}"'s first turn`).to.not.equal(undefined);
  expect(resume.session_id, 'the resume continues the conversation').to.equal(session);
  const holder = first.decode_worker_id;
  expect(holder, `${first.request_id}'s decode worker`).to.not.equal(null);
  // Only the first turn ran on the holder, so whatever it holds of the prefix at the end it held since that turn.
  expect(turns.filter((r) => r !== first && r.decode_worker_id === holder).map((r) => r.request_id), `other turns of "${session}" decoded on worker ${holder}`).to.deep.equal([]);
  const chosenAt = decodeOf(resume).time_ns;
  const store = result.transfers.find((t) => t.direction === 'd2h' && t.request_id === first.request_id && t.worker_id === holder);
  expect(store, `${first.request_id}'s G2 store on decode worker ${holder}`).to.not.equal(undefined);
  expect(store!.finished_ns, `end of that store vs the resume's decode choice at ${formatNs(chosenAt)}`).to.be.a('number').and.lessThan(chosenAt);
  const rank = result.ranks.find((r) => r.role === 'decode' && r.rank.worker_id === holder)!;
  const pool = rank.host?.pool;
  expect(pool, `decode worker ${holder}'s host memory`).to.not.equal(undefined);
  // The entries the first turn stored there (its prompt's complete blocks: the prefix the resume shares), still resident at the end.
  const prefixBlocks = priorPrefixBlocks(this, resume);
  const held = Array.from(pool!.residentSortedIds()).filter((id) => pool!.originsOf([id])[0] === first.request_id).length;
  expect(held, `blocks of the ${prefixBlocks}-block prefix resident in decode worker ${holder}'s host memory`).to.equal(prefixBlocks);
  this.measure(`prefix blocks in decode worker ${holder}'s host memory`, held, 'blocks', `stored by ${first.request_id} at ${formatNs(store!.finished_ns!)}; the resume's decode worker chosen at ${formatNs(chosenAt)}`);
});

Then("request {word}'s decode worker is chosen at {duration}, its first token, before its KV has moved", { domain: 'routing', level: 'engine', says: 'Checks the request\'s decode worker was chosen at exactly this instant, its first token, before its KV handoff ended.' }, function (this: KvWorld, request_id: string, at: Nanos) {
  const record = recordOf(this, request_id);
  const handoff = handoffOf(this, request_id);
  expect(record.decode_routing, `${request_id}'s decode placement`).to.not.equal(null);
  this.measure(`${request_id}'s decode worker chosen`, msOf(decodeOf(record).time_ns), 'ms', `worker ${decodeOf(record).worker_id}; its KV lands at ${formatNs(handoff.finished_ns!)}`);
  expect(decodeOf(record).time_ns, `when ${request_id}'s decode worker was chosen`).to.equal(at);
  expect(record.first_token_ms, `${request_id}'s first token, in ms`).to.equal(msOf(at));
  expect(handoff.started_ns, `start of ${request_id}'s KV handoff`).to.equal(at);
});

Then("request {word} goes to the other decode worker: request {word}, its KV still moving, already counts on its own", { domain: 'routing', level: 'engine', says: 'Checks the later request went to a different decode worker because the earlier one\'s moving KV already counted as load there.' }, function (this: KvWorld, later: string, earlier: string) {
  const [first, second] = [recordOf(this, earlier), recordOf(this, later)];
  const placement = decodeOf(second);
  const firstHandoff = handoffOf(this, earlier);
  expect(firstHandoff.finished_ns!, `${earlier}'s KV lands after ${later}'s decode worker is chosen`).to.be.greaterThan(placement.time_ns);
  expect(placement.worker_id, `${later}'s decode worker`).to.not.equal(decodeOf(first).worker_id);
  const load = (worker: number) => placement.candidates.find((c) => c.worker_id === worker)!.cost;
  this.measure(`decode load seen for ${later}`, load(placement.worker_id), `blocks on its worker, ${load(decodeOf(first).worker_id)} on ${earlier}'s`);
  expect(load(placement.worker_id), `load of ${later}'s decode worker vs ${earlier}'s`).to.be.lessThan(load(decodeOf(first).worker_id));
});

Then("request {word}'s KV starts to move at {duration}, when request {word} has finished on their decode worker and freed its blocks", { domain: 'engine', level: 'engine', says: 'Checks the request\'s KV handoff started at exactly this instant, when the other request finished on their shared decode worker.' }, function (this: KvWorld, later: string, at: Nanos, earlier: string) {
  const handoff = handoffOf(this, later);
  const [first, second] = [recordOf(this, earlier), recordOf(this, later)];
  this.measure(`${later}'s KV starts to move`, msOf(handoff.started_ns), 'ms', `${decodeOf(first).time_ns === decodeOf(second).time_ns ? '' : `its decode worker was chosen at ${formatNs(decodeOf(second).time_ns)}; `}${earlier} finished at ${first.last_token_ms} ms`);
  expect(second.decode_worker_id, `${later}'s decode worker`).to.equal(first.decode_worker_id);
  expect(decodeOf(second).time_ns, `${later}'s decode worker is chosen before its KV moves`).to.be.lessThan(handoff.started_ns);
  expect(first.last_token_ms, `${earlier}'s end on the decode worker, in ms`).to.equal(msOf(at));
  expect(handoff.started_ns, `start of ${later}'s KV handoff`).to.equal(at);
});

Then("request {word} is admitted at {duration}, the moment request {word}'s KV reaches its decode worker", { domain: 'engine', level: 'engine', says: 'Checks the first request was admitted at exactly this instant, when the other\'s KV handoff ended.' }, function (this: KvWorld, waiting: string, at: Nanos, handedOff: string) {
  const handoff = handoffOf(this, handedOff);
  const admitted = admittedNs(recordOf(this, waiting));
  this.measure(`${handedOff}'s KV reaches its decode worker`, msOf(handoff.finished_ns!), 'ms');
  this.measure(`${waiting} admitted`, msOf(admitted), 'ms', `${waiting} admitted at ${formatNs(admitted)}`);
  expect(admitted, `${waiting}'s admission vs ${handedOff}'s handoff end (${formatNs(handoff.finished_ns!)})`).to.equal(handoff.finished_ns);
  expect(admitted, `${waiting}'s admission`).to.equal(at);
});

Then("request {word}'s KV moves to its decode worker as {count} block(s) in {duration}", { domain: 'engine', level: 'engine', says: 'Checks the request\'s one KV handoff moved exactly this many blocks in exactly this time.' }, function (this: KvWorld, request_id: string, blocks: number, took: Nanos) {
  const handoffs = this.engine.outcome.result.transfers.filter((t) => t.direction === 'p2d' && t.request_id === request_id);
  expect(handoffs.length, `${request_id}'s KV handoffs`).to.equal(1);
  const [handoff] = handoffs;
  const record = recordOf(this, request_id);
  this.measure(`${request_id}'s KV handed off`, handoff.blocks, 'blocks', `${handoff.bytes} bytes in ${formatNs(handoff.finished_ns! - handoff.started_ns)}`);
  expect(handoff.blocks, `blocks of ${request_id}'s ${record.input_length}-token prompt handed to its decode worker`).to.equal(blocks);
  expect(handoff.finished_ns! - handoff.started_ns, `${request_id}'s KV handoff time`).to.equal(took);
  expect(record.kv_transfer_ms, `${request_id}'s kv_transfer_ms`).to.equal(msOf(took));
});

Then("no decode worker's KV event reaches the router", { domain: 'events', level: 'engine', says: 'Checks the router received no KV event from a decode worker.' }, function (this: KvWorld) {
  const { result, report } = this.engine.outcome;
  const decodeWorkers = new Set(result.ranks.filter((rank) => rank.role === 'decode').map((rank) => rank.rank.worker_id));
  expect(decodeWorkers.size, 'decode workers').to.be.greaterThan(0);
  const reached = result.batches.filter(({ batch }) => decodeWorkers.has(batch.worker_id));
  expect(reached.length, 'event batches from decode workers applied by the router').to.equal(0);
  this.measure('KV events withheld from the router (decode workers)', report.summary.kv_events.withheld_from_router, 'events');
  expect(report.summary.kv_events.withheld_from_router, 'decode workers emitted events that were withheld').to.be.greaterThan(0);
});

Then('every request finishes', { domain: 'engine', level: 'engine', says: 'Checks every request of the run finished.' }, function (this: KvWorld) {
  const records = this.engine.outcome.report.per_request;
  const unfinished = records.filter((record) => record.status !== 'finished');
  this.measure('requests finished', records.length - unfinished.length, `of ${records.length}`);
  expect(unfinished.map((r) => `${r.request_id} ${r.status}${r.failure_reason ? ` (${r.failure_reason})` : ''}`), 'requests that did not finish').to.deep.equal([]);
});

Then('request {word} is preempted and readmitted {count} times', { domain: 'engine', level: 'engine', says: 'Checks the request was preempted and admitted again exactly this many times.' }, function (this: KvWorld, request_id: string, times: number) {
  const record = recordOf(this, request_id);
  this.measure(`preemptions of ${request_id}`, record.preemptions);
  expect(record.preemptions, `preemptions of ${request_id}`).to.equal(times);
});

/** The passes of a worker, as they computed (start, end), in order. */
function passSpans(world: KvWorld, worker: number): { start_ns: Nanos; end_ns: Nanos }[] {
  const spans = world.engine.passes.filter((pass) => pass.worker_id === worker).map((pass) => ({ start_ns: pass.start_ns, end_ns: pass.start_ns + pass.duration_ns })).sort((a, b) => a.start_ns - b.start_ns);
  if (spans.length === 0) throw new Error(`worker ${worker} computed no pass in this run: the claim is about a worker that ran requests`);
  return spans;
}

Then("worker {int} computes nothing from {duration} until {duration}, when request {word}'s copy to host memory ends", { domain: 'engine', level: 'engine', says: 'Checks no pass of the worker ran in this span, which ends when the request\'s copy to host memory ended.' }, function (this: KvWorld, worker: number, from: Nanos, until: Nanos, request_id: string) {
  const copies = this.engine.outcome.result.transfers.filter((t) => t.direction === 'd2h' && t.request_id === request_id && t.worker_id === worker);
  expect(copies.length, `copies of ${request_id}'s prompt to host memory`).to.be.greaterThan(0);
  const copyEnd = Math.max(...copies.map((copy) => copy.finished_ns!));
  const spans = passSpans(this, worker);
  const busy = spans.filter((pass) => pass.start_ns < until && pass.end_ns > from);
  this.measure(`${request_id}'s copy to host memory ends`, msOf(copyEnd), 'ms');
  expect(busy.map((pass) => `${formatNs(pass.start_ns)}–${formatNs(pass.end_ns)}`), `passes of worker ${worker} between ${formatNs(from)} and ${formatNs(until)}`).to.deep.equal([]);
  expect(spans.some((pass) => pass.end_ns === from), `a pass of worker ${worker} ends at ${formatNs(from)}`).to.equal(true);
  expect(spans.find((pass) => pass.start_ns >= until)?.start_ns, `worker ${worker}'s next pass`).to.equal(until);
  expect(copyEnd, `end of ${request_id}'s copy to host memory`).to.equal(until);
});

Then('worker {int} computes without a gap until its last request finishes', { domain: 'engine', level: 'engine', says: 'Checks each pass of the worker began the instant the one before it ended.' }, function (this: KvWorld, worker: number) {
  const spans = passSpans(this, worker);
  const gaps = spans.slice(1).filter((pass, i) => pass.start_ns !== spans[i].end_ns);
  this.measure(`passes of worker ${worker}`, spans.length, '', `the last ends at ${formatNs(spans.at(-1)!.end_ns)}`);
  expect(gaps.map((pass) => formatNs(pass.start_ns)), `passes of worker ${worker} that start after a gap`).to.deep.equal([]);
});

Then("request {word}'s admission history keeps its first {count} attempts and its latest, and counts the other {count}", { domain: 'engine', level: 'engine', says: 'Checks the request\'s admission history keeps exactly this many first attempts and its latest, and counts the ones it dropped.' }, function (this: KvWorld, request_id: string, first: number, others: number) {
  const record = recordOf(this, request_id);
  const history = record.admission_history;
  this.measure(`admission attempts of ${request_id} kept`, history.length);
  expect(history.length, `attempts kept for ${request_id}`).to.equal(first + 1);
  expect(record.admission_attempts_omitted, `attempts counted, not kept, for ${request_id}`).to.equal(others);
  const [latest, before] = [history.at(-1)!, history.at(-2)!];
  expect(latest.time_ns, 'the last place holds an attempt later than the first ones').to.be.greaterThan(before.time_ns);
});

Then('each resume restores {int} tokens from G2', { domain: 'engine', level: 'engine', says: 'Checks every resume the scenario sent restored exactly this many tokens from G2.' }, function (this: KvWorld, tokens: number) {
  for (const record of focusRecords(this)) {
    this.measure(`tokens ${record.request_id} restored from G2`, record.host_reused_tokens, 'tokens');
    expect(record.host_reused_tokens, `host_reused_tokens of ${record.request_id}`).to.equal(tokens);
  }
});

Then('the resume is admitted the moment its H2D copy completes, {duration} after it arrived', { domain: 'engine', level: 'engine', says: 'Checks the resume was admitted exactly when its H2D copy ended, this long after it arrived.' }, function (this: KvWorld, wait: Nanos) {
  const record = theResume(this);
  const load = this.engine.outcome.result.transfers.find((t) => t.direction === 'h2d' && t.request_id === record.request_id);
  if (!load || load.finished_ns === null) throw new Error(`no completed H2D restore for ${record.request_id}`);
  const admitted = admittedNs(record);
  this.measure('admission after arrival', record.first_admission_ms! - record.arrival_ms, 'ms');
  expect(Math.round((record.first_admission_ms! - record.arrival_ms) * 1e6), 'admission − arrival (ns)').to.equal(wait);
  expect(admitted, 'admission (ns) vs H2D completion (ns)').to.equal(load.finished_ns);
});

Then('no two H2D restores on the worker overlap in time', { domain: 'engine', level: 'engine', says: 'Checks the run\'s copies from host to GPU memory never overlap in time.' }, function (this: KvWorld) {
  const loads = h2dLoads(this);
  expect(loads.length, 'H2D restores').to.be.greaterThan(1);
  this.measure('H2D restores', loads.length, 'restores');
  for (let i = 1; i < loads.length; i++) {
    const previousEnd = loads[i - 1].finished_ns!;
    expect(loads[i].submitted_ns, `restore ${loads[i].request_id} submitted before ${loads[i - 1].request_id}'s finished`).to.be.at.least(previousEnd);
  }
});

Then("the two resumes' H2D restores overlap in time, and the second is admitted only when the first has finished", { domain: 'engine', level: 'engine', says: 'Checks the two resumes\' H2D copies overlap, and the second was admitted only after the first copy ended.' }, function (this: KvWorld) {
  const loads = h2dLoads(this);
  expect(loads.length, 'H2D restores').to.equal(2);
  const [first, second] = loads;
  if (first.request_id === null || second.request_id === null) throw new Error('an H2D restore names no request');
  this.measure('second H2D restore submitted', msOf(second.submitted_ns), 'ms', `${second.request_id}'s restore submitted at ${formatNs(second.submitted_ns)}`);
  expect(second.submitted_ns, `${second.request_id}'s restore is submitted before ${first.request_id}'s finishes`).to.be.below(first.finished_ns!);
  const firstRecord = recordOf(this, first.request_id);
  const secondAdmitted = admittedNs(recordOf(this, second.request_id));
  expect(firstRecord.last_token_ms, `${first.request_id} finishes`).to.not.equal(null);
  this.measure('second resume admitted', msOf(secondAdmitted), 'ms', `${second.request_id} admitted at ${formatNs(secondAdmitted)}, ${first.request_id} finished at ${firstRecord.last_token_ms} ms`);
  expect(secondAdmitted, `${second.request_id} admitted while ${first.request_id} still holds the one running slot`).to.be.at.least(firstRecord.last_token_ms! * 1_000_000);
});

Then('worker {int} emitted its G2 store at {duration} and the router saw it at {duration}', { domain: 'events', level: 'engine', says: 'Checks the worker\'s first G2 store event was emitted at exactly this instant and became visible to the router at exactly the second one.' }, function (this: KvWorld, worker: number, emitted: Nanos, visible: Nanos) {
  const stores = this.engine.outcome.result.batches.filter(
    ({ batch }) => batch.worker_id === worker && batch.events.some((event) => event.tier === 'HostPinned' && event.data.type === 'Stored'),
  );
  expect(stores.length, `HostPinned stores from worker ${worker}`).to.be.greaterThan(0);
  const first = stores[0];
  this.measure('G2 store emitted', msOf(first.batch.emitted_ns), 'ms');
  this.measure('G2 store visible to the router', msOf(first.visible_ns), 'ms');
  expect([formatNs(first.batch.emitted_ns), formatNs(first.visible_ns)], 'first G2 store: [emitted, visible]').to.deep.equal([formatNs(emitted), formatNs(visible)]);
});

Then('worker {int}, whose pass computed the prefix, copied it into the pool', { domain: 'engine', level: 'engine', says: 'Checks the copy into the shared pool was made by this worker, the one whose pass computed the prefix.' }, function (this: KvWorld, worker: number) {
  const resume = theResume(this);
  const prior = this.engine.outcome.report.per_request.filter((r) => r.session_id === resume.session_id && r.ordinal < resume.ordinal).at(-1)!;
  expect(prior.worker_id, `${prior.request_id} ran on`).to.equal(worker);
  const copies = this.engine.outcome.result.transfers.filter((t) => t.direction === 'd2h');
  expect(copies.length, 'D2H copies').to.be.greaterThan(0);
  const first = copies[0];
  this.measure('first D2H copy submitted by worker', first.worker_id, '');
  expect(first.worker_id, 'the worker that submitted the first D2H copy').to.equal(worker);
  expect(first.blocks, 'blocks of that copy').to.equal(priorPrefixBlocks(this, resume));
});

Then('the pool reported the store to workers {int} and {int} at the same instant', { domain: 'events', level: 'engine', says: 'Checks the shared pool\'s store was reported on both workers\' streams at the same instant.' }, function (this: KvWorld, first: number, second: number) {
  const storesTo = (worker: number) =>
    this.engine.outcome.result.batches.filter(({ batch }) => batch.worker_id === worker && batch.events.some((e) => e.tier === 'HostPinned' && e.data.type === 'Stored'));
  const [a, b] = [storesTo(first)[0], storesTo(second)[0]];
  expect(a, `a G2 store on worker ${first}'s stream`).to.not.equal(undefined);
  expect(b, `a G2 store on worker ${second}'s stream`).to.not.equal(undefined);
  const blocksOf = (entry: typeof a) => entry.batch.events.flatMap((e) => (e.data.type === 'Stored' ? e.data.blocks.map((x) => x.block_hash.toString()) : []));
  this.measure('G2 store reported to both workers at', msOf(a.batch.emitted_ns), 'ms');
  expect(formatNs(b.batch.emitted_ns), 'emission time on the second stream').to.equal(formatNs(a.batch.emitted_ns));
  expect(blocksOf(b), 'blocks reported on the second stream').to.deep.equal(blocksOf(a));
});

Then('the pool reported the eviction of conversation {string}\'s {int} blocks to workers {int} and {int} at the same instant', { domain: 'events', level: 'engine', says: 'Checks the shared pool evicted exactly this many blocks, the conversation\'s (stored first), and reported it on both workers\' streams at the same instant.' }, function (this: KvWorld, conversation: string, blocks: number, first: number, second: number) {
  const removalsTo = (worker: number) =>
    this.engine.outcome.result.batches.filter(({ batch }) => batch.worker_id === worker && batch.events.some((e) => e.tier === 'HostPinned' && e.data.type === 'Removed'));
  const [a, b] = [removalsTo(first)[0], removalsTo(second)[0]];
  expect(a, `a G2 removal on worker ${first}'s stream`).to.not.equal(undefined);
  expect(b, `a G2 removal on worker ${second}'s stream`).to.not.equal(undefined);
  const removedOf = (entry: typeof a) => entry.batch.events.flatMap((e) => (e.tier === 'HostPinned' && e.data.type === 'Removed' ? e.data.block_hashes.map((hash) => hash.toString()) : []));
  const stored = this.engine.outcome.result.batches
    .filter(({ batch }) => batch.worker_id === first)
    .flatMap(({ batch }) => batch.events)
    .find((e) => e.tier === 'HostPinned' && e.data.type === 'Stored');
  expect(stored, `the pool's first store on worker ${first}'s stream (conversation "${conversation}"'s prefix)`).to.not.equal(undefined);
  const storedBlocks = stored!.data.type === 'Stored' ? stored!.data.blocks.map((block) => block.block_hash.toString()) : [];
  this.measure('G2 eviction reported to both workers at', msOf(a.batch.emitted_ns), 'ms');
  expect(removedOf(a).length, `blocks evicted (conversation "${conversation}"'s)`).to.equal(blocks);
  expect([...removedOf(a)].sort(), `the evicted blocks are the ones stored first, conversation "${conversation}"'s (least recently used)`).to.deep.equal([...storedBlocks].sort());
  expect(formatNs(b.batch.emitted_ns), 'emission time on the second stream').to.equal(formatNs(a.batch.emitted_ns));
  expect(removedOf(b), 'blocks removed on the second stream').to.deep.equal(removedOf(a));
});

Then("its H2D restore starts at {duration}, the instant the pool's copy of its prefix completes", { domain: 'engine', level: 'engine', says: 'Checks the resume\'s H2D copy was submitted at exactly this instant, when the pool\'s copy of its prefix ended, after one deferred admission.' }, function (this: KvWorld, at: Nanos) {
  const record = theResume(this);
  const { transfers } = this.engine.outcome.result;
  const load = transfers.find((t) => t.direction === 'h2d' && t.request_id === record.request_id);
  const copy = transfers.find((t) => t.direction === 'd2h');
  expect(load, `an H2D restore for ${record.request_id}`).to.not.equal(undefined);
  expect(copy?.finished_ns, 'the D2H copy of the prefix completed').to.not.equal(null);
  this.measure('H2D restore submitted', msOf(load!.submitted_ns), 'ms');
  expect(formatNs(copy!.finished_ns!), 'D2H copy completion').to.equal(formatNs(at));
  expect(formatNs(load!.submitted_ns), 'H2D restore submission').to.equal(formatNs(at));
  expect(record.admission_history[0]?.outcome, `first admission attempt of ${record.request_id}`).to.equal('deferred');
});

Then("worker {int}'s host memory evicted conversation {string}'s prefix at {duration}, after the resume was placed and before it was admitted", { domain: 'engine', level: 'engine', says: 'Checks the worker\'s host memory evicted the conversation\'s prefix at exactly this instant, between the resume\'s placement and its admission.' }, function (this: KvWorld, worker: number, session: string, at: Nanos) {
  const resume = theResume(this);
  const { result, report } = this.engine.outcome;
  const first = report.per_request.filter((r) => r.session_id === session).sort((a, b) => a.ordinal - b.ordinal)[0];
  expect(resume.session_id, 'the resume continues the conversation').to.equal(session);
  // The prefix as the engine reported it: the HostPinned Stored sent when the first turn's copy into worker's pool completed.
  const copy = result.transfers.find((t) => t.direction === 'd2h' && t.request_id === first.request_id && t.worker_id === worker);
  if (typeof copy?.finished_ns !== 'number') throw new Error(`${first.request_id} stored nothing in worker ${worker}'s host memory: the claim is about a prefix stored there`);
  const eventsOf = (type: 'Stored' | 'Removed') =>
    result.batches.filter(({ batch }) => batch.worker_id === worker).flatMap(({ batch }) => batch.events.filter((e) => e.tier === 'HostPinned' && e.data.type === type).map((event) => ({ event, emitted_ns: batch.emitted_ns })));
  const prefix = eventsOf('Stored')
    .filter(({ emitted_ns }) => emitted_ns === copy!.finished_ns)
    .flatMap(({ event }) => (event.data.type === 'Stored' ? event.data.blocks.map((b) => b.block_hash.toString()) : []));
  expect(prefix.length, `blocks of ${first.request_id}'s G2 store`).to.equal(priorPrefixBlocks(this, resume));
  const removal = eventsOf('Removed').find(({ event }) => event.data.type === 'Removed' && prefix.every((hash) => event.data.type === 'Removed' && event.data.block_hashes.some((h) => h.toString() === hash)));
  expect(removal, `a HostPinned Removed of conversation "${session}"'s prefix on worker ${worker}`).to.not.equal(undefined);
  const placed = resume.routing_history.at(-1)!.time_ns;
  const admitted = admittedNs(resume);
  this.measure(`conversation "${session}"'s prefix evicted from worker ${worker}'s host memory`, msOf(removal!.emitted_ns), 'ms', `the resume placed at ${formatNs(placed)}, admitted at ${formatNs(admitted)}`);
  expect(formatNs(removal!.emitted_ns), 'eviction').to.equal(formatNs(at));
  expect(removal!.emitted_ns, `eviction vs the resume's placement at ${formatNs(placed)}`).to.be.at.least(placed);
  expect(removal!.emitted_ns, `eviction vs the resume's admission at ${formatNs(admitted)}`).to.be.lessThan(admitted);
});

Then('no worker ever reported a G2 store', { domain: 'events', level: 'engine', says: 'Checks no KV event of the run stored a block in host memory.' }, function (this: KvWorld) {
  const stores = this.engine.outcome.result.batches.flatMap(({ batch }) => batch.events).filter((e) => e.tier === 'HostPinned' && e.data.type === 'Stored');
  this.measure('G2 stores reported', stores.length, 'events');
  expect(stores.length, 'HostPinned Stored events').to.equal(0);
});

/** The one request of the last run with this prompt length. */
function requestOfLength(world: KvWorld, tokens: number): RequestRecord {
  const records = world.engine.outcome.report.per_request.filter((r) => r.input_length === tokens);
  if (records.length !== 1) throw new Error(`${records.length} requests have a ${tokens}-token prompt; the claim needs exactly one`);
  return records[0];
}

Then("the {tokens} request's time to first token is {duration}", { domain: 'engine', level: 'engine', says: 'Checks the one request with this prompt length has exactly this time to first token.' }, function (this: KvWorld, tokens: number, ttft: Nanos) {
  const record = requestOfLength(this, tokens);
  expect(record.ttft_ms, `TTFT of the ${tokens}-token request in ms`).to.equal(msOf(ttft));
  this.measure(`time to first token of the ${tokens}-token request`, record.ttft_ms!, 'ms');
});

Then("the {tokens} request's time to first token is {duration}, {duration} more than the {tokens} request's: the table's difference", { domain: 'engine', level: 'engine', says: 'Checks the two requests\' times to first token differ by exactly the measured table\'s difference between those prompt lengths.' }, function (
  this: KvWorld,
  tokens: number,
  ttft: Nanos,
  difference: Nanos,
  shorter: number,
) {
  const record = requestOfLength(this, tokens);
  const other = requestOfLength(this, shorter);
  expect(record.ttft_ms, `TTFT of the ${tokens}-token request in ms`).to.equal(msOf(ttft));
  expect(record.ttft_ms! - other.ttft_ms!, `TTFT difference in ms`).to.equal(msOf(difference));
  const table = (this.engine.engine.timing as { table?: { prefill: { tokens: number; ms: number }[] } }).table;
  if (!table) throw new Error('the claim compares with the measured table: the scenario needs one');
  const point = (n: number) => table.prefill.find((p) => p.tokens === n)?.ms;
  expect(point(tokens), `the table's prefill point at ${tokens} tokens`).to.not.equal(undefined);
  expect(point(shorter), `the table's prefill point at ${shorter} tokens`).to.not.equal(undefined);
  expect(msOf(difference), "the table's difference in ms").to.equal(point(tokens)! - point(shorter)!);
  this.measure(`TTFT ${tokens} tokens − TTFT ${shorter} tokens`, record.ttft_ms! - other.ttft_ms!, 'ms');
});

Then('every decode pass of {count} sequence(s) lasts {duration}', { domain: 'engine', level: 'engine', says: 'Checks every decode-only pass of this many sequences lasted exactly this.' }, function (this: KvWorld, sequences: number, duration: Nanos) {
  const passes = this.engine.passes.filter((p) => !p.has_prefill && p.decode_sequences === sequences);
  expect(passes.length, `decode passes of ${sequences} sequence(s)`).to.be.greaterThan(0);
  for (const pass of passes) expect(pass.duration_ns, `decode pass of ${sequences} sequence(s) at ${formatNs(pass.start_ns)}`).to.equal(duration);
  this.measure(`decode pass of ${sequences} sequence(s)`, msOf(passes[0].duration_ns), 'ms');
});

Then('every decode pass of {count} sequences lasts {duration}, longer than a pass of {count} sequence(s)', { domain: 'engine', level: 'engine', says: 'Checks every decode pass of this many sequences lasted exactly this, longer than every pass of the fewer.' }, function (this: KvWorld, sequences: number, duration: Nanos, fewer: number) {
  const of = (n: number) => this.engine.passes.filter((p) => !p.has_prefill && p.decode_sequences === n);
  const passes = of(sequences);
  const smaller = of(fewer);
  expect(passes.length, `decode passes of ${sequences} sequences`).to.be.greaterThan(0);
  expect(smaller.length, `decode passes of ${fewer} sequence(s)`).to.be.greaterThan(0);
  for (const pass of passes) {
    expect(pass.duration_ns, `decode pass of ${sequences} sequences at ${formatNs(pass.start_ns)}`).to.equal(duration);
    for (const other of smaller) expect(pass.duration_ns, `longer than the ${fewer}-sequence pass at ${formatNs(other.start_ns)}`).to.be.greaterThan(other.duration_ns);
  }
  this.measure(`decode pass of ${sequences} sequences`, msOf(passes[0].duration_ns), 'ms');
});

/** The items of a written list: `512, 512 and 276` → ['512', '512', '276']. */
function listOf(text: string): string[] {
  return text.split(/,\s*|\s+and\s+/).map((item) => item.trim()).filter(Boolean);
}

Then(/^worker (\d+) prefilled it in passes of ([\d, and]+) new tokens, lasting (.+)$/, { domain: 'engine', level: 'engine', says: 'Checks the worker\'s prefill passes computed exactly these new tokens and lasted exactly these times, in order.', words: 'worker <worker> prefilled it in passes of <tokens, tokens and tokens> new tokens, lasting <time, time and time>' }, function (this: KvWorld, worker: string, tokenList: string, durationList: string) {
  const expectedTokens = listOf(tokenList).map(Number);
  const expectedNs = listOf(durationList).map((text) => this.parseDuration(text));
  const passes = this.engine.passes.filter((p) => p.worker_id === Number(worker) && p.has_prefill);
  expect(passes.map((p) => p.prefill_tokens), `new prefill tokens of each pass of worker ${worker}`).to.deep.equal(expectedTokens);
  expect(passes.map((p) => p.duration_ns), `duration of each prefill pass, ns`).to.deep.equal(expectedNs);
  this.measure(`prefill passes of worker ${worker}`, passes.length, 'passes');
});

Then(/^worker (\d+) decoded it in passes over ([\d, and]+) context tokens, lasting (.+)$/, { domain: 'engine', level: 'engine', says: 'Checks the worker\'s decode passes ran over exactly these context tokens and lasted exactly these times, in order.', words: 'worker <worker> decoded it in passes over <tokens, tokens and tokens> context tokens, lasting <time, time and time>' }, function (this: KvWorld, worker: string, contextList: string, durationList: string) {
  const passes = this.engine.passes.filter((p) => p.worker_id === Number(worker) && !p.has_prefill && p.decode_sequences > 0);
  expect(passes.map((p) => p.decode_context_tokens), `context tokens of each decode pass of worker ${worker}`).to.deep.equal(listOf(contextList).map(Number));
  expect(passes.map((p) => p.duration_ns), `duration of each decode pass, ns`).to.deep.equal(listOf(durationList).map((text) => this.parseDuration(text)));
  this.measure(`decode passes of worker ${worker}`, passes.length, 'passes');
});

/** The one request of the last run that arrived at this instant. */
function requestArrivingAt(world: KvWorld, at: Nanos): RequestRecord {
  const records = world.engine.outcome.report.per_request.filter((r) => r.arrival_ms === msOf(at) && r.request_id !== 'perturbation-probe');
  if (records.length !== 1) throw new Error(`${records.length} requests arrived at ${formatNs(at)}; the claim needs exactly one`);
  return records[0];
}

Then(
  'the request arriving at {duration} waited {duration} in the queue, prefilled in a pass of {duration}, and its time to first token is {duration}', { domain: 'engine', level: 'engine', says: 'Checks the one request arriving then queued exactly this long, was prefilled in a pass of exactly this, and its time to first token is their sum.' },
  function (this: KvWorld, at: Nanos, queue: Nanos, prefill: Nanos, ttft: Nanos) {
    const record = requestArrivingAt(this, at);
    expect(record.queue_ms, `queue time of ${record.request_id} in ms`).to.equal(msOf(queue));
    const admitted = at + queue;
    const pass = this.engine.passes.find((p) => p.worker_id === record.worker_id && p.start_ns === admitted);
    if (!pass) throw new Error(`no pass of worker ${record.worker_id} started at ${formatNs(admitted)}`);
    expect(pass.has_prefill, `the pass at ${formatNs(admitted)} computes a prefill`).to.equal(true);
    expect(pass.duration_ns, `duration of the pass at ${formatNs(admitted)}`).to.equal(prefill);
    expect(record.ttft_ms, `TTFT of ${record.request_id} in ms`).to.equal(msOf(ttft));
    expect(msOf(ttft)).to.equal(msOf(queue) + msOf(prefill));
    this.measure(`time to first token of the request arriving at ${formatNs(at)}`, record.ttft_ms!, 'ms');
  },
);

Then(
  'the request arriving at {duration} has its second token {duration} after its first, and {int} output tokens {duration} apart on average, its inter-token latency', { domain: 'engine', level: 'engine', says: 'Checks the request\'s time to second token, its output length and its inter-token latency, exactly.' },
  function (this: KvWorld, at: Nanos, ttst: Nanos, tokens: number, itl: Nanos) {
    const record = requestArrivingAt(this, at);
    expect(record.time_to_second_token_ms, `time to second token of ${record.request_id} in ms`).to.equal(msOf(ttst));
    expect(record.output_length, `output tokens of ${record.request_id}`).to.equal(tokens);
    expect(record.inter_token_latency_ms, `inter-token latency of ${record.request_id} in ms`).to.equal(msOf(itl));
    expect(record.last_token_ms! - record.first_token_ms!, 'first to last token, ms').to.equal((msOf(itl) * (tokens - 1)));
    this.measure(`inter-token latency of the request arriving at ${formatNs(at)}`, record.inter_token_latency_ms!, 'ms');
  },
);

Then(
  "the run's mean inter-token latency is {duration}, the mean over requests, not {duration}, the mean of all gaps pooled", { domain: 'engine', level: 'engine', says: 'Checks the run\'s mean inter-token latency over requests, and the pooled mean of every gap, exactly.' },
  function (this: KvWorld, perRequest: Nanos, pooled: Nanos) {
    const summary = this.engine.outcome.report.summary;
    expect(summary.metrics.inter_token_latency_ms.mean, 'mean of per-request ITL, ms').to.equal(msOf(perRequest));
    expect(summary.itl_ms.mean, 'mean of every gap pooled (the legacy itl_ms), ms').to.equal(msOf(pooled));
    this.measure('mean inter-token latency over requests', summary.metrics.inter_token_latency_ms.mean!, 'ms');
  },
);

Then('the request arriving at {duration} ends {duration} after it arrived, its end-to-end latency', { domain: 'engine', level: 'engine', says: 'Checks the request\'s end-to-end latency exactly.' }, function (this: KvWorld, at: Nanos, e2e: Nanos) {
  const record = requestArrivingAt(this, at);
  expect(record.e2e_ms, `E2E of ${record.request_id} in ms`).to.equal(msOf(e2e));
  this.measure(`end-to-end latency of the request arriving at ${formatNs(at)}`, record.e2e_ms!, 'ms');
});

Then(
  'the run served {int} requests and {int} output tokens in {duration}: {float} requests and {float} output tokens per second', { domain: 'engine', level: 'engine', says: 'Checks the run\'s finished requests, output tokens, duration and both throughputs, exactly.' },
  function (this: KvWorld, requests: number, tokens: number, duration: Nanos, requestRate: number, tokenRate: number) {
    const m = this.engine.outcome.report.summary.metrics;
    expect(m.request_count, 'finished requests').to.equal(requests);
    expect(m.benchmark_duration_ms, 'virtual duration, first arrival to last finish, ms').to.equal(msOf(duration));
    expect(m.output_sequence_length.mean! * m.request_count, 'output tokens').to.equal(tokens);
    expect(m.request_throughput_per_s, 'requests per second').to.equal(requestRate);
    expect(m.output_token_throughput_per_s, 'output tokens per second').to.equal(tokenRate);
    this.measure('output token throughput', m.output_token_throughput_per_s, 'tokens/s');
  },
);

Then('{int} of the {int} requests meet the objective: a goodput share of {int}%', { domain: 'slo', level: 'engine', says: 'Checks exactly this many of the run\'s requests met the service-level objective, and the goodput share.' }, function (this: KvWorld, meeting: number, total: number, percent: number) {
  const goodput = this.engine.outcome.report.summary.metrics.goodput;
  if (!goodput) throw new Error('the run has no goodput: the scenario sets no service-level objective');
  expect(goodput.requests_meeting_slo, 'requests meeting every objective').to.equal(meeting);
  expect(this.engine.outcome.report.summary.metrics.request_count, 'finished requests').to.equal(total);
  expect(goodput.share * 100, 'goodput share, %').to.equal(percent);
  this.measure('goodput share', goodput.share * 100, '%');
});
