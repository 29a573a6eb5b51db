/**
 * fluent-forward: Fluentd Forward Protocol v1 messages in PackedForward mode (fluent/fluentd wiki, "Forward Protocol
 * Specification v1": "PackedForward Mode", "EventTime Ext Format", "Option", "Response"), msgpack per the
 * MessagePack specification (msgpack/msgpack spec.md: formats str, bin, map, array, int, float 64, fixext 8).
 *
 *   [tag, MessagePackEventStream, {"size": <entries>, "chunk": "<id>"}]
 *
 * - MessagePackEventStream: the entries `[EventTime, record]` msgpack-encoded back to back, wrapped as one msgpack
 *   bin (default) or str (`entries: "str"`, what old msgpack implementations send).
 * - EventTime: ext type 0 as fixext 8 — `d7 00`, then seconds and nanoseconds as big-endian uint32. The time is the
 *   event's first timestamp field; without one, the send time.
 * - record: a map of the fields in order, then gen, seq and sent_at; timestamps as 24-byte ISO strings
 *   (`2024-11-07T00:00:00.000Z`), strings as str, ints as the smallest msgpack int, floats as float 64, bools,
 *   NULL as nil.
 * - option: `size` = number of entries; with `ack: true`, `chunk` = a unique id (base64 of 16 bytes: genId uint32,
 *   first seq uint64, count uint32, big-endian) that the server echoes as `{"ack": "<id>"}` once it has the chunk.
 *
 * Cost: bench/generators.ts holds the forward generator to the best of the HTTP ones, each on one core. The
 * encoder therefore takes the HTTP encoders' template path and batch templates (encoding.ts BatchTemplate; see
 * FluentForwardEncoder): a batch of a seeded source's timestamps and generated text is an earlier batch's bytes with
 * only its text, times, seqs and chunk id rewritten, in the memory of a batch the loop gave back. Encode + stamp of
 * the quickstart's events went from 1073-1247 to 545-631 CPU ns per event (median; the figures in encoding.ts's
 * comment), with the same bytes.
 */
import { decode } from "@msgpack/msgpack";
import {
  BatchTemplate,
  ByteWriter,
  checkRange,
  directTextOf,
  type EncodePathOption,
  type HoleRecorder,
  msgpackUintWidth,
  PLACEHOLDER_SENT_AT_MS,
  put,
  stampBatch,
  type StampedBatch,
  writeMsgpackUintAt,
} from "./encoding.ts";
import type { DirectText, EventRow, RowSource } from "./source.ts";

/** FluentForwardEncoder's options; `reference` takes the per-field path (see FluentForwardEncoder). */
export interface FluentForwardOptions extends EncodePathOption {
  /** Fluentd tag, default "ingestbench" */
  tag?: string;
  /** ask for an ack: set option.chunk (default false) */
  ack?: boolean;
  /** msgpack type wrapping the entries, default "bin" */
  entries?: "bin" | "str";
}

/** A PackedForward message and its chunk id (null without ack). */
export interface ForwardBatch extends StampedBatch {
  chunk: string | null;
}

// --- msgpack writers (MessagePack spec: "Formats") ---------------------------------------------------------------

/** str header for `len` bytes: fixstr (< 32), str 8, str 16, str 32. */
export function writeStrHeader(w: ByteWriter, len: number): void {
  w.ensure(5);
  const b = w.buf;
  if (len < 32) b[w.pos++] = 0xa0 | len;
  else if (len < 0x100) {
    b[w.pos++] = 0xd9;
    b[w.pos++] = len;
  } else if (len < 0x10000) {
    b[w.pos++] = 0xda;
    b.writeUInt16BE(len, w.pos);
    w.pos += 2;
  } else {
    b[w.pos++] = 0xdb;
    b.writeUInt32BE(len, w.pos);
    w.pos += 4;
  }
}

/** bin header for `len` bytes: bin 8, bin 16, bin 32. */
export function writeBinHeader(w: ByteWriter, len: number): void {
  w.ensure(5);
  const b = w.buf;
  if (len < 0x100) {
    b[w.pos++] = 0xc4;
    b[w.pos++] = len;
  } else if (len < 0x10000) {
    b[w.pos++] = 0xc5;
    b.writeUInt16BE(len, w.pos);
    w.pos += 2;
  } else {
    b[w.pos++] = 0xc6;
    b.writeUInt32BE(len, w.pos);
    w.pos += 4;
  }
}

