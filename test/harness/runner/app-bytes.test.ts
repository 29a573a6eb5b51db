// The app bytes check (harness/runner/app-bytes.ts): the app's recordBytes against the per-record encodings of the
// records the sink holds, read back by seq through a row reader (here an in-memory one; the real ClickHouse reader
// runs in test/e2e/app-export.test.ts), and a mismatch as a failed check (harness/runner/checks.ts).
import { describe, expect, it } from "vitest";
import type { StoredRow, StoredRowReader } from "../../../core/fidelity.ts";
import type { EventField } from "../../../core/events/types.ts";
import {
  appBytes,
  appBytesLine,
  recordBytesOf,
  type RecordEncoding,
} from "../../../harness/runner/app-bytes.ts";
import { evaluateChecks } from "../../../harness/runner/checks.ts";

const FIELDS: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "span", type: "string", size: 120 },
];
const GEN = 4_200_000;
const encoding: RecordEncoding = {
  protocol: "syslog",
  config: { seed: 42 },
  fields: FIELDS,
  seed: 42,
  gen: GEN,
};

/** A sink holding `seqs` of GEN (and one row of another gen), each stored `copies` times. */
function reader(seqs: number[], copies = 1): StoredRowReader & { reads: number } {
  const rows: StoredRow[] = [
    ...seqs.flatMap((seq) => Array.from({ length: copies }, () => ({ gen: GEN, seq, values: [] }))),
    { gen: GEN + 1, seq: 0, values: [] },
  ];
  const r = {
    reads: 0,
    rules: () => [],
    readRange: async (gen: number, from: number, to: number) => {
      r.reads++;
      return rows.filter((x) => x.gen === gen && x.seq >= from && x.seq < to);
    },
    readSeqs: async () => [],
  };
  return r;
}

describe("appBytes", () => {
  const length = recordBytesOf(encoding)!;
  // 12,000 seqs sent, every third dropped: the sink holds the rest (two pages of 10,000)
  const sent = 12_000;
  const held = Array.from({ length: sent }, (_, i) => i).filter((s) => s % 3 !== 0);
  const heldBytes = held.reduce((n, s) => n + length(s), 0);

  it("agrees when the app's recordBytes are the encodings of exactly the records the sink holds (copies counted once)", async () => {
    const r = reader(held, 2);
    const b = await appBytes({
      figures: { recordBytes: heldBytes },
      encoding,
      reader: r,
      sent,
      stored: held.length,
      limit: 1_000_000,
    });
    expect(b).toEqual({
      reported: heldBytes,
      atSink: heldBytes,
      records: held.length,
      unaccounted: 0,
      agrees: true,
      per: "each record's RFC 6587 frame",
    });
    expect(r.reads).toBe(2);
    expect(appBytesLine(b)).toMatch(
      /^bytes: [\d,]+ reported = [\d,]+ at the sink over 8,000 records \(each record's RFC 6587 frame\)$/,
    );
  });

  it("disagrees by the bytes of a record the app counted but the sink does not hold, and the run's checks fail", async () => {
    const lost = held.slice(1);
    const b = await appBytes({
      figures: { recordBytes: heldBytes },
      encoding,
      reader: reader(lost),
      sent,
      stored: lost.length,
      limit: 1_000_000,
    });
    expect(b).toMatchObject({ agrees: false, unaccounted: length(held[0]!), records: lost.length });
    expect(appBytesLine(b)).toMatch(/^bytes DISAGREE: .* unaccounted, [\d.]+ per record$/);
    const checks = evaluateChecks([], { ledger: {}, summary: {}, app: { ledger: { bytes: b } } });
    expect(checks).toEqual([
      {
        check: "app.ledger.bytes.unaccounted",
        expected: expect.stringMatching(/^= 0/),
        actual: length(held[0]!),
        ok: false,
      },
    ]);
    expect(
      evaluateChecks([], {
        ledger: {},
        summary: {},
        app: { ledger: { bytes: { ...b, unaccounted: 0, agrees: true } } },
      }),
    ).toEqual([]);
  });

  it("a framing other than the scenario's (another APP-NAME) differs by a constant per record", async () => {
    const other = recordBytesOf({ ...encoding, config: { seed: 42, appName: "sample-app" } })!;
    const reported = held.reduce((n, s) => n + other(s), 0);
    const b = await appBytes({
      figures: { recordBytes: reported },
      encoding,
      reader: reader(held),
      sent,
      stored: held.length,
      limit: 1_000_000,
    });
    expect(b).toMatchObject({
      agrees: false,
      unaccounted: held.length * ("sample-app".length - "ingestbench".length),
    });
  });

  it("fluent-forward counts each record's entry; says why it did not compare otherwise", async () => {
    const ff = recordBytesOf({ ...encoding, protocol: "fluent-forward" })!;
    expect(ff(5)).toBeLessThan(length(5) + 60);
    const base = { encoding, reader: reader(held), sent, stored: held.length, limit: 1_000_000 };
    expect(await appBytes({ ...base, figures: {} })).toEqual({
      unchecked: "the app reports no recordBytes (app.results.map)",
    });
    expect(
      await appBytes({
        ...base,
        figures: { recordBytes: 1 },
        encoding: { ...encoding, protocol: "http-json" },
      }),
    ).toMatchObject({ unchecked: expect.stringMatching(/not http-json/) });
    expect(await appBytes({ ...base, figures: { recordBytes: 1 }, reader: undefined })).toMatchObject({
      unchecked: expect.stringMatching(/cannot read rows back/),
    });
    expect(await appBytes({ ...base, figures: { recordBytes: 1 }, limit: 10 })).toMatchObject({
      unchecked: expect.stringMatching(/more than the 10 read back/),
    });
  });
});
