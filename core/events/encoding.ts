/**
 * Shared byte writers for the wire encoders in this folder (JSON text, syslog, msgpack, COPY text) and the "stamp slot"
 * mechanism that lets a generator encode a batch ahead of time and write its send time (`sent_at`) when it hands
 * the batch to the transport.
 *
 * - JSON strings follow RFC 8259 §7: `"` and `\` are escaped, control characters U+0000..U+001F are written as
 *   `\b \f \n \r \t` or `\u00XX`; every other byte (UTF-8 included) is copied as is.
 * - Timestamps are epoch milliseconds rendered in one of the fixed-width forms of `TimeFormat`, so a slot can be
 *   overwritten in place: "iso" `2024-11-07T00:00:00.000Z` (24 bytes, RFC 3339 / ISO 8601 UTC), "epoch-ms"
 *   `1730937600000` (13 digits, years 2001..2286), "datetime" `2024-11-07 00:00:00` (19 bytes, UTC, seconds; the
 *   ClickHouse DateTime text form), "eventtime" (8 bytes: uint32 seconds + uint32 nanoseconds, big-endian; the
 *   payload of Fluentd's EventTime msgpack ext type 0).
 *
 * Why the encoders look as they do: a second cache in time(), byte loops for short copies, pre-formatted sent_at
 * placeholders, take() without a copy and writeLogText's checked-once tokens; then batch templates (BatchTemplate: a
 * batch of fixed-width rows is an earlier batch's bytes with only each row's text, times and seq rewritten, into the
 * memory of a batch the loop gave back) and 8-byte chunks for the tokens, the times and the stamps; then the same for
 * fluent-forward's msgpack (fluent-forward.ts): a seq hole is decimal digits or a msgpack uint (SeqFormat; the uint's
 * width, and so the template's seq range, changes at 128, 256, 2^16 and 2^32), EventTime is a time hole of format
 * "eventtime", and a field's times are read once per batch for all of its holes. Each step cut the CPU per event,
 * measured with the old and new code alternating in one process; writeLogText is most of what remains
 * (docs/measurements.md, "Figures moved from code comments").
 */
import {
  createRow,
  dataViewOf,
  type DirectText,
  type EventRow,
  type EventValue,
  type RowSource,
} from "./source.ts";
import type { EventField } from "./types.ts";

/** Fixed-width renderings of an epoch-ms time; see the file comment for each width. */
export type TimeFormat = "iso" | "epoch-ms" | "datetime" | "eventtime";

/** Width in bytes of each TimeFormat. */
export const TIME_WIDTH: Readonly<Record<TimeFormat, number>> = {
  iso: 24,
  "epoch-ms": 13,
  datetime: 19,
  eventtime: 8,
};

/** Byte offsets in a payload where the send time is written in `format`. */
export interface StampSlots {
  format: TimeFormat;
  at: Int32Array;
}

/** An encoded batch of seqs [from, from + count) whose send time can be (re)written with `stampBatch`. */
export interface StampedBatch {
  from: number;
  count: number;
  payload: Buffer;
  slots: StampSlots[];
}

/**
 * Write `sentAt` (epoch ms or Date) into every slot of `batch`, in place.
 * @throws RangeError when the time does not fit the slot's fixed width (e.g. epoch-ms outside 2001..2286)
 */
export function stampBatch(batch: StampedBatch, sentAt: Date | number): void {
  const ms = typeof sentAt === "number" ? sentAt : sentAt.getTime();
  const w = stampScratch;
  const payload = batch.payload;
  let view: DataView | null = null;
  for (const s of batch.slots) {
    if (s.at.length === 0) continue;
    w.reset();
    w.time(ms, s.format);
    const n = w.pos;
    if (n !== TIME_WIDTH[s.format])
      throw new RangeError(`sent_at ${ms} does not fit the ${TIME_WIDTH[s.format]}-byte ${s.format} slot`);
    const t = w.buf;
    const at = s.at;
    if (s.format === "eventtime") {
      // binary: a byte loop (Buffer#copy costs more per call than 8 bytes do)
      for (let i = 0; i < at.length; i++) {
        const o = at[i]!;
        for (let k = 0; k < n; k++) payload[o + k] = t[k]!;
      }
      continue;
    }
    // text times (13 to 24 printable ASCII bytes) in 8-byte chunks at 0, 8 (from 16 bytes on) and n - 8, overlapping
    // where n is not a multiple of 8 (printable ASCII is a finite double: bit-exact through setFloat64, see Group in
    // source.ts)
    view ??= new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    const tv = new DataView(t.buffer, t.byteOffset, n);
    const c0 = tv.getFloat64(0, true);
    const mid = n >= 16 ? 8 : 0;
    const c1 = tv.getFloat64(mid, true);
    const c2 = tv.getFloat64(n - 8, true);
    for (let i = 0; i < at.length; i++) {
      const o = at[i]!;
      view.setFloat64(o, c0, true);
      view.setFloat64(o + mid, c1, true);
      view.setFloat64(o + n - 8, c2, true);
    }
  }
}

/** @throws RangeError unless from and count are non-negative safe integers */
export function checkRange(from: number, count: number): void {
  if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`bad seq range: from ${from}, count ${count}`);
  }
}

const HEX = "0123456789abcdef";

/** Two decimal digits of v (0..99) at out[at], out[at + 1]. */
function two(out: Uint8Array, at: number, v: number): void {
  out[at] = 0x30 + ((v / 10) | 0);
  out[at + 1] = 0x30 + (v % 10);
}

