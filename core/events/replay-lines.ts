/**
 * The lines of a replay file as bytes, read forward in chunks (1 MiB; 64 KiB from a mark of the file's index,
 * ./replay-index.ts): what a scenario's `source: { file }` puts into the last string field (./source.ts), for the
 * generators and for the content check (core/fidelity.ts), which both read the same file the same way.
 *
 * The lines are the ones Node's readline gives with `crlfDelay: Infinity` (the reader this replaces, and what the
 * tests compare with): a line ends at LF, CR LF or a lone CR; a last line without an end is a line when it is not
 * empty; empty lines between ends are lines. Each line's bytes are then made what PostgreSQL text and every sink can
 * keep: invalid UTF-8 becomes U+FFFD as in Node's UTF-8 decoder (WHATWG Encoding, "utf-8 decoder": one U+FFFD per
 * maximal invalid subpart), NUL becomes U+FFFD, and a line is cut at MAX_REPLAY_LINE_BYTES on a character boundary.
 *
 * Why bytes and not readline: readline decodes every line to a JS string and the source encoded it back, and
 * skipping to a seq (the content check's sample, a restart) went through the same decoding. Through readline, a
 * late line and a large replay's content check took long (docs/measurements.md, "Figures moved from code comments").
 * Here a line that is not kept is only found (Buffer.indexOf),
 * and a kept line is a view of its chunk unless it spans two chunks or needs repair. Memory: the chunk being read,
 * the chunks the kept lines point into, and at most MAX_REPLAY_LINE_BYTES + 4 bytes of one long line (the rest of
 * it is dropped unread rather than buffered, unlike readline). A chunk none of whose bytes were handed out (lines
 * passed, not kept) is read into again rather than replaced: the content check passes hundreds of MiB between its
 * sampled lines, and a fresh Buffer per chunk held the harness's external memory near 30 MiB of garbage
 * (docs/measurements.md).
 */
import { isUtf8 } from "node:buffer";
import { open, type FileHandle } from "node:fs/promises";

/** Replayed lines longer than this many bytes are cut (at a UTF-8 character boundary). */
export const MAX_REPLAY_LINE_BYTES = 64 * 1024;
/** Bytes read per chunk. */
const CHUNK_BYTES = 1 << 20;
/** Raw bytes of a line kept before cutting: enough for the first MAX_REPLAY_LINE_BYTES after repair (a 4-byte character may straddle). */
const RAW_LIMIT = MAX_REPLAY_LINE_BYTES + 4;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Reads a file's lines forward, from its start (see the file comment). `next()` gives the next line's bytes, or null
 * at the end of the file; `skip()` passes one line without keeping it. Not reusable after the end: make a new one.
 * @throws the file system's error (ENOENT, EACCES, EISDIR, …) from open and reads
 */
export class LineReader {
  private fh: FileHandle | null = null;
  private chunk: Buffer = Buffer.alloc(0);
  /** a view of `chunk` was handed out (a kept line, or part of one): the next read needs a fresh chunk */
  private chunkShared = false;
  private pos = 0;
  private end = 0;
  private eof = false;
  /** file offset of chunk[0]; of the next read once the chunk is used up */
  private base: number;
  private readonly chunkBytes: number;
  /** bytes read from the file so far */
  bytesRead = 0;
  /** chunks allocated so far (a chunk none of whose bytes were handed out is read into again: the file comment) */
  chunksAllocated = 0;
  /** how the last line next() gave differs from the file's: ALTERED_REPAIRED | ALTERED_CUT bits, 0 when it is as in the file */
  altered = 0;
  /** the previous line ended in a CR at a chunk's end: an LF starting the next chunk belongs to it */
  private crPending = false;
  /** position of the next CR at or after pos in this chunk (-1: none), found once per chunk and after each CR */
  private nextCr = -1;

  /**
   * `opts.start`: the byte offset to read from, which must be where a line starts (a replay index's mark,
   * ./replay-index.ts; `startsLine()` checks it); default 0. `opts.chunkBytes`: bytes per read, default 1 MiB (a
   * reader opened at a mark reads a few lines: 64 KiB). `opts.copyLines`: next() gives each line as its own copy,
   * never a view of a chunk, so that one chunk is read into again however many lines are kept (the content check: a
   * line digested, then dropped); default false.
   */
  constructor(
    private readonly path: string,
    opts: { start?: number; chunkBytes?: number; copyLines?: boolean } = {},
  ) {
    this.base = opts.start ?? 0;
    this.chunkBytes = opts.chunkBytes ?? CHUNK_BYTES;
    this.copyLines = opts.copyLines ?? false;
  }

