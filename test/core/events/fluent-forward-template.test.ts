/**
 * FluentForwardEncoder (template path, batch template, reused payloads) against the frozen pre-template encoder
 * (fluent-forward-reference.ts): the same bytes, stamp slots and chunk ids over runs of consecutive batches, for
 * several seeds and field shapes, ack on and off, entries as bin and as str, and seqs crossing every msgpack uint
 * width (fixint → uint 8 → uint 16 → uint 32 → uint 64); the messages decode with @msgpack/msgpack.
 */
import { decode, decodeMulti, ExtData } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { stampBatch } from "../../../core/events/encoding.ts";
import {
  FluentForwardEncoder,
  type FluentForwardOptions,
  type ForwardBatch,
  msgpackObjectEnd,
} from "../../../core/events/fluent-forward.ts";
import { BASE_EPOCH_MS, createEventSource } from "../../../core/events/source.ts";
import type { EventField } from "../../../core/events/types.ts";
import { ReferenceForwardEncoder } from "./fluent-forward-reference.ts";

const SHAPES: Record<string, EventField[]> = {
  "quickstart (ts, msg 180)": [
    { name: "ts", type: "timestamp" },
    { name: "msg", type: "string", size: 180 },
  ],
  "no timestamp field": [
    { name: "level", type: "string", size: 5 },
    { name: "msg", type: "string", size: 40 },
  ],
  "two timestamps, str 8/16 boundaries": [
    { name: "msg", type: "string", size: 31 },
    { name: "t2", type: "timestamp" },
    { name: "a", type: "string", size: 32 },
    { name: "ts", type: "timestamp" },
    { name: "b", type: "string", size: 255 },
    { name: "c", type: "string", size: 256 },
    { name: "e", type: "string", size: 0 },
  ],
  "ints, floats, bools (no template)": [
    { name: "ts", type: "timestamp" },
    { name: "n", type: "int" },
    { name: "msg", type: "string", size: 60 },
    { name: "x", type: "float" },
    { name: "ok", type: "bool" },
  ],
  "scalars only, no timestamp": [
    { name: "n", type: "int" },
    { name: "ok", type: "bool" },
  ],
  "no fields": [],
  "16 fields (map 16)": Array.from({ length: 14 }, (_, i): EventField =>
    i === 3 ? { name: "ts", type: "timestamp" } : { name: `s${i}`, type: "string", size: i * 3 },
  ),
};

const OPTIONS: FluentForwardOptions[] = [
  {},
  { ack: true },
  { entries: "str", tag: "ib.t" },
  { ack: true, entries: "str", tag: "x".repeat(40) },
];

/** [first seq, count, batches]: runs that cross 127/128, 255/256, 65535/65536, 2^32-1/2^32, and far seqs. */
const RUNS: Array<[number, number, number]> = [
  [0, 10, 16],
  [118, 3, 8],
  [250, 2, 6],
  [65_520, 7, 6],
  [2 ** 32 - 1500, 500, 5],
  [2 ** 32 - 9, 4, 6],
  [2 ** 40, 3, 3],
  [0, 1, 140],
];

type Fast = FluentForwardEncoder & { release?(b: ForwardBatch): void };