/** map header for `n` pairs: fixmap (< 16), map 16, map 32. */
export function writeMapHeader(w: ByteWriter, n: number): void {
  w.ensure(5);
  const b = w.buf;
  if (n < 16) b[w.pos++] = 0x80 | n;
  else if (n < 0x10000) {
    b[w.pos++] = 0xde;
    b.writeUInt16BE(n, w.pos);
    w.pos += 2;
  } else {
    b[w.pos++] = 0xdf;
    b.writeUInt32BE(n, w.pos);
    w.pos += 4;
  }
}

/** A safe integer in the smallest msgpack int format; other numbers as float 64. */
export function writeMsgpackInt(w: ByteWriter, v: number): void {
  if (!Number.isSafeInteger(v)) return writeMsgpackFloat(w, v);
  w.ensure(9);
  const b = w.buf;
  if (v >= 0) w.pos = writeMsgpackUintAt(b, w.pos, v, msgpackUintWidth(v));
  else {
    if (v >= -32) b[w.pos++] = v & 0xff;
    else if (v >= -0x80) {
      b[w.pos++] = 0xd0;
      b.writeInt8(v, w.pos);
      w.pos += 1;
    } else if (v >= -0x8000) {
      b[w.pos++] = 0xd1;
      b.writeInt16BE(v, w.pos);
      w.pos += 2;
    } else if (v >= -0x80000000) {
      b[w.pos++] = 0xd2;
      b.writeInt32BE(v, w.pos);
      w.pos += 4;
    } else {
      b[w.pos++] = 0xd3;
      b.writeBigInt64BE(BigInt(v), w.pos);
      w.pos += 8;
    }
  }
}

/** float 64 (`cb` + IEEE 754 big-endian). */
export function writeMsgpackFloat(w: ByteWriter, v: number): void {
  w.ensure(9);
  w.buf[w.pos++] = 0xcb;
  w.buf.writeDoubleBE(v, w.pos);
  w.pos += 8;
}

/** A str of a JS string. */
function writeStr(w: ByteWriter, s: string): void {
  const b = Buffer.from(s, "utf8");
  writeStrHeader(w, b.length);
  w.bytes(b);
}

// -----------------------------------------------------------------------------------------------------------------

/** Chunk id of a batch: base64 of genId (uint32), from (uint64), count (uint32), big-endian. */
export function forwardChunkId(genId: number, from: number, count: number): string {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(genId >>> 0, 0);
  b.writeBigUInt64BE(BigInt(from), 4);
  b.writeUInt32BE(count >>> 0, 12);
  return b.toString("base64");
}

/** The bytes `write` puts into a fresh writer (constants, at construction). */
function bytesOf(write: (w: ByteWriter) => void): Buffer {
  const w = new ByteWriter(64);
  write(w);
  return w.take(0, 0).payload;
}

/** Upper bound in bytes of a non-text field's msgpack value (`b8` + ISO time, float 64, int, bool, nil). */
const SCALAR_BOUND = 32;

/**
 * Encodes batches of one source as PackedForward messages; reuses one growing buffer, and a batch template
 * (encoding.ts BatchTemplate) where the fields allow.
 *
 * Two paths with the same bytes (test/core/events/fluent-forward-template.test.ts holds both, and the templates, to
 * the encoder from before them; test/core/events/fast-path.test.ts compares the two paths):
 * - the reference path (`reference`, or a source without DirectText such as hand-given rows): every field of
 *   `source.fill(seq)` through its msgpack writer;
 * - the template path (a seeded source's DirectText): per row, the constant parts (each key with a generated
 *   field's str header, whose length is the field's fixed size; `gen` with its value and the `seq` key; `sent_at`
 *   with its placeholder) pre-encoded at construction and copied, generated text written straight into the output,
 *   one bounds check per row. A batch whose fields are all timestamps and generated text records its holes (the
 *   EventTime and ISO text of each time, the text, the seq as a msgpack uint) and is kept as the template: later
 *   batches of the same count whose seqs share the seq's msgpack width (fixint < 128, uint 8 < 256, uint 16 < 2^16,
 *   uint 32 < 2^32, uint 64) copy it and rewrite only the holes and, with `ack`, the chunk id (the option map's
 *   last 24 bytes). The message head (array marker, tag, bin/str header with the entries' length) and `size` are
 *   the same in every batch of a template: its rows have fixed widths.
 */
