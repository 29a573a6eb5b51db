// The replay file's lines (core/events/replay-lines.ts) against Node's readline with crlfDelay Infinity (the reader
// it replaced): the same lines, byte for byte after the same repair (invalid UTF-8 and NUL → U+FFFD, cut at 64 KiB on
// a character boundary), over seeded random files of LF, CR, CR LF, NUL, invalid and multi-byte UTF-8, with line
// ends on the 1 MiB chunk boundaries; and skip() and skipLines() pass exactly the lines next() would give.
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { LineReader, MAX_REPLAY_LINE_BYTES } from "../../../core/events/replay-lines.ts";
import { mulberry32 } from "../../../core/events/source.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "ib-test-replay-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the readline-based reader gave for a file: each line decoded, NUL replaced, encoded, cut (its toLineBytes). */
async function viaReadline(file: string): Promise<Buffer[]> {
  const out: Buffer[] = [];
  const rl = createInterface({
    input: createReadStream(file, { highWaterMark: 1 << 20 }),
    crlfDelay: Infinity,
  });
  for await (const line of rl) {
    const b = Buffer.from(line.replaceAll("\0", "\uFFFD"), "utf8");
    let cut = b.length;
    if (cut > MAX_REPLAY_LINE_BYTES) {
      cut = MAX_REPLAY_LINE_BYTES;
      while (cut > 0 && (b[cut]! & 0xc0) === 0x80) cut--;
    }
    out.push(b.subarray(0, cut));
  }
  return out;
}

async function viaLineReader(file: string): Promise<Buffer[]> {
  const r = new LineReader(file);
  const out: Buffer[] = [];
  for (let l = await r.next(); l !== null; l = await r.next()) out.push(Buffer.from(l));
  await r.close();
  return out;
}

/** Seeded bytes: text, multi-byte characters, invalid bytes, NUL, and every kind of line end. */
function randomFile(seed: number, bytes: number): Buffer {
  const rnd = mulberry32(seed);
  const pieces = [
    Buffer.from("plain text "),
    Buffer.from("ünï ✓ 日本 😀"),
    Buffer.from([0xff]),
    Buffer.from([0xe2, 0x82]),
    Buffer.from([0xc3]),
    Buffer.from([0]),
    Buffer.from("\n"),
    Buffer.from("\r"),
    Buffer.from("\r\n"),
    Buffer.from("\n\n"),
    Buffer.from("\t\\"),
  ];
  const out: Buffer[] = [];
  let n = 0;
  while (n < bytes) {
    const p = pieces[rnd() % pieces.length]!;
    out.push(p);
    n += p.length;
  }
  return Buffer.concat(out);
}