/** civil date (y, m, d) from days since 1970-01-01 (Howard Hinnant's civil_from_days). */
function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/**
 * timeAt's scratch text `YYYY-MM-DDThh:mm:ss.000Z`: the digits are rewritten per second, then read back as 8-byte
 * chunks (printable ASCII is a finite double, bit-exact through a Float64Array: see Group in source.ts).
 */
const timeText = Buffer.from("0000-00-00T00:00:00.000Z", "latin1");
const timeTextView = new DataView(timeText.buffer, timeText.byteOffset, timeText.byteLength);

/** A safe integer in decimal at out[o ..] (other numbers as String(v); room for 24 bytes needed). Returns the position after it. */
function writeIntAt(out: Buffer, o: number, v: number): number {
  if (!Number.isSafeInteger(v)) return o + out.write(String(v), o, "latin1");
  if (v < 0) {
    out[o++] = 0x2d;
    v = -v;
  }
  let n = 1;
  if (v < 2147483648) {
    // int32 arithmetic (seqs, gen ids, generated ints)
    for (let x = v; x >= 10; x = (x / 10) | 0) n++;
    for (let q = o + n - 1, x = v; q >= o; q--) {
      const d = (x / 10) | 0;
      out[q] = 0x30 + x - d * 10;
      x = d;
    }
    return o + n;
  }
  for (let x = v; x >= 10; x = Math.floor(x / 10)) n++;
  for (let q = o + n - 1, x = v; q >= o; x = Math.floor(x / 10)) out[q--] = 0x30 + (x % 10);
  return o + n;
}

/**
 * A growing byte buffer with writers for the wire formats. `buf[0 .. pos)` is the content; `slot(format)` records
 * the current position as a stamp slot. Reuse one writer per encoder (`reset()`), and `take()` the content per batch.
 */
export class ByteWriter {
  buf: Buffer;
  pos = 0;
  private slots = new Map<TimeFormat, number[]>();
  /** the list of the last slot() call's format (most rows record one format in a row) */
  private lastSlotFormat: TimeFormat | null = null;
  private lastSlotList: number[] = [];
  /**
   * time(): the epoch second whose text is in secondChunks, and the one before it in otherChunks: two, as rows
   * alternate an event time with the sent_at placeholder. Chunks (8 bytes as a float64, see timeText) of
   * `YYYY-MM-DDThh:mm:ss.000Z`: [0] bytes 0-7, [1] 8-15 with `T`, [2] 8-15 with a space (datetime), [3] 16-23
   * (`:ss.000Z`, the milliseconds written after it), [4] 11-18 (datetime's `hh:mm:ss`).
   */
  private cachedSecond = Number.NaN;
  private secondChunks = new Float64Array(5);
  private otherSecond = Number.NaN;
  private otherChunks = new Float64Array(5);

  constructor(initialSize = 1 << 16) {
    this.buf = Buffer.allocUnsafe(Math.max(64, initialSize));
  }

  /** Empty the writer (keeps its memory). */
  reset(): void {
    this.pos = 0;
    this.slots = new Map();
    this.lastSlotFormat = null;
  }

  /** Make room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** Latin-1/ASCII text (callers pass ASCII). */
  ascii(s: string): void {
    const n = s.length;
    this.ensure(n);
    if (n > 16) {
      this.pos += this.buf.write(s, this.pos, "latin1");
      return;
    }
    // short separators: a loop costs less than Buffer#write's call (latin1 keeps the low byte of each code unit)
    const out = this.buf;
    const p = this.pos;
    for (let k = 0; k < n; k++) out[p + k] = s.charCodeAt(k) & 0xff;
    this.pos = p + n;
  }

  /** UTF-8 text. */
  utf8(s: string): void {
    this.ensure(Buffer.byteLength(s));
    this.pos += this.buf.write(s, this.pos, "utf8");
  }

  bytes(src: Uint8Array, len = src.length): void {
    this.ensure(len);
    const out = this.buf;
    const p = this.pos;
    if (len > 32) out.set(len === src.length ? src : src.subarray(0, len), p);
    else for (let k = 0; k < len; k++) out[p + k] = src[k]!; // short: a loop costs less than set()'s call
    this.pos = p + len;
  }

  /** A safe integer in decimal (other numbers as String(v)). */
  int(v: number): void {
    this.ensure(24);
    this.pos = writeIntAt(this.buf, this.pos, v);
  }

  /**
   * A finite double as JSON number text (shortest round trip, as String(v)); non-finite → `null`. Fast path for
   * values with at most 3 decimals (what the event source generates): integer digits, then the trimmed fraction.
   */
  float(v: number): void {
    if (!Number.isFinite(v)) return this.ascii("null");
    const k = Math.round(v * 1000);
    if (Math.abs(v) < 1e12 && k / 1000 === v && !Object.is(v, -0)) {
      if (k < 0) this.byte(0x2d);
      const a = Math.abs(k);
      const ip = Math.floor(a / 1000);
      let frac = a - ip * 1000;
      this.int(ip);
      if (frac === 0) return;
      this.byte(0x2e);
      let digits = 3;
      while (frac % 10 === 0) {
        frac /= 10;
        digits--;
      }
      return this.padded(frac, digits);
    }
    if (Number.isSafeInteger(v) && !Object.is(v, -0)) return this.int(v);
    this.ascii(String(v));
  }

  /** Unsigned decimal, left-padded with zeros to `width` digits. */
  padded(v: number, width: number): void {
    this.ensure(width);
    for (let q = this.pos + width - 1; q >= this.pos; q--) {
      this.buf[q] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    }
    this.pos += width;
  }

