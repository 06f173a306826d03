// Named, seeded random streams (DET-1). Each component draws from its own stream, derived from
// the run seed and the stream's name, so adding a draw in one component never shifts another's.
import seedrandom from 'seedrandom';

/** The one interface the simulator uses for randomness. */
export interface RandomStream {
  /** A uniform draw in [0, 1). */
  next(): number;
  /** A uniform integer in [0, bound). */
  below(bound: number): number;
}

class AleaStream implements RandomStream {
  private readonly prng: seedrandom.PRNG;
  constructor(seedText: string) {
    this.prng = seedrandom.alea(seedText);
  }
  next(): number {
    return this.prng();
  }
  below(bound: number): number {
    if (!Number.isInteger(bound) || bound <= 0) throw new RangeError(`below(${bound}): bound must be a positive integer`);
    return Math.floor(this.prng() * bound);
  }
}

/** The run's streams, created on first use by name. */
export class RandomStreams {
  private readonly streams = new Map<string, RandomStream>();
  constructor(readonly seed: number) {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`seed ${seed} must be an integer`);
  }
  stream(name: string): RandomStream {
    let stream = this.streams.get(name);
    if (!stream) {
      stream = new AleaStream(`kvqual:${this.seed}:${name}`);
      this.streams.set(name, stream);
    }
    return stream;
  }
}
