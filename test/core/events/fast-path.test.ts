/**
 * The encoders' template path (pre-encoded constants, generated text written straight into the output) against
 * their reference path (per-field writers, byte-by-byte escaping): the same bytes and the same stamp slots for the
 * same seed, over many seeded events of random shapes, and over a replayed field whose lines need escaping. The
 * writers both paths share are held to fixed references: writeLogText to pinned bytes, time() to Date#toISOString.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ByteWriter, stampBatch, type StampedBatch } from "../../../core/events/encoding.ts";
import { EsBulkEncoder } from "../../../core/events/es-bulk.ts";
import { FluentForwardEncoder } from "../../../core/events/fluent-forward.ts";
import { GridDbRowsEncoder } from "../../../core/events/griddb-webapi.ts";
import { HttpJsonEncoder } from "../../../core/events/http-json.ts";
import { LokiPushEncoder } from "../../../core/events/loki-push.ts";
import {
  BASE_EPOCH_MS,
  createEventSource,
  fmix32,
  writeLogText,
  type EventSource,
} from "../../../core/events/source.ts";
import { SyslogEncoder } from "../../../core/events/syslog.ts";
import type { EventField, FieldType } from "../../../core/events/types.ts";

interface Enc {
  encode(from: number, count: number): StampedBatch;
}
type Make = (source: EventSource, reference: boolean) => Enc;

/** Every encoder with a template path, in each of its shapes. */
const ENCODERS: Record<string, Make> = {
  "http-json ndjson iso": (s, reference) => new HttpJsonEncoder(s, { framing: "ndjson", reference }),
  "http-json array epoch-ms": (s, reference) =>
    new HttpJsonEncoder(s, { framing: "array", timeFormat: "epoch-ms", reference }),
  "es-bulk": (s, reference) => new EsBulkEncoder(s, { index: "logs", reference }),
  "es-bulk ids": (s, reference) => new EsBulkEncoder(s, { ids: true, op: "create", reference }),
  "loki-push sent": (s, reference) => new LokiPushEncoder(s, { reference }),
  "griddb-webapi": (s, reference) => new GridDbRowsEncoder(s, { reference }),
  syslog: (s, reference) => new SyslogEncoder(s, { procId: "3", reference }),
  "syslog bom": (s, reference) => new SyslogEncoder(s, { bom: true, facility: 1, severity: 2, reference }),
  "fluent-forward": (s, reference) => new FluentForwardEncoder(s, { reference }),
  "fluent-forward ack str": (s, reference) =>
    new FluentForwardEncoder(s, { ack: true, entries: "str", tag: "ib", reference }),
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
const fieldsArb = fc
  .array(fc.record({ type: fc.constantFrom(...TYPES), size: fc.integer({ min: 0, max: 300 }) }), {
    minLength: 0,
    maxLength: 6,
  })
  .map((fs) =>
    fs.map((f, i): EventField => ({
      name: `f${i}`,
      type: f.type,
      ...(f.type === "string" ? { size: f.size } : {}),
    })),
  );

describe("template path = reference path, byte for byte (encoders over seeded events)", () => {
  const dir = mkdtempSync(join(tmpdir(), "ib-fast-path-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("seeded sources take the template path (a source with DirectText)", () => {
    const s = createEventSource({
      fields: [
        { name: "m", type: "string", size: 10 },
        { name: "n", type: "int" },
      ],
      seed: 1,
      genId: 0,
    });
    expect(s.direct?.generated).toEqual(Uint8Array.from([1, 0]));
    const row = s.direct!.fillScalars(5);
    const out = Buffer.alloc(10);
    s.direct!.writeText(5, 0, out, 0);
    expect(out.equals(Buffer.from(s.fill(5).bytes[0]!))).toBe(true);
    expect(row.len[0]).toBe(10);
  });

  for (const [name, make] of Object.entries(ENCODERS)) {
    it(`${name}: random field shapes, seeds, generator ids and seq ranges (beyond 2^32 too)`, () => {
      fc.assert(
        fc.property(
          fieldsArb,
          fc.integer(),
          fc.integer({ min: 0, max: 1000 }),
          fc.integer({ min: 0, max: 1_000_000 }),
          fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 2 ** 32 - 40, max: 2 ** 40 })),
          fc.integer({ min: 1, max: 40 }),
          (fields, seed, genId, genBase, from, count) => {
            compare(make, () => createEventSource({ fields, seed, genId, genBase }), [
              [from, count],
              [from + count, count],
            ]);
          },
        ),
        { numRuns: 40 },
      );
    });
  }

  it("batches far larger than the writer's first buffer (it grows mid-row on both paths)", () => {
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "a", type: "string", size: 3000 },
      { name: "x", type: "float" },
      { name: "msg", type: "string", size: 5000 },
    ];
    for (const make of Object.values(ENCODERS))
      compare(make, () => createEventSource({ fields, seed: 3, genId: 1 }), [
        [0, 40],
        [40, 3],
      ]);
  });

  it("a replayed last string field (quotes, backslashes, ], control characters, UTF-8, long lines) next to generated ones", async () => {
    const file = join(dir, "replay.log");
    const lines = [
      "plain line",
      'quote " back \\ bracket ] tab\tcr\r',
      "é ü 日本 \u0001\u001f",
      "x".repeat(1500),
      "",
    ];
    writeFileSync(file, `${lines.join("\n")}\n`);
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "host", type: "string", size: 12 },
      { name: "n", type: "int" },
      { name: "msg", type: "string" },
    ];
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

