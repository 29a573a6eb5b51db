// The replay file's index (core/events/replay-index.ts): the line starts the LineReader reports, the marks a
// generator's source notes as it reads, and a content check's source that reopens the file at those marks instead of
// reading up to a sampled line, with the same lines, and that drops an index which is not the file's.
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  MARK_SPACING,
  ReplayIndex,
  replayIndexOf,
  widestIndex,
  type ReplayIndexJson,
} from "../../../core/events/replay-index.ts";
import { LineReader } from "../../../core/events/replay-lines.ts";
import { checkFidelity, type StoredRow, type StoredRowReader } from "../../../core/fidelity.ts";
import { createEventSource, mulberry32, type EventSource } from "../../../core/events/source.ts";
import type { EventField } from "../../../core/events/types.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "ib-test-replay-index-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fields: EventField[] = [
  { name: "n", type: "int" },
  { name: "msg", type: "string", size: 10 },
];
const ENDS = ["\n", "\r\n", "\r"];
/** Uniform in [0, 1) from Mulberry32 (which yields uint32s). */
const uniform = (seed: number): (() => number) => {
  const next = mulberry32(seed);
  return () => next() / 2 ** 32;
};

/** A file of `lines` lines of seeded lengths (0..400 bytes) and mixed line ends; returns its path. */
function seededFile(name: string, lines: number, seed: number): string {
  const rnd = uniform(seed);
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) {
    const len = Math.floor(rnd() * 400);
    parts.push(`L${i} ${"x".repeat(len)}`, ENDS[Math.floor(rnd() * 3)]!);
  }
  const file = path.join(dir, name);
  writeFileSync(file, parts.join(""));
  return file;
}

/** Where each line starts (the reference: LF, CR LF or a lone CR ends a line). */
function lineStarts(b: Buffer): number[] {
  const starts = [0];
  for (let i = 0; i < b.length; i++) {
    if (b[i] === 0x0a) starts.push(i + 1);
    else if (b[i] === 0x0d) {
      if (b[i + 1] === 0x0a) i++;
      starts.push(i + 1);
    }
  }
  if (starts.at(-1) === b.length) starts.pop();
  return starts;
}

/** What a generator's source notes of `file` as it sends seqs 0..rows-1 in windows of `window`: the process's index. */
async function generatorIndex(file: string, rows: number, window = rows): Promise<ReplayIndexJson> {
  const src = createEventSource({ fields, seed: 1, genId: 0, replayFile: file });
  for (let from = 0; from < rows; from += window) await src.load(from, Math.min(window, rows - from));
  await src.close();
  return replayIndexOf(file)!;
}

/** The replayed line of each seq in `seqs` (ascending, or going back once) from `src`. */
async function linesOf(src: EventSource, seqs: readonly number[]): Promise<string[]> {
  const out: string[] = [];
  for (const s of seqs) {
    await src.load(s, 1);
    out.push(src.values(s)[1] as string);
  }
  return out;
}

describe("the generators' count of the lines they changed before sending (core/events/replay-lines.ts repair)", () => {
  it("counts each file line once, cut at 64 KiB or repaired (invalid UTF-8, NUL), however often a pass wraps", async () => {
    const file = path.join(dir, "altered.log");
    const long = "y".repeat(70_000);
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from(`ok 1\n${long}\nbad `),
        Buffer.from([0xff, 0xfe]),
        Buffer.from("\nnul \u0000 here\r\nboth "),
        Buffer.from([0xc3]),
        Buffer.from(`${long}\rok 2\n`),
      ]),
    );
    const index = await generatorIndex(file, 6 * 3); // three passes of the 6 lines
    expect(index).toMatchObject({ lines: 6, lineCount: 6, cut: 2, repaired: 3 });
  });
});