  /** Epoch ms in a fixed-width TimeFormat (see the file comment). Years outside 0000..9999 fall back to toISOString. */
  time(ms: number, format: TimeFormat): void {
    this.ensure(32);
    this.pos = this.timeAt(this.buf, this.pos, ms, format);
  }

  /**
   * `time()` into `out` at `o` instead of the writer's buffer (room for 32 bytes needed); returns the position after
   * it. Uses and updates this writer's second cache.
   */
  timeAt(out: Buffer, o: number, ms: number, format: TimeFormat): number {
    if (format === "epoch-ms") return writeIntAt(out, o, Math.floor(ms));
    if (format === "eventtime") {
      const sec = Math.floor(ms / 1000);
      writeUint32BE(out, o, sec);
      writeUint32BE(out, o + 4, Math.round((ms - sec * 1000) * 1e6));
      return o + 8;
    }
    const sec = Math.floor(ms / 1000);
    if (sec !== this.cachedSecond) {
      // timestamps of consecutive seqs share their second: format the date and hh:mm:ss once per second
      const q = this.otherChunks;
      this.otherChunks = this.secondChunks;
      this.secondChunks = q;
      const other = this.otherSecond;
      this.otherSecond = this.cachedSecond;
      this.cachedSecond = other;
    }
    const chunks = this.secondChunks;
    if (sec !== this.cachedSecond) {
      const day = Math.floor(sec / 86400);
      const [y, m, d] = civilFromDays(day);
      if (y < 0 || y > 9999 || !Number.isFinite(ms))
        return o + out.write(new Date(ms).toISOString(), o, "latin1");
      const p = timeText;
      p[0] = 0x30 + ((y / 1000) | 0);
      p[1] = 0x30 + (((y / 100) | 0) % 10);
      p[2] = 0x30 + (((y / 10) | 0) % 10);
      p[3] = 0x30 + (y % 10);
      two(p, 5, m);
      two(p, 8, d);
      let t = sec - day * 86400;
      const h = Math.floor(t / 3600);
      t -= h * 3600;
      const mi = Math.floor(t / 60);
      two(p, 11, h);
      two(p, 14, mi);
      two(p, 17, t - mi * 60);
      const v = timeTextView;
      chunks[0] = v.getFloat64(0, true);
      p[10] = 0x54; // T
      chunks[1] = v.getFloat64(8, true);
      p[10] = 0x20;
      chunks[2] = v.getFloat64(8, true);
      chunks[3] = v.getFloat64(16, true);
      chunks[4] = v.getFloat64(11, true);
      this.cachedSecond = sec;
    }
    const view = dataViewOf(out);
    view.setFloat64(o, chunks[0]!, true);
    if (format !== "iso") {
      view.setFloat64(o + 8, chunks[2]!, true);
      view.setFloat64(o + 11, chunks[4]!, true);
      return o + 19;
    }
    view.setFloat64(o + 8, chunks[1]!, true);
    view.setFloat64(o + 16, chunks[3]!, true);
    const f = Math.floor(ms - sec * 1000);
    out[o + 20] = 0x30 + ((f / 100) | 0);
    out[o + 21] = 0x30 + (((f / 10) | 0) % 10);
    out[o + 22] = 0x30 + (f % 10);
    return o + 24;
  }

  /** Record position `at` (default: the current one) as a stamp slot of `format`, in increasing order (write a placeholder time there). */
  slot(format: TimeFormat, at = this.pos): void {
    if (format !== this.lastSlotFormat) {
      let list = this.slots.get(format);
      if (!list) this.slots.set(format, (list = []));
      this.lastSlotFormat = format;
      this.lastSlotList = list;
    }
    this.lastSlotList.push(at);
  }

  /** Shift every slot at or after `from` by `delta` bytes (after moving content with copyWithin). */
  shiftSlots(from: number, delta: number): void {
    for (const list of this.slots.values()) {
      for (let i = list.length - 1; i >= 0 && list[i]! >= from; i--) list[i]! += delta;
    }
  }