export class FluentForwardEncoder {
  private readonly w = new ByteWriter();
  private readonly head = new ByteWriter(64);
  private readonly direct: DirectText | undefined;
  /** per field: 1 when its text is written by `direct` (the template path's generated text) */
  private readonly generated: Uint8Array;
  private readonly template: BatchTemplate;
  /** per field: its key, then for generated text the str header of its fixed length (from the first row encoded) */
  private pre: Buffer[] | null = null;
  private readonly keys: Buffer[];
  /** the map header of a record */
  private readonly mapHead: Buffer;
  /** `"gen"`, the genId, `"seq"` */
  private readonly genSeq: Buffer;
  /** `"sent_at"`, then the placeholder sent_at as a fixstr of 24 bytes (its stamp slot at sentSlotAt) */
  private readonly sentTail: Buffer;
  private readonly sentSlotAt: number;
  /** the placeholder EventTime's 8 bytes (no timestamp field: the send time, a stamp slot) */
  private readonly placeholderEventTime: Buffer;
  private constBytes = 0;
  private readonly tagBytes: Buffer;
  private readonly tsField: number;

  constructor(
    private readonly source: RowSource,
    private readonly options: FluentForwardOptions = {},
  ) {
    const direct = directTextOf(source, options);
    this.direct = direct;
    const fields = source.fields;
    this.generated = direct?.generated ?? new Uint8Array(fields.length);
    this.template = new BatchTemplate(fields, direct);
    this.keys = fields.map((f) => bytesOf((w) => writeStr(w, f.name)));
    this.mapHead = bytesOf((w) => writeMapHeader(w, fields.length + 3));
    this.genSeq = bytesOf((w) => {
      writeStr(w, "gen");
      writeMsgpackInt(w, source.genId);
      writeStr(w, "seq");
    });
    const tail = new ByteWriter(64);
    writeStr(tail, "sent_at");
    tail.byte(0xb8); // fixstr of 24 bytes
    tail.slot("iso");
    tail.time(PLACEHOLDER_SENT_AT_MS, "iso");
    const t = tail.take(0, 0);
    this.sentTail = t.payload;
    this.sentSlotAt = t.slots[0]!.at[0]!;
    this.placeholderEventTime = bytesOf((w) => w.time(PLACEHOLDER_SENT_AT_MS, "eventtime"));
    this.tagBytes = bytesOf((w) => writeStr(w, options.tag ?? "ingestbench"));
    this.tsField = fields.findIndex((f) => f.type === "timestamp");
  }

  /**
   * `pre` from a row's generated text lengths (fixed per field: DirectText; a replay source's row cannot be read
   * before its lines are loaded, hence not at construction), and the constant bytes of an entry.
   */
  private prefixes(row: EventRow): Buffer[] {
    const pre = this.keys.map((k, i) =>
      bytesOf((w) => {
        w.bytes(k);
        if (this.generated[i]) writeStrHeader(w, row.len[i]!);
      }),
    );
    // [EventTime (10), map header (≤ 5)] + keys + gen/seq (≤ 9 for the seq) + sent_at
    this.constBytes =
      1 + 10 + 5 + pre.reduce((n, b) => n + b.length, 0) + this.genSeq.length + 9 + this.sentTail.length;
    return pre;
  }

