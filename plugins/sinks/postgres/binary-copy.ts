/**
 * An incremental reader of PostgreSQL's binary COPY format (`COPY … TO STDOUT (FORMAT binary)`) whose columns are
 * integers, fed the stream in chunks split anywhere. The format (PostgreSQL documentation, "COPY", "Binary Format";
 * every integer in network byte order):
 * - header: the 11-byte signature `PGCOPY\n\377\r\n\0`, a 32-bit flags field (bit 16: OIDs included; bits 17–31
 *   reserved: "a reader should abort if it finds an unexpected bit set"), a 32-bit header extension area length, then
 *   that many bytes, skipped;
 * - each tuple: a 16-bit field count, then per field a 32-bit length (−1: NULL, no bytes follow) and that many bytes;
 * - trailer: a 16-bit field count of −1.
 * Fields are decoded by their length as the binary send forms of int2 (2 bytes), int4 (4) and int8 (8, two's
 * complement; a number when it is a safe integer, else a bigint), and tid (6: a uint32 block number and a uint16 item
 * offset, PostgreSQL's tidsend, decoded as block × 2^16 + offset); any other length is refused.
 */

/** The binary COPY signature (PostgreSQL documentation, "COPY", "Binary Format", "File Header"). */
export const BINARY_COPY_SIGNATURE = Uint8Array.from([
  0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00,
]);

/** One decoded field: an integer (number, or bigint beyond 2^53), or null (SQL NULL). */
export type CopyInt = number | bigint | null;

const HEADER = 0,
  EXTENSION = 1,
  TUPLES = 2,
  DONE = 3;
const EMPTY = new Uint8Array(0);

/**
 * Feed the stream's chunks to `push` in order, then call `end`; `onTuple` gets each tuple's fields (the same array,
 * reused: copy what you keep).
 * Errors (Error, naming the byte offset in the stream): a bad signature, a reserved or OID flag, a field of another
 * length than 2, 4 or 8, bytes after the trailer, a stream that ends before its trailer.
 */
export class BinaryCopyReader {
  private state = HEADER;
  private pending: Uint8Array = EMPTY;
  /** where a cut item and the next chunk are joined (push) */
  private scratch = new Uint8Array(0);
  /** stream offset of pending[0] */
  private offset = 0;
  private skip = 0;
  private readonly fields: CopyInt[] = [];
  /** tuples read so far */
  tuples = 0;

  constructor(private readonly onTuple: (fields: readonly CopyInt[]) => void) {}

  push(chunk: Uint8Array): void {
    let b = chunk;
    const held = this.pending.length;
    if (held > 0) {
      // the item cut at the last chunk's end, joined with this chunk in a buffer kept for it (no chunk-sized garbage
      // per chunk: a pass of 300M rows is over 100,000 chunks)
      if (this.scratch.length < held + chunk.length)
        this.scratch = new Uint8Array(Math.max(held + chunk.length, 2 * this.scratch.length));
      this.scratch.set(this.pending);
      this.scratch.set(chunk, held);
      b = this.scratch.subarray(0, held + chunk.length);
    }
    const used = this.read(b);
    this.offset += used;
    // a copy: `chunk` may be valid only during this call (./copy-out.ts), and the scratch buffer is reused
    this.pending = used === b.length ? EMPTY : Uint8Array.prototype.slice.call(b, used);
  }

  /** @throws Error when the stream ended before its trailer (a truncated COPY) */
  end(): void {
    if (this.state !== DONE)
      throw new Error(
        `binary COPY: the stream ended at byte ${this.offset + this.pending.length} before its trailer`,
      );
  }

  private fail(at: number, what: string): never {
    throw new Error(`binary COPY: ${what} at byte ${this.offset + at}`);
  }

  /** Reads every complete item of `b`; returns the bytes consumed. */
  private read(b: Uint8Array): number {
    const end = b.length;
    let p = 0;
    const i32 = (q: number): number => (b[q]! << 24) | (b[q + 1]! << 16) | (b[q + 2]! << 8) | b[q + 3]!;
    if (this.state === HEADER) {
      if (end < 19) return 0;
      for (let k = 0; k < 11; k++)
        if (b[k] !== BINARY_COPY_SIGNATURE[k]) this.fail(k, "not the binary COPY signature");
      const flags = i32(11);
      if ((flags & ~0xffff) !== 0)
        this.fail(11, `flags 0x${(flags >>> 0).toString(16)} (OIDs or a reserved bit)`);
      this.skip = i32(15) >>> 0;
      p = 19;
      this.state = EXTENSION;
    }
    if (this.state === EXTENSION) {
      const n = Math.min(this.skip, end - p);
      p += n;
      this.skip -= n;
      if (this.skip > 0) return p;
      this.state = TUPLES;
    }
    const fields = this.fields;
    while (this.state === TUPLES && p + 2 <= end) {
      const count = ((b[p]! << 24) >> 16) | b[p + 1]!; // int16, sign-extended
      if (count === -1) {
        p += 2;
        this.state = DONE;
        break;
      }
      if (count < 0) this.fail(p, `field count ${count}`);
      let q = p + 2;
      let complete = true;
      if (fields.length !== count) fields.length = count;
      for (let f = 0; f < count; f++) {
        if (q + 4 > end) {
          complete = false;
          break;
        }
        const len = i32(q);
        q += 4;
        if (len === -1) {
          fields[f] = null;
          continue;
        }
        if (q + len > end) {
          complete = false;
          break;
        }
        if (len === 4) fields[f] = i32(q);
        else if (len === 8) {
          const hi = i32(q);
          const lo = i32(q + 4) >>> 0;
          // exact as a double when the high word is within [−2^21, 2^21): the value is then within [−2^53, 2^53)
          const v = hi >= -0x200000 && hi < 0x200000 ? hi * 0x100000000 + lo : NaN;
          fields[f] = Number.isSafeInteger(v) ? v : (BigInt(hi) << 32n) | BigInt(lo);
        } else if (len === 2) fields[f] = ((b[q]! << 24) >> 16) | b[q + 1]!;
        else if (len === 6) fields[f] = (i32(q) >>> 0) * 0x10000 + ((b[q + 4]! << 8) | b[q + 5]!);
        else this.fail(q - 4, `a field of ${len} bytes (not int2, int4, int8 or tid)`);
        q += len;
      }
      if (!complete) break;
      p = q;
      this.tuples++;
      this.onTuple(fields);
    }
    if (this.state === DONE && p < end) this.fail(p, `${end - p} bytes after the trailer`);
    return p;
  }
}