describe("the replay index (core/events/replay-index.ts)", () => {
  it("the LineReader's offset is where the next line starts (null only after a CR at a chunk's end), and a reader opened there reads on the same", async () => {
    const file = seededFile("offsets.log", 400, 3);
    const bytes = readFileSync(file);
    const starts = lineStarts(bytes);
    const r = new LineReader(file, { chunkBytes: 7 });
    const offsets: Array<number | null> = [];
    const lines: string[] = [];
    for (;;) {
      offsets.push(r.offset);
      const l = await r.next();
      if (l === null) break;
      lines.push(l.toString("latin1"));
    }
    expect(lines).toHaveLength(starts.length);
    const known = offsets.slice(0, starts.length);
    known.forEach((o, i) => {
      if (o !== null) expect(o).toBe(starts[i]);
    });
    expect(known.filter((o) => o === null).length).toBeLessThan(starts.length / 4);
    expect(r.bytesRead).toBe(bytes.length);

    for (const i of [1, 2, 57, 200, starts.length - 1]) {
      const at = new LineReader(file, { start: starts[i]!, chunkBytes: 5 });
      expect(await at.startsLine()).toBe(true);
      expect((await at.next())!.toString("latin1")).toBe(lines[i]);
      expect(await at.skipLines(3)).toBe(Math.min(3, starts.length - i - 1));
      await at.close();
    }
    // inside a line, between a CR and its LF, and past the end: not a line's start
    const crlf = bytes.indexOf("\r\n");
    for (const off of [starts[5]! + 2, crlf + 1, bytes.length + 10]) {
      const at = new LineReader(file, { start: off });
      expect(await at.startsLine()).toBe(false);
      await at.close();
    }
  });

  it("a generator's source notes a mark at least every MARK_SPACING bytes, each a true line start, and the line count once it wraps", async () => {
    const file = seededFile("generator.log", 30_000, 5);
    const starts = lineStarts(readFileSync(file));
    const json = await generatorIndex(file, Math.ceil(starts.length * 1.5), 1000);
    expect(json).toMatchObject({
      size: readFileSync(file).length,
      lines: starts.length,
      lineCount: starts.length,
    });
    const idx = new ReplayIndex(json);
    let prev = { line: 0, byte: 0 };
    let marks = 0;
    for (let line = 0; line < starts.length; line++) {
      const m = idx.before(line);
      expect(m.line).toBeLessThanOrEqual(line);
      expect(starts[m.line]).toBe(m.byte);
      if (m.line !== prev.line) {
        expect(m.byte - prev.byte).toBeGreaterThanOrEqual(MARK_SPACING);
        marks++;
      }
      prev = m;
    }
    // a mark about every 64 KiB of a ~6 MB file
    expect(marks).toBeGreaterThan(readFileSync(file).length / MARK_SPACING / 2);
    // of several processes' indexes, the one that knows the file's end
    const partial: ReplayIndexJson = { ...json, lines: 10, lineCount: 0, marks: "" };
    expect(widestIndex([partial, undefined, json])).toBe(json);
  });

  it("a content check's source given the index reads the same lines, reopening the file near each instead of reading up to it", async () => {
    const file = seededFile("check.log", 60_000, 7);
    const index = await generatorIndex(file, 60_000, 5000);
    expect(index.lineCount).toBe(0); // the generator stopped before the end: lines known, count not
    const rnd = uniform(11);
    const seqs = Array.from({ length: 40 }, () => Math.floor(rnd() * 59_000)).sort((a, b) => a - b);
    const wanted = [...seqs, 30, 45_000, 59_999];

    const plain = createEventSource({ fields, seed: 1, genId: 0, replayFile: file });
    const expected = await linesOf(plain, wanted);
    const plainReads = plain.replayReads()!;
    await plain.close();
    const indexed = createEventSource({ fields, seed: 1, genId: 0, replayFile: file, replayIndex: index });
    expect(await linesOf(indexed, wanted)).toEqual(expected);
    await indexed.close();
    const reads = indexed.replayReads()!;
    expect(reads.indexDropped).toBeNull();
    expect(reads.indexMarks).toBe(new ReplayIndex(index).marks);
    expect(reads.seeks).toBeGreaterThanOrEqual(10); // samples nearer than JUMP_BYTES read on
    expect(reads.bytes).toBeLessThan(plainReads.bytes / 4);
    expect(expected[0]).toMatch(new RegExp(`^L${seqs[0]} `));
  });

  it("round the file: with the line count known, a seq past the end is its line in a later pass", async () => {
    const file = seededFile("wrap.log", 20_000, 13);
    const index = await generatorIndex(file, 25_000);
    expect(index.lineCount).toBe(20_000);
    const wanted = [5, 19_999, 20_000, 33_333, 99_999, 1_000_000_017, 12];
    const indexed = createEventSource({ fields, seed: 1, genId: 0, replayFile: file, replayIndex: index });
    const got = await linesOf(indexed, wanted);
    await indexed.close();
    expect(got.map((l) => l.split(" ")[0])).toEqual(wanted.map((s) => `L${s % 20_000}`));
    expect(indexed.replayReads()!.seeks).toBeGreaterThan(2);
  });

  it("the content check reads a file the load went round several times once: its sample in line order, not seq order", async () => {
    const file = seededFile("rounds.log", 20_000, 23);
    const size = readFileSync(file).length;
    const sent = 100_000; // five passes of the file
    const index = await generatorIndex(file, sent, 8000);
    expect(index.lineCount).toBe(20_000);
    const src = createEventSource({ fields, seed: 1, genId: 0, replayFile: file });
    await src.load(0, sent);
    const rows: StoredRow[] = Array.from({ length: sent }, (_, seq) => {
      const v = src.values(seq);
      return { gen: 0, seq, values: [v[0] as number, Buffer.from(v[1] as string)] };
    });
    await src.close();
    const reader: StoredRowReader = {
      rules: () => fields.map((f) => ({ name: f.name, readable: true, rule: "memory" })),
      readRange: async () => {
        throw new Error("not in sample mode");
      },
      readSeqs: async () => {
        throw new Error("readSample is preferred");
      },
      readSample: async (wanted) => wanted.flatMap((w) => w.seqs.map((q) => rows[q]!)),
    };
    // about 400 sampled seqs a pass, ~10 KB apart in the file: nearer than a seek, so seq order reads every pass
    const check = {
      fields,
      seed: 1,
      sent: [sent],
      stored: sent,
      limits: { all: 0, sample: 2000 },
      replayFile: file,
    };
    const plain = await checkFidelity(reader, check);
    const indexed = await checkFidelity(reader, { ...check, replayIndex: index });
    for (const r of [plain, indexed])
      expect(r).toMatchObject({ mode: "sample", rowsCompared: 2000, altered: 0 });
    expect(plain.replay!.bytes).toBeGreaterThan(4 * size);
    expect(indexed.replay!.bytes).toBeLessThan(1.2 * size);
    // a line stored altered in one pass only is found there: the line order maps each sampled seq back to its own
    const [victim] = [...rows].reverse().filter((r) => r.seq % 20_000 === 12_345);
    victim!.values[1] = Buffer.from("not the line");
    const sampled = new Set(
      (await checkFidelity(reader, { ...check, limits: { all: 0, sample: sent } })).examples.map(
        (e) => e.seq,
      ),
    );
    expect(sampled).toEqual(new Set([victim!.seq]));
    const once = await checkFidelity(reader, {
      ...check,
      replayIndex: index,
      limits: { all: 0, sample: sent },
    });
    expect(once).toMatchObject({ altered: 1, examples: [{ seq: victim!.seq, field: "msg" }] });
    expect(once.replay!.bytes).toBeLessThan(1.2 * size);
  });

  it("leaves no file open once closed, the check of the index's last mark included", async () => {
    const file = seededFile("fds.log", 20_000, 19);
    const index = await generatorIndex(file, 20_000);
    // only descriptors on this file count: other tests in this worker open and close their own meanwhile
    const openFiles = (): number =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false; // closed between the listing and the readlink
        }
      }).length;
    // a closed reader's handle is closed asynchronously: wait for it (a leaked one stays until garbage collection)
    const settled = async (): Promise<number> => {
      for (let i = 0; i < 100 && openFiles() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      return openFiles();
    };
    expect(await settled()).toBe(0);
    const src = createEventSource({ fields, seed: 1, genId: 0, replayFile: file, replayIndex: index });
    await linesOf(src, [10_000, 15_000]);
    expect(src.replayReads()!.seeks).toBeGreaterThan(0);
    await src.close();
    expect(await settled()).toBe(0);
  });

  it("an index that is not the file's is dropped, saying why, and the lines still come from the file", async () => {
    const file = seededFile("changed.log", 30_000, 17);
    const index = await generatorIndex(file, 30_000);
    // the same size, every line after the first one byte later: the marks fall inside lines
    const b = readFileSync(file);
    const shifted = Buffer.concat([Buffer.from("L"), b.subarray(0, b.length - 1)]);
    const other = path.join(dir, "shifted.log");
    writeFileSync(other, shifted);
    const starts = lineStarts(shifted);
    const wanted = [20_000, 25_000, 100]; // the first far from the start (a seek first), then going back
    const expected = wanted.map((s) =>
      shifted
        .subarray(starts[s]!, starts[s + 1]!)
        .toString("latin1")
        .replace(/[\r\n]+$/, ""),
    );
    const cases: Array<[ReplayIndexJson, RegExp]> = [
      [index, /does not start a line/],
      [{ ...index, size: index.size + 1 }, /bytes/],
      [{ ...index, marks: "gA==" }, /marks end inside a number/],
    ];
    for (const [idx, why] of cases) {
      const src = createEventSource({ fields, seed: 1, genId: 0, replayFile: other, replayIndex: idx });
      expect(await linesOf(src, wanted)).toEqual(expected);
      await src.close();
      expect(src.replayReads()).toMatchObject({ indexMarks: 0, indexDropped: expect.stringMatching(why) });
    }
  });
});
