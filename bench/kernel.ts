// Kernel throughput: a generated schedule of 1,000,000 events (mixed instants, phases and order
// keys) drained through `Kernel`, where every fourth action schedules a follow-up, some at the
// same instant (in any phase, even an earlier one) and some a few instants later. Figure: events per second.
import { Kernel, Phase } from '../src/kernel';
import type { Benchmark, PassResult } from './harness';
import { timePass } from './harness';

const TOTAL_EVENTS = 1_000_000;
const FOLLOW_UP_EVERY = 4;
/**
 * Events scheduled up front; actions schedule the remaining 240,000 as follow-ups. The last one is
 * due at action 4 × 240,000 = 960,000, well before the 1,000,000th, so the total is exact.
 */
const INITIAL_EVENTS = 760_000;
/** Distinct instants the initial events spread over: about ten events per instant. */
const INSTANTS = 100_000;
const INSTANT_SPACING_NS = 250_000;
const PHASE_COUNT = 6;

/** A fixed pseudo-random schedule (xorshift32), so every pass and every run sees the same one. */
interface Schedule {
  times: Float64Array;
  phases: Uint8Array;
  orders: Uint32Array;
}

function xorshift32(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
}

function generateSchedule(): Schedule {
  const draw = xorshift32(1893);
  const schedule: Schedule = {
    times: new Float64Array(TOTAL_EVENTS),
    phases: new Uint8Array(TOTAL_EVENTS),
    orders: new Uint32Array(TOTAL_EVENTS),
  };
  for (let i = 0; i < TOTAL_EVENTS; i++) {
    schedule.times[i] = Math.floor(draw() * INSTANTS) * INSTANT_SPACING_NS;
    schedule.phases[i] = 1 + Math.floor(draw() * PHASE_COUNT);
    schedule.orders[i] = Math.floor(draw() * 64);
  }
  return schedule;
}

/**
 * Drains the schedule. Entries [0, INITIAL_EVENTS) are scheduled up front; each follow-up takes
 * the next entry, using its phase and order, and its time as a delay of 0 (same instant) or up
 * to a few instants, never in the past.
 */
function drain(schedule: Schedule): number {
  const kernel = new Kernel();
  let nextEntry = INITIAL_EVENTS;
  let actionsRun = 0;
  const action = (): void => {
    actionsRun++;
    if (actionsRun % FOLLOW_UP_EVERY !== 0 || nextEntry >= TOTAL_EVENTS) return;
    const entry = nextEntry++;
    const delayNs = entry % 3 === 0 ? 0 : schedule.times[entry] % (4 * INSTANT_SPACING_NS);
    kernel.at(kernel.now + delayNs, schedule.phases[entry] as Phase, schedule.orders[entry], action);
  };
  for (let i = 0; i < INITIAL_EVENTS; i++) kernel.at(schedule.times[i], schedule.phases[i] as Phase, schedule.orders[i], action);
  kernel.run();
  if (kernel.eventsProcessed !== TOTAL_EVENTS) throw new Error(`kernel bench ran ${kernel.eventsProcessed} events, expected ${TOTAL_EVENTS}`);
  return kernel.eventsProcessed;
}

export function kernelBenchmark(): Benchmark {
  const schedule = generateSchedule();
  return {
    name: 'kernel',
    unit: 'events',
    targetPerSecond: 2_000_000,
    runPass: (): PassResult => timePass(() => drain(schedule)),
  };
}