function checkDecodes(
  b: ForwardBatch,
  fields: EventField[],
  opts: FluentForwardOptions,
  genId: number,
  sentAt: number,
): void {
  const msg = decode(b.payload, { useBigInt64: true }) as [
    string,
    Uint8Array | string,
    Record<string, unknown>,
  ];
  expect(msg[0]).toBe(opts.tag ?? "ingestbench");
  expect(msg[2]).toEqual(opts.ack ? { size: b.count, chunk: b.chunk } : { size: b.count });
  // the entries from the payload (a str of them does not survive decoding as UTF-8): after the array marker and tag
  const h = msgpackObjectEnd(b.payload, 1);
  const lenBytes = { 0xc4: 1, 0xd9: 1, 0xc5: 2, 0xda: 2, 0xc6: 4, 0xdb: 4 }[b.payload[h]!]!;
  expect(b.payload[h]).toBe(
    opts.entries === "str" ? [0xd9, 0xda, 0xdb][lenBytes >> 1] : [0xc4, 0xc5, 0xc6][lenBytes >> 1],
  );
  const stream = b.payload.subarray(
    h + 1 + lenBytes,
    h + 1 + lenBytes + b.payload.readUIntBE(h + 1, lenBytes),
  );
  expect(typeof msg[1] === "string").toBe(opts.entries === "str");
  const entries = [...decodeMulti(stream, { useBigInt64: true })] as Array<
    [ExtData, Record<string, unknown>]
  >;
  expect(entries).toHaveLength(b.count);
  const ts = fields.findIndex((f) => f.type === "timestamp");
  entries.forEach(([t, rec], k) => {
    const seq = b.from + k;
    expect(rec.seq).toBe(seq >= 2 ** 32 ? BigInt(seq) : seq);
    expect(rec.gen).toBe(genId);
    expect(rec.sent_at).toBe(new Date(sentAt).toISOString());
    const ms = ts >= 0 ? BASE_EPOCH_MS + seq : sentAt;
    if (ts >= 0) expect(rec[fields[ts]!.name]).toBe(new Date(ms).toISOString());
    expect(t).toBeInstanceOf(ExtData);
    const d = Buffer.from(t.data as Uint8Array);
    expect([d.readUInt32BE(0), d.readUInt32BE(4)]).toEqual([Math.floor(ms / 1000) >>> 0, (ms % 1000) * 1e6]);
  });
}

describe("fluent-forward: template path and batch templates = the pre-template encoder, byte for byte", () => {
  for (const [shape, fields] of Object.entries(SHAPES)) {
    it(`${shape}: consecutive batches, seeds, ack on/off, bin/str, msgpack width boundaries, payloads reused`, () => {
      for (const [o, opts] of OPTIONS.entries()) {
        for (const seed of [42, -7, 2 ** 40 + 3]) {
          const genId = seed === 42 ? 0 : 300; // gen as fixint and as uint 16
          for (const [start, count, batches] of RUNS) {
            const src = () =>
              createEventSource({ fields, seed, genId: genId === 0 ? 0 : 1, genBase: genId === 0 ? 0 : 299 });
            const fast = new FluentForwardEncoder(src(), opts) as Fast;
            const ref = new ReferenceForwardEncoder(src(), opts);
            for (let k = 0; k < batches; k++) {
              const from = start + k * count;
              const a = fast.encode(from, count);
              const b = ref.encode(from, count);
              const at = `${shape} opts ${o} seed ${seed} from ${from} count ${count}`;
              expect(a.payload.equals(b.payload), at).toBe(true);
              expect(a.chunk, at).toBe(b.chunk);
              expect(
                a.slots.map((x) => [x.format, [...x.at]]),
                at,
              ).toEqual(b.slots.map((x) => [x.format, [...x.at]]));
              const sentAt = Date.UTC(2031, 2, 3, 4, 5, 6, from % 1000);
              fast.stamp(a, new Date(sentAt));
              stampBatch(b, sentAt);
              expect(a.payload.equals(b.payload), `${at} stamped`).toBe(true);
              if (k < 3 || k === batches - 1) checkDecodes(a, fields, opts, genId, sentAt);
              if (k % 2 === 0) fast.release?.(a); // the loop gives every other batch back: its memory takes a later one
            }
          }
        }
      }
    });
  }

  it("times past year 9999 (ISO wider than 24 bytes): the template steps aside, bytes stay the reference's", () => {
    const fields = SHAPES["quickstart (ts, msg 180)"]!;
    const start = Date.UTC(9999, 11, 31, 23, 59, 59, 990) - BASE_EPOCH_MS;
    const fast = new FluentForwardEncoder(createEventSource({ fields, seed: 1, genId: 0 }), { ack: true });
    const ref = new ReferenceForwardEncoder(createEventSource({ fields, seed: 1, genId: 0 }), { ack: true });
    for (let k = 0; k < 6; k++) {
      expect(
        fast.encode(start - 20 + 6 * k, 6).payload.equals(ref.encode(start - 20 + 6 * k, 6).payload),
        `batch ${k}`,
      ).toBe(true);
    }
  });
});
