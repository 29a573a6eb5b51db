// The replay file's lines (core/events/replay-lines.ts) against Node's readline with crlfDelay Infinity (the reader
// it replaced): the same lines, byte for byte after the same repair (invalid UTF-8 and NUL → U+FFFD, cut at 64 KiB on
// a character boundary), over seeded random files of LF, CR, CR LF, NUL, invalid and multi-byte UTF-8, with line
// ends on the 1 MiB chunk boundaries; and skip() passes exactly the lines next() would give.
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
  const rl = createInterface({ input: createReadStream(file, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
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
  const pieces = [Buffer.from("plain text "), Buffer.from("ünï ✓ 日本 😀"), Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0xc3]),
    Buffer.from([0]), Buffer.from("\n"), Buffer.from("\r"), Buffer.from("\r\n"), Buffer.from("\n\n"), Buffer.from("\t\\")];
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
      "long lines": Buffer.concat([Buffer.from("é".repeat(40_000)), Buffer.from("\n"), Buffer.alloc(3 * MiB, 0x65), Buffer.from("\r\nshort")]),
      "invalid across the cut": Buffer.concat([Buffer.alloc(MAX_REPLAY_LINE_BYTES - 1, 0x66), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from("\n")]),
      "only ends": Buffer.from("\n\r\n\r\r\n"),
      "ends with cr": Buffer.from("a\r"),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const file = path.join(dir, `${name.replaceAll(" ", "-")}.log`);
      writeFileSync(file, bytes);
      const want = await viaReadline(file);
      const got = await viaLineReader(file);
      expect(got.map((b) => b.length), name).toEqual(want.map((b) => b.length));
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

  it("an empty file has no lines; a missing one fails with the file system's error", async () => {
    const empty = path.join(dir, "empty.log");
    writeFileSync(empty, "");
    expect(await new LineReader(empty).next()).toBeNull();
    await expect(new LineReader(path.join(dir, "absent.log")).next()).rejects.toThrow(/ENOENT/);
  });
});
