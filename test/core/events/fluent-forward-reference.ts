/**
 * Test-only reference for core/events/fluent-forward.ts: FluentForwardEncoder as it was before its template path and
 * batch template (every row through `source.fill(seq)`, every byte written), frozen here so that
 * fluent-forward-template.test.ts can hold the current encoder to its bytes. Do not optimise this file.
 * The msgpack writers it shares with the encoder (headers, float 64, chunk id) are pinned by fluent-forward.test.ts's
 * spec vectors; the int and EventTime writers the encoder no longer has are copied below as they were.
 */
import {
  ByteWriter,
  checkRange,
  PLACEHOLDER_SENT_AT_MS,
  type StampedBatch,
} from "../../../core/events/encoding.ts";
import {
  forwardChunkId,
  writeBinHeader,
  writeMapHeader,
  writeMsgpackFloat,
  writeStrHeader,
  type FluentForwardOptions,
  type ForwardBatch,
} from "../../../core/events/fluent-forward.ts";
import type { EventRow, RowSource } from "../../../core/events/source.ts";

/** The encoder's EventTime writer (fixext 8, type 0: `d7 00 <sec uint32 BE> <nsec uint32 BE>`) before its template path. */
function writeEventTime(w: ByteWriter, ms: number): void {
  w.ensure(2);
  w.buf[w.pos++] = 0xd7;
  w.buf[w.pos++] = 0x00;
  w.time(ms, "eventtime");
}

/** The encoder's writeMsgpackInt before it shared encoding.ts's msgpack uint writer. */
function writeMsgpackInt(w: ByteWriter, v: number): void {
  if (!Number.isSafeInteger(v)) return writeMsgpackFloat(w, v);
  w.ensure(9);
  const b = w.buf;
  if (v >= 0) {
    if (v < 0x80) b[w.pos++] = v;
    else if (v < 0x100) {
      b[w.pos++] = 0xcc;
      b[w.pos++] = v;
    } else if (v < 0x10000) {
      b[w.pos++] = 0xcd;
      b.writeUInt16BE(v, w.pos);
      w.pos += 2;
    } else if (v < 0x100000000) {
      b[w.pos++] = 0xce;
      b.writeUInt32BE(v, w.pos);
      w.pos += 4;
    } else {
      b[w.pos++] = 0xcf;
      b.writeBigUInt64BE(BigInt(v), w.pos);
      w.pos += 8;
    }
  } else {
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

function writeStr(w: ByteWriter, s: string): void {
  const b = Buffer.from(s, "utf8");
  writeStrHeader(w, b.length);
  w.bytes(b);
}

/** The pre-template FluentForwardEncoder (encode only; stamping is encoding.ts's stampBatch over the slots). */
export class ReferenceForwardEncoder {
  private readonly w = new ByteWriter();
  private readonly keys: Buffer[];
  private readonly tail: Buffer;
  private readonly seqKey: Buffer;
  private readonly sentKey: Buffer;
  private readonly mapHead: Buffer;
  private readonly tagBytes: Buffer;
  private readonly tsField: number;

  constructor(
    private readonly source: RowSource,
    private readonly options: FluentForwardOptions = {},
  ) {
    const key = (s: string): Buffer => {
      const w = new ByteWriter(64);
      writeStr(w, s);
      return w.take(0, 0).payload;
    };
    this.keys = source.fields.map((f) => key(f.name));
    this.tail = key("gen");
    this.seqKey = key("seq");
    this.sentKey = key("sent_at");
    const mh = new ByteWriter(8);
    writeMapHeader(mh, source.fields.length + 3);
    this.mapHead = mh.take(0, 0).payload;
    this.tagBytes = key(options.tag ?? "ingestbench");
    this.tsField = source.fields.findIndex((f) => f.type === "timestamp");
  }

  encode(from: number, count: number): ForwardBatch {
    checkRange(from, count);
    const w = this.w;
    w.reset();
    const room = 1 + this.tagBytes.length + 5;
    w.ensure(room);
    w.pos = room;
    for (let seq = from; seq < from + count; seq++) this.entry(w, this.source.fill(seq));
    const entriesLength = w.pos - room;
    const chunk = this.options.ack ? forwardChunkId(this.source.genId, from, count) : null;
    const head = new ByteWriter(64);
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
    const batch: StampedBatch = w.take(from, count, start);
    return { ...batch, chunk };
  }

  private entry(w: ByteWriter, row: EventRow): void {
    w.byte(0x92);
    if (this.tsField >= 0) writeEventTime(w, row.num[this.tsField]!);
    else {
      w.byte(0xd7);
      w.byte(0x00);
      w.slot("eventtime");
      w.time(PLACEHOLDER_SENT_AT_MS, "eventtime");
    }
    w.bytes(this.mapHead);
    const n = this.keys.length;
    for (let i = 0; i < n; i++) {
      w.bytes(this.keys[i]!);
      this.value(w, row, i);
    }
    w.bytes(this.tail);
    writeMsgpackInt(w, this.source.genId);
    w.bytes(this.seqKey);
    writeMsgpackInt(w, row.seq);
    w.bytes(this.sentKey);
    w.byte(0xb8);
    w.slot("iso");
    w.time(PLACEHOLDER_SENT_AT_MS, "iso");
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
}
