/**
 * A bounded single-producer, single-consumer ring of record seqs over a SharedArrayBuffer: one per request worker
 * (the producer), all drained by the one sender thread (the consumer), as in write-up 003 (docs/write-ups.md): a
 * record that finds its worker's ring full is dropped and counted, never waited for.
 *
 * Layout (Int32Array): [0] head (next slot the producer writes, only it stores), [1] tail (next slot the consumer
 * reads, only it stores), [2] dropped (records the producer found no room for), [3] unused, then `capacity` slots.
 * head − tail is the fill; both only grow (2^31 records per run is far beyond a sample benchmark).
 */

const HEAD = 0;
const TAIL = 1;
const DROPPED = 2;
const SLOTS = 4;

/** The shared memory of one ring of `capacity` seqs (≥ 1). */
export function ringBuffer(capacity: number): SharedArrayBuffer {
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new RangeError(`queue capacity must be a positive integer, got ${capacity}`);
  return new SharedArrayBuffer((SLOTS + capacity) * 4);
}

/** One ring, seen by either side; `offer` is the producer's, `drain` the consumer's. */
export class SeqRing {
  private readonly a: Int32Array;
  readonly capacity: number;

  constructor(buffer: SharedArrayBuffer) {
    this.a = new Int32Array(buffer);
    this.capacity = this.a.length - SLOTS;
  }

  /** Producer: enqueue `seq`, or count a drop when the ring is full. Returns false on a drop. */
  offer(seq: number): boolean {
    const h = this.a[HEAD]!;
    if (h - Atomics.load(this.a, TAIL) >= this.capacity) {
      Atomics.add(this.a, DROPPED, 1);
      return false;
    }
    this.a[SLOTS + (h % this.capacity)] = seq;
    Atomics.store(this.a, HEAD, h + 1);
    return true;
  }

  /** Consumer: every seq enqueued so far, in order, appended to `out`; returns how many. */
  drain(out: number[]): number {
    const t = this.a[TAIL]!;
    const h = Atomics.load(this.a, HEAD);
    for (let i = t; i < h; i++) out.push(this.a[SLOTS + (i % this.capacity)]!);
    Atomics.store(this.a, TAIL, h);
    return h - t;
  }

  /** records dropped so far */
  get dropped(): number {
    return Atomics.load(this.a, DROPPED);
  }
}
