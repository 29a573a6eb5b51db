import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import {
  RangeSet,
  runBatchLoop,
  type BatchEncoder,
  type BatchTransport,
  type EncodedBatch,
  type SendResult,
} from "../../../harness/generators/loop.ts";
import type { GeneratorProgress } from "../../../harness/generators/types.ts";

interface Batch extends EncodedBatch {
  stampedAt: Date | null;
}

/** An in-memory encoder: payload = 10 bytes per event; records the order of encode/stamp calls. */
function memEncoder(log: string[] = []): BatchEncoder<Batch> & { closed: boolean } {
  return {
    closed: false,
    encode(from, count) {
      log.push(`encode ${from}`);
      return { from, count, payload: new Uint8Array(10 * count), stampedAt: null };
    },
    stamp(b, at) {
      log.push(`stamp ${b.from}`);
      b.stampedAt = at;
    },
    async close() {
      this.closed = true;
    },
  };
}

interface Conn {
  id: number;
  open: boolean;
}

/** An in-memory transport whose send is `handler`, after `delayMs`. */
function memTransport(
  handler: (b: Batch) => SendResult | Promise<SendResult>,
  opts: { delayMs?: number; connectFails?: number; log?: string[] } = {},
): BatchTransport<Conn, Batch> & { connects: number; closes: number; sent: Batch[] } {
  let connectFails = opts.connectFails ?? 0;
  return {
    label: "MEM",
    address: "memory:0",
    connects: 0,
    closes: 0,
    sent: [],
    async connect(slot) {
      if (connectFails > 0) {
        connectFails--;
        throw new Error("connection refused");
      }
      this.connects++;
      return { id: slot, open: true };
    },
    async send(_c, b) {
      expect(b.stampedAt).not.toBeNull(); // stamped before it is handed over
      this.sent.push(b);
      opts.log?.push(`send ${b.from}`);
      if (opts.delayMs) await sleep(opts.delayMs);
      const r = await handler(b);
      opts.log?.push(`done ${b.from}`);
      return r;
    },
    async close(c) {
      c.open = false;
      this.closes++;
    },
  };
}

/** Run the loop for `ms` (or until it stops by itself), collecting progress with timestamps. */
async function runFor<C>(
  ms: number,
  o: { batch: number; connections: number; rate: "max" | number; requests?: number; duplicateEvery?: number },
  transport: BatchTransport<C, Batch>,
  encoder: BatchEncoder<Batch>,
) {
  const ac = new AbortController();
  const progress: Array<GeneratorProgress & { t: number }> = [];
  const t = setTimeout(() => ac.abort(), ms);
  const final = await runBatchLoop(
    { ...o, signal: ac.signal, genId: 5, onProgress: (p) => progress.push({ ...p, t: performance.now() }) },
    transport,
    encoder,
  );
  clearTimeout(t);
  return { final, progress };
}