describe("batch templates (fields all timestamps and generated text): later batches = the reference path", () => {
  /** encoders whose batches can come from a template, with the one-off shapes of their options */
  const TEMPLATED: Record<string, Make> = {
    ...Object.fromEntries(Object.entries(ENCODERS).filter(([name]) => !name.startsWith("syslog"))),
    "http-json ndjson datetime": (s, reference) =>
      new HttpJsonEncoder(s, { framing: "ndjson", timeFormat: "datetime", reference }),
    "loki-push event": (s, reference) => new LokiPushEncoder(s, { timestamp: "event", reference }),
  };
  type Releasing = Enc & { release?(b: StampedBatch): void };

  /** Consecutive batches of one count on both paths; the fast one gets every other stamped batch back (as the loop's release). */
  function run(
    make: Make,
    fields: EventField[],
    starts: number[],
    count: number,
    batches: number,
    seed = 5,
  ): void {
    for (const start of starts) {
      const fast = make(createEventSource({ fields, seed, genId: 2, genBase: 40 }), false) as Releasing;
      const ref = make(createEventSource({ fields, seed, genId: 2, genBase: 40 }), true);
      for (let k = 0; k < batches; k++) {
        const from = start + k * count;
        const a = fast.encode(from, count);
        const b = ref.encode(from, count);
        expect(a.payload.equals(b.payload), `${from}`).toBe(true);
        expect(a.slots.map((x) => [x.format, [...x.at]])).toEqual(b.slots.map((x) => [x.format, [...x.at]]));
        stampBatch(a, Date.UTC(2031, 2, 3, 4, 5, 6, from % 1000));
        stampBatch(b, Date.UTC(2031, 2, 3, 4, 5, 6, from % 1000));
        expect(a.payload.equals(b.payload), `${from} stamped`).toBe(true);
        if (k % 2 === 0) fast.release?.(a);
      }
    }
  }

  const fields: EventField[] = [
    { name: "ts", type: "timestamp" },
    { name: "level", type: "string", size: 5 },
    { name: "msg", type: "string", size: 150 },
  ];
  for (const [name, make] of Object.entries(TEMPLATED)) {
    it(`${name}: runs of batches across seq-width boundaries (9 → 10, 99 999 → 100 000, 2^31, 2^32, 10^12), payloads reused`, () => {
      run(make, fields, [0, 99_000, 2 ** 31 - 1500, 2 ** 32 - 1500, 10 ** 12 - 1500], 500, 6);
      run(make, fields, [0, 95, 2 ** 40], 3, 8);
      run(
        make,
        [
          { name: "msg", type: "string", size: 40 },
          { name: "t2", type: "timestamp" },
          { name: "ts", type: "timestamp" },
        ],
        [7, 999_990],
        4,
        6,
        -9,
      );
    });
  }

  it("a released batch's payload carries the next batch (no new buffer), and an unreleased one is never written again", () => {
    const fields1: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "msg", type: "string", size: 100 },
    ];
    for (const make of [TEMPLATED["http-json ndjson iso"]!, TEMPLATED["fluent-forward ack str"]!])
      checkReleased(
        make(createEventSource({ fields: fields1, seed: 1, genId: 0 }), false) as Required<Releasing>,
      );
  });

  /** A released batch's payload carries the next batch; one kept (not released) is never written again. */
  function checkReleased(enc: Required<Releasing>): void {
    enc.encode(1000, 100); // the template (seqs of one width: 4 digits, msgpack uint 16)
    const kept = enc.encode(1100, 100);
    const copy = Buffer.from(kept.payload);
    const released = enc.encode(1200, 100);
    enc.release(released);
    const next = enc.encode(1300, 100);
    expect(next.payload).toBe(released.payload);
    enc.encode(1400, 100);
    expect(kept.payload.equals(copy)).toBe(true);
  }
});