  /** PackedForward message for seqs [from, from + count). @throws RangeError for a bad range */
  encode(from: number, count: number): ForwardBatch {
    checkRange(from, count);
    const chunk = this.options.ack ? forwardChunkId(this.source.genId, from, count) : null;
    const filled = this.template.fill(from, count);
    if (filled) {
      // the option map ends with the chunk id's 24 bytes (a fixstr): the template's are an earlier batch's
      if (chunk !== null) filled.payload.write(chunk, filled.payload.length - chunk.length, "latin1");
      return { ...filled, chunk };
    }
    const holes = this.template.recorder(count);
    const w = this.w;
    w.reset();
    // the entries are written after room for the head (array marker, tag, bin/str header of ≤ 5 bytes), which is
    // written right before them once their length is known: the batch is not copied into a second buffer
    const room = 1 + this.tagBytes.length + 5;
    w.ensure(room);
    w.pos = room;
    for (let seq = from; seq < from + count; seq++) {
      holes?.row();
      this.entry(w, this.direct ? this.direct.fillScalars(seq) : this.source.fill(seq), holes);
    }
    const entriesLength = w.pos - room;
    const head = this.head;
    head.reset();
    head.byte(0x93);
    head.bytes(this.tagBytes);
    if (this.options.entries === "str") writeStrHeader(head, entriesLength);
    else writeBinHeader(head, entriesLength);
    const start = room - head.pos;
    w.buf.set(head.buf.subarray(0, head.pos), start);
    writeMapHeader(w, chunk === null ? 1 : 2);
    writeStr(w, "size");
    writeMsgpackInt(w, count);
    if (chunk !== null) {
      writeStr(w, "chunk");
      writeStr(w, chunk);
    }
    const batch = w.take(from, count, start);
    this.template.keep(batch, holes, start);
    return { ...batch, chunk };
  }

  /** `[EventTime, record]` of `row`; `holes`: record where its text, times and seq went (template path). */
  private entry(w: ByteWriter, row: EventRow, holes: HoleRecorder | null): void {
    const pre = (this.pre ??= this.prefixes(row));
    const n = pre.length;
    const gen = this.generated;
    let bound = this.constBytes;
    for (let i = 0; i < n; i++) bound += row.types[i] === 1 ? row.len[i]! + 5 : SCALAR_BOUND;
    w.ensure(bound); // no writer below grows the buffer: `out` stays w.buf
    const out = w.buf;
    out[w.pos] = 0x92;
    out[w.pos + 1] = 0xd7; // fixext 8, type 0
    out[w.pos + 2] = 0x00;
    w.pos += 3;
    const ts = this.tsField;
    if (ts >= 0) {
      const at = w.pos;
      w.pos = w.timeAt(out, at, row.num[ts]!, "eventtime");
      holes?.time(ts, "eventtime", at, w.pos);
    } else {
      w.slot("eventtime");
      w.pos = put(out, w.pos, this.placeholderEventTime);
    }
    w.pos = put(out, w.pos, this.mapHead);
    for (let i = 0; i < n; i++) {
      w.pos = put(out, w.pos, pre[i]!);
      const at = w.pos;
      if (gen[i]) {
        this.direct!.writeText(row.seq, i, out, at);
        w.pos += row.len[i]!;
        holes?.text(i, at, w.pos);
        continue;
      }
      this.value(w, row, i);
      if (holes !== null && row.types[i] === 0) holes.time(i, "iso", at + 1, w.pos); // after the fixstr header b8
    }
    w.pos = put(out, w.pos, this.genSeq);
    const seqAt = w.pos;
    writeMsgpackInt(w, row.seq);
    holes?.seq(seqAt, w.pos, "msgpack");
    // the placeholder sent_at is the same bytes in every row: copied, not formatted
    w.slot("iso", w.pos + this.sentSlotAt);
    w.pos = put(out, w.pos, this.sentTail);
  }

  private value(w: ByteWriter, row: EventRow, i: number): void {
    if (row.isNull[i]) return w.byte(0xc0);
    switch (row.types[i]) {
      case 0:
        w.byte(0xb8);
        return w.time(row.num[i]!, "iso");
      case 1:
        writeStrHeader(w, row.len[i]!);
        return w.bytes(row.bytes[i]!, row.len[i]!);
      case 2:
        return writeMsgpackInt(w, row.num[i]!);
      case 3:
        return writeMsgpackFloat(w, row.num[i]!);
      default:
        return w.byte(row.num[i] ? 0xc3 : 0xc2);
    }
  }

  /** The batch is sent and answered (harness/generators/loop.ts BatchEncoder.release): its memory may take a later batch. */
  release(batch: ForwardBatch): void {
    this.template.release(batch);
  }

  /** Write the send time into sent_at (and the EventTime when the event has no timestamp field). */
  stamp(batch: ForwardBatch, sentAt: Date): void {
    stampBatch(batch, sentAt);
  }
}

/** True when `response` is the Response of the spec for `chunk`: a map whose "ack" is the chunk id. */
export function isForwardAck(response: unknown, chunk: string): boolean {
  if (response === null || typeof response !== "object") return false;
  const ack = response instanceof Map ? response.get("ack") : (response as Record<string, unknown>).ack;
  return ack === chunk;
}

