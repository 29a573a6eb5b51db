/**
 * PostgreSQL COPY text format encoder (PostgreSQL docs, "COPY", section "Text Format"):
 * one line per row, columns separated by a tab, `\N` for NULL, and within values a backslash, tab, newline and
 * carriage return written as `\\`, `\t`, `\n`, `\r`. Every other byte is sent as is (the data must be valid in
 * the client encoding, UTF-8 here; a NUL byte cannot be represented and makes the server reject the COPY).
 *
 * Rows carry the scenario's fields then the tracking columns gen, seq, sent_at (TRACKING_FIELDS). Timestamps are
 * ISO 8601 in UTC with milliseconds, e.g. `2024-11-07T00:00:00.000Z`, which timestamptz input accepts.
 */
import type { EventField } from "./types.ts";
import { TRACKING_FIELDS } from "./types.ts";
import { ByteWriter, checkRange } from "./encoding.ts";
import type { EventRow, EventValue, RowSource } from "./source.ts";

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;

/** Column names in COPY order: the fields, then gen, seq, sent_at. */
export function copyColumns(fields: readonly EventField[]): string[] {
  return [...fields.map((f) => f.name), ...TRACKING_FIELDS.map((f) => f.name)];
}

/** Quote an SQL identifier: `ib_events` → `"ib_events"`, doubling embedded quotes. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Quote a possibly schema-qualified table name ("public.ib_events" → "public"."ib_events"). */
export function quoteTable(table: string): string {
  return table.split(".").map(quoteIdent).join(".");
}

/** `COPY "t" ("a", ..., "gen", "seq", "sent_at") FROM STDIN` (text format, the default). */
export function copyFromStatement(table: string, fields: readonly EventField[]): string {
  return `COPY ${quoteTable(table)} (${copyColumns(fields).map(quoteIdent).join(", ")}) FROM STDIN`;
}

/** Escape one text value for COPY text format (backslash, tab, newline, carriage return). */
export function escapeCopyText(s: string): string {
  return /[\\\t\n\r]/.test(s)
    ? s.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r"))
    : s;
}

/** One value in COPY text form (allocating, for cold paths): null → `\N`, Date → ISO 8601 UTC, boolean → t/f. */
export function encodeCopyValue(v: EventValue): string {
  if (v === null) return "\\N";
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "boolean") return v ? "t" : "f";
  if (typeof v === "number") return String(v);
  return escapeCopyText(v);
}

// ---------------------------------------------------------------------------------------------------------------
// Hot path: one reused ByteWriter (encoding.ts: its integer, float and ISO time writers) as the scratch buffer.

const scratch = new ByteWriter(1 << 20);

/** Copy `len` bytes of `src`, escaping `\`, tab, LF, CR. */
function writeEscaped(w: ByteWriter, src: Uint8Array, len: number): void {
  w.ensure(2 * len);
  const out = w.buf;
  let p = w.pos;
  for (let i = 0; i < len; i++) {
    const c = src[i]!;
    if (c === BACKSLASH) {
      out[p++] = BACKSLASH;
      out[p++] = BACKSLASH;
    } else if (c === TAB) {
      out[p++] = BACKSLASH;
      out[p++] = 0x74;
    } else if (c === LF) {
      out[p++] = BACKSLASH;
      out[p++] = 0x6e;
    } else if (c === CR) {
      out[p++] = BACKSLASH;
      out[p++] = 0x72;
    } else out[p++] = c;
  }
  w.pos = p;
}

/** Append field i of `row` in COPY text form. */
function writeField(w: ByteWriter, row: EventRow, i: number): void {
  if (row.isNull[i]) return w.ascii("\\N");
  switch (row.types[i]) {
    case 0:
      return w.time(row.num[i]!, "iso");
    case 1:
      if (row.escape[i]) return writeEscaped(w, row.bytes[i]!, row.len[i]!);
      return w.bytes(row.bytes[i]!, row.len[i]!);
    case 2:
      return w.int(row.num[i]!);
    case 3: {
      const v = row.num[i]!;
      // COPY text takes NaN / Infinity / -Infinity as String(v) writes them (JSON's float() would write null)
      return Number.isFinite(v) ? w.float(v) : w.ascii(String(v));
    }
    default:
      return w.byte(row.num[i] ? 0x74 : 0x66); // t / f
  }
}

/**
 * Encode rows fromSeq .. fromSeq+count-1 of `source` as COPY text lines (each ending in LF), with gen = source.genId,
 * seq, and sent_at = `sentAt` appended. Returns a new Buffer the caller owns. Replay sources must have the range
 * `load()`ed. Throws RangeError for a negative/non-integer seq range.
 */
export function encodeCopyBatch(source: RowSource, fromSeq: number, count: number, sentAt: Date): Buffer {
  checkRange(fromSeq, count);
  const n = source.fields.length;
  const tail = Buffer.from(`\t${sentAt.toISOString()}\n`, "latin1");
  const gen = Buffer.from(`${n > 0 ? "\t" : ""}${source.genId}\t`, "latin1");
  const w = scratch;
  w.reset();
  for (let seq = fromSeq; seq < fromSeq + count; seq++) {
    const row = source.fill(seq);
    for (let i = 0; i < n; i++) {
      if (i > 0) w.byte(TAB);
      writeField(w, row, i);
    }
    w.bytes(gen);
    w.int(seq);
    w.bytes(tail);
  }
  return w.take(fromSeq, count).payload;
}

/** Length of the sent_at text written by encodeCopyBatch ("2024-11-07T00:00:00.000Z"). */
const SENT_AT_BYTES = 24;

/**
 * Overwrite sent_at on every line of a batch made by encodeCopyBatch: the 24 bytes before each LF (sent_at is the
 * last column, and a LF inside a value is always escaped as "\n", so every raw LF ends a row). Lets a generator
 * encode its next batch while the current one is in flight and still stamp the time it hands it to the transport.
 * @throws RangeError when `sentAt` does not print as 24 characters (years outside 0000..9999)
 */
export function restampSentAt(batch: Buffer, sentAt: Date): void {
  const iso = Buffer.from(sentAt.toISOString(), "latin1");
  if (iso.length !== SENT_AT_BYTES)
    throw new RangeError(`sent_at ${sentAt.toISOString()} is not ${SENT_AT_BYTES} characters`);
  for (let nl = batch.indexOf(0x0a); nl !== -1; nl = batch.indexOf(0x0a, nl + 1)) {
    const o = nl - SENT_AT_BYTES;
    for (let k = 0; k < SENT_AT_BYTES; k++) batch[o + k] = iso[k]!; // a loop: Buffer#copy costs more per call
  }
}