  /**
   * JSON string body (no surrounding quotes) of UTF-8 bytes, escaped per RFC 8259 §7. `depth` 2 escapes the
   * result once more (a JSON document carried inside a JSON string, as Loki log lines are).
   */
  jsonEscaped(src: Uint8Array, len: number, depth: 1 | 2 = 1): void {
    this.ensure(len * (depth === 1 ? 6 : 7));
    const out = this.buf;
    let p = this.pos;
    for (let i = 0; i < len; i++) {
      const c = src[i]!;
      if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
        out[p++] = c;
        continue;
      }
      if (c === 0x22 || c === 0x5c) {
        // depth 1: \" or \\ ; depth 2: the escape of that escape, three backslashes then the character
        if (depth === 2) {
          out[p++] = 0x5c;
          out[p++] = 0x5c;
        }
        out[p++] = 0x5c;
        out[p++] = c;
        continue;
      }
      if (depth === 2) out[p++] = 0x5c; // the backslash of the inner escape, itself escaped
      out[p++] = 0x5c;
      switch (c) {
        case 0x08:
          out[p++] = 0x62;
          break; // b
        case 0x0c:
          out[p++] = 0x66;
          break; // f
        case 0x0a:
          out[p++] = 0x6e;
          break; // n
        case 0x0d:
          out[p++] = 0x72;
          break; // r
        case 0x09:
          out[p++] = 0x74;
          break; // t
        default:
          out[p++] = 0x75; // u00XX
          out[p++] = 0x30;
          out[p++] = 0x30;
          out[p++] = HEX.charCodeAt(c >> 4);
          out[p++] = HEX.charCodeAt(c & 15);
      }
    }
    this.pos = p;
  }

  /** A JS string as a quoted JSON string (cold paths: names, labels). */
  jsonString(s: string, depth: 1 | 2 = 1): void {
    const b = Buffer.from(s, "utf8");
    this.quote(depth);
    this.jsonEscaped(b, b.length, depth);
    this.quote(depth);
  }

  /** A double quote, escaped as `\"` at depth 2. */
  quote(depth: 1 | 2 = 1): void {
    if (depth === 2) this.byte(0x5c);
    this.byte(0x22);
  }

  /**
   * The content plus the slots recorded since the last reset, as a batch the caller owns; the writer is left
   * empty (as after `reset()`). When the content fills at least half the buffer, the buffer itself is handed over
   * (the payload is a view of it) and the writer continues in a fresh one of the same size: no copy of the batch.
   * @param start the payload is `buf[start .. pos)` (slot offsets are relative to it); content written after room
   *   left for a header sized once the content is known
   */
  take(from: number, count: number, start = 0): StampedBatch {
    let payload: Buffer;
    if ((this.pos - start) * 2 >= this.buf.length) {
      payload = this.buf.subarray(start, this.pos);
      this.buf = Buffer.allocUnsafe(this.buf.length);
    } else {
      payload = Buffer.allocUnsafe(this.pos - start);
      this.buf.copy(payload, 0, start, this.pos);
    }
    const slots: StampSlots[] = [];
    for (const [format, list] of this.slots) {
      const at = new Int32Array(list.length);
      for (let i = 0; i < list.length; i++) at[i] = list[i]! - start;
      slots.push({ format, at });
    }
    this.reset();
    return { from, count, payload, slots };
  }
}

/** stampBatch's scratch writer for the formatted send time. */
const stampScratch = new ByteWriter(64);

/**
 * Write field `i` of `row` as a JSON value: timestamps as a string in `timeFormat` ("epoch-ms": a number),
 * strings escaped, ints and floats as numbers, bools as true/false, SQL NULL as null. `depth` 2 for JSON inside
 * a JSON string.
 */
export function writeJsonField(
  w: ByteWriter,
  row: EventRow,
  i: number,
  timeFormat: Exclude<TimeFormat, "eventtime">,
  depth: 1 | 2 = 1,
): void {
  if (row.isNull[i]) return w.ascii("null");
  switch (row.types[i]) {
    case 0:
      if (timeFormat === "epoch-ms") return w.time(row.num[i]!, timeFormat);
      w.quote(depth);
      w.time(row.num[i]!, timeFormat);
      return w.quote(depth);
    case 1:
      w.quote(depth);
      w.jsonEscaped(row.bytes[i]!, row.len[i]!, depth);
      return w.quote(depth);
    case 2:
      return w.int(row.num[i]!);
    case 3:
      return w.float(row.num[i]!);
    default:
      return w.ascii(row.num[i] ? "true" : "false");
  }
}

/** The JSON text of `name` as an object key with its colon, e.g. `"msg":` (escaped at `depth`). */
export function jsonKey(name: string, depth: 1 | 2 = 1): Buffer {
  const w = new ByteWriter(64);
  w.jsonString(name, depth);
  w.byte(0x3a);
  return w.take(0, 0).payload;
}

/** Time formats a JSON encoder can use for timestamp fields and sent_at ("epoch-ms" is a JSON number). */
export type JsonTimeFormat = Exclude<TimeFormat, "eventtime">;

/** sent_at written at encode time, overwritten by `stampBatch` (2024-11-07T00:00:00.000Z: fits every width). */
export const PLACEHOLDER_SENT_AT_MS = Date.UTC(2024, 10, 7);

/** Encoder option shared by the wire encoders: which of their two paths (see JsonObjectRows) to take. */
export interface EncodePathOption {
  /** take the reference path (per-field writers, byte-by-byte escaping) even over a seeded source; default false */
  reference?: boolean;
}

/** The template path's generated text of `source`, or undefined for the reference path (`reference`, or hand-given rows). */
export function directTextOf(source: RowSource, option?: EncodePathOption): DirectText | undefined {
  return option?.reference ? undefined : source.direct;
}

/** Copy `src` into `out` at `p` and return the position after it (a loop: the constants here are short). */
export function put(out: Buffer, p: number, src: Buffer): number {
  const n = src.length;
  if (n > 32) {
    out.set(src, p);
    return p + n;
  }
  for (let k = 0; k < n; k++) out[p + k] = src[k]!;
  return p + n;
}

/** Upper bound in bytes of a scalar JSON value (int, float, bool, null, quoted time) written by writeJsonField. */
const SCALAR_BOUND = 32;

/**
 * Writes rows as JSON objects `{"<field>":<value>,...,"gen":<genId>,"seq":<seq>,"sent_at":<time>}` in field order,
 * with a stamp slot at sent_at. Keys are escaped once, at construction.
 *
 * Two paths with the same bytes (test/core/events/fast-path.test.ts compares them over many seeded events):
 * - the reference path (`direct` absent): every field through writeJsonField, strings escaped byte by byte;
 * - the template path (`direct` given, a seeded source's DirectText): the constant parts (keys, `"gen":<genId>`,
 *   the quotes around a generated string) pre-encoded at construction and copied, generated text written straight
 *   into the output (it needs no escaping), one bounds check per row. Get the row with `row(source, seq)`.
 */
