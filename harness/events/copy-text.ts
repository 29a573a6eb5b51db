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
  return /[\\\t\n\r]/.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r")) : s;
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
// Hot path: byte writers into one growing scratch buffer.

let scratch = Buffer.allocUnsafe(1 << 20);

function ensure(pos: number, need: number): void {
  if (pos + need <= scratch.length) return;
  let size = scratch.length * 2;
  while (size < pos + need) size *= 2;
  const next = Buffer.allocUnsafe(size);
  scratch.copy(next, 0, 0, pos);
  scratch = next;
}

/** Non-negative or negative safe integer → decimal digits. */
function writeInt(v: number, out: Buffer, p: number): number {
  if (v < 0) {
    out[p++] = 0x2d;
    v = -v;
  }
  if (v < 10) {
    out[p] = 0x30 + v;
    return p + 1;
  }
  let n = 0;
  for (let x = v; x >= 1; x = Math.floor(x / 10)) n++;
  let q = p + n - 1;
  for (let x = v; q >= p; x = Math.floor(x / 10)) out[q--] = 0x30 + (x % 10);
  return p + n;
}

/**
 * A double in the shortest round-trip form (as String(v)). Fast path for values with at most 3 decimals
 * (what the event source generates): integer digits, then the trimmed fraction.
 */
function writeFloat(v: number, out: Buffer, p: number): number {
  const k = Math.round(v * 1000);
  if (Math.abs(v) < 1e12 && k / 1000 === v && !Object.is(v, -0)) {
    if (k < 0) out[p++] = 0x2d;
    const a = Math.abs(k);
    const ip = Math.floor(a / 1000);
    let frac = a - ip * 1000;
    p = writeInt(ip, out, p);
    if (frac !== 0) {
      out[p++] = 0x2e;
      let digits = 3;
      while (frac % 10 === 0) { frac /= 10; digits--; }
      for (let d = digits - 1, q = p; d >= 0; d--) { out[q + d] = 0x30 + (frac % 10); frac = Math.floor(frac / 10); }
      p += digits;
    }
    return p;
  }
  return p + out.write(String(v), p, "latin1");
}

function write2(v: number, out: Buffer, p: number): void {
  out[p] = 0x30 + ((v / 10) | 0);
  out[p + 1] = 0x30 + (v % 10);
}

// cache of the "YYYY-MM-DDT" prefix of the last day written
let cachedDay = Number.NaN;
const dayPrefix = Buffer.alloc(11);

/** civil date from days since 1970-01-01 (Howard Hinnant's days_from_civil inverse). */
function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** Epoch ms → `YYYY-MM-DDTHH:MM:SS.mmmZ` (24 bytes) for years 0000..9999, else Date#toISOString. */
function writeIso(ms: number, out: Buffer, p: number): number {
  const day = Math.floor(ms / 86400000);
  if (day !== cachedDay) {
    const [y, m, d] = civilFromDays(day);
    if (y < 0 || y > 9999 || !Number.isFinite(ms)) return p + out.write(new Date(ms).toISOString(), p, "latin1");
    write2((y / 100) | 0, dayPrefix, 0);
    write2(y % 100, dayPrefix, 2);
    dayPrefix[4] = 0x2d;
    write2(m, dayPrefix, 5);
    dayPrefix[7] = 0x2d;
    write2(d, dayPrefix, 8);
    dayPrefix[10] = 0x54; // T
    cachedDay = day;
  }
  dayPrefix.copy(out, p);
  let t = ms - day * 86400000;
  const h = Math.floor(t / 3600000);
  t -= h * 3600000;
  const mi = Math.floor(t / 60000);
  t -= mi * 60000;
  const s = Math.floor(t / 1000);
  const f = Math.floor(t - s * 1000);
  write2(h, out, p + 11);
  out[p + 13] = 0x3a;
  write2(mi, out, p + 14);
  out[p + 16] = 0x3a;
  write2(s, out, p + 17);
  out[p + 19] = 0x2e;
  out[p + 20] = 0x30 + ((f / 100) | 0);
  out[p + 21] = 0x30 + (((f / 10) | 0) % 10);
  out[p + 22] = 0x30 + (f % 10);
  out[p + 23] = 0x5a; // Z
  return p + 24;
}