describe("the shared fast writers against fixed references", () => {
  it("writeLogText bytes: pinned for sizes 0..320 at 64 states each (text, and no byte written outside it)", () => {
    // sha256 of the output of the byte-at-a-time writeLogText this file's template path was first checked against
    const h = createHash("sha256");
    const out = Buffer.alloc(400);
    for (let size = 0; size <= 320; size++) {
      for (let k = 0; k < 64; k++) {
        out.fill(0xff);
        writeLogText(fmix32(size * 131 + k) | 0, out, 7, size);
        h.update(out.subarray(0, size + 9));
      }
    }
    expect(h.digest("hex")).toBe("6cf4ad816ad1461ff562d5ff06135f418b253d1096b3e920889043731bee4611");
  });

  it("time() = Date#toISOString in runs across second, minute, hour, day, leap-day, year and range boundaries", () => {
    const edges = [
      Date.UTC(2024, 10, 7, 0, 0, 1),
      Date.UTC(2024, 10, 7, 0, 1),
      Date.UTC(2024, 10, 7, 1),
      Date.UTC(2024, 10, 8),
      Date.UTC(2024, 2, 1),
      Date.UTC(2025, 0, 1),
      Date.UTC(2000, 0, 1),
      Date.UTC(1970, 0, 1),
      Date.UTC(2100, 2, 1),
      -62167219200000 /* 0000-01-01 */,
      253402300800000 /* 10000-01-01 */,
      BASE_EPOCH_MS + 2 ** 32,
      BASE_EPOCH_MS + 2 ** 40,
    ];
    const w = new ByteWriter(64);
    const got: string[] = [];
    const want: string[] = [];
    for (const edge of edges) {
      // a run through the edge, then the same run interleaved with a far time (the second's cache changes every call)
      for (const far of [undefined, Date.UTC(2031, 2, 3, 4, 5, 6, 789)]) {
        for (let ms = edge - 1002; ms <= edge + 1002; ms += ms < edge - 2 || ms >= edge + 2 ? 100 : 1) {
          for (const t of far === undefined ? [ms] : [ms, far]) {
            const iso = new Date(t).toISOString();
            w.reset();
            w.time(t, "iso");
            got.push(w.buf.toString("latin1", 0, w.pos));
            want.push(iso);
            if (iso.length !== 24) continue; // years past 9999: toISOString's own width
            w.reset();
            w.time(t, "datetime");
            got.push(w.buf.toString("latin1", 0, w.pos));
            want.push(`${iso.slice(0, 10)} ${iso.slice(11, 19)}`);
          }
        }
      }
    }
    expect(got).toEqual(want);
  });

  it("seeded timestamps and stamped sent_at read as Date#toISOString, seqs past 2^32 included", () => {
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "msg", type: "string", size: 20 },
    ];
    const enc = new HttpJsonEncoder(createEventSource({ fields, seed: 4, genId: 1 }), { framing: "ndjson" });
    for (const from of [59_990, 3_599_995, 86_399_990, 2 ** 32 - 5, 2 ** 40 + 7]) {
      const b = enc.encode(from, 20);
      const sentAt = Date.UTC(2030, 11, 31, 23, 59, 59, 999) + from;
      stampBatch(b, sentAt);
      const rows = b.payload
        .toString("utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as { ts: string; seq: number; sent_at: string });
      rows.forEach((r, k) => {
        expect(r.seq).toBe(from + k);
        expect(r.ts).toBe(new Date(BASE_EPOCH_MS + from + k).toISOString());
        expect(r.sent_at).toBe(new Date(sentAt).toISOString());
      });
    }
  });

  it("a batch stays intact after the encoder's next batches (take() hands over or copies, never shares)", () => {
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "msg", type: "string", size: 150 },
    ];
    for (const count of [3, 400, 2000]) {
      const enc = new HttpJsonEncoder(createEventSource({ fields, seed: 2, genId: 0 }), {
        framing: "ndjson",
      });
      const a = enc.encode(0, count);
      const copy = Buffer.from(a.payload);
      const b = enc.encode(count, count);
      stampBatch(b, Date.UTC(2030, 0, 1));
      enc.encode(2 * count, 2 * count);
      expect(a.payload.equals(copy)).toBe(true);
      expect(b.payload.equals(a.payload)).toBe(false);
    }
  });
});