/**
 * End offset of the one msgpack object starting at `pos` in `b[0 .. end)`, or -1 when the bytes end before it does
 * (MessagePack spec, "Formats": every format's length is known from its first bytes).
 */
export function msgpackObjectEnd(b: Uint8Array, pos: number, end = b.length): number {
  const need = (n: number): boolean => pos + n <= end;
  const be = (at: number, n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + b[at + i]!;
    return v;
  };
  if (!need(1)) return -1;
  const h = b[pos]!;
  let items = 0; // nested objects that follow the header
  let skip = 0; // header bytes + payload bytes
  if (h <= 0x7f || h >= 0xe0 || h === 0xc0 || h === 0xc2 || h === 0xc3) skip = 1;
  else if (h >= 0x80 && h <= 0x8f) {
    skip = 1;
    items = 2 * (h & 0x0f);
  } else if (h >= 0x90 && h <= 0x9f) {
    skip = 1;
    items = h & 0x0f;
  } else if (h >= 0xa0 && h <= 0xbf) skip = 1 + (h & 0x1f);
  else {
    switch (h) {
      case 0xcc:
      case 0xd0:
        skip = 2;
        break;
      case 0xcd:
      case 0xd1:
        skip = 3;
        break;
      case 0xce:
      case 0xd2:
      case 0xca:
        skip = 5;
        break;
      case 0xcf:
      case 0xd3:
      case 0xcb:
        skip = 9;
        break;
      case 0xd4:
        skip = 3;
        break;
      case 0xd5:
        skip = 4;
        break;
      case 0xd6:
        skip = 6;
        break;
      case 0xd7:
        skip = 10;
        break;
      case 0xd8:
        skip = 18;
        break;
      case 0xc4:
      case 0xd9:
        if (!need(2)) return -1;
        skip = 2 + be(pos + 1, 1);
        break;
      case 0xc5:
      case 0xda:
        if (!need(3)) return -1;
        skip = 3 + be(pos + 1, 2);
        break;
      case 0xc6:
      case 0xdb:
        if (!need(5)) return -1;
        skip = 5 + be(pos + 1, 4);
        break;
      case 0xc7:
        if (!need(2)) return -1;
        skip = 3 + be(pos + 1, 1);
        break;
      case 0xc8:
        if (!need(3)) return -1;
        skip = 4 + be(pos + 1, 2);
        break;
      case 0xc9:
        if (!need(5)) return -1;
        skip = 6 + be(pos + 1, 4);
        break;
      case 0xdc:
        if (!need(3)) return -1;
        skip = 3;
        items = be(pos + 1, 2);
        break;
      case 0xdd:
        if (!need(5)) return -1;
        skip = 5;
        items = be(pos + 1, 4);
        break;
      case 0xde:
        if (!need(3)) return -1;
        skip = 3;
        items = 2 * be(pos + 1, 2);
        break;
      case 0xdf:
        if (!need(5)) return -1;
        skip = 5;
        items = 2 * be(pos + 1, 4);
        break;
      default:
        throw new RangeError(`byte 0x${h.toString(16)} at ${pos} starts no msgpack object`);
    }
  }
  if (!need(skip)) return -1;
  let p = pos + skip;
  for (let i = 0; i < items; i++) {
    p = msgpackObjectEnd(b, p, end);
    if (p < 0) return -1;
  }
  return p;
}

/**
 * Collects a server's answer bytes and yields complete msgpack objects (Fluentd answers acks in msgpack).
 * `push` returns the objects completed by this piece of bytes (none while an object is still partial).
 * @throws RangeError or DecodeError (from @msgpack/msgpack) for bytes that are not msgpack
 */
export class ForwardResponseReader {
  private buf: Buffer = Buffer.alloc(0);

  push(bytes: Uint8Array): unknown[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, bytes]) : Buffer.from(bytes);
    const out: unknown[] = [];
    let p = 0;
    for (;;) {
      const e = msgpackObjectEnd(this.buf, p);
      if (e < 0) break;
      out.push(decode(this.buf.subarray(p, e)));
      p = e;
    }
    this.buf = p === this.buf.length ? Buffer.alloc(0) : Buffer.from(this.buf.subarray(p));
    return out;
  }
}
