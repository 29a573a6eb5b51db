// The content check's arithmetic (core/fidelity.ts) against an in-memory sink: rows recomputed from the seed, the
// rules per type and per sink unit, all versus a seeded sample, replayed lines by digest (a line read apart from its
// row), fields a sink cannot return.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  checkFidelity,
  FIDELITY_SCAN,
  renderTime,
  seededSample,
  timeInUnit,
  type FieldRule,
  type StoredRow,
  type StoredRowReader,
  type TimeUnit,
} from "../../core/fidelity.ts";
import { createEventSource } from "../../core/events/source.ts";
import type { EventField } from "../../core/events/types.ts";

const FIELDS: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "n", type: "int" },
  { name: "x", type: "float" },
  { name: "b", type: "bool" },
  { name: "msg", type: "string", size: 40 },
];

/** An empty in-memory sink (`fill` stores what was sent) whose reader states timestamps in `unit`. */
function memorySink(unit: TimeUnit): { rows: StoredRow[]; reader: StoredRowReader; reads: number } {
  const rows: StoredRow[] = [];
  const sink = { rows, reads: 0, reader: null as unknown as StoredRowReader };
  const rules: FieldRule[] = FIELDS.map((f) => ({
    name: f.name,
    readable: true,
    unit: f.type === "timestamp" ? unit : undefined,
    rule: "memory",
  }));
  sink.reader = {
    rules: () => rules,
    readRange: async (gen, from, to) => {
      sink.reads++;
      return rows.filter((r) => r.gen === gen && r.seq >= from && r.seq < to);
    },
    readSeqs: async (gen, seqs) => {
      sink.reads++;
      const s = new Set(seqs);
      return rows.filter((r) => r.gen === gen && s.has(r.seq));
    },
  };
  return sink;
}

/** Store exactly what the generator sent for seqs 0..sent-1 of each gen, timestamps kept in `unit`. */
async function fill(
  sink: { rows: StoredRow[] },
  sent: number[],
  unit: TimeUnit,
  seed = 42,
  replayFile?: string,
): Promise<void> {
  for (let gen = 0; gen < sent.length; gen++) {
    const src = createEventSource({ fields: FIELDS, seed, genId: gen, replayFile });
    await src.load(0, sent[gen]!);
    for (let seq = 0; seq < sent[gen]!; seq++) {
      const v = src.values(seq);
      sink.rows.push({
        gen,
        seq,
        values: [
          timeInUnit((v[0] as Date).getTime(), unit),
          v[1] as number,
          v[2] as number,
          v[3] as boolean,
          Buffer.from(v[4] as string),
        ],
      });
    }
    await src.close();
  }
}

const input = (sent: number[], stored: number, limits = { all: 1_000_000, sample: 100 }) => ({
  fields: FIELDS,
  seed: 42,
  sent,
  stored,
  limits,
});