describe("replay file lines (core/events/replay-lines.ts)", () => {
  it("gives readline's lines, repaired the same way, over seeded files of every line end and bad byte", async () => {
    for (const seed of [1, 2, 3]) {
      const file = path.join(dir, `random-${seed}.log`);
      writeFileSync(file, randomFile(seed, 200_000));
      const want = await viaReadline(file);
      expect(want.length).toBeGreaterThan(1000);
      expect(await viaLineReader(file)).toEqual(want);
    }
  });

  it("handles line ends on the 1 MiB chunk boundary (CR | LF split, CR alone, LF first), long lines and an unterminated last line", async () => {
    const MiB = 1 << 20;
    const cases: Record<string, Buffer> = {
      "crlf split": Buffer.concat([Buffer.alloc(MiB - 1, 0x61), Buffer.from("\r\nnext\n")]),
      "lone cr at end": Buffer.concat([Buffer.alloc(MiB - 1, 0x62), Buffer.from("\rnext")]),
      "lf first": Buffer.concat([Buffer.alloc(MiB, 0x63), Buffer.from("\n\nx")]),
      "char split": Buffer.concat([Buffer.alloc(MiB - 1, 0x64), Buffer.from("é\n")]),
      "long lines": Buffer.concat([
        Buffer.from("é".repeat(40_000)),
        Buffer.from("\n"),
        Buffer.alloc(3 * MiB, 0x65),
        Buffer.from("\r\nshort"),
      ]),
      "invalid across the cut": Buffer.concat([
        Buffer.alloc(MAX_REPLAY_LINE_BYTES - 1, 0x66),
        Buffer.from([0xf0, 0x9f, 0x98]),
        Buffer.from("\n"),
      ]),
      "only ends": Buffer.from("\n\r\n\r\r\n"),
      "ends with cr": Buffer.from("a\r"),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const file = path.join(dir, `${name.replaceAll(" ", "-")}.log`);
      writeFileSync(file, bytes);
      const want = await viaReadline(file);
      const got = await viaLineReader(file);
      expect(
        got.map((b) => b.length),
        name,
      ).toEqual(want.map((b) => b.length));
      expect(got, name).toEqual(want);
    }
  });

  it("skip() passes exactly one line: skipping k lines then reading gives line k", async () => {
    const file = path.join(dir, "random-9.log");
    writeFileSync(file, randomFile(9, 100_000));
    const all = await viaReadline(file);
    for (const k of [0, 1, 17, all.length - 1]) {
      const r = new LineReader(file);
      for (let i = 0; i < k; i++) expect(await r.skip()).toBe(true);
      expect(await r.next()).toEqual(all[k]);
      await r.close();
    }
    const r = new LineReader(file);
    for (let i = 0; i < all.length; i++) await r.skip();
    expect(await r.skip()).toBe(false);
    expect(await r.next()).toBeNull();
    await r.close();
  });

  it("skipLines(n) passes the same lines as n skip() calls, across chunk boundaries, CR LF splits and the end of the file", async () => {
    const MiB = 1 << 20;
    const files: Record<string, Buffer> = {
      random: randomFile(11, 3 * MiB),
      "crlf split": Buffer.concat([Buffer.alloc(MiB - 1, 0x61), Buffer.from("\r\nnext\n\rx\r")]),
      "lone cr at chunk end": Buffer.concat([Buffer.alloc(MiB - 3, 0x62), Buffer.from("\n\r\rnext")]),
      "long line": Buffer.concat([
        Buffer.from("a\nb\n"),
        Buffer.alloc(2 * MiB + 5, 0x63),
        Buffer.from("\nz"),
      ]),
    };
    for (const [name, bytes] of Object.entries(files)) {
      const file = path.join(dir, `skiplines-${name.replaceAll(" ", "-")}.log`);
      writeFileSync(file, bytes);
      const all = await viaReadline(file);
      for (const steps of [
        [0, 1],
        [1, 1, 1],
        [2, all.length - 3],
        [Math.floor(all.length / 2), 1],
        [all.length - 1],
        [all.length],
      ]) {
        const r = new LineReader(file);
        let at = 0;
        for (const k of steps) {
          expect(await r.skipLines(k), `${name} ${steps}`).toBe(Math.min(k, all.length - at));
          at = Math.min(all.length, at + k);
        }
        expect(await r.next(), `${name} ${steps}`).toEqual(at < all.length ? all[at] : null);
        await r.close();
      }
      const r = new LineReader(file);
      expect(await r.skipLines(all.length + 5)).toBe(all.length);
      expect(await r.skipLines(1)).toBe(0);
      await r.close();
    }
  });

  it("passing lines reads into one chunk again; a kept line keeps its chunk, and stays intact while the reader reads on", async () => {
    const KiB = 1024;
    const lines = Array.from({ length: 4000 }, (_, k) => `line ${k} ${"x".repeat(k % 97)}`);
    const file = path.join(dir, "reuse.log");
    writeFileSync(file, lines.join("\n") + "\n");
    const size = Buffer.byteLength(lines.join("\n")) + 1;
    const chunks = Math.ceil(size / (16 * KiB));
    // passed, never kept: the first chunk is read into again for every later one
    const pass = new LineReader(file, { chunkBytes: 16 * KiB });
    expect(await pass.skipLines(lines.length)).toBe(lines.length);
    expect(pass.chunksAllocated).toBe(1);
    expect(pass.bytesRead).toBe(size);
    await pass.close();
    // every 500th line kept as given (a view of its chunk, not copied): each one's chunk is left alone
    const keep = new LineReader(file, { chunkBytes: 16 * KiB });
    const kept: Array<[number, Buffer]> = [];
    for (let k = 0; k < lines.length; k++) {
      if (k % 500 === 0) kept.push([k, (await keep.next())!]);
      else expect(await keep.skip()).toBe(true);
    }
    expect(await keep.next()).toBeNull();
    for (const [k, l] of kept) expect(l.toString(), `line ${k}`).toBe(lines[k]);
    expect(keep.chunksAllocated).toBeGreaterThan(kept.length - 1);
    expect(keep.chunksAllocated).toBeLessThan(chunks);
    await keep.close();
    // copyLines (the content check): every line kept, each its own copy, in one chunk; that chunk then goes on to a
    // reader opened further on, which allocates none
    const copy = new LineReader(file, { chunkBytes: 16 * KiB, copyLines: true });
    const all: Buffer[] = [];
    for (let k = 0; k < 3000; k++) all.push((await copy.next())!);
    expect(all.map(String)).toEqual(lines.slice(0, 3000));
    expect(copy.chunksAllocated).toBe(1);
    const at = copy.offset!;
    const spare = copy.spareChunk();
    expect(spare?.length).toBe(16 * KiB);
    await copy.close();
    const on = new LineReader(file, { start: at, chunkBytes: 16 * KiB, copyLines: true });
    on.adoptChunk(spare);
    const rest: string[] = [];
    for (let l = await on.next(); l !== null; l = await on.next()) rest.push(String(l));
    expect(rest).toEqual(lines.slice(3000));
    expect(on.chunksAllocated).toBe(0);
    await on.close();
  });

  it("an empty file has no lines; a missing one fails with the file system's error", async () => {
    const empty = path.join(dir, "empty.log");
    writeFileSync(empty, "");
    expect(await new LineReader(empty).next()).toBeNull();
    await expect(new LineReader(path.join(dir, "absent.log")).next()).rejects.toThrow(/ENOENT/);
  });
});
