/**
 * A sparse index of a replay file's lines: "line L starts at byte B", for about one line every MARK_SPACING bytes.
 *
 * Why: the content check (core/fidelity.ts) recomputes each sampled row's replayed line, and a sample spread over a
 * long replay reaches close to its last line, so without an index it reads the whole file again after the load,
 * beside the ledger's pass of the table, slower than the pass on a large replay (docs/measurements.md, "Figures moved
 * from code comments"). The generators read every line anyway, so they note the marks as they go
 * (./source.ts ReplayReader) and send them home in their final report (harness/generators/child.ts); the content check
 * then opens the file at the mark before each sampled line and reads from there (at most MARK_SPACING bytes and the
 * line).
 *
 * On the wire (GeneratorFinal.replayIndex) the marks are LEB128 varint pairs (line − previous line, byte − previous
 * byte), base64: about 5 bytes per mark, 1.3 MB for a 16 GiB file. A file is matched to its index by size; a mark
 * that does not start a line (the file changed to one of the same size) makes the reader drop the index and read
 * from the start (./source.ts).
 */

import { ALTERED_CUT, ALTERED_REPAIRED } from "./replay-lines.ts";

/** Bytes of file between marks (at least): a sampled line is at most this far past its mark. */
export const MARK_SPACING = 64 * 1024;

/** A replay index as a generator reports it (see the file comment). */
export interface ReplayIndexJson {
  /** the file's size in bytes when the generator opened it */
  size: number;
  /** lines the generator's passes covered from line 0 (so line numbers below this are known) */
  lines: number;
  /** the file's line count when a pass reached its end, else 0 */
  lineCount: number;
  /** base64 of LEB128 varint pairs (Δline, Δbyte) from (0, 0) */
  marks: string;
  /**
   * of the `lines` known, how many the reader changed before they were sent (./replay-lines.ts LineReader.altered):
   * cut at MAX_REPLAY_LINE_BYTES, and with invalid UTF-8 or NUL replaced (a line may be both); absent in older reports
   */
  cut?: number;
  repaired?: number;
}

/** Identity of a file as fstat sees it: a recorder noting another file (same path, new content) starts over. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** Notes marks as a file is read forward from line 0 (one per process and file: `recorderFor`). */
export class ReplayIndexRecorder {
  private buf = Buffer.alloc(4096);
  private used = 0;
  private lastLine = 0;
  private lastByte = 0;
  private count = 0;
  /** lines known from line 0 on (see ReplayIndexJson.lines) */
  lines = 0;
  lineCount = 0;

  constructor(readonly identity: FileIdentity) {}

  /** lines of those known that the reader cut, and that it repaired (ReplayIndexJson) */
  cut = 0;
  repaired = 0;

  /**
   * Line `line` starts at byte `byte` (read forward from line 0; any other line is ignored), and the reader changed
   * it as `altered` says (./replay-lines.ts ALTERED_CUT, ALTERED_REPAIRED bits). Notes a mark when it is MARK_SPACING
   * bytes or more past the last; `byte` null (not known) notes none.
   */
  note(line: number, byte: number | null, altered = 0): void {
    if (line !== this.lines) return; // only the next line after those known: a reader that jumped ahead notes nothing
    this.lines = line + 1;
    if (altered & ALTERED_CUT) this.cut++;
    if (altered & ALTERED_REPAIRED) this.repaired++;
    if (byte === null || byte - this.lastByte < MARK_SPACING) return;
    this.put(line - this.lastLine);
    this.put(byte - this.lastByte);
    this.lastLine = line;
    this.lastByte = byte;
    this.count++;
  }

  /** Marks noted. */
  get marks(): number {
    return this.count;
  }

  private put(v: number): void {
    if (this.used + 10 > this.buf.length) {
      const grown = Buffer.alloc(this.buf.length * 2);
      this.buf.copy(grown, 0, 0, this.used);
      this.buf = grown;
    }
    this.used = writeVarint(this.buf, this.used, v);
  }

  toJSON(): ReplayIndexJson {
    return {
      size: this.identity.size,
      lines: this.lines,
      lineCount: this.lineCount,
      marks: this.buf.subarray(0, this.used).toString("base64"),
      cut: this.cut,
      repaired: this.repaired,
    };
  }
}

const recorders = new Map<string, ReplayIndexRecorder>();

/**
 * This process's recorder for the file at `path` with `identity`: the same one for every reader of the same file (a
 * generator's reader and, after a restart, its next), a fresh one when the file is another (identity changed).
 */