describe("content fidelity (core/fidelity.ts)", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("a faithful sink: every row of every generator compared, altered 0", async () => {
    const sink = memorySink("us");
    await fill(sink, [300, 200], "us");
    const r = await checkFidelity(sink.reader, input([300, 200], 500));
    expect(r).toMatchObject({
      mode: "all",
      rowsCompared: 500,
      seqsCompared: 500,
      altered: 0,
      examples: [],
      alteredByField: {},
    });
    expect(r.compared.map((c) => c.field)).toEqual(["ts", "n", "x", "b", "msg"]);
    expect(r.notCompared.map((c) => c.field)).toEqual(["gen, seq", "sent_at"]);
  });

  it("finds each kind of alteration, counts rows (copies included) and lists the first examples", async () => {
    const sink = memorySink("ms");
    await fill(sink, [100], "ms");
    const row = (seq: number): StoredRow => sink.rows.find((r) => r.seq === seq)!;
    row(3).values[0] = (row(3).values[0] as number) + 3_600_000; // moved 1 h
    row(5).values[1] = (row(5).values[1] as number) + 1;
    row(7).values[2] = (row(7).values[2] as number) + 1e-9; // a float off in its last digits
    row(9).values[3] = !(row(9).values[3] as boolean);
    row(11).values[4] = Buffer.concat([row(11).values[4] as Buffer, Buffer.from("x")]);
    sink.rows.push({ ...row(20), values: [...row(20).values] }); // a faithful duplicate: not altered
    sink.rows.push({ ...row(30), values: [...row(30).values.slice(0, 4), Buffer.from("other")] }); // an altered duplicate
    sink.rows.push({ gen: 0, seq: 100, values: row(1).values }); // never sent: the ledger's unexpected, not compared
    const r = await checkFidelity(sink.reader, input([100], sink.rows.length));
    expect(r.altered).toBe(6);
    expect(r.rowsCompared).toBe(102);
    expect(r.seqsCompared).toBe(100);
    expect(r.alteredByField).toEqual({ ts: 1, n: 1, x: 1, b: 1, msg: 2 });
    expect(r.examples).toHaveLength(5);
    expect(r.examples[0]).toEqual({
      gen: 0,
      seq: 3,
      field: "ts",
      expected: "2024-11-07T00:00:00.003Z",
      stored: "2024-11-07T01:00:00.003Z",
    });
    expect(r.examples.map((e) => [e.seq, e.field])).toEqual([
      [3, "ts"],
      [5, "n"],
      [7, "x"],
      [9, "b"],
      [11, "msg"],
    ]);
  });

  it("compares timestamps to the unit the sink keeps: a sink of seconds is exact at whole seconds", async () => {
    expect(timeInUnit(Date.UTC(2024, 10, 7) + 1999, "s")).toBe(Date.UTC(2024, 10, 7) / 1000 + 1);
    expect(timeInUnit(1.5, "us")).toBe(1500);
    expect(renderTime(1_730_937_600_000_123, "us")).toBe("2024-11-07T00:00:00.000123Z");
    const sink = memorySink("s");
    await fill(sink, [2500], "s");
    expect((await checkFidelity(sink.reader, input([2500], 2500))).altered).toBe(0);
    // the same rows read as if the sink kept milliseconds: every row differs
    const asMs = {
      ...sink.reader,
      rules: () => sink.reader.rules().map((r) => (r.unit ? { ...r, unit: "ms" as const } : r)),
    };
    expect((await checkFidelity(asMs, input([2500], 2500))).alteredByField.ts).toBe(2500);
  });

  it("beyond `all`, compares the stored copies of a seeded sample of seqs, and says how many", async () => {
    const sink = memorySink("us");
    await fill(sink, [5000, 5000], "us");
    sink.rows[4321]!.values[1] = -1;
    const a = await checkFidelity(sink.reader, input([5000, 5000], 10_000, { all: 9999, sample: 10_000 }));
    expect(a).toMatchObject({ mode: "sample", sampleSize: 10_000, seqsCompared: 10_000, altered: 1 });
    const b = await checkFidelity(sink.reader, input([5000, 5000], 10_000, { all: 0, sample: 500 }));
    expect(b).toMatchObject({ mode: "sample", sampleSize: 500, seqsCompared: 500, rowsCompared: 500 });
    expect(b.sampleSeed).toBeTypeOf("number");
    const again = await checkFidelity(sink.reader, input([5000, 5000], 10_000, { all: 0, sample: 500 }));
    expect({ ...again, seconds: 0 }).toEqual({ ...b, seconds: 0 }); // seeded: the same sample
  });

  it("a reader with readSample gets the sample in passes of at most FIDELITY_SCAN seqs, never readSeqs, with the same result", async () => {
    const sink = memorySink("us");
    await fill(sink, [150_000, 60_000], "us");
    sink.rows[4321]!.values[1] = -1;
    sink.rows[150_000 + 777]!.values[4] = Buffer.from("changed");
    sink.rows.push({ ...sink.rows[150_000 + 777]!, values: [...sink.rows[150_000 + 777]!.values] }); // a copy, altered too
    const limits = { all: 0, sample: 210_000 }; // every seq: the faults are in the sample
    const viaSeqs = await checkFidelity(sink.reader, input([150_000, 60_000], sink.rows.length, limits));
    const passes: { gens: number[]; seqs: number }[] = [];
    const scanning: StoredRowReader = {
      ...sink.reader,
      readSeqs: () => {
        throw new Error("readSeqs called although readSample exists");
      },
      readSample: async (wanted) => {
        passes.push({ gens: wanted.map((w) => w.gen), seqs: wanted.reduce((n, w) => n + w.seqs.length, 0) });
        const keys = new Set(wanted.flatMap((w) => w.seqs.map((s) => `${w.gen}:${s}`)));
        return sink.rows.filter((r) => keys.has(`${r.gen}:${r.seq}`));
      },
    };
    const viaSample = await checkFidelity(scanning, input([150_000, 60_000], sink.rows.length, limits));
    expect(passes).toEqual([
      { gens: [0], seqs: FIDELITY_SCAN },
      { gens: [0, 1], seqs: FIDELITY_SCAN },
      { gens: [1], seqs: 10_000 },
    ]);
    expect({ ...viaSample, seconds: 0 }).toEqual({ ...viaSeqs, seconds: 0 });
    expect(viaSample).toMatchObject({
      mode: "sample",
      seqsCompared: 210_000,
      rowsCompared: 210_001,
      altered: 3,
      alteredByField: { n: 1, msg: 2 },
    });
  });

  it("seededSample draws k distinct, sorted, uniform integers", () => {
    const s = seededSample(1000, 100, 7);
    expect(new Set(s).size).toBe(100);
    expect(s).toEqual([...s].sort((a, b) => a - b));
    expect(s.every((x) => x >= 0 && x < 1000)).toBe(true);
    expect(seededSample(5, 10, 1)).toEqual([0, 1, 2, 3, 4]);
    // uniform: over many draws each decile gets about a tenth (100 000 draws, 3 % tolerance)
    const deciles = new Array(10).fill(0);
    for (let seed = 0; seed < 1000; seed++)
      for (const x of seededSample(1000, 100, seed)) deciles[Math.floor(x / 100)]++;
    for (const d of deciles) expect(Math.abs(d - 10_000)).toBeLessThan(300);
  });

  it("replayed lines are compared by their SHA-256 digest", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ibtest-fidelity-"));
    dirs.push(dir);
    const file = path.join(dir, "lines.log");
    writeFileSync(file, 'first line\nsecond "quoted" line\tTAB\nthird\n');
    const sink = memorySink("us");
    await fill(sink, [7], "us", 42, file);
    sink.rows[4]!.values[4] = Buffer.from('second "quoted" line TAB'); // tab normalised to a space
    const r = await checkFidelity(sink.reader, { ...input([7], 7), replayFile: file });
    expect(r.altered).toBe(1);
    expect(r.examples[0]).toMatchObject({ seq: 4, field: "msg" });
    expect(r.examples[0]!.expected).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(r.compared.find((c) => c.field === "msg")!.rule).toContain("SHA-256");
  });

  it("a replayed sample of two generators, read in one pass per side: lines past the file's end wrap, fields around the line are recomputed without it", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ibtest-fidelity-"));
    dirs.push(dir);
    const file = path.join(dir, "lines.log");
    writeFileSync(
      file,
      Array.from({ length: 1234 }, (_, i) => `line ${i} ${"x".repeat(i % 50)}`).join("\n") + "\n",
    );
    // a generated string before the replayed one, an int after it
    const fields: EventField[] = [
      { name: "ts", type: "timestamp" },
      { name: "note", type: "string", size: 12 },
      { name: "msg", type: "string", size: 8 },
      { name: "n", type: "int" },
    ];
    const sent = [5000, 3000];
    const rows: StoredRow[] = [];
    for (let gen = 0; gen < sent.length; gen++) {
      const src = createEventSource({ fields, seed: 9, genId: gen, replayFile: file });
      await src.load(0, sent[gen]!);
      for (let seq = 0; seq < sent[gen]!; seq++) {
        const v = src.values(seq);
        rows.push({
          gen,
          seq,
          values: [
            (v[0] as Date).getTime() * 1000,
            Buffer.from(v[1] as string),
            Buffer.from(v[2] as string),
            v[3] as number,
          ],
        });
      }
      await src.close();
    }
    const sampled = seededSample(8000, 400, 0); // any picks: every row is stored, so every pick finds its row
    expect(sampled.length).toBe(400);
    let passes = 0;
    const reader: StoredRowReader = {
      rules: () =>
        fields.map((f) => ({
          name: f.name,
          readable: true,
          unit: f.type === "timestamp" ? ("us" as const) : undefined,
          rule: "memory",
        })),
      readRange: async () => {
        throw new Error("not in sample mode");
      },
      readSeqs: async () => {
        throw new Error("readSample is preferred");
      },
      readSample: async (wanted) => {
        passes++;
        const keys = new Set(wanted.flatMap((w) => w.seqs.map((q) => `${w.gen}:${q}`)));
        return rows.filter((r) => keys.has(`${r.gen}:${r.seq}`));
      },
    };
    const limits = { all: 0, sample: 400 };
    const faithful = await checkFidelity(reader, {
      fields,
      seed: 9,
      sent,
      stored: 8000,
      limits,
      replayFile: file,
    });
    expect(faithful).toMatchObject({ mode: "sample", seqsCompared: 400, rowsCompared: 400, altered: 0 });
    expect(passes).toBe(1);
    // alter every row's line and every row's n: each sampled row is altered in both, named by field
    for (const r of rows) {
      r.values[2] = Buffer.concat([r.values[2] as Buffer, Buffer.from("!")]);
      r.values[3] = (r.values[3] as number) + 1;
    }
    const altered = await checkFidelity(reader, {
      fields,
      seed: 9,
      sent,
      stored: 8000,
      limits,
      replayFile: file,
    });
    expect(altered).toMatchObject({ altered: 400, alteredByField: { msg: 400, n: 400 } });
    expect(altered.examples[0]!.field).toBe("msg");
    expect(altered.examples[0]!.expected).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("a field the sink cannot return is listed as not compared, with the sink's reason", async () => {
    const sink = memorySink("us");
    await fill(sink, [10], "us");
    for (const row of sink.rows) row.values[2] = undefined;
    const reader = {
      ...sink.reader,
      rules: () =>
        sink.reader
          .rules()
          .map((r) =>
            r.name === "x" ? { ...r, readable: false, reason: "dropped by the sink's mapping" } : r,
          ),
    };
    const r = await checkFidelity(reader, input([10], 10));
    expect(r.altered).toBe(0);
    expect(r.notCompared).toContainEqual({ field: "x", reason: "dropped by the sink's mapping" });
  });

  it("a string normalisation the sink documents is applied to what was sent before comparing", async () => {
    const sink = memorySink("us");
    await fill(sink, [10], "us");
    for (const row of sink.rows)
      row.values[4] = Buffer.from((row.values[4] as Buffer).toString().toUpperCase());
    const upper = {
      ...sink.reader,
      rules: () =>
        sink.reader
          .rules()
          .map((r) =>
            r.name === "msg"
              ? { ...r, normalise: (b: Buffer) => Buffer.from(b.toString().toUpperCase()) }
              : r,
          ),
    };
    expect((await checkFidelity(upper, input([10], 10))).altered).toBe(0);
    expect((await checkFidelity(sink.reader, input([10], 10))).alteredByField.msg).toBe(10);
  });
});
