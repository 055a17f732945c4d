/**
 * A small seeded random number generator (sfc32, seeded through splitmix32) for the simulated
 * market. Deterministic: the same seed gives the same sequence on every platform; the whole
 * state is four 32-bit words (`state()` / `SeededRandom.fromState`) so a snapshot can resume it.
 * Never Math.random().
 */

export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  private constructor(state: readonly [number, number, number, number]) {
    [this.a, this.b, this.c, this.d] = state;
  }

  /** A generator from any integer seed. */
  static fromSeed(seed: number): SeededRandom {
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    const random = new SeededRandom([next(), next(), next(), next()]);
    for (let i = 0; i < 12; i++) random.nextUint32();
    return random;
  }

  static fromState(state: readonly number[]): SeededRandom {
    if (state.length !== 4) throw new Error('random state must have 4 words');
    return new SeededRandom([state[0]! >>> 0, state[1]! >>> 0, state[2]! >>> 0, state[3]! >>> 0]);
  }

  state(): [number, number, number, number] {
    return [this.a, this.b, this.c, this.d];
  }

  /** An independent generator derived from this one and a label (e.g. an instrument name). */
  fork(label: string): SeededRandom {
    let hash = 0x811c9dc5;
    for (let i = 0; i < label.length; i++) hash = Math.imul(hash ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return SeededRandom.fromSeed((this.nextUint32() ^ hash) >>> 0);
  }

  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1) with 32 bits of resolution. */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Standard normal by Box–Muller (one draw per call; no cached spare so state stays 4 words). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Exponential with the given rate (mean 1/rate). */
  exponential(rate: number): number {
    return -Math.log(1 - this.next()) / rate;
  }

  /** Poisson count with mean `lambda` (Knuth's product method; lambda is small here). */
  poisson(lambda: number): number {
    if (lambda <= 0) return 0;
    if (lambda > 30) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * this.normal()));
    const limit = Math.exp(-lambda);
    let count = 0;
    let product = this.next();
    while (product > limit) {
      count++;
      product *= this.next();
    }
    return count;
  }
}
