/**
 * Seeded, deterministic event source: the row values of seq = 0, 1, 2, ... for one generator.
 *
 * - Timestamps are BASE_EPOCH_MS (2024-11-07T00:00:00Z) + seq milliseconds, never the wall clock.
 * - Generated strings are log-like ASCII text ("INFO  http.server: GET /api/v1/users 200 4096 user=... ") of
 *   exactly `size` bytes, words drawn from a small vocabulary by Mulberry32 (Tommy Ettinger, 2017, public domain),
 *   seeded per (seed, genId, seq, field) through the MurmurHash3 32-bit finalizer `fmix32` (Austin Appleby).
 *   Seeding per row makes every row addressable: the same (seed, genId, seq) always gives the same row, in any order.
 * - ints are uniform in [0, 2^31), floats uniform in [0, 1000) rounded to 3 decimals, bools fair coins.
 * - With `replayFile`, the LAST string field instead carries the lines of a real log file, streamed in chunks
 *   (./replay-lines.ts; never the whole file in memory), looping to the start at EOF: seq k carries line (k mod lineCount).
 *
 * Hot path: `fill(seq)` writes into one preallocated, reused `EventRow` (no per-row allocation for generated
 * rows); `copy-text.ts` encodes it. `values(seq)` is the convenient, allocating form.
 */
import { ConfigurationError } from "../errors.ts";
import { stat } from "node:fs/promises";
import { recorderFor, ReplayIndex, type ReplayIndexJson, type ReplayIndexRecorder } from "./replay-index.ts";
import { LineReader, MAX_REPLAY_LINE_BYTES } from "./replay-lines.ts";
import { type EventField, type FieldType, TRACKING_FIELDS } from "./types.ts";

/** 2024-11-07T00:00:00Z in epoch milliseconds: timestamp fields are this + seq ms. */
export const BASE_EPOCH_MS = Date.UTC(2024, 10, 7);
/** Size of a generated string field when the scenario gives no `size`, in bytes. */
export const DEFAULT_STRING_SIZE = 64;
export { MAX_REPLAY_LINE_BYTES };

/** Field type codes used in `EventRow` and by the encoders. */
export const TYPE_CODE: Readonly<Record<FieldType, number>> = {
  timestamp: 0,
  string: 1,
  int: 2,
  float: 3,
  bool: 4,
};

/**
 * One row, reused across `fill()` calls (copy what you need before the next call). Indexed by field position.
 * - num[i]: timestamp (epoch ms), int, float, or bool (0 | 1) value; unused for strings.
 * - bytes[i] / len[i]: string value as UTF-8 bytes `bytes[i][0 .. len[i])`; null for non-strings.
 * - escape[i]: 1 when the string may contain `\`, tab, LF or CR (replayed lines); 0 for generated text.
 * - isNull[i]: 1 for SQL NULL (sources in this file never produce NULL; hand-built rows may).
 */
export interface EventRow {
  seq: number;
  readonly types: Uint8Array;
  readonly num: Float64Array;
  readonly bytes: Array<Uint8Array | null>;
  readonly len: Int32Array;
  readonly escape: Uint8Array;
  readonly isNull: Uint8Array;
}

/** A plain JS value of a field: string, number (int/float), boolean, Date (timestamp) or null. */
export type EventValue = string | number | boolean | Date | null;

/** What the encoders need: the fields, the generator id, and a row per seq. */
export interface RowSource {
  readonly fields: readonly EventField[];
  /** the `gen` every row is stamped with: genBase + the generator's index (EventSourceOptions) */
  readonly genId: number;
  /** Fill and return the shared row for `seq`; rows of a replay source must be `load()`ed first. */
  fill(seq: number): EventRow;
  /** the fast path of a seeded source (see DirectText); absent for hand-given rows */
  readonly direct?: DirectText;
}

/**
 * The encoders' fast path over a seeded source: generated text is written straight into the output buffer instead
 * of into the row and then copied (and escaped) from there. Generated text is `writeLogText`'s vocabulary only:
 * printable ASCII with no `"`, `\` or `]`, so JSON strings (RFC 8259 §7), RFC 5424 PARAM-VALUEs (§6.3.3) and COPY
 * text carry it unescaped. The bytes are the same as `fill()`'s (test/core/events/fast-path.test.ts).
 */
export interface DirectText {
  /** 1 at field i when `fill()` writes it as generated text of `len[i]` bytes (never for the replayed field) */
  readonly generated: Uint8Array;
  /** `fill(seq)` without writing the generated text fields (their `len` is set); then `writeText` each one */
  fillScalars(seq: number): EventRow;
  /** Write generated field i of seq into `out` at `pos` (exactly `len[i]` bytes; `out` must have room). */
  writeText(seq: number, i: number, out: Uint8Array, pos: number): void;
}