describe("batch loop", () => {
  it("holds a fixed rate of 20000 events/s within ±10 % over ~2 s, reporting progress every 250 ms", async () => {
    const transport = memTransport((b) => ({ accepted: b.count }), { delayMs: 3 });
    const encoder = memEncoder();
    const { final, progress } = await runFor(
      2200,
      { batch: 100, connections: 2, rate: 20000 },
      transport,
      encoder,
    );
    const a = progress[0]!;
    const b = progress.at(-2)!; // the last interval tick (the very last report is the final one)
    const rate = ((b.sent - a.sent) * 1000) / (b.t - a.t);
    console.log(
      `loop fixed: ${rate.toFixed(0)} events/s over ${((b.t - a.t) / 1000).toFixed(2)} s (target 20000)`,
    );
    expect(rate).toBeGreaterThan(18000);
    expect(rate).toBeLessThan(22000);
    expect(final.sent / 2.2).toBeGreaterThan(18000);
    expect(final.sent / 2.2).toBeLessThan(22000);
    expect(progress.length).toBeGreaterThanOrEqual(8);
    for (let i = 1; i < progress.length - 1; i++)
      expect(progress[i]!.t - progress[i - 1]!.t).toBeLessThan(400);
    expect(final).toMatchObject({
      genId: 5,
      accepted: final.sent,
      rejected: 0,
      rejectedRanges: [],
      errors: [],
    });
    expect(final.requests).toBe(final.sent / 100);
    expect(final.bytes).toBe(final.sent * 10);
    // seqs are the contiguous prefix, in order
    expect(transport.sent.map((x) => x.from)).toEqual(
      Array.from({ length: final.requests }, (_, k) => k * 100),
    );
    expect(final.latencyMs.p50).toBeGreaterThanOrEqual(2.5); // a 3 ms send (timers may fire a little early)
    expect(encoder.closed).toBe(true);
    expect(transport.closes).toBe(transport.connects);
  });

  it("turns per-item rejections into sorted, merged rejected ranges", async () => {
    // items with seq % 10 in {3, 4} are refused; batch 7 (seqs 70..79) fails as a whole
    const transport = memTransport((b) => {
      if (b.from === 70) throw new Error("HTTP 503");
      const rejectedSeqs: number[] = [];
      for (let q = b.from; q < b.from + b.count; q++) if (q % 10 === 3 || q % 10 === 4) rejectedSeqs.push(q);
      return {
        accepted: b.count - rejectedSeqs.length,
        rejectedSeqs: rejectedSeqs.reverse(),
        errors: ["429 es_rejected_execution_exception"],
      };
    });
    const ac = new AbortController();
    const final = await runBatchLoop(
      {
        batch: 10,
        connections: 3,
        rate: "max",
        signal: ac.signal,
        genId: 0,
        onProgress: () => {
          if (transport.sent.length >= 10) ac.abort();
        },
      },
      {
        ...transport,
        send: async (c, b) => {
          const r = await transport.send(c, b);
          if (transport.sent.length >= 10) ac.abort();
          return r;
        },
      },
      memEncoder(),
    );
    expect(final.sent).toBeGreaterThanOrEqual(100);
    expect(final.sent % 10).toBe(0);
    const n = final.sent / 10;
    const expected: Array<[number, number]> = [];
    for (let k = 0; k < n; k++) {
      if (k === 7) expected.push([70, 79]);
      else expected.push([k * 10 + 3, k * 10 + 4]);
    }
    // [63,64] + [70,79] stay apart; [70,79] does not touch [83,84]
    expect(final.rejectedRanges).toEqual(expected);
    expect(final.rejected).toBe((n - 1) * 2 + 10);
    expect(final.accepted).toBe((n - 1) * 8);
    expect(final.accepted + final.rejected).toBe(final.sent);
    expect(final.errors.some((e) => /MEM seqs 70\.\.79: HTTP 503/.test(e))).toBe(true);
    expect(final.errors.some((e) => /2 items rejected: 429 es_rejected_execution_exception/.test(e))).toBe(
      true,
    );
  });

  it("on stop, finishes the batch in flight and starts no other", async () => {
    const log: string[] = [];
    const transport = memTransport((b) => ({ accepted: b.count }), { delayMs: 400, log });
    const encoder = memEncoder(log);
    const ac = new AbortController();
    const started = performance.now();
    setTimeout(() => ac.abort(), 100);
    const final = await runBatchLoop(
      { batch: 50, connections: 1, rate: "max", signal: ac.signal, genId: 1, onProgress: () => undefined },
      transport,
      encoder,
    );
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(390); // waited for the send, did not cut it off
    expect(final).toMatchObject({ sent: 50, accepted: 50, rejected: 0, requests: 1 });
    // the next batch was encoded while the first was in flight, but never stamped nor sent
    expect(log).toEqual(["encode 0", "stamp 0", "send 0", "encode 50", "done 0"]);
    expect(final.latencyMs.max).toBeGreaterThanOrEqual(390);
  });

  it("stops on request and reports progress when every send completes at once (a fast socket)", async () => {
    const transport = memTransport((b) => ({ accepted: b.count })); // no delay: send resolves immediately
    const started = performance.now();
    const { final, progress } = await runFor(
      600,
      { batch: 10, connections: 1, rate: "max" },
      transport,
      memEncoder(),
    );
    // timers fired: the stop came on time and progress was reported while the loop ran
    expect(performance.now() - started).toBeLessThan(3000);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(final.accepted).toBe(final.sent);
    expect(final.sent).toBeGreaterThan(0);
  });

  it("stops after 10 consecutive failed sends, listing the whole range as rejected", async () => {
    const transport = memTransport(() => {
      throw new Error('relation "no_such_table" does not exist');
    });
    const { final } = await runFor(
      10_000,
      { batch: 100, connections: 1, rate: "max" },
      transport,
      memEncoder(),
    );
    expect(final).toMatchObject({ sent: 1000, accepted: 0, rejected: 1000, rejectedRanges: [[0, 999]] });
    expect(final.errors).toHaveLength(11);
    expect(final.errors[0]).toBe('MEM seqs 0..99: relation "no_such_table" does not exist');
    expect(final.errors.at(-1)).toMatch(/10 consecutive failures/);
    // every failed send dropped its connection
    expect(transport.connects).toBe(10);
  });

  it("keeps the batch through failed connects and counts an inconsistent answer as a rejected batch", async () => {
    let calls = 0;
    const transport = memTransport(
      (b) => {
        calls++;
        return calls === 2
          ? { accepted: b.count } /* fine */
          : calls === 3
            ? { accepted: 1, rejectedSeqs: [b.from] }
            : { accepted: b.count };
      },
      { connectFails: 2 },
    );
    const ac = new AbortController();
    const final = await runBatchLoop(
      { batch: 4, connections: 1, rate: "max", signal: ac.signal, genId: 0, onProgress: () => undefined },
      {
        ...transport,
        connect: (s) => transport.connect(s),
        send: async (c, b) => {
          const r = await transport.send(c, b);
          if (calls >= 4) ac.abort();
          return r;
        },
      },
      memEncoder(),
    );
    expect(final.sent).toBe(16);
    expect(final.rejectedRanges).toEqual([[8, 11]]); // batch 3 answered 1 + 1 items of 4
    expect(final.accepted).toBe(12);
    expect(final.errors.filter((e) => e.startsWith("connect memory:0: connection refused"))).toHaveLength(2);
    expect(
      final.errors.some((e) =>
        /seqs 8\.\.11: receiver answered 1 accepted \+ 1 rejected items for a batch of 4/.test(e),
      ),
    ).toBe(true);
  });

  it("measures fixed-rate latency from the intended start (coordinated omission)", async () => {
    let n = 0;
    // 1000 events/s in batches of 10: one batch every 10 ms; the 5th send stalls 300 ms on the only connection
    const transport = memTransport(async (b) => {
      if (++n === 5) await sleep(300);
      return { accepted: b.count };
    });
    const { final } = await runFor(800, { batch: 10, connections: 1, rate: 1000 }, transport, memEncoder());
    // the batches due during the stall waited for the connection: their latency counts that wait
    expect(final.latencyMs.max).toBeGreaterThanOrEqual(290);
    expect(final.latencyMs.mean).toBeGreaterThan(20);
    // and the loop caught up: the offered load stayed at the rate
    expect(final.sent).toBeGreaterThanOrEqual(700);
  });
});