export class JsonObjectRows {
  private readonly keys: Buffer[];
  private readonly genKey: Buffer;
  private readonly seqKey: Buffer;
  private readonly sentKey: Buffer;
  /** template path: `pre[i]` = what precedes field i (the close quote of a generated string i-1, the key, the open quote of a generated string i) */
  private readonly pre: Buffer[] = [];
  /** template path: the close quote of a generated last field, then `,"gen":<genId>,"seq":` */
  private readonly genSeq = new Map<number, Buffer>();
  /** template path: `,"sent_at":` then the placeholder sent_at (as writeSentAt writes it) and `}` */
  private readonly sentTail: Buffer;
  /** offset of the sent_at stamp slot in sentTail */
  private readonly sentSlotAt: number;
  private readonly constBytes: number;

  /**
   * @param direct the template path's generated text (a seeded source's `direct`); absent = the reference path
   */
  constructor(
    fields: readonly EventField[],
    private readonly timeFormat: JsonTimeFormat = "iso",
    private readonly depth: 1 | 2 = 1,
    private readonly direct?: DirectText,
  ) {
    this.keys = fields.map((f, i) =>
      Buffer.concat([Buffer.from(i === 0 ? "{" : ","), jsonKey(f.name, depth)]),
    );
    this.genKey = Buffer.concat([Buffer.from(fields.length === 0 ? "{" : ","), jsonKey("gen", depth)]);
    this.seqKey = Buffer.concat([Buffer.from(","), jsonKey("seq", depth)]);
    this.sentKey = Buffer.concat([Buffer.from(","), jsonKey("sent_at", depth)]);
    const quote = Buffer.from(depth === 2 ? '\\"' : '"');
    const gen = direct?.generated;
    for (let i = 0; i < fields.length; i++) {
      this.pre.push(
        Buffer.concat([
          i > 0 && gen?.[i - 1] ? quote : Buffer.alloc(0),
          this.keys[i]!,
          gen?.[i] ? quote : Buffer.alloc(0),
        ]),
      );
    }
    const tail = new ByteWriter(64);
    tail.bytes(this.sentKey);
    writeSentAt(tail, timeFormat, depth);
    tail.byte(0x7d);
    const t = tail.take(0, 0);
    this.sentTail = t.payload;
    this.sentSlotAt = t.slots[0]!.at[0]!;
    this.constBytes =
      this.pre.reduce((n, b) => n + b.length, 0) +
      quote.length +
      this.genKey.length +
      this.seqKey.length +
      this.sentTail.length +
      64;
  }

  /** The row of `seq` for `write`: without its generated text on the template path (write adds it). */
  row(source: RowSource, seq: number): EventRow {
    return this.direct ? this.direct.fillScalars(seq) : source.fill(seq);
  }

  /** The template path's `,"gen":<genId>,"seq":` (after the close quote of a generated last field), cached per genId. */
  private genSeqBytes(genId: number): Buffer {
    let b = this.genSeq.get(genId);
    if (!b) {
      const w = new ByteWriter(64);
      const n = this.pre.length;
      if (n > 0 && this.direct!.generated[n - 1]) w.quote(this.depth);
      w.bytes(this.genKey);
      w.int(genId);
      w.bytes(this.seqKey);
      b = w.take(0, 0).payload;
      this.genSeq.set(genId, b);
    }
    return b;
  }

  /**
   * Append the row's object (no separator or newline) to `w`; a row from `row(source, seq)` on the template path.
   * `holes`: record where the row's generated text, timestamps and seq went (template path only, see BatchTemplate).
   */
  write(w: ByteWriter, row: EventRow, genId: number, holes: HoleRecorder | null = null): void {
    if (this.direct) return this.writeTemplate(w, row, genId, this.direct, holes);
    for (let i = 0; i < this.keys.length; i++) {
      w.bytes(this.keys[i]!);
      writeJsonField(w, row, i, this.timeFormat, this.depth);
    }
    w.bytes(this.genKey);
    w.int(genId);
    w.bytes(this.seqKey);
    w.int(row.seq);
    w.bytes(this.sentKey);
    writeSentAt(w, this.timeFormat, this.depth);
    w.byte(0x7d);
  }

  private writeTemplate(
    w: ByteWriter,
    row: EventRow,
    genId: number,
    direct: DirectText,
    holes: HoleRecorder | null,
  ): void {
    const n = this.pre.length;
    const gen = direct.generated;
    let bound = this.constBytes;
    for (let i = 0; i < n; i++)
      bound += row.types[i] === 1 ? row.len[i]! * (gen[i] ? 1 : 7) + 4 : SCALAR_BOUND;
    w.ensure(bound);
    for (let i = 0; i < n; i++) {
      w.pos = put(w.buf, w.pos, this.pre[i]!);
      const start = w.pos;
      if (gen[i]) {
        direct.writeText(row.seq, i, w.buf, w.pos);
        w.pos += row.len[i]!;
        holes?.text(i, start, w.pos);
      } else {
        writeJsonField(w, row, i, this.timeFormat, this.depth);
        if (holes !== null && row.types[i] === 0) {
          const q = this.timeFormat === "epoch-ms" ? 0 : this.depth; // the quote, `\"` at depth 2
          holes.time(i, this.timeFormat, start + q, w.pos - q);
        }
      }
    }
    w.pos = put(w.buf, w.pos, this.genSeqBytes(genId));
    const seqAt = w.pos;
    w.int(row.seq);
    holes?.seq(seqAt, w.pos);
    // the placeholder sent_at is the same bytes in every row: copied, not formatted
    w.slot(this.timeFormat, w.pos + this.sentSlotAt);
    w.pos = put(w.buf, w.pos, this.sentTail);
  }
}