export interface EventSourceOptions {
  fields: readonly EventField[];
  /** any integer (safe range); different seeds give unrelated rows */
  seed: number;
  /** generator index within the run, 0..n-1: seeds the rows (the same seed and index give the same rows in every run) */
  genId: number;
  /**
   * this run's first generator id (core/ledger.ts, "Run identity"): the `gen` column is genBase + genId. Default 0.
   */
  genBase?: number;
  /** path of a text file whose lines fill the last string field, looping at EOF */
  replayFile?: string;
  /** a generator's index of replayFile (./replay-index.ts): skips then reopen the file near their target */
  replayIndex?: ReplayIndexJson;
}

export interface EventSource extends RowSource {
  readonly seed: number;
  readonly replayFile: string | undefined;
  /**
   * Make rows [fromSeq, fromSeq + count) readable by `fill()`/`values()`. Resolves at once without a replay
   * file. With one, reads lines forward (dropping those before fromSeq; going back reopens the file); calls must
   * not overlap. Rejects with ConfigurationError when the file has no lines, or with the read error.
   */
  load(fromSeq: number, count: number): Promise<void>;
  /** The row for `seq` as plain values (allocates). Timestamps as Date. */
  values(seq: number): EventValue[];
  /** Rows fromSeq, fromSeq+1, ... forever (loads replay lines in chunks); stop by breaking out of the loop. */
  rows(fromSeq?: number): AsyncGenerator<{ seq: number; values: EventValue[] }>;
  /** Release the replay file. Idempotent. */
  close(): Promise<void>;
  /** What the source read of its replay file so far; null without one. */
  replayReads(): ReplayReads | null;
  /**
   * Lines in the replay file once known (a whole pass read, or a generators' index of a pass that wrapped, once the
   * index is found to be this file's), else 0; 0 without a replay. Seq k carries line k mod this count.
   * @throws ConfigurationError E_REPLAY when the file cannot be stat()ed
   */
  replayLineCount(): Promise<number>;
  /**
   * Bytes of the log lines of seqs [fromSeq, fromSeq + count): the log line is the last string field (the one a
   * replay fills): its UTF-8 bytes as the sink gets them (a replayed line without its line end, after repair; the
   * generated text's `size`), not their encoding on the wire. 0 for an event without a string field. A replay's rows
   * must be `load()`ed first. @throws RangeError for a replay row not loaded
   */
  logBytes(fromSeq: number, count: number): number;
}

// ---------------------------------------------------------------------------------------------------------------
// PRNG: MurmurHash3 fmix32 for seeding, Mulberry32 for the stream.

/** MurmurHash3's 32-bit finalizer (Appleby): a bijective avalanche mix of a uint32. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Mix a safe integer (up to 2^53) into a 32-bit hash state. */
function mixInt(h: number, v: number): number {
  const lo = v >>> 0;
  const hi = Math.floor(v / 4294967296) >>> 0;
  h = fmix32((h ^ lo) + 0x9e3779b9);
  return fmix32((h ^ hi) + 0x7f4a7c15);
}

/**
 * Mulberry32 (Tommy Ettinger, 2017): 32-bit state, period 2^32, passes gjrand/PractRand at this size.
 * Returns a closure yielding uint32s. Used in tests and cold paths; the hot loop below inlines the same steps.
 */