describe("RangeSet", () => {
  it("merges adjacent and overlapping ranges in any order", () => {
    const r = new RangeSet();
    r.add(10, 19);
    r.add(0, 4);
    r.add(20, 20);
    r.add(5, 5);
    r.add(30, 35);
    r.addSeqs([37, 36, 50, 40]);
    expect(r.ranges).toEqual([
      [0, 5],
      [10, 20],
      [30, 37],
      [40, 40],
      [50, 50],
    ]);
  });
});

describe("pipelining", () => {
  it("keeps N requests in flight per connection on one connect each; every answer maps to its own batch", async () => {
    const inFlight = new Map<number, number>(); // connection id → requests on it now
    let most = 0;
    const transport = memTransport(
      (b) =>
        b.from === 300
          ? { accepted: 0, rejectedSeqs: Array.from({ length: b.count }, (_, i) => b.from + i) }
          : { accepted: b.count },
      { delayMs: 5 },
    );
    const send = transport.send.bind(transport);
    transport.send = async (c, b) => {
      inFlight.set(c.id, (inFlight.get(c.id) ?? 0) + 1);
      most = Math.max(most, inFlight.get(c.id)!);
      try {
        return await send(c, b);
      } finally {
        inFlight.set(c.id, inFlight.get(c.id)! - 1);
      }
    };
    const ac = new AbortController();
    const final = await runBatchLoop(
      {
        batch: 100,
        connections: 2,
        pipelining: 3,
        rate: "max",
        requests: 30,
        signal: ac.signal,
        genId: 0,
        onProgress: () => undefined,
      },
      transport,
      memEncoder(),
    );
    expect(most).toBe(3);
    expect(transport.connects).toBe(2);
    expect(final).toMatchObject({
      sent: 3000,
      accepted: 2900,
      rejected: 100,
      requests: 30,
      rejectedRanges: [[300, 399]],
    });
    expect(transport.sent.map((b) => b.from)).toEqual(Array.from({ length: 30 }, (_, i) => i * 100));
  });
});