const HOLE_TEXT = 0;
const HOLE_TIME = 1;
const HOLE_SEQ = 2;

/**
 * How a seq hole is written: "decimal" digits (JSON), or "msgpack": a uint in its smallest format (MessagePack spec,
 * "int format family"; core/events/fluent-forward.ts). Either way a hole's width holds only within a range of seqs
 * (seqRangeOfWidth), so a batch template serves the batches inside that range.
 */
export type SeqFormat = "decimal" | "msgpack";

/**
 * Where each row's variable bytes ("holes") went while a batch was encoded on the template path: the generated text
 * of a field, a timestamp field's time, the seq (in a SeqFormat), each as [start, end) in the writer's buffer. Call
 * `row()` at the start of each row, then one call per hole in the row's byte order; every row must have the same
 * holes in the same order, and every seq the same SeqFormat (`ok` turns false when one does not). Read by
 * BatchTemplate.
 */
export class HoleRecorder {
  /** per hole of a row: HOLE_TEXT / HOLE_TIME / HOLE_SEQ, the field index (-1 for seq), the time format */
  readonly kinds: number[] = [];
  readonly fields: number[] = [];
  readonly formats: TimeFormat[] = [];
  /** start, end of every hole, row after row */
  readonly spans: number[] = [];
  /** how the seqs were written (the first seq hole's) */
  seqFormat: SeqFormat | null = null;
  rows = 0;
  ok = true;
  private col = 0;

  /** A row starts. */
  row(): void {
    if (this.rows > 0 && this.col !== this.kinds.length) this.ok = false;
    this.rows++;
    this.col = 0;
  }

  /** Field `field`'s generated text went to [start, end). */
  text(field: number, start: number, end: number): void {
    this.hole(HOLE_TEXT, field, "iso", start, end);
  }

  /** Timestamp field `field`'s time went to [start, end) in `format`. */
  time(field: number, format: TimeFormat, start: number, end: number): void {
    this.hole(HOLE_TIME, field, format, start, end);
  }

  /** The row's seq went to [start, end) in `format`. */
  seq(start: number, end: number, format: SeqFormat = "decimal"): void {
    if (this.seqFormat !== null && this.seqFormat !== format) this.ok = false;
    this.seqFormat = format;
    this.hole(HOLE_SEQ, -1, "iso", start, end);
  }

  private hole(kind: number, field: number, format: TimeFormat, start: number, end: number): void {
    const c = this.col++;
    if (this.rows === 1) {
      this.kinds.push(kind);
      this.fields.push(field);
      this.formats.push(format);
    } else if (this.kinds[c] !== kind || this.fields[c] !== field || this.formats[c] !== format)
      this.ok = false;
    this.spans.push(start, end);
  }
}

/** Largest batch (payload bytes) BatchTemplate keeps a copy of. */
export const BATCH_TEMPLATE_MAX_BYTES = 32 << 20;
/** Released payloads a BatchTemplate keeps for reuse: the batch loop has at most connections × pipelining + 1 out. */
const SPARE_PAYLOADS = 4;

/**
 * The encoders' batch template: for events whose every field is a timestamp or generated text (fixed widths), a
 * batch encoded once on the template path is kept (unstamped), with its holes (HoleRecorder). A later batch of the
 * same count whose seqs have the same width (as many decimal digits, or the same msgpack uint format: see
 * seqRangeOfWidth) is then that batch's bytes, copied at once, with only the holes rewritten: each generated text
 * (DirectText.writeText), each timestamp (the row's time, which must keep its width) and each seq. Keys, quotes,
 * separators, the gen, per-position constants (Loki's entry index), length headers (msgpack's: the widths are fixed)
 * and the sent_at placeholders are not written again, and the stamp slots are the template's (shared, read-only).
 * What lies outside the rows and changes per batch (Forward's chunk id) is the encoder's to rewrite after fill().
 *
 * Use: `fill(from, count)`; when it gives null, encode the batch as before with `recorder(count)` passed to the row
 * writers, then `keep(batch, recorder, start)` before the batch is stamped. The bytes are the same as the template
 * path's (test/core/events/fast-path.test.ts compares both with the reference path over consecutive batches,
 * test/core/events/fluent-forward-template.test.ts Forward's with its encoder from before templates).
 */
export class BatchTemplate {
  private readonly enabled: boolean;
  private bytes: Buffer | null = null;
  private count = 0;
  /** seqs [seqLo, seqHi) have the template's seq width */
  private seqLo = 0;
  private seqHi = 0;
  private seqWidth = 0;
  private seqFormat: SeqFormat = "decimal";
  private slots: StampSlots[] = [];
  private kinds = new Uint8Array(0);
  private fields = new Int32Array(0);
  private formats: TimeFormat[] = [];
  private widths = new Int32Array(0);
  /** start of every hole, row after row */
  private at = new Int32Array(0);
  /** fill(): the batch's times of one timestamp field, row by row */
  private times = new Float64Array(0);
  /** formats the times (its second cache) */
  private readonly clock = new ByteWriter(64);
  /** payloads fill() gave out from the current template (what release() takes back) */
  private issued = new WeakSet<Buffer>();
  /** released payloads of the current template, written into again by fill(): no allocation, no copy */
  private spare: Buffer[] = [];

