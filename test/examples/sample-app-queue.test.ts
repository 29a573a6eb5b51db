// The sample application's bounded per-worker queue (examples/sample-app/queue.ts): a full ring drops and counts,
// never blocks; the consumer drains in order; capacity 1 keeps exactly one record between drains.
import { describe, expect, it } from "vitest";
import { ringBuffer, SeqRing } from "../../examples/sample-app/queue.ts";

describe("sample app SeqRing", () => {
  it("keeps up to capacity, drops and counts the rest, and drains in order", () => {
    const buf = ringBuffer(3);
    const producer = new SeqRing(buf);
    const consumer = new SeqRing(buf);
    expect([0, 1, 2, 3, 4].map((s) => producer.offer(s))).toEqual([true, true, true, false, false]);
    expect(consumer.dropped).toBe(2);
    const out: number[] = [];
    expect(consumer.drain(out)).toBe(3);
    expect(out).toEqual([0, 1, 2]);
    // room again after the drain; the ring wraps
    expect([5, 6].map((s) => producer.offer(s))).toEqual([true, true]);
    out.length = 0;
    consumer.drain(out);
    expect(out).toEqual([5, 6]);
    expect(producer.dropped).toBe(2);
  });

  it("with capacity 1, keeps one record between drains", () => {
    const ring = new SeqRing(ringBuffer(1));
    expect(ring.offer(10)).toBe(true);
    expect(ring.offer(11)).toBe(false);
    const out: number[] = [];
    ring.drain(out);
    expect(ring.offer(12)).toBe(true);
    ring.drain(out);
    expect(out).toEqual([10, 12]);
    expect(ring.dropped).toBe(1);
    expect(() => ringBuffer(0)).toThrow(RangeError);
  });
});