describe("fixed workloads and deliberate repeats", () => {
  it("requests: N sends exactly N batches and ends by itself, before any abort", async () => {
    const transport = memTransport((b) => ({ accepted: b.count }));
    const t0 = performance.now();
    const { final } = await runFor(
      10_000,
      { batch: 10, connections: 2, rate: "max", requests: 1000 },
      transport,
      memEncoder(),
    );
    expect(performance.now() - t0).toBeLessThan(9_000); // did not wait for the 10 s abort
    expect(final).toMatchObject({ sent: 10_000, accepted: 10_000, requests: 1000, rejected: 0 });
    expect(transport.sent.map((b) => b.from)).toEqual(Array.from({ length: 1000 }, (_, i) => i * 10));
  });

  it("duplicateEvery: k re-sends every k-th batch once answered, with the same bytes, counted as repeated, not sent", async () => {
    const transport = memTransport((b) => ({ accepted: b.count }));
    const { final } = await runFor(
      10_000,
      { batch: 100, connections: 1, rate: "max", requests: 12, duplicateEvery: 5 },
      transport,
      memEncoder(),
    );
    // batches 5 and 10 (1-based) go out twice, right after their first answer
    expect(transport.sent.map((b) => b.from)).toEqual([
      0, 100, 200, 300, 400, 400, 500, 600, 700, 800, 900, 900, 1000, 1100,
    ]);
    const [first, again] = transport.sent.filter((b) => b.from === 400);
    expect(again).toBe(first); // the same encoded batch: same payload, same sent_at
    expect(final).toMatchObject({
      sent: 1200,
      accepted: 1200,
      repeated: 200,
      requests: 14,
      bytes: 1400 * 10,
    });
  });
});

describe("release: the encoder gets each batch back once the loop is done with it", () => {
  it("after its answer (and its deliberate repeat), never while sent or after a failed send", async () => {
    const log: string[] = [];
    const encoder: BatchEncoder<Batch> = {
      ...memEncoder(log),
      release: (b) => log.push(`release ${b.from}`),
    };
    // the batch from 30 fails (thrown send): not released; the one from 20 is repeated: released after the repeat
    const transport = memTransport(
      (b) => {
        if (b.from === 30) throw new Error("connection reset");
        return { accepted: b.count };
      },
      { log },
    );
    const { final } = await runFor(
      10_000,
      { batch: 10, connections: 1, rate: "max", requests: 5, duplicateEvery: 3 },
      transport,
      encoder,
    );
    expect(final).toMatchObject({ sent: 50, accepted: 40, rejected: 10 });
    const released = log.filter((l) => l.startsWith("release")).map((l) => Number(l.split(" ")[1]));
    expect(released.sort((a, b) => a - b)).toEqual([0, 10, 20, 40]);
    for (const from of released) {
      // every send of the batch was answered before it came back
      expect(log.lastIndexOf(`done ${from}`)).toBeLessThan(log.indexOf(`release ${from}`));
    }
    expect(log.indexOf("release 20")).toBeGreaterThan(log.lastIndexOf("send 20"));
    expect(log.filter((l) => l === "send 20")).toHaveLength(2);
  });
});