export function mulberry32(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Vocabulary: token groups, each token packed with the space before it into 8-byte chunks.

/**
 * A token group of writeLogText. Token i is `text[off[i] ..][0 .. len[i])`, its leading space included (none for the
 * level, the first token), and the same bytes padded with spaces to whole 8-byte chunks from `chunks[at[i]]`: printable
 * ASCII (0x20-0x7e) read as a little-endian float64 is always a finite, normal double (its top byte is at most 0x7e,
 * so the exponent is never all ones or all zeros), so a chunk goes through a Float64Array and DataView#setFloat64
 * bit for bit. `room[i]`: bytes the whole-token copy may touch (the chunks, or the token and a KEY's 5 digits).
 */
interface Group {
  n: number;
  text: Buffer;
  off: Int32Array;
  len: Int32Array;
  chunks: Float64Array;
  at: Int32Array;
  room: Int32Array;
}

/**
 * @param space each token with a space before it
 * @param digits per token, the most digits written after it (5 for a KEY's number)
 * @param minChunks copy at least this many chunks per token (a fixed count spares the copy loop's branch)
 */
function group(
  words: string[],
  space: boolean,
  digits: (i: number) => number = () => 0,
  minChunks = 1,
): Group {
  const n = words.length;
  const tokens = words.map((w) => (space ? ` ${w}` : w));
  const off = new Int32Array(n);
  const len = new Int32Array(n);
  const at = new Int32Array(n);
  const room = new Int32Array(n);
  let o = 0;
  let c = 0;
  tokens.forEach((t, i) => {
    const k = Math.max(minChunks, Math.ceil(t.length / 8));
    off[i] = o;
    len[i] = t.length;
    at[i] = c;
    room[i] = Math.max(k * 8, t.length + digits(i));
    o += t.length;
    c += k;
  });
  const padded = Buffer.alloc(c * 8, 0x20);
  tokens.forEach((t, i) => padded.write(t, at[i]! * 8, "latin1"));
  if (padded.some((b) => b < 0x20 || b > 0x7e))
    throw new Error("writeLogText vocabulary: printable ASCII only");
  const chunks = new Float64Array(c);
  for (let k = 0; k < c; k++) chunks[k] = padded.readDoubleLE(k * 8);
  return { n, text: Buffer.from(tokens.join(""), "latin1"), off, len, chunks, at, room };
}

const LEVELS = group(
  ["INFO ", "INFO ", "INFO ", "INFO ", "INFO ", "DEBUG", "DEBUG", "WARN ", "ERROR", "TRACE"],
  false,
);
const LOGGERS = group(
  [
    "http.server:",
    "db.pool:",
    "auth.session:",
    "cache.redis:",
    "queue.worker:",
    "api.gateway:",
    "scheduler:",
    "storage.s3:",
    "grpc.client:",
    "metrics.push:",
    "mail.smtp:",
    "search.index:",
  ],
  true,
);
const METHODS = group(
  ["GET", "GET", "GET", "POST", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"],
  true,
);
const PATHS = group(
  [
    "/api/v1/users",
    "/api/v1/orders",
    "/api/v2/search",
    "/healthz",
    "/metrics",
    "/api/v1/login",
    "/static/app.js",
    "/api/v1/items",
    "/api/v1/cart/checkout",
    "/api/v2/reports/daily",
    "/favicon.ico",
    "/api/v1/sessions/refresh",
  ],
  true,
);
const STATUSES = group(
  [
    "200",
    "200",
    "200",
    "200",
    "201",
    "204",
    "301",
    "304",
    "400",
    "401",
    "403",
    "404",
    "429",
    "500",
    "502",
    "503",
  ],
  true,
);
const KEY_WORDS = [
  "user=",
  "request_id=",
  "latency_ms=",
  "bytes=",
  "shard=",
  "attempt=",
  "conn=",
  "txn=",
  "queue_depth=",
  "pid=",
  "port=",
  "took_ms=",
  "rows=",
  "offset=",
  "partition=",
  "thread=",
];
const PLAIN_WORDS = [
  "ok",
  "done",
  "retry",
  "upstream",
  "connection",
  "reset",
  "timeout",
  "cache",
  "hit",
  "miss",
  "took",
  "from",
  "to",
  "session",
  "opened",
  "closed",
  "client",
  "worker",
  "flush",
  "commit",
  "rollback",
  "replica",
  "lag",
  "accepted",
  "rejected",
  "backoff",
  "handshake",
  "tls",
  "keepalive",
  "evicted",
  "compacted",
  "segment",
  "checkpoint",
  "index",
  "query",
  "slow",
  "fast",
  "batch",
  "written",
  "read",
  "10.0.0.7",
  "10.0.3.12",
  "alice",
  "bob",
  "carol",
  "GET",
  "POST",
  "gzip",
  "json",
  "utf-8",
  "v1",
  "v2",
  "eu-west-1",
  "us-east-2",
  "primary",
  "standby",
  "leader",
  "follower",
];
/** the tokens after the header: KEYS (each followed by up to 5 digits) at 0..KEYS_N-1, then WORDS; 2 chunks each */
const BODY = group([...KEY_WORDS, ...PLAIN_WORDS], true, (i) => (i < KEY_WORDS.length ? 5 : 0), 2);
const KEYS_N = KEY_WORDS.length;
const WORDS_N = PLAIN_WORDS.length;
if (Math.max(...BODY.len) > 16)
  throw new Error("writeLogText vocabulary: a body token longer than its 2 chunks");

const SPACE = 0x20;

/** The header token groups of writeLogText, indexed by token number k = 0..4. */
const HEAD: readonly Group[] = [LEVELS, LOGGERS, METHODS, PATHS, STATUSES];

/** dataViewOf's last `out` and its DataView (writeLogText, ByteWriter.timeAt: an encoder writes a batch into one buffer). */
let viewTarget: Uint8Array | null = null;
let viewOfTarget: DataView = new DataView(new ArrayBuffer(0));

/** A DataView over `out`'s bytes, reused while `out` stays the same. */
export function dataViewOf(out: Uint8Array): DataView {
  if (out !== viewTarget) {
    viewOfTarget = new DataView(out.buffer, out.byteOffset, out.byteLength);
    viewTarget = out;
  }
  return viewOfTarget;
}

/**
 * Write exactly `size` bytes of log-like ASCII text into `out` at `pos`, drawn by Mulberry32 from `state`.
 * Never writes a byte that COPY text format would need to escape, nor outside `out[pos .. pos + size)`. Returns
 * nothing; `out` must have room. `view`: a DataView over `out` (default: dataViewOf(out)).
 *
 * Hot path of every encoder: a token with `room` bytes left before `end` is copied whole in 8-byte chunks (one
 * setFloat64 each, see Group; bytes past the token are overwritten by the next token); only a token cut at `end`
 * takes the byte loop. The bytes are pinned by test/core/events/fast-path.test.ts ("writeLogText bytes").
 * Measured against the byte loop, alternating in one process: faster at every token length
 * (docs/measurements.md, "Figures moved from code comments").
 */
export function writeLogText(
  state: number,
  out: Uint8Array,
  pos: number,
  size: number,
  view: DataView = dataViewOf(out),
): void {
  const end = pos + size;
  let p = pos;
  let s = state | 0;
  // Token sequence: LEVEL ' ' LOGGER ' ' METHOD ' ' PATH ' ' STATUS ' ' <number> then (' ' WORD | ' ' KEY<number>)*
  for (let k = 0; k < 6 && p < end; k++) {
    // --- Mulberry32 step (inlined, as below) ---
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const r = (t ^ (t >>> 14)) >>> 0;
    // ---
    if (k === 5) {
      // ' ' and the response bytes
      out[p++] = SPACE;
      if (end - p >= 5) p = writeDigitsWhole(r % 65536, out, p);
      else if (p < end) p = writeDigits(r % 65536, out, p, end);
      continue;
    }
    const g = HEAD[k]!;
    const i = (r >>> 4) % g.n;
    const n = g.len[i]!;
    if (end - p >= g.room[i]!) {
      const chunks = g.chunks;
      for (let c = g.at[i]!, q = p; q < p + n; c++, q += 8) view.setFloat64(q, chunks[c]!, true);
      p += n;
    } else p = writeCut(g, i, out, view, p, end);
  }
  // ' ' KEY<number> (one in four) or ' ' WORD: two chunks each when they fit (no copy loop), else cut
  const { chunks, at, len, room } = BODY;
  while (p < end) {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const r = (t ^ (t >>> 14)) >>> 0;
    const key = (r & 3) === 0;
    const i = key ? (r >>> 4) % KEYS_N : KEYS_N + ((r >>> 4) % WORDS_N);
    if (end - p >= room[i]!) {
      const c = at[i]!;
      view.setFloat64(p, chunks[c]!, true);
      view.setFloat64(p + 8, chunks[c + 1]!, true);
      p += len[i]!;
      if (key) p = writeDigitsWhole((r >>> 8) % 100000, out, p);
      continue;
    }
    p = writeCut(BODY, i, out, view, p, end);
    if (key && p < end) p = writeDigits((r >>> 8) % 100000, out, p, end);
  }
}

/**
 * Token i of `g` at out[p ..], cut at `end`; returns the position after it. Whole chunks while they end by `end`
 * (past a token that fits, they write padding the next token overwrites), then bytes.
 */
function writeCut(g: Group, i: number, out: Uint8Array, view: DataView, p: number, end: number): number {
  const stop = Math.min(end, p + g.len[i]!);
  let c = g.at[i]!;
  for (; p < stop && p + 8 <= end; p += 8, c++) view.setFloat64(p, g.chunks[c]!, true);
  if (p >= stop) return stop;
  const text = g.text;
  for (let o = g.off[i]! + (c - g.at[i]!) * 8; p < stop;) out[p++] = text[o++]!;
  return p;
}

/** Write the decimal digits of a non-negative integer < 100000 (room known). Returns the new position. */
function writeDigitsWhole(v: number, out: Uint8Array, p: number): number {
  const n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : 5;
  let q = p + n - 1;
  for (let x = v; q >= p; q--) {
    const d = (x / 10) | 0;
    out[q] = 0x30 + x - d * 10;
    x = d;
  }
  return p + n;
}

/** Write the decimal digits of a non-negative integer < 2^31, cut at `end`. Returns the new position. */
function writeDigits(v: number, out: Uint8Array, p: number, end: number): number {
  let n = 1;
  for (let x = v; x >= 10; x = (x / 10) | 0) n++;
  let q = p + n - 1;
  for (let x = v; ; x = (x / 10) | 0) {
    if (q < end) out[q] = 0x30 + (x % 10);
    q--;
    if (x < 10) break;
  }
  return Math.min(end, p + n);
}

// ---------------------------------------------------------------------------------------------------------------

/** Allocate an empty row for `fields` (string buffers sized by `size`, default DEFAULT_STRING_SIZE). */
export function createRow(fields: readonly EventField[]): EventRow {
  const n = fields.length;
  const types = new Uint8Array(n);
  const bytes: Array<Uint8Array | null> = [];
  fields.forEach((f, i) => {
    const code = TYPE_CODE[f.type];
    if (code === undefined)
      throw new ConfigurationError("E_EVENT_FIELD", `field "${f.name}": unknown type "${String(f.type)}"`);
    types[i] = code;
    bytes.push(f.type === "string" ? Buffer.allocUnsafe(Math.max(0, f.size ?? DEFAULT_STRING_SIZE)) : null);
  });
  return {
    seq: 0,
    types,
    num: new Float64Array(n),
    bytes,
    len: new Int32Array(n),
    escape: new Uint8Array(n),
    isNull: new Uint8Array(n),
  };
}

/** Convert the row's field i to a plain value (allocates). */
export function rowValue(row: EventRow, i: number): EventValue {
  if (row.isNull[i]) return null;
  const v = row.num[i]!;
  switch (row.types[i]) {
    case 0:
      return new Date(v);
    case 1:
      return Buffer.from(row.bytes[i]!.buffer, row.bytes[i]!.byteOffset, row.len[i]!).toString("utf8");
    case 4:
      return v !== 0;
    default:
      return v;
  }
}

/** Check field names and types; throws ConfigurationError (code E_EVENT_FIELD). */
export function validateFields(fields: readonly EventField[]): void {
  const seen = new Set<string>();
  const reserved = new Set<string>(TRACKING_FIELDS.map((f) => f.name));
  for (const f of fields) {
    if (!f.name)
      throw new ConfigurationError("E_EVENT_FIELD", "event field without a name", { field: "event" });
    if (reserved.has(f.name))
      throw new ConfigurationError(
        "E_EVENT_FIELD",
        `event field "${f.name}" clashes with a tracking column (${[...reserved].join(", ")})`,
        { field: `event.${f.name}` },
      );
    if (seen.has(f.name))
      throw new ConfigurationError("E_EVENT_FIELD", `event field "${f.name}" is declared twice`, {
        field: `event.${f.name}`,
      });
    seen.add(f.name);
    if (!(f.type in TYPE_CODE))
      throw new ConfigurationError(
        "E_EVENT_FIELD",
        `event field "${f.name}": unknown type "${String(f.type)}"`,
        { field: `event.${f.name}.type` },
      );
    if (f.size !== undefined && (!Number.isInteger(f.size) || f.size < 0)) {
      throw new ConfigurationError(
        "E_EVENT_FIELD",
        `event field "${f.name}": size must be a non-negative integer of bytes, got ${f.size}`,
        { field: `event.${f.name}.size` },
      );
    }
  }
}

/** Create the event source. Throws ConfigurationError for bad fields or a replay file without a string field. */
export function createEventSource(opts: EventSourceOptions): EventSource {
  return new SeededEventSource(opts);
}

class SeededEventSource implements EventSource {
  readonly fields: readonly EventField[];
  readonly genId: number;
  readonly seed: number;
  readonly replayFile: string | undefined;
  private readonly row: EventRow;
  /** DataViews over the row's generated string buffers (writeLogText's `view`; fill() alternates between them) */
  private readonly rowViews: Array<DataView | undefined>;
  /** per-field seed state (seed, genId, field index mixed) */
  private readonly fieldSeeds: Uint32Array;
  private readonly replayField: number;
  private readonly replay: ReplayReader | null;
  readonly direct: DirectText;

  constructor(opts: EventSourceOptions) {
    validateFields(opts.fields);
    if (!Number.isSafeInteger(opts.seed))
      throw new ConfigurationError("E_SEED", `seed must be a safe integer, got ${opts.seed}`);
    this.fields = opts.fields;
    this.genId = (opts.genBase ?? 0) + opts.genId; // the stamp; the seed below uses the index
    this.seed = opts.seed;
    this.replayFile = opts.replayFile;
    this.row = createRow(opts.fields);
    this.rowViews = this.row.bytes.map((b) =>
      b ? new DataView(b.buffer, b.byteOffset, b.byteLength) : undefined,
    );
    const base = mixInt(mixInt(0x1b873593, opts.seed), opts.genId);
    this.fieldSeeds = new Uint32Array(opts.fields.length);
    for (let i = 0; i < opts.fields.length; i++)
      this.fieldSeeds[i] = fmix32(base ^ Math.imul(i + 1, 0xcc9e2d51));
    let last = -1;
    opts.fields.forEach((f, i) => {
      if (f.type === "string") last = i;
    });
    this.replayField = opts.replayFile !== undefined ? last : -1;
    if (opts.replayFile !== undefined && last < 0) {
      throw new ConfigurationError(
        "E_REPLAY",
        `replay file ${opts.replayFile} needs a string field to carry its lines; the event has none`,
        { field: "event" },
      );
    }
    this.replay = opts.replayFile !== undefined ? new ReplayReader(opts.replayFile, opts.replayIndex) : null;
    if (this.replay) this.row.escape[this.replayField] = 1;
    this.direct = {
      generated: Uint8Array.from(
        opts.fields.map((f, i) => (f.type === "string" && i !== this.replayField ? 1 : 0)),
      ),
      fillScalars: (seq) => this.fillRow(seq, false),
      writeText: (seq, i, out, pos) =>
        writeLogText(this.fieldState(seq, i), out, pos, this.row.bytes[i]!.length),
    };
  }

  load(fromSeq: number, count: number): Promise<void> {
    return this.replay ? this.replay.load(fromSeq, count) : Promise.resolve();
  }

  logBytes(fromSeq: number, count: number): number {
    if (this.replay) {
      let n = 0;
      for (let q = fromSeq; q < fromSeq + count; q++) n += this.replay.line(q).length;
      return n;
    }
    const last = this.row.types.lastIndexOf(TYPE_CODE.string);
    return last < 0 ? 0 : count * this.row.bytes[last]!.length;
  }

  fill(seq: number): EventRow {
    return this.fillRow(seq, true);
  }

  /** per-(field, seq) state: two fmix32 rounds over seq's halves */
  private fieldState(seq: number, i: number): number {
    const h = fmix32((this.fieldSeeds[i]! ^ (seq >>> 0)) + 0x9e3779b9);
    const hi = (seq / 4294967296) >>> 0;
    return hi !== 0 ? fmix32(h ^ hi) : h;
  }

  /** The row of seq; generated text written into the row only when `text` (DirectText.fillScalars passes false). */
  private fillRow(seq: number, text: boolean): EventRow {
    const row = this.row;
    const types = row.types;
    row.seq = seq;
    for (let i = 0; i < types.length; i++) {
      const ty = types[i]!;
      if (ty === 0) {
        row.num[i] = BASE_EPOCH_MS + seq;
        continue;
      }
      if (i === this.replayField) {
        const line = this.replay!.line(seq);
        row.bytes[i] = line;
        row.len[i] = line.length;
        continue;
      }
      if (ty === 1) {
        // the text's state only when it is written (BatchTemplate.fill reads times through fillScalars row by row)
        const b = row.bytes[i]!;
        if (text) writeLogText(this.fieldState(seq, i), b, 0, b.length, this.rowViews[i]);
        row.len[i] = b.length;
      } else {
        const r = fmix32(this.fieldState(seq, i) + 0x6d2b79f5);
        if (ty === 2) row.num[i] = r >>> 1;
        else if (ty === 3) row.num[i] = Math.round((r / 4294967296) * 1_000_000) / 1000;
        else row.num[i] = r & 1;
      }
    }
    return row;
  }

  values(seq: number): EventValue[] {
    const row = this.fill(seq);
    const out: EventValue[] = [];
    for (let i = 0; i < row.types.length; i++) out.push(rowValue(row, i));
    return out;
  }

  async *rows(fromSeq = 0): AsyncGenerator<{ seq: number; values: EventValue[] }> {
    const chunk = 1024;
    for (let s = fromSeq; ; s += chunk) {
      await this.load(s, chunk);
      for (let q = s; q < s + chunk; q++) yield { seq: q, values: this.values(q) };
    }
  }

  async close(): Promise<void> {
    this.replay?.close();
  }

  replayReads(): ReplayReads | null {
    return this.replay?.readsSoFar() ?? null;
  }

  async replayLineCount(): Promise<number> {
    return (await this.replay?.knownLineCount()) ?? 0;
  }
}

/** A replay file whose lines add up to at most this many bytes is kept in memory after its first pass (ReplayReader). */
export const SMALL_REPLAY_BYTES = 1 << 20;
/** With an index, a skip reopens the file at a mark only this many bytes or more ahead; nearer, it reads on. */
const JUMP_BYTES = 256 * 1024;
/** Bytes per read of a reader opened at a mark (it reads at most MARK_SPACING and a line before its target). */
const MARK_CHUNK_BYTES = 64 * 1024;

/** What a replay source read from its file: bytes, reopenings at an index's marks, and why an index was not used. */
export interface ReplayReads {
  bytes: number;
  /** marks in the index given (0: none given, or it was dropped) */
  indexMarks: number;
  /** skips that reopened the file at a mark of the index */
  seeks: number;
  /** the index given was dropped (the file is not the one it describes), or null */
  indexDropped: string | null;
}

/**
 * Streams a file's lines (./replay-lines.ts LineReader: bytes, UTF-8 repaired, NUL replaced, cut at
 * MAX_REPLAY_LINE_BYTES), keeping only a window [winStart, winStart + lines.length) of seqs; at the end of the file it
 * starts again at line 0 (seq k carries line k mod lineCount). Lines before the window are skipped unkept. Once a
 * whole pass has been read, a skip that wraps goes round the file only once (lineCount is known), and a file whose
 * lines add up to at most SMALL_REPLAY_BYTES is kept after its first pass and not read again: a file of a few lines
 * otherwise wraps every few seqs, reopening it each time (a 37-line file held the generator near 25k rows/s).
 * Every line read forward from line 0 is noted in this process's index of the file (./replay-index.ts), which a
 * generator reports; given such an index, a skip reopens the file at the mark before its target instead of reading
 * up to it (the content check after a long replay).
 */
class ReplayReader {
  private reader: LineReader | null = null;
  /** seq the next line read from the file belongs to */
  private nextSeq = 0;
  private linesThisPass = 0;
  private winStart = 0;
  private lines: Buffer[] = [];
  /** the file's lines, once its first pass found them small (SMALL_REPLAY_BYTES) */
  private whole: Buffer[] | null = null;
  /** the first pass's lines while they stay small; null once they do not, or once the pass is done */
  private firstPass: Buffer[] | null = [];
  private firstPassBytes = 0;
  /** lines in the file, once a whole pass has been read (0 before) */
  private lineCount = 0;
  /** this process's index of the file, noted as lines are read (set at the first open) */
  private recorder: ReplayIndexRecorder | null = null;
  private readonly reads: ReplayReads = { bytes: 0, indexMarks: 0, seeks: 0, indexDropped: null };

  private index: ReplayIndex | null = null;

  /** `index`: a generator's index of this file (./replay-index.ts); one that does not decode is dropped (readsSoFar). */
  constructor(
    private readonly path: string,
    index?: ReplayIndexJson,
  ) {
    if (!index) return;
    try {
      this.index = new ReplayIndex(index);
      this.reads.indexMarks = this.index.marks;
    } catch (err) {
      this.reads.indexDropped = (err as Error).message;
      return;
    }
    // a file too large to keep: its first pass need not collect lines (and would read them rather than jump)
    if (this.index.size > SMALL_REPLAY_BYTES) this.firstPass = null;
  }

  close(): void {
    if (this.reader) this.reads.bytes += this.reader.bytesRead;
    void this.reader?.close();
    this.reader = null;
  }

  /** Lines in the file once a pass has been read or the index (checked against the file first) counted them, else 0. */
  async knownLineCount(): Promise<number> {
    await this.identify();
    return this.lineCount || (this.index?.lineCount ?? 0);
  }

  /** What was read so far (see ReplayReads). */
  readsSoFar(): ReplayReads {
    return { ...this.reads, bytes: this.reads.bytes + (this.reader?.bytesRead ?? 0) };
  }

  /** `op` on the open reader (opened at line 0 when none is), a read error as E_REPLAY. */
  private async onReader<T>(op: (r: LineReader) => Promise<T>): Promise<T> {
    await this.identify();
    try {
      if (!this.reader) {
        // with an index, reads are near a target (sampled lines): small chunks; without, a stream of every line
        this.reader = new LineReader(
          this.path,
          this.index ? { chunkBytes: MARK_CHUNK_BYTES, copyLines: true } : {},
        );
        this.linesThisPass = 0;
        // a first pass begun again from line 0 (load() going back) collects again
        if (this.firstPass) {
          this.firstPass = [];
          this.firstPassBytes = 0;
        }
      }
      return await op(this.reader);
    } catch (err) {
      this.close();
      throw new ConfigurationError(
        "E_REPLAY",
        `cannot read replay file ${this.path}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  /**
   * The file's identity, once, before its first read or seek: its index recorder, and whether a given index is of a
   * file of its size. @throws ConfigurationError E_REPLAY when the file cannot be stat()ed
   */
  private async identify(): Promise<void> {
    if (this.recorder) return;
    const st = await stat(this.path).catch((err: unknown) => {
      throw new ConfigurationError(
        "E_REPLAY",
        `cannot read replay file ${this.path}: ${(err as Error).message}`,
        { cause: err },
      );
    });
    this.recorder = recorderFor(this.path, { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs });
    const idx = this.index;
    if (!idx) return;
    if (idx.size !== st.size)
      return this.dropIndex(`the index is of a ${idx.size}-byte file; this one has ${st.size} bytes`);
    // its last mark checked at once, since a wrap trusts its line count before any seek checks a mark
    const last = idx.before(Number.MAX_SAFE_INTEGER);
    if (last.line === 0) return;
    const probe = new LineReader(this.path, { start: last.byte });
    const fits = await this.startsLine(probe);
    await probe.close();
    if (!fits)
      this.dropIndex(
        `its last mark, line ${last.line} at byte ${last.byte}, does not start a line in this file`,
      );
  }

  private dropIndex(why: string): void {
    this.index = null;
    this.reads.indexMarks = 0;
    this.reads.indexDropped = why;
  }

  /** At the end of the file: start again at line 0 with the next read, unless the file has no lines. */
  private rewind(): void {
    const empty = this.linesThisPass === 0;
    this.close();
    if (empty) throw new ConfigurationError("E_REPLAY", `replay file ${this.path} has no lines`);
    // every pass starts at line 0 or at a mark of it, so a pass that reached the end counted every line
    this.lineCount = this.linesThisPass;
    if (this.recorder) this.recorder.lineCount = this.lineCount;
    if (this.firstPass) this.whole = this.firstPass;
    this.firstPass = null;
  }

  /** The next line, looping to the start at the end of the file. */
  private async readLine(): Promise<Buffer> {
    for (;;) {
      let at: number | null = null;
      let altered = 0;
      const line = await this.onReader(async (r) => {
        at = r.offset;
        const l = await r.next();
        altered = r.altered;
        return l;
      });
      if (line !== null) {
        this.recorder!.note(this.linesThisPass, at, altered);
        this.linesThisPass++;
        if (this.firstPass) {
          this.firstPass.push(line);
          this.firstPassBytes += line.length + 1;
          if (this.firstPassBytes > SMALL_REPLAY_BYTES) this.firstPass = null;
        }
        return line;
      }
      this.rewind();
    }
  }

  /** Pass `n` lines without keeping them, looping to the start at the end of the file. */
  private async skipLines(n: number): Promise<void> {
    while (n > 0) {
      if (this.firstPass) {
        // still collecting a possibly small file: read the line rather than pass it
        await this.readLine();
        n--;
        continue;
      }
      if (this.index) n = await this.jump(n);
      if (n === 0) break;
      const passed = await this.onReader((r) => r.skipLines(n));
      this.linesThisPass += passed;
      n -= passed;
      if (n > 0) {
        this.rewind();
        n %= this.lineCount; // at line 0 now: whole passes change nothing
      }
    }
  }

  /**
   * With an index: the line `n` ahead (round the file when it wraps), reached by reopening the file at the index's
   * mark before it when that mark is JUMP_BYTES or more past where the reader is. Returns the lines still to pass
   * from where the reader then is (with no reader open: from line 0). A mark that does not start a line drops the index.
   */
  private async jump(n: number): Promise<number> {
    await this.identify();
    const idx = this.index;
    if (!idx) return n;
    const line = this.reader ? this.linesThisPass : 0;
    const here = this.reader ? this.reader.offset : 0;
    const count = this.lineCount || idx.lineCount;
    if (count === 0 && line + n >= idx.lines) return n; // past what the index knows
    const wraps = count > 0 && line + n >= count;
    const target = wraps ? (line + n) % count : line + n;
    const mark = idx.before(target);
    // in this pass a mark far enough ahead of the reader; in a later pass one far enough from its start
    const seek = wraps
      ? mark.byte >= JUMP_BYTES
      : mark.line > line && (here === null || mark.byte - here >= JUMP_BYTES);
    if (!seek) {
      if (!wraps) return n;
      this.close(); // the later pass from its start: whole passes change nothing
      this.lineCount = count;
      return target;
    }
    // lines copied, and one chunk handed from reader to reader: a sample of lines across the file reads hundreds of
    // MiB, which fresh chunks made into as much garbage (the harness's memory after the load: README)
    const reader = new LineReader(this.path, {
      start: mark.byte,
      chunkBytes: MARK_CHUNK_BYTES,
      copyLines: true,
    });
    if (!(await this.startsLine(reader))) {
      await reader.close();
      this.dropIndex(`its mark of line ${mark.line} at byte ${mark.byte} does not start a line in this file`);
      return n;
    }
    reader.adoptChunk(this.reader?.spareChunk() ?? null);
    this.close();
    if (wraps) this.lineCount = count;
    this.reader = reader;
    this.linesThisPass = mark.line;
    this.reads.seeks++;
    return target - mark.line;
  }

  /** Whether `reader`'s start is a line's (LineReader.startsLine; a read error is a no), its bytes counted. */
  private async startsLine(reader: LineReader): Promise<boolean> {
    const fits = await reader.startsLine().catch(() => false);
    this.reads.bytes += reader.bytesRead;
    reader.bytesRead = 0;
    return fits;
  }

  async load(fromSeq: number, count: number): Promise<void> {
    if (this.whole) {
      const n = this.whole.length;
      this.lines = [];
      for (let q = fromSeq; q < fromSeq + count; q++) this.lines.push(this.whole[q % n]!);
      this.winStart = fromSeq;
      this.nextSeq = fromSeq + count;
      return;
    }
    if (fromSeq < this.winStart) {
      // going back: restart from line 0 (seq 0)
      this.close();
      this.nextSeq = 0;
      this.winStart = 0;
      this.lines = [];
    }
    // drop lines before fromSeq
    const drop = Math.min(this.lines.length, fromSeq - this.winStart);
    if (drop > 0) {
      this.lines = this.lines.slice(drop);
      this.winStart += drop;
    }
    if (this.lines.length === 0) this.winStart = Math.max(this.winStart, this.nextSeq);
    // skip unread lines before fromSeq
    if (this.nextSeq < fromSeq) {
      await this.skipLines(fromSeq - this.nextSeq);
      this.nextSeq = fromSeq;
      this.winStart = this.nextSeq;
    }
    const want = fromSeq + count;
    while (this.nextSeq < want) {
      // a small file's first pass may end inside this window (readLine sets `whole`): its lines then come from memory
      const kept = this.whole as Buffer[] | null;
      this.lines.push(kept ? kept[this.nextSeq % kept.length]! : await this.readLine());
      this.nextSeq++;
    }
  }

  line(seq: number): Buffer {
    const l = this.lines[seq - this.winStart];
    if (l === undefined)
      throw new RangeError(
        `replay row ${seq} is not loaded (window ${this.winStart}..${this.winStart + this.lines.length - 1}); call load() first`,
      );
    return l;
  }
}
