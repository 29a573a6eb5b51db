/**
 * The encoders' template path (pre-encoded constants, generated text written straight into the output) against
 * their reference path (per-field writers, byte-by-byte escaping): the same bytes and the same stamp slots for the
 * same seed, over many seeded events of random shapes, and over a replayed field whose lines need escaping.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { stampBatch, type StampedBatch } from "../../../core/events/encoding.ts";
import { EsBulkEncoder } from "../../../core/events/es-bulk.ts";
import { GridDbRowsEncoder } from "../../../core/events/griddb-webapi.ts";
import { HttpJsonEncoder } from "../../../core/events/http-json.ts";
import { LokiPushEncoder } from "../../../core/events/loki-push.ts";
import { createEventSource, type EventSource } from "../../../core/events/source.ts";
import { SyslogEncoder } from "../../../core/events/syslog.ts";
import type { EventField, FieldType } from "../../../core/events/types.ts";

interface Enc { encode(from: number, count: number): StampedBatch }
type Make = (source: EventSource, reference: boolean) => Enc;

/** Every encoder with a template path, in each of its shapes. */
const ENCODERS: Record<string, Make> = {
  "http-json ndjson iso": (s, reference) => new HttpJsonEncoder(s, { framing: "ndjson", reference }),
  "http-json array epoch-ms": (s, reference) => new HttpJsonEncoder(s, { framing: "array", timeFormat: "epoch-ms", reference }),
  "es-bulk": (s, reference) => new EsBulkEncoder(s, { index: "logs", reference }),
  "es-bulk ids": (s, reference) => new EsBulkEncoder(s, { ids: true, op: "create", reference }),
  "loki-push sent": (s, reference) => new LokiPushEncoder(s, { reference }),
  "griddb-webapi": (s, reference) => new GridDbRowsEncoder(s, { reference }),
  "syslog": (s, reference) => new SyslogEncoder(s, { procId: "3", reference }),
  "syslog bom": (s, reference) => new SyslogEncoder(s, { bom: true, facility: 1, severity: 2, reference }),
};

/** Encode the same ranges on both paths (two batches, so state carried between batches counts) and compare. */
function compare(make: Make, source: () => EventSource, ranges: Array<[number, number]>): void {
  const fast = make(source(), false);
  const ref = make(source(), true);
  for (const [from, count] of ranges) {
    const a = fast.encode(from, count);
    const b = ref.encode(from, count);
    expect(a.payload.equals(b.payload)).toBe(true);
    expect(a.slots.map((s) => [s.format, [...s.at]])).toEqual(b.slots.map((s) => [s.format, [...s.at]]));
    stampBatch(a, Date.UTC(2031, 2, 3, 4, 5, 6, 789));
    stampBatch(b, Date.UTC(2031, 2, 3, 4, 5, 6, 789));
    expect(a.payload.equals(b.payload)).toBe(true);
  }
}

const TYPES: FieldType[] = ["timestamp", "string", "int", "float", "bool"];
const fieldsArb = fc.array(fc.record({ type: fc.constantFrom(...TYPES), size: fc.integer({ min: 0, max: 300 }) }), { minLength: 0, maxLength: 6 })
  .map((fs) => fs.map((f, i): EventField => ({ name: `f${i}`, type: f.type, ...(f.type === "string" ? { size: f.size } : {}) })));

describe("template path = reference path, byte for byte (encoders over seeded events)", () => {
  const dir = mkdtempSync(join(tmpdir(), "ib-fast-path-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("seeded sources take the template path (a source with DirectText)", () => {
    const s = createEventSource({ fields: [{ name: "m", type: "string", size: 10 }, { name: "n", type: "int" }], seed: 1, genId: 0 });
    expect(s.direct?.generated).toEqual(Uint8Array.from([1, 0]));
    const row = s.direct!.fillScalars(5);
    const out = Buffer.alloc(10);
    s.direct!.writeText(5, 0, out, 0);
    expect(out.equals(Buffer.from(s.fill(5).bytes[0]!))).toBe(true);
    expect(row.len[0]).toBe(10);
  });

  for (const [name, make] of Object.entries(ENCODERS)) {
    it(`${name}: random field shapes, seeds, generator ids and seq ranges (beyond 2^32 too)`, () => {
      fc.assert(fc.property(
        fieldsArb, fc.integer(), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1_000_000 }),
        fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 2 ** 32 - 40, max: 2 ** 40 })), fc.integer({ min: 1, max: 40 }),
        (fields, seed, genId, genBase, from, count) => {
          compare(make, () => createEventSource({ fields, seed, genId, genBase }), [[from, count], [from + count, count]]);
        },
      ), { numRuns: 40 });
    });
  }

  it("batches far larger than the writer's first buffer (it grows mid-row on both paths)", () => {
    const fields: EventField[] = [{ name: "ts", type: "timestamp" }, { name: "a", type: "string", size: 3000 }, { name: "x", type: "float" }, { name: "msg", type: "string", size: 5000 }];
    for (const make of Object.values(ENCODERS)) compare(make, () => createEventSource({ fields, seed: 3, genId: 1 }), [[0, 40], [40, 3]]);
  });

  it("a replayed last string field (quotes, backslashes, ], control characters, UTF-8, long lines) next to generated ones", async () => {
    const file = join(dir, "replay.log");
    const lines = ["plain line", 'quote " back \\ bracket ] tab\tcr\r', "é ü 日本 \u0001\u001f", "x".repeat(1500), ""];
    writeFileSync(file, `${lines.join("\n")}\n`);
    const fields: EventField[] = [{ name: "ts", type: "timestamp" }, { name: "host", type: "string", size: 12 }, { name: "n", type: "int" }, { name: "msg", type: "string" }];
    for (const [name, make] of Object.entries(ENCODERS)) {
      const sources = [0, 1].map(() => createEventSource({ fields, seed: 9, genId: 2, replayFile: file }));
      try {
        await Promise.all(sources.map((s) => s.load(0, 12)));
        const a = make(sources[0]!, false).encode(0, 12);
        const b = make(sources[1]!, true).encode(0, 12);
        expect(a.payload.equals(b.payload), name).toBe(true);
        expect(a.payload.toString("utf8"), name).toContain("日本");
      } finally {
        await Promise.all(sources.map((s) => s.close()));
      }
    }
  });
});