  /** @param direct the source's DirectText (a template needs one, and no field outside timestamps and its generated text) */
  constructor(
    fields: readonly EventField[],
    private readonly direct: DirectText | undefined,
  ) {
    this.enabled =
      direct !== undefined && fields.every((f, i) => f.type === "timestamp" || direct.generated[i] === 1);
  }

  /** A recorder for a batch of `count` about to be encoded on the template path, or null when no template can come of it. */
  recorder(count: number): HoleRecorder | null {
    return this.enabled && count > 0 ? new HoleRecorder() : null;
  }

  /**
   * Keep `batch` (encoded with `holes`, not yet stamped) as the template when its rows qualify: every row with the
   * same holes of the same widths, times at their format's TIME_WIDTH, and the payload within BATCH_TEMPLATE_MAX_BYTES.
   * @param start where the payload began in the writer the holes were recorded in (`take(from, count, start)`'s)
   */
  keep(batch: StampedBatch, holes: HoleRecorder | null, start = 0): void {
    if (
      holes === null ||
      !holes.ok ||
      holes.rows !== batch.count ||
      batch.payload.length > BATCH_TEMPLATE_MAX_BYTES
    )
      return;
    const cols = holes.kinds.length;
    const sp = holes.spans;
    if (sp.length !== 2 * cols * batch.count) return;
    const widths = new Int32Array(cols);
    for (let c = 0; c < cols; c++) widths[c] = sp[2 * c + 1]! - sp[2 * c]!;
    let seqWidth = 0;
    for (let c = 0; c < cols; c++) {
      if (holes.kinds[c] === HOLE_TIME && widths[c] !== TIME_WIDTH[holes.formats[c]!]) return;
      if (holes.kinds[c] === HOLE_SEQ) {
        if (seqWidth !== 0 && widths[c] !== seqWidth) return;
        seqWidth = widths[c]!;
      }
    }
    const seqFormat = holes.seqFormat ?? "decimal";
    const seqRange = seqRangeOfWidth(seqFormat, seqWidth);
    if (seqRange === null) return;
    const at = new Int32Array(cols * batch.count);
    for (let h = 0; h < at.length; h++) {
      if (sp[2 * h + 1]! - sp[2 * h]! !== widths[h % cols]) return;
      at[h] = sp[2 * h]! - start; // payload offset
    }
    this.bytes = Buffer.from(batch.payload);
    this.count = batch.count;
    this.seqWidth = seqWidth;
    this.seqFormat = seqFormat;
    [this.seqLo, this.seqHi] = seqRange;
    this.slots = batch.slots;
    this.kinds = Uint8Array.from(holes.kinds);
    this.fields = Int32Array.from(holes.fields);
    this.formats = holes.formats.slice();
    this.widths = widths;
    this.at = at;
    this.issued = new WeakSet();
    this.spare = [];
  }

  /**
   * `batch` (from fill()) is no longer read or sent by anyone: keep its payload for a later fill() (a few at most;
   * ignored for other batches). Its bytes are then the template's but for the holes and the stamp slots, which
   * fill() writes again.
   */
  release(batch: StampedBatch): void {
    const p = batch.payload;
    if (!this.issued.has(p) || this.spare.length >= SPARE_PAYLOADS) return;
    this.issued.delete(p);
    this.spare.push(p);
  }

  /** The batch of seqs [from, from + count) from the template, or null when it does not fit (count, seq width, a time's width). */
  fill(from: number, count: number): StampedBatch | null {
    const bytes = this.bytes;
    if (bytes === null || count !== this.count || from < this.seqLo || from + count > this.seqHi) return null;
    const direct = this.direct!;
    let payload = this.spare.pop();
    if (payload) {
      // a released batch of this template: only its stamp slots differ outside the holes; put the placeholders back
      stampBatch({ from, count, payload, slots: this.slots }, PLACEHOLDER_SENT_AT_MS);
    } else {
      payload = Buffer.allocUnsafe(bytes.length);
      payload.set(bytes);
    }
    this.issued.add(payload);
    const { kinds, fields, formats, widths, at, clock, seqWidth, seqFormat } = this;
    const cols = kinds.length;
    let times = this.times;
    let timesOf = -1;
    // hole by hole (one kind per loop: measured 4-8 % less CPU than row by row); at[j * cols + c] is row j's hole c
    for (let c = 0; c < cols; c++) {
      const kind = kinds[c];
      const field = fields[c]!;
      if (kind === HOLE_TEXT) {
        for (let j = 0, h = c; j < count; j++, h += cols) direct.writeText(from + j, field, payload, at[h]!);
      } else if (kind === HOLE_SEQ) {
        if (seqFormat === "decimal")
          for (let j = 0, h = c; j < count; j++, h += cols)
            writeDigitsFixed(payload, at[h]!, from + j, seqWidth);
        else
          for (let j = 0, h = c; j < count; j++, h += cols)
            writeMsgpackUintAt(payload, at[h]!, from + j, seqWidth);
      } else {
        const format = formats[c]!;
        const width = widths[c]!;
        if (field !== timesOf) {
          // the rows' times of this field, read once for its holes in a row (Forward's EventTime and ISO text)
          if (times.length < count) times = this.times = new Float64Array(count);
          for (let j = 0; j < count; j++) times[j] = direct.fillScalars(from + j).num[field]!;
          timesOf = field;
        }
        for (let j = 0, h = c; j < count; j++, h += cols) {
          const o = at[h]!;
          if (clock.timeAt(payload, o, times[j]!, format) !== o + width) {
            this.bytes = null; // a time outside its format's width (years past 9999): no template from here on
            return null;
          }
        }
      }
    }
    return { from, count, payload, slots: this.slots };
  }
}