export function recorderFor(path: string, identity: FileIdentity): ReplayIndexRecorder {
  const r = recorders.get(path);
  const same =
    r &&
    r.identity.dev === identity.dev &&
    r.identity.ino === identity.ino &&
    r.identity.size === identity.size &&
    r.identity.mtimeMs === identity.mtimeMs;
  if (same) return r;
  const fresh = new ReplayIndexRecorder(identity);
  recorders.set(path, fresh);
  return fresh;
}

/** The index this process noted for `path` (a generator's final report), or undefined when it read none of it. */
export function replayIndexOf(path: string | undefined): ReplayIndexJson | undefined {
  const r = path === undefined ? undefined : recorders.get(path);
  return r && r.lines > 0 ? r.toJSON() : undefined;
}

/**
 * Of several generators' indexes of one file (each process reads it from line 0), the one that knows the most lines.
 * Undefined for none.
 */
export function widestIndex(
  indexes: ReadonlyArray<ReplayIndexJson | undefined>,
): ReplayIndexJson | undefined {
  let best: ReplayIndexJson | undefined;
  for (const x of indexes)
    if (
      x &&
      (!best || x.lineCount > best.lineCount || (x.lineCount === best.lineCount && x.lines > best.lines))
    )
      best = x;
  return best;
}

/** A decoded index: the mark at or before a line. */
export class ReplayIndex {
  readonly size: number;
  readonly lines: number;
  readonly lineCount: number;
  private readonly lineAt: Float64Array;
  private readonly byteAt: Float64Array;

  /** @throws Error when `json` is not a well-formed index (a bad field named) */
  constructor(json: ReplayIndexJson) {
    for (const k of ["size", "lines", "lineCount"] as const) {
      if (!Number.isSafeInteger(json[k]) || json[k] < 0)
        throw new Error(`replay index: ${k} must be a non-negative integer, got ${String(json[k])}`);
    }
    if (typeof json.marks !== "string") throw new Error("replay index: marks must be a base64 string");
    this.size = json.size;
    this.lines = json.lines;
    this.lineCount = json.lineCount;
    const raw = Buffer.from(json.marks, "base64");
    // each number ends at a byte below 0x80, two numbers a mark: the arrays are made once at their size (growing JS
    // arrays for a 60 GiB file's 982,097 marks held about 24 MB of the harness's heap during the content check)
    let ends = 0;
    for (let i = 0; i < raw.length; i++) if (raw[i]! < 0x80) ends++;
    const lineAt = new Float64Array(Math.ceil(ends / 2) + 1);
    const byteAt = new Float64Array(lineAt.length);
    let n = 0;
    for (let p = 0; p < raw.length;) {
      const [dl, p1] = readVarint(raw, p);
      const [db, p2] = readVarint(raw, p1);
      if (dl <= 0 || db <= 0) throw new Error(`replay index: mark ${n + 1} does not move forward`);
      lineAt[n + 1] = lineAt[n]! + dl;
      byteAt[n + 1] = byteAt[n]! + db;
      n++;
      p = p2;
    }
    if (byteAt[n]! >= Math.max(1, this.size) || lineAt[n]! >= Math.max(1, this.lines))
      throw new Error("replay index: a mark past the file's end");
    this.lineAt = lineAt;
    this.byteAt = byteAt;
  }

  /** Marks in the index (line 0 at byte 0, always known, not counted). */
  get marks(): number {
    return this.lineAt.length - 1;
  }

  /** The last mark at or before `line` (line 0 at byte 0 when none other is). */
  before(line: number): { line: number; byte: number } {
    let lo = 0;
    let hi = this.lineAt.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.lineAt[mid]! <= line) lo = mid;
      else hi = mid - 1;
    }
    return { line: this.lineAt[lo]!, byte: this.byteAt[lo]! };
  }
}

/** LEB128 (unsigned) of a safe non-negative integer at buf[p]; returns the position after it. */
function writeVarint(buf: Buffer, p: number, v: number): number {
  while (v >= 0x80) {
    buf[p++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[p++] = v;
  return p;
}

/** The LEB128 varint at buf[p] and the position after it. @throws Error when it runs off the end */
function readVarint(buf: Buffer, p: number): [number, number] {
  let v = 0;
  let scale = 1;
  for (;;) {
    if (p >= buf.length) throw new Error("replay index: marks end inside a number");
    const b = buf[p++]!;
    v += (b & 0x7f) * scale;
    if (b < 0x80) return [v, p];
    scale *= 0x80;
    if (scale > 2 ** 56) throw new Error("replay index: a number too long");
  }
}
