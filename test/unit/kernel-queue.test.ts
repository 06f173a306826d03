// The kernel's queue keeps later entries in buckets by the digits of their times, and only the
// instant's entries in order (src/kernelQueue.ts): on generated schedules it gives out entries in
// the order a plain sort by (time, phase, order, seq) gives, with entries added between removals at
// the time just taken out or later, times on both sides of 2^32 and up to the clock's end, entries
// added before an instant already found (a run stopped at a limit), and bursts that take the queue
// past the entries it holds in one heap (it then makes its buckets, with entries already queued).
import { test } from 'node:test';
import { expect } from 'chai';
import fc from 'fast-check';
import { MonotoneQueue } from '../../src/kernelQueue';
import { Kernel, Phase } from '../../src/kernel';

interface Entry {
  time: number;
  phase: number;
  order: number;
  seq: number;
}

function compareEntries(a: Entry, b: Entry): number {
  return a.time - b.time || a.phase - b.phase || a.order - b.order || a.seq - b.seq;
}

/** The plain form: every queued entry in an array, the earliest found by a scan. */
function takeEarliest(queued: Entry[]): Entry {
  let best = 0;
  for (let i = 1; i < queued.length; i++) if (compareEntries(queued[i], queued[best]) < 0) best = i;
  return queued.splice(best, 1)[0];
}

/** A delay after the last time taken out: often none (ties), small, near a digit's edge, or far (past 2^32, up to 2^53). */
const delay = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 0, max: 8 }),
  fc.integer({ min: 0, max: 1 << 20 }),
  fc.constantFrom(255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 40),
  fc.integer({ min: 0, max: Math.floor(Number.MAX_SAFE_INTEGER / 4) }),
);

type Push = { kind: 'push'; delay: number; phase: number; order: number };
type Op = Push | { kind: 'burst'; pushes: Push[] } | { kind: 'pop'; count: number } | { kind: 'peek' };

const push = fc.record({ kind: fc.constant('push' as const), delay, phase: fc.integer({ min: 1, max: 6 }), order: fc.integer({ min: -2, max: 3 }) });

const ops = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: push },
    // More than the queue's one heap holds (128) at once, now and then.
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('burst' as const), pushes: fc.array(push, { minLength: 60, maxLength: 160 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('pop' as const), count: fc.integer({ min: 1, max: 6 }) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'peek' as const }) },
  ),
  { maxLength: 300 },
);

test('the queue gives out entries in (time, phase, order, seq) order, as a sort of them does', () => {
  fc.assert(
    fc.property(ops, fc.boolean(), (steps, fromLast) => {
      const queue = new MonotoneQueue();
      const plain: Entry[] = [];
      let seq = 0;
      // Entries may be added at or after the last time taken out; `fromLast` adds some relative to the earliest queued (a later instant already found).
      let floor = 0;
      const taken: Entry[] = [];
      const expected: Entry[] = [];
      const add = (step: Push): void => {
        const time = Math.min(floor + step.delay, Number.MAX_SAFE_INTEGER);
        const entry = { time, phase: step.phase, order: step.order, seq: seq++ };
        plain.push(entry);
        queue.push(time, entry.phase, entry.order, entry.seq, () => taken.push(entry));
      };
      for (const step of steps) {
        if (step.kind === 'push') add(step);
        else if (step.kind === 'burst') step.pushes.forEach(add);
        else if (step.kind === 'peek') {
          // Finding the next instant, then adding entries before it, is what a run stopped at a limit does.
          if (queue.settle() && !fromLast) expect(queue.topTime()).to.equal(Math.min(...plain.map((e) => e.time)));
        } else {
          for (let i = 0; i < step.count && plain.length > 0; i++) {
            const earliest = takeEarliest(plain);
            expected.push(earliest);
            expect(queue.settle()).to.equal(true);
            expect([queue.topTime(), queue.topPhase(), queue.topOrder(), queue.topSeq()]).to.deep.equal([earliest.time, earliest.phase, earliest.order, earliest.seq]);
            queue.pop()();
            floor = earliest.time;
          }
        }
        expect(queue.size).to.equal(plain.length);
      }
      while (plain.length > 0) {
        expected.push(takeEarliest(plain));
        expect(queue.settle()).to.equal(true);
        queue.pop()();
      }
      expect(queue.settle()).to.equal(false);
      expect(taken).to.deep.equal(expected);
    }),
    { numRuns: 300 },
  );
});

/** The plain form of the kernel: queued actions in an array, the earliest in (time, phase, order, seq) run next. */
class PlainKernel {
  private queued: (Entry & { action: () => void })[] = [];
  private seq = 0;
  now = 0;
  at(time: number, phase: Phase, order: number, action: () => void): void {
    this.queued.push({ time, phase, order, seq: this.seq++, action });
  }
  run(limit = Number.MAX_SAFE_INTEGER): void {
    while (this.queued.length > 0) {
      let best = 0;
      for (let i = 1; i < this.queued.length; i++) if (compareEntries(this.queued[i], this.queued[best]) < 0) best = i;
      if (this.queued[best].time > limit) return;
      const [entry] = this.queued.splice(best, 1);
      this.now = entry.time;
      entry.action();
    }
  }
}

test('the kernel on the queue runs a generated schedule, with follow-ups (some at the same instant in an earlier phase) and stops at limits, as the plain kernel does', () => {
  const schedule = fc.array(fc.record({ time: fc.integer({ min: 0, max: 3000 }), phase: fc.integer({ min: 1, max: 6 }), order: fc.integer({ min: 0, max: 3 }), follow: fc.nat({ max: 400 }) }), { minLength: 1, maxLength: 120 });
  const drive = (kernel: Kernel | PlainKernel, entries: { time: number; phase: number; order: number; follow: number }[], limits: number[]): number[] => {
    const ran: number[] = [];
    let label = 0;
    const add = (time: number, phase: number, order: number, follow: number): void => {
      const mine = label++;
      kernel.at(time, phase as Phase, order, () => {
        ran.push(mine);
        if (follow > 0 && label < 400) add(kernel.now + (follow % 7) * 97 * (follow % 2), 1 + (follow % 6), follow % 3, follow >> 1);
      });
    };
    for (const entry of entries) add(entry.time, entry.phase, entry.order, entry.follow);
    for (const limit of limits) {
      kernel.run(Math.max(limit, kernel.now));
      // After a stop, an entry at the clock (before the next instant the queue found) still runs first.
      add(kernel.now, Phase.PassStart, 9, 0);
    }
    kernel.run();
    return ran;
  };
  fc.assert(
    fc.property(schedule, fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 4 }), (entries, limits) => {
      const sortedLimits = [...limits].sort((a, b) => a - b);
      expect(drive(new Kernel(), entries, sortedLimits)).to.deep.equal(drive(new PlainKernel(), entries, sortedLimits));
    }),
    { numRuns: 200 },
  );
});