/**
 * The seqs [lo, hi) whose `format` takes `width` bytes (0: no seq hole, every seq), or null for a width the format
 * does not have.
 */
function seqRangeOfWidth(format: SeqFormat, width: number): [number, number] | null {
  if (width === 0) return [0, Number.MAX_SAFE_INTEGER];
  if (format === "decimal") return [width === 1 ? 0 : 10 ** (width - 1), 10 ** width];
  const k = MSGPACK_UINT_WIDTHS.indexOf(width);
  return k < 0 ? null : [k === 0 ? 0 : MSGPACK_UINT_LIMITS[k - 1]!, MSGPACK_UINT_LIMITS[k]!];
}

/** msgpack's uint formats (MessagePack spec, "int format family") by width: positive fixint, uint 8, 16, 32, 64 ... */
const MSGPACK_UINT_WIDTHS = [1, 2, 3, 5, 9];
/** ... and the values below which each one is the smallest (uint 64: every safe integer) */
const MSGPACK_UINT_LIMITS = [0x80, 0x100, 0x10000, 0x100000000, Number.MAX_SAFE_INTEGER];

/** Bytes of the smallest msgpack encoding of a non-negative safe integer: 1, 2, 3, 5 or 9 (see MSGPACK_UINT_WIDTHS). */
export function msgpackUintWidth(v: number): number {
  return v < 0x80 ? 1 : v < 0x100 ? 2 : v < 0x10000 ? 3 : v < 0x100000000 ? 5 : 9;
}

/**
 * A non-negative safe integer as a msgpack uint of `width` bytes (msgpackUintWidth's, or wider: format byte, then
 * big-endian; width 1 is a positive fixint, v < 128) at out[o ..]; returns o + width.
 */
export function writeMsgpackUintAt(out: Uint8Array, o: number, v: number, width: number): number {
  switch (width) {
    case 1:
      out[o] = v;
      return o + 1;
    case 2:
      out[o] = 0xcc;
      out[o + 1] = v;
      return o + 2;
    case 3:
      out[o] = 0xcd;
      out[o + 1] = v >>> 8;
      out[o + 2] = v & 0xff;
      return o + 3;
    case 5:
      out[o] = 0xce;
      writeUint32BE(out, o + 1, v);
      return o + 5;
    default:
      out[o] = 0xcf;
      writeUint32BE(out, o + 1, Math.floor(v / 0x100000000));
      writeUint32BE(out, o + 5, v >>> 0);
      return o + 9;
  }
}

/** The low 32 bits of v, big-endian, at out[o .. o + 4) (a byte loop: Buffer#writeUInt32BE's checks cost more). */
function writeUint32BE(out: Uint8Array, o: number, v: number): void {
  out[o] = v >>> 24;
  out[o + 1] = (v >>> 16) & 0xff;
  out[o + 2] = (v >>> 8) & 0xff;
  out[o + 3] = v & 0xff;
}

/** The decimal digits of a non-negative safe integer in exactly `width` bytes at out[o ..] (it must have that many digits). */
function writeDigitsFixed(out: Buffer, o: number, v: number, width: number): void {
  if (v < 2147483648) {
    for (let q = o + width - 1; q >= o; q--) {
      const d = (v / 10) | 0;
      out[q] = 0x30 + v - d * 10;
      v = d;
    }
    return;
  }
  for (let q = o + width - 1; q >= o; q--) {
    const d = Math.floor(v / 10);
    out[q] = 0x30 + v - d * 10;
    v = d;
  }
}

/** A sent_at placeholder with its stamp slot: quoted unless "epoch-ms". */
export function writeSentAt(w: ByteWriter, format: JsonTimeFormat, depth: 1 | 2 = 1): void {
  const quoted = format !== "epoch-ms";
  if (quoted) w.quote(depth);
  w.slot(format);
  w.time(PLACEHOLDER_SENT_AT_MS, format);
  if (quoted) w.quote(depth);
}

/**
 * A RowSource over hand-given values (tests, examples, cold paths): `values[k]` is the row of seq `firstSeq + k`,
 * one value per field (Date for timestamps, string, number, boolean, or null).
 * @throws RangeError from `fill` for a seq outside the given rows
 */
export function rowSourceOf(
  fields: readonly EventField[],
  values: ReadonlyArray<readonly EventValue[]>,
  genId = 0,
  firstSeq = 0,
): RowSource {
  const rows = values.map((vals, k) => {
    const row = createRow(fields.map((f) => (f.type === "string" ? { ...f, size: 0 } : f)));
    row.seq = firstSeq + k;
    fields.forEach((f, i) => {
      const v = vals[i];
      if (v === null || v === undefined) {
        row.isNull[i] = 1;
        return;
      }
      if (v instanceof Date) row.num[i] = v.getTime();
      else if (typeof v === "string") {
        const b = Buffer.from(v, "utf8");
        row.bytes[i] = b;
        row.len[i] = b.length;
        row.escape[i] = /[\\\t\n\r]/.test(v) ? 1 : 0;
      } else row.num[i] = typeof v === "boolean" ? (v ? 1 : 0) : v;
    });
    return row;
  });
  return {
    fields,
    genId,
    fill(seq: number): EventRow {
      const row = rows[seq - firstSeq];
      if (!row) throw new RangeError(`no hand-given row for seq ${seq}`);
      return row;
    },
  };
}
