import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { decodeMulti, decodeMultiStream, encode, ExtData } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { fluentForward, fluentForwardSchema } from "../../../harness/generators/fluent-forward.ts";
import { generators } from "../../../harness/generators/index.ts";
import { fields, seqsOf, startGenerator } from "./run-generator.ts";

/** One PackedForward message as a receiver decodes it, independently of our encoder (@msgpack/msgpack). */
interface Received {
  conn: number;
  tag: string;
  entries: Array<{ time: ExtData; record: Record<string, unknown> }>;
  option: Record<string, unknown>;
  entriesType: "bin" | "str";
}

/**
 * A Forward protocol v1 receiver on 127.0.0.1: decodes every message with @msgpack/msgpack (entries bin → decodeMulti)
 * and answers each one through `reply` (return bytes to write, or null to stay silent).
 */
async function receiver(
  reply: (m: Received, k: number) => Uint8Array | null,
  greet?: Uint8Array,
  rawStrings = false,
): Promise<{
  server: Server;
  port: number;
  got: Received[];
  firstBytes: Buffer[];
  conns: number;
  onMessage: (f: (k: number) => void) => void;
}> {
  const got: Received[] = [];
  const firstBytes: Buffer[] = [];
  const sockets = new Set<Socket>();
  let conns = 0;
  let listener: (k: number) => void = () => undefined;
  const server = createServer((socket) => {
    const conn = ++conns;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    if (greet) socket.write(greet);
    socket.once("data", (b: Buffer) => firstBytes.push(Buffer.from(b.subarray(0, 64))));
    void (async () => {
      try {
        // rawStrings: str payloads stay bytes, as msgpack-ruby (Fluentd) reads a str-wrapped event stream
        for await (const msg of decodeMultiStream<undefined>(socket, { rawStrings })) {
          const [rawTag, stream, option] = msg as [
            string | Uint8Array,
            Uint8Array | string,
            Record<string, unknown>,
          ];
          const tag = typeof rawTag === "string" ? rawTag : Buffer.from(rawTag).toString("utf8");
          const bytes = typeof stream === "string" ? Buffer.from(stream, "utf8") : stream;
          const entries = [...decodeMulti(bytes)].map((e) => {
            const [time, record] = e as [ExtData, Record<string, unknown>];
            return { time, record };
          });
          const m: Received = {
            conn,
            tag,
            entries,
            option,
            entriesType: typeof stream === "string" ? "str" : "bin",
          };
          got.push(m);
          const out = reply(m, got.length);
          if (out && !socket.destroyed) socket.write(out);
          listener(got.length);
        }
      } catch {
        socket.destroy();
      }
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const closeAll = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy();
    return closeAll(cb);
  }) as typeof server.close;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    got,
    firstBytes,
    get conns() {
      return conns;
    },
    onMessage: (f) => {
      listener = f;
    },
  };
}

describe("fluent-forward generator (byte-level checks from the Forward protocol v1 spec, decoded by @msgpack/msgpack; no Fluentd here)", () => {
  it("validates its config strictly and is registered", () => {
    expect(fluentForwardSchema.parse({})).toMatchObject({
      batch: 1000,
      ack: false,
      ackTimeoutMs: 190_000,
      tag: "ingestbench",
      entries: "bin",
    });
    expect(() => fluentForwardSchema.parse({ ack: "yes" })).toThrow();
    expect(() => fluentForwardSchema.parse({ require_ack_response: true })).toThrow();
    expect(generators["fluent-forward"]).toBe(fluentForward);
  });

  it("ack off: PackedForward messages [tag, bin entries, {size}] with EventTime ext type 0; seqs 0..sent-1 in order, accepted when written (spec vectors; no Fluentd here)", async () => {
    const r = await receiver(() => null);
    try {
      const run = startGenerator(fluentForward, { batch: 50, tag: "bench.fwd" }, r.port, {}, 5000);
      r.onMessage((k) => {
        if (k >= 20) run.stop();
      });
      const final = await run.done;
      await new Promise((res) => setTimeout(res, 100)); // let the receiver decode the last bytes
      expect(final.errors).toEqual([]);
      expect(final.accepted).toBe(final.sent);
      expect(final.requests).toBe(r.got.length);
      const seqs: number[] = [];
      for (const m of r.got) {
        expect(m.tag).toBe("bench.fwd");
        expect(m.entriesType).toBe("bin");
        expect(m.option).toEqual({ size: m.entries.length }); // no chunk without ack
        for (const { time, record } of m.entries) {
          expect(time).toBeInstanceOf(ExtData);
          expect(time.type).toBe(0);
          const data = time.data as Uint8Array; // decoded ext payload (a function only when encoding)
          expect(data.length).toBe(8);
          const dv = new DataView(data.buffer, data.byteOffset, 8);
          const ms = dv.getUint32(0) * 1000 + dv.getUint32(4) / 1e6;
          expect(ms).toBe(Date.parse(record.ts as string)); // EventTime = the event's first timestamp field
          expect(Object.keys(record)).toEqual([...fields.map((f) => f.name), "gen", "seq", "sent_at"]);
          expect(record.gen).toBe(0);
          expect(Date.parse(record.sent_at as string)).toBeGreaterThan(Date.now() - 60_000);
          seqs.push(record.seq as number);
        }
      }
      expect(seqs).toEqual(Array.from({ length: final.sent }, (_, i) => i));
    } finally {
      r.server.close();
    }
  });

  it("ack on: every message carries a unique chunk; accepted on {ack: chunk}; a missing ack (timeout) and a wrong ack reject exactly that batch and replace the connection (spec Option/Response; no Fluentd here)", async () => {
    // message 3 gets no answer, message 6 an ack for another chunk; every other message its own ack
    const r = await receiver((m, k) =>
      k === 3 ? null : encode({ ack: k === 6 ? "not-the-chunk" : m.option.chunk }),
    );
    try {
      const run = startGenerator(
        fluentForward,
        { batch: 40, ack: true, ackTimeoutMs: 300 },
        r.port,
        {},
        8000,
      );
      r.onMessage((k) => {
        if (k >= 12) run.stop();
      });
      const final = await run.done;
      const chunks = r.got.map((m) => m.option.chunk);
      expect(new Set(chunks).size).toBe(chunks.length);
      for (const m of r.got) {
        expect(typeof m.option.chunk).toBe("string");
        expect(m.option.size).toBe(m.entries.length);
      }
      const batchSeqs = (k: number): number[] => r.got[k - 1]!.entries.map((e) => e.record.seq as number);
      expect(seqsOf(final.rejectedRanges)).toEqual([...batchSeqs(3), ...batchSeqs(6)]);
      expect(final.accepted).toBe(final.sent - 80);
      expect(final.errors.some((e) => /no ack for chunk .* within 300 ms/.test(e))).toBe(true);
      expect(final.errors.some((e) => e.includes('expected {"ack":"') && e.includes("not-the-chunk"))).toBe(
        true,
      );
      expect(r.conns).toBe(3); // the first connection, and one after each failure
      expect(r.got[3]!.conn).toBe(2);
    } finally {
      r.server.close();
    }
  });

  it("a receiver that opens the shared_key handshake (HELO) fails every batch with a message that says so (spec Handshake; no Fluentd here)", async () => {
    const helo = encode(["HELO", { nonce: new Uint8Array(16), auth: new Uint8Array(0), keepalive: true }]);
    const r = await receiver(() => null, helo);
    try {
      const run = startGenerator(
        fluentForward,
        { batch: 10, ack: true, ackTimeoutMs: 2000 },
        r.port,
        {},
        8000,
      );
      const final = await run.done;
      expect(final.accepted).toBe(0);
      expect(final.rejected).toBe(final.sent);
      expect(final.errors[0]).toMatch(/HELO.*shared_key.*not supported/);
      expect(final.errors.at(-1)).toMatch(/stopped after 10 consecutive failures/);
    } finally {
      r.server.close();
    }
  });

  it("entries as str for old msgpack receivers (spec: MessagePackEventStream may be str; no Fluentd here)", async () => {
    const r = await receiver(() => null, undefined, true);
    try {
      const run = startGenerator(fluentForward, { batch: 5, entries: "str" }, r.port, {}, 5000);
      r.onMessage((k) => {
        if (k >= 3) run.stop();
      });
      await run.done;
      await new Promise((res) => setTimeout(res, 100));
      // fixarray 3, fixstr "ingestbench" (0xab + 11 bytes), then a str 16 header (0xda) for ~1 kB of entries
      const b = r.firstBytes[0]!;
      expect([b[0], b[1], b.subarray(2, 13).toString()]).toEqual([0x93, 0xab, "ingestbench"]);
      expect(b[13]).toBe(0xda);
      expect(r.got[0]!.entries.map((e) => e.record.seq)).toEqual([0, 1, 2, 3, 4]);
    } finally {
      r.server.close();
    }
  });
});