/** Copy `len` bytes of `src`, escaping `\`, tab, LF, CR. Caller guarantees 2 * len bytes of room. */
function writeEscaped(src: Uint8Array, len: number, out: Buffer, p: number): number {
  for (let i = 0; i < len; i++) {
    const c = src[i]!;
    if (c === BACKSLASH) { out[p++] = BACKSLASH; out[p++] = BACKSLASH; }
    else if (c === TAB) { out[p++] = BACKSLASH; out[p++] = 0x74; }
    else if (c === LF) { out[p++] = BACKSLASH; out[p++] = 0x6e; }
    else if (c === CR) { out[p++] = BACKSLASH; out[p++] = 0x72; }
    else out[p++] = c;
  }
  return p;
}

/** Encode field i of `row` at p. Room must be ensured by the caller. */
function writeField(row: EventRow, i: number, out: Buffer, p: number): number {
  if (row.isNull[i]) {
    out[p] = BACKSLASH;
    out[p + 1] = 0x4e; // N
    return p + 2;
  }
  switch (row.types[i]) {
    case 0: return writeIso(row.num[i]!, out, p);
    case 1: {
      const b = row.bytes[i]!;
      const len = row.len[i]!;
      if (row.escape[i]) return writeEscaped(b, len, out, p);
      if (b instanceof Buffer) return p + b.copy(out, p, 0, len);
      out.set(b.subarray(0, len), p);
      return p + len;
    }
    case 2: {
      const v = row.num[i]!;
      return Number.isSafeInteger(v) ? writeInt(v, out, p) : p + out.write(String(v), p, "latin1");
    }
    case 3: return writeFloat(row.num[i]!, out, p);
    default:
      out[p] = row.num[i] ? 0x74 : 0x66; // t / f
      return p + 1;
  }
}

/**
 * Encode rows fromSeq .. fromSeq+count-1 of `source` as COPY text lines (each ending in LF), with gen = source.genId,
 * seq, and sent_at = `sentAt` appended. Returns a new Buffer the caller owns. Replay sources must have the range
 * `load()`ed. Throws RangeError for a negative/non-integer seq range.
 */
export function encodeCopyBatch(source: RowSource, fromSeq: number, count: number, sentAt: Date): Buffer {
  if (!Number.isSafeInteger(fromSeq) || fromSeq < 0 || !Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`bad seq range: from ${fromSeq}, count ${count}`);
  }
  const n = source.fields.length;
  const tail = Buffer.from(`\t${sentAt.toISOString()}\n`, "latin1");
  const gen = Buffer.from(`${n > 0 ? "\t" : ""}${source.genId}\t`, "latin1");
  let p = 0;
  for (let seq = fromSeq; seq < fromSeq + count; seq++) {
    const row = source.fill(seq);
    // worst case for this row: strings doubled by escaping, 32 bytes per other field, tracking columns
    let need = gen.length + tail.length + 24 + n;
    for (let i = 0; i < n; i++) need += row.types[i] === 1 ? (row.escape[i] ? 2 * row.len[i]! : row.len[i]!) + 2 : 32;
    ensure(p, need);
    const out = scratch;
    for (let i = 0; i < n; i++) {
      if (i > 0) out[p++] = TAB;
      p = writeField(row, i, out, p);
    }
    p += gen.copy(out, p);
    p = writeInt(seq, out, p);
    p += tail.copy(out, p);
  }
  const result = Buffer.allocUnsafe(p);
  scratch.copy(result, 0, 0, p);
  return result;
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
  if (iso.length !== SENT_AT_BYTES) throw new RangeError(`sent_at ${sentAt.toISOString()} is not ${SENT_AT_BYTES} characters`);
  for (let nl = batch.indexOf(0x0a); nl !== -1; nl = batch.indexOf(0x0a, nl + 1)) iso.copy(batch, nl - SENT_AT_BYTES);
}