  /** see the constructor's `opts.copyLines` */
  private readonly copyLines: boolean;

  /** Read into `chunk` (another reader's spareChunk(), null: none) rather than a new Buffer. Call before the first read. */
  adoptChunk(chunk: Buffer | null): void {
    if (chunk?.length === this.chunkBytes && this.end === 0) this.chunk = chunk;
  }

  /**
   * This reader's chunk for another reader of the same chunk size (adoptChunk()) when none of its bytes were handed
   * out, else null. The reader is left without it: call it only when this reader is done (before close()).
   */
  spareChunk(): Buffer | null {
    if (this.chunkShared || this.chunk.length !== this.chunkBytes) return null;
    const c = this.chunk;
    this.chunk = EMPTY;
    this.pos = this.end = 0;
    this.eof = true;
    return c;
  }

  /**
   * The file offset where the next line starts, or null when that is not known yet (a CR ended the chunk: an LF may
   * follow in the next). Before the first read, the `start` given.
   */
  get offset(): number | null {
    return this.crPending ? null : this.base + this.pos;
  }

  /**
   * Whether `start` (see the constructor) is where a line starts: 0, or just after an LF, or after a CR that no LF
   * follows. False also when the file is shorter than `start`. Call before reading.
   */
  async startsLine(): Promise<boolean> {
    const start = this.base;
    if (start === 0) return true;
    this.fh ??= await open(this.path, "r");
    const two = Buffer.alloc(2);
    const { bytesRead } = await this.fh.read(two, 0, 2, start - 1);
    this.bytesRead += bytesRead;
    if (bytesRead === 0) return false;
    return two[0] === LF || (two[0] === CR && (bytesRead < 2 || two[1] !== LF));
  }

  /** Read the next chunk; false at the end of the file. */
  private async fill(): Promise<boolean> {
    if (this.eof) return false;
    this.fh ??= await open(this.path, "r");
    const at = this.base + this.end;
    // a fresh chunk when lines kept from this one must stay valid; else this one again
    let buf = this.chunk;
    if (this.chunkShared || buf.length !== this.chunkBytes) {
      buf = Buffer.allocUnsafe(this.chunkBytes);
      this.chunksAllocated++;
    }
    this.chunkShared = false;
    const { bytesRead } = await this.fh.read(buf, 0, this.chunkBytes, at);
    this.bytesRead += bytesRead;
    if (bytesRead === 0) {
      this.eof = true;
      this.base = at;
      this.pos = this.end = 0;
      await this.close();
      return false;
    }
    this.base = at;
    this.chunk = buf;
    this.pos = 0;
    this.end = bytesRead;
    this.nextCr = buf.subarray(0, bytesRead).indexOf(CR);
    if (this.crPending) {
      this.crPending = false;
      if (buf[0] === LF) this.pos = 1;
    }
    return true;
  }

  /** The next line's bytes (see the file comment), or null when the file has no more lines. */
  next(): Promise<Buffer | null> {
    return this.line(true);
  }

  /** Pass the next line; false when the file has no more lines. */
  async skip(): Promise<boolean> {
    return (await this.line(false)) !== null;
  }

  /**
   * Pass up to `n` lines; resolves to how many were passed (fewer only at the end of the file). The same lines as `n`
   * calls of skip(), but the lines that end inside the chunk in hand are found in one synchronous loop: the content
   * check passes every line before its sample's last (core/fidelity.ts), tens of millions after a long replay.
   */
  async skipLines(n: number): Promise<number> {
    let done = 0;
    while (done < n) {
      done += this.skipInChunk(n - done);
      if (done >= n) break;
      // a line that goes on into the next chunk, a CR at the chunk's end, or the end of the file
      if (!(await this.skip())) break;
      done++;
    }
    return done;
  }

  /** Pass up to `max` lines that end inside the chunk in hand, before its last byte (see skipLines). */
  private skipInChunk(max: number): number {
    const c = this.chunk;
    let k = 0;
    while (k < max && this.pos < this.end) {
      const stop = this.lineEnd();
      const cr = stop >= 0 && stop === this.nextCr;
      // the general path decides a line that crosses into the next chunk, and a CR that may pair with its first LF
      if (stop < 0 || (cr && stop + 1 >= this.end)) break;
      this.pos = stop + 1;
      if (cr && c[this.pos] === LF) this.pos++;
      k++;
    }
    return k;
  }

  /** Where the line at pos ends in the chunk in hand: the first LF or CR in [pos, end) (a CR is then nextCr), or -1. */
  private lineEnd(): number {
    let e = this.chunk.indexOf(LF, this.pos);
    if (e >= this.end) e = -1;
    if (this.nextCr >= 0 && this.nextCr < this.pos)
      this.nextCr = this.chunk.subarray(0, this.end).indexOf(CR, this.pos);
    const cr = this.nextCr;
    return cr >= 0 && (e < 0 || cr < e) ? cr : e;
  }

  private async line(keep: boolean): Promise<Buffer | null> {
    const parts: Buffer[] = [];
    let kept = 0;
    let any = false; // bytes of this line were seen (an unterminated last line is a line only then)
    for (;;) {
      if (this.pos >= this.end && !(await this.fill())) {
        return any ? (keep ? this.kept(parts, kept) : EMPTY) : null;
      }
      const c = this.chunk;
      const stop = this.lineEnd();
      const to = stop < 0 ? this.end : stop;
      if (to > this.pos) {
        any = true;
        if (keep && kept < RAW_LIMIT) {
          const take = Math.min(to - this.pos, RAW_LIMIT - kept);
          const part = c.subarray(this.pos, this.pos + take);
          // a copied line's part that the next read would overwrite is copied now (the rest at its end)
          if (!this.copyLines) this.chunkShared = true;
          parts.push(this.copyLines && stop < 0 ? Buffer.from(part) : part);
          kept += take;
        }
      }
      if (stop < 0) {
        this.pos = this.end; // the line goes on in the next chunk
        continue;
      }
      this.pos = stop + 1;
      if (stop === this.nextCr) {
        if (this.pos < this.end) {
          if (c[this.pos] === LF) this.pos++;
        } else this.crPending = true;
      }
      return keep ? this.kept(parts, kept) : EMPTY;
    }
  }

  /** The line of `parts` as next() gives it: repaired, and copied when `copyLines` (a view of the chunk otherwise). */
  private kept(parts: Buffer[], kept: number): Buffer {
    const line = this.repair(parts, kept);
    return this.copyLines && line.buffer === this.chunk.buffer ? Buffer.from(line) : line;
  }

  /** A line's raw parts as the bytes a sink can keep (file comment), noting in `altered` what that changed. */
  private repair(parts: Buffer[], kept: number): Buffer {
    const r = repair(parts, kept);
    this.altered = r.altered;
    return r.line;
  }

  /** Close the file. Idempotent. */
  async close(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    await fh?.close().catch(() => undefined);
  }
}

const EMPTY = Buffer.alloc(0);
const REPLACEMENT = "\uFFFD";

/** LineReader.altered: invalid UTF-8 or NUL replaced with U+FFFD. */
export const ALTERED_REPAIRED = 1;
/** LineReader.altered: cut at MAX_REPLAY_LINE_BYTES. */
export const ALTERED_CUT = 2;

/** A line's raw parts as the bytes a sink can keep: valid UTF-8 without NUL, at most MAX_REPLAY_LINE_BYTES (file comment). */
function repair(parts: Buffer[], kept: number): { line: Buffer; altered: number } {
  let b = parts.length === 1 ? parts[0]! : parts.length === 0 ? EMPTY : Buffer.concat(parts, kept);
  let altered = 0;
  if (b.indexOf(0) >= 0 || !isUtf8(b)) {
    b = Buffer.from(b.toString("utf8").replaceAll("\0", REPLACEMENT), "utf8");
    altered = ALTERED_REPAIRED;
  }
  if (b.length <= MAX_REPLAY_LINE_BYTES) return { line: b, altered };
  let cut = MAX_REPLAY_LINE_BYTES;
  while (cut > 0 && (b[cut]! & 0xc0) === 0x80) cut--;
  return { line: b.subarray(0, cut), altered: altered | ALTERED_CUT };
}
