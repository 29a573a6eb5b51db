/**
 * Verifier "clickhouse": the sink-side half for ClickHouse, over its HTTP interface on the control link (Node's
 * global fetch; queries are POST bodies, answers TabSeparated).
 *
 * Table `params.table` (default "ib_events") in `params.database` (default "default"): the scenario's fields in
 * order (string → String, timestamp → UInt64 epoch milliseconds, int → Int64, float → Float64, bool → UInt8), then
 * gen UInt32, seq UInt64, sent_at UInt64 (epoch ms: what the clickhouse-http generator's JSONEachRow encoder writes
 * by default; ClickHouse 18.16 has no DateTime64), then `stored_at`, the time the server inserted the row, written by
 * the server itself (a column DEFAULT: writers name their columns and leave it out), ENGINE = MergeTree()
 * PARTITION BY toYYYYMM(stored_at) ORDER BY (gen, seq). A plain MergeTree never deduplicates or replaces rows, so
 * duplicates stay visible. The partition key gives every part a min/max index on stored_at (one partition a month:
 * a run's parts are not split), which lets the delivery query below skip the parts written before its window.
 *
 * stored_at by server version (`SELECT version()` in prepare): from 20.5 (DateTime64 and now64 since 20.1,
 * toUnixTimestamp64Milli since 20.5) `DateTime64(3) DEFAULT now64(3)`, 1 ms; before (18.16, this machine's server)
 * `DateTime DEFAULT now()`, whole seconds: the latency is read as stored_at + 500 ms − sent_at, within ±500 ms
 * (DeliveryWindow.resolutionMs 1000). The default is evaluated when the server writes a block of the INSERT, once
 * its rows have arrived and been parsed (measured on 18.16: an INSERT … SELECT that sleeps 2 s is stamped at its end):
 * the latency of a row includes the wait in the collector and the transfer of its batch. ClickHouse 18.16 fills a column left out of a
 * JSONEachRow object with the type's zero, not its DEFAULT, unless the INSERT names its columns (later versions set
 * input_format_defaults_for_omitted_fields): a writer that names none leaves stored_at 0, and those rows are in no
 * window (the delivery row count then falls short of the stored rows).
 *
 * Samples are one query that reads no row of the table, and are settled after the load (Verifier.afterLoad). The
 * count is metadata, `sum(rows)` of the table's active parts in system.parts (18.16 keeps `rows` per part; a part
 * becomes active, and a merge replaces its sources, atomically, so the sum equals count() of a plain MergeTree), less
 * the rows of another run; the same query reads the active parts and the server's clock in the stamp's unit (the
 * sample's mark, with the sum). Another run's rows (a previous replicate's late flush: `gen < genBase OR gen ≥
 * genBase + GEN_STRIDE`, a range of the primary key (gen, seq)) are counted live only by `full` samples (the drain)
 * and the first: that count reads no row of a table holding only this run's gens, yet costs ClickHouse 18.16 more CPU
 * per
 * query than the rest of a sample (bench/harness.ts; docs/measurements.md, "Figures moved from code comments"). A
 * live sample's newest
 * sent_at is the last one settled (none during the load: null).
 * Once the load and its completion wait are over (the measured window is closed), two queries: the table's rows grouped by stored_at (this
 * run's rows, another run's and max(sent_at) per stamp), each stamp placed in the window of the first sample whose
 * clock (in the stamp's unit) is past it (stamped before the sample; a row stamped in a sample's own second belongs to
 * the next one: the stamp's resolution); then stored_at − sent_at per row in whole ms, grouped at the sink by (window, ms) through that mapping
 * (transform()). Each sample gets its parts count less the other run's rows stamped by then (exact while there are
 * none; else within the rows of another run stamped in the sample's own stamp unit), the newest sent_at of the rows stamped before it, and the delivery latency of the rows stamped in its
 * window: every stamped row in exactly one. A row stamped 0 (a writer that bypassed the DEFAULT) is in no window:
 * counted as unstamped after the last sample. Per sample, reading the new rows' stamps costs the quarter-core sink
 * a few per cent of its cap (bench/harness.ts; docs/measurements.md, "Figures moved from code comments").
 * Each sample's queries carry `log_queries=1` and a query_id naming the sample's tag (`ibv-<token>-<tag>-<n>`), and
 * `sinkCost(tag)` sums their system.query_log rows (QueryFinish and ExceptionWhileProcessing; read after SYSTEM FLUSH
 * LOGS, again until every answered sample is there): ProfileEvents UserTimeMicroseconds + SystemTimeMicroseconds (the server's threads' CPU time, 18.16 records
 * these per query), RealTimeMicroseconds (their wall time), read_rows.
 *
 * Ledger (exact; the same definitions as the postgres verifier), for generator g with sent[g] seqs 0..sent[g]-1:
 * - stored = count(); distinct = Σ over (gen, window of LEDGER_WINDOW seqs) of uniqExact(seq); duplicated = stored − distinct
 * - unexpected = rows whose gen is unknown or whose seq ≥ sent[gen]
 * - rejected = seqs inside g's rejected ranges (merged, clamped); accepted = sent − rejected
 * - lost = accepted seqs absent from the table. ClickHouse 18.16 has no window functions, so the count runs per
 *   window of 65536 seqs (uniqExact of stored non-rejected seqs per window, at the sink), and the first
 *   MAX_MISSING_RANGES missing ranges are found in node by walking only the windows that are short, in order,
 *   reading each one's ordered distinct seqs: exact, and memory bounded by one window.
 * - overwritten = 0; deduplicated = 0 (a plain MergeTree keeps every row)
 * - foreign = rows whose gen is outside this run's generator-id space [genBase, genBase + GEN_STRIDE) (core/ledger.ts,
 *   "Run identity"); the counts above and every sample are of this run's rows only (a range of the primary key)
 * - rejectedStored = uniqExact(seq) of stored rows inside each generator's rejected ranges
 * `missing` (the completion query) is the window walk alone.
 * Besides, `server` (a field the Ledger contract does not have; the runner writes the ledger object to run.json as
 * is): active parts of the table now and the most seen by any sample (their growth shows merges falling behind),
 * and the server's own counters from system.events: InsertQuery, InsertedRows (less the rows of the server's own
 * system.query_log and query_thread_log, which the samples' log_queries fill; and rows per insert; 18.16 counts
 * the rows of refused inserts too, so these are rows received, not stored), RejectedInserts (inserts refused with code 252 TOO_MANY_PARTS) and DelayedInserts (inserts slowed down by
 * parts_to_delay_insert). 18.16 has no FailedInsertQuery event; a client-side count of failed inserts is the
 * generator's (ledger.rejected).
 */
import { randomBytes } from "node:crypto";
import { parseClickHouseError } from "../../../core/events/clickhouse-http.ts";
import { clickhouseAuthRefusal, clickhouseHttpAuth } from "./auth.ts";
import { IngestbenchError } from "../../../core/errors.ts";
import { quoteIdent, quoteTable } from "../../../core/events/copy-text.ts";
import type { EventField, FieldType } from "../../../core/events/types.ts";
import { GapCollector, GEN_STRIDE, MAX_MISSING_RANGES, normalizeRanges } from "../../../core/ledger.ts";
import type {
  Completion,
  CountSample,
  DeliveryWindow,
  Ledger,
  SettledSamples,
  SinkCost,
  Verifier,
  VerifierContext,
  VerifierFactory,
  StorageFootprint,
} from "../../../core/verifier.ts";
import type { StoredRowReader } from "../../../core/fidelity.ts";
import { clickhouseRowReader } from "./rows.ts";

/** ClickHouse column type of each event field type (timestamps as epoch ms, as the JSONEachRow encoder writes them). */
export const CLICKHOUSE_TYPES: Readonly<Record<FieldType, string>> = {
  string: "String",
  timestamp: "UInt64",
  int: "Int64",
  float: "Float64",
  bool: "UInt8",
};

/** Seqs per window of the ledger's missing-range search. */
export const LEDGER_WINDOW = 65_536;

/** How long sinkCost waits for the last answered sample's system.query_log row, milliseconds. */
const SINK_COST_WAIT_MS = 5_000;

/** Per-query timeout of the verifier's HTTP requests, milliseconds. */
const QUERY_TIMEOUT_MS = 120_000;

/** What the server itself says about the inserts, from system.parts and system.events. */
export interface ClickHouseServerStats {
  /** active parts of the table when the ledger was taken */
  activeParts: number;
  /** the most active parts any sample saw */
  maxActiveParts: number;
  /** system.events InsertQuery: INSERT queries the server received */
  insertQueries: number;
  /** system.events InsertedRows: rows received by INSERT queries (18.16 counts those of refused inserts too) */
  insertedRows: number;
  /** insertedRows / insertQueries (0 when there was none) */
  rowsPerInsert: number;
  /** system.events RejectedInserts: inserts refused with code 252 TOO_MANY_PARTS */
  rejectedInserts: number;
  /** system.events DelayedInserts: inserts delayed because of too many parts */
  delayedInserts: number;
}

/** The ledger with the server's own account beside it. */
export interface ClickHouseLedger extends Ledger {
  server: ClickHouseServerStats;
}

const now = (): number => performance.timeOrigin + performance.now();

/** The column the server stamps with its insert time (see the file comment). */
export const STORED_AT = "stored_at";

/** How a server version stamps stored_at (see the file comment): the column, its resolution and its value in epoch ms. */
export interface StoredAtColumn {
  /** the column definition after its name */
  definition: string;
  /** resolution of the stamp, ms */
  resolutionMs: number;
  /** SQL: the stamp in epoch ms (the middle of its resolution step) */
  epochMs: string;
  /** SQL: the server's now in the stamp's unit, and a value of that unit as the column's type */
  now: string;
  toColumn: (v: number) => string;
  /** ms per unit of `now` */
  unitMs: number;
  /** SQL: the stamp as a UInt64 in the unit of `now` */
  stamp: string;
}

/** stored_at of ClickHouse 18.16 (DateTime, seconds) and of ≥ 20.5 (DateTime64(3), ms); see the file comment. */
export function storedAtColumn(version: string): StoredAtColumn {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const c = quoteIdent(STORED_AT);
  if (major > 20 || (major === 20 && minor >= 5)) {
    return {
      definition: "DateTime64(3) DEFAULT now64(3)",
      resolutionMs: 1,
      epochMs: `toUnixTimestamp64Milli(${c})`,
      now: "toUnixTimestamp64Milli(now64(3))",
      toColumn: (v) => `fromUnixTimestamp64Milli(toInt64(${v}))`,
      unitMs: 1,
      stamp: `toUInt64(toUnixTimestamp64Milli(${c}))`,
    };
  }
  return {
    definition: "DateTime DEFAULT now()",
    resolutionMs: 1000,
    epochMs: `(toUInt64(${c}) * 1000 + 500)`,
    now: "toUInt64(now())",
    toColumn: (v) => `toDateTime(${v})`,
    unitMs: 1000,
    stamp: `toUInt64(${c})`,
  };
}

/**
 * `CREATE TABLE "t" (... fields ..., "gen" UInt32, "seq" UInt64, "sent_at" UInt64, "stored_at" <storedAt>) ENGINE = MergeTree()
 * PARTITION BY toYYYYMM("stored_at") ORDER BY ("gen", "seq")`; `storedAt` defaults to ClickHouse 18.16's.
 */
export function createTableStatement(
  table: string,
  fields: readonly EventField[],
  storedAt: StoredAtColumn = storedAtColumn("18.16"),
): string {
  const cols = fields.map((f) => `${quoteIdent(f.name)} ${CLICKHOUSE_TYPES[f.type]}`);
  cols.push(
    `${quoteIdent("gen")} UInt32`,
    `${quoteIdent("seq")} UInt64`,
    `${quoteIdent("sent_at")} UInt64`,
    `${quoteIdent(STORED_AT)} ${storedAt.definition}`,
  );
  return `CREATE TABLE ${quoteTable(table)} (${cols.join(", ")}) ENGINE = MergeTree() PARTITION BY toYYYYMM(${quoteIdent(STORED_AT)}) ORDER BY (${quoteIdent("gen")}, ${quoteIdent("seq")})`;
}

function sqlString(s: string): string {
  return `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** ` AND NOT (seq BETWEEN a AND b OR ...)` for merged rejected ranges; "" when there are none. */
function notRejected(ranges: ReadonlyArray<readonly [number, number]>): string {
  if (ranges.length === 0) return "";
  return ` AND NOT (${ranges.map(([a, b]) => `seq BETWEEN ${a} AND ${b}`).join(" OR ")})`;
}

/** Seqs of [a, b) outside the merged, sorted `ranges`. */
function outsideRanges(a: number, b: number, ranges: ReadonlyArray<readonly [number, number]>): number {
  let n = b - a;
  for (const [x, y] of ranges) {
    const lo = Math.max(a, x);
    const hi = Math.min(b - 1, y);
    if (hi >= lo) n -= hi - lo + 1;
  }
  return n;
}

class ClickHouseVerifier implements Verifier {
  private readonly table: string;
  private readonly tableName: string;
  private readonly database: string;
  private base: string;
  private maxActiveParts = 0;
  private newest: number | null = null;
  /** the stamp of this server's stored_at, known after prepare */
  private storedAt: StoredAtColumn | null = null;
  private readonly genBase: number;
  /** SQL condition: the row is this run's (core/ledger.ts, "Run identity") */
  private readonly ours: string;
  /** stored rows read back for the content check (./rows.ts) */
  readonly rows: StoredRowReader;
  /** this verifier's query_id prefix (see the file comment) */
  private readonly token = `ibv-${randomBytes(6).toString("hex")}`;
  private queryNo = 0;
  /** sample queries answered per tag: what sinkCost waits for system.query_log to hold */
  private readonly answered = new Map<string, number>();
  /** another run's rows at the last recount (null: none yet; see the file comment) */
  private foreign: number | null = null;

  constructor(private readonly ctx: VerifierContext) {
    this.genBase = Math.floor(ctx.genBase ?? 0);
    this.ours = `(gen >= ${this.genBase} AND gen < ${this.genBase + GEN_STRIDE})`;
    const t = ctx.params.table ?? "ib_events";
    const dot = t.lastIndexOf(".");
    this.database = dot > 0 ? t.slice(0, dot) : (ctx.params.database ?? "default");
    this.tableName = dot > 0 ? t.slice(dot + 1) : t;
    this.table = quoteTable(`${this.database}.${this.tableName}`);
    const host = ctx.host.includes(":") ? `[${ctx.host}]` : ctx.host;
    this.base = `http://${host}:${ctx.port}/`;
    this.rows = clickhouseRowReader(
      (sql) => this.query(sql, { max_query_size: 64 * 1024 * 1024 }),
      this.table,
      ctx.fields,
    );
  }

  /** Run one statement; resolves with the answer text. Throws with ClickHouse's message on an error answer. */
  private async query(sql: string, settings: Record<string, string | number> = {}): Promise<string> {
    const params = new URLSearchParams({
      database: this.database,
      ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, String(v)])),
    });
    // Basic auth with INGESTBENCH_CLICKHOUSE_PASSWORD, else ?user= (./auth.ts)
    const auth = clickhouseHttpAuth(this.ctx.params);
    for (const [k, v] of Object.entries(auth.query)) params.set(k, v);
    let r: Response;
    try {
      r = await fetch(`${this.base}?${params}`, {
        method: "POST",
        body: sql,
        headers: auth.headers,
        signal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
      });
    } catch (err) {
      throw new Error(`verifier cannot reach ClickHouse at ${this.base}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const body = await r.text();
    const refused = clickhouseAuthRefusal(r.status, body, this.ctx.params);
    if (refused) throw new IngestbenchError("E_SINK_AUTH", `verifier: ${refused}`);
    const e = parseClickHouseError(r.status, body);
    if (e)
      throw new Error(
        `ClickHouse refused \`${sql.slice(0, 160)}\`: HTTP ${e.status}${e.code !== null ? `, code ${e.code}` : ""}: ${e.message}`,
      );
    return body;
  }

  /** TabSeparated rows of numbers. */
  private async numbers(sql: string, settings?: Record<string, string | number>): Promise<number[][]> {
    const text = await this.query(`${sql} FORMAT TabSeparated`, settings);
    return text
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => l.split("\t").map(Number));
  }

  private partsQuery(): string {
    return `SELECT count() FROM system.parts WHERE active AND database = ${sqlString(this.database)} AND table = ${sqlString(this.tableName)}`;
  }

  /**
   * The table's active parts on disk (system.parts: bytes_on_disk, data_uncompressed_bytes), after the inserts'
   * parts are written; background merges may shrink it later, so the figure is the table as the run left it.
   */
  async storage(): Promise<StorageFootprint> {
    const where = `active AND database = ${sqlString(this.database)} AND table = ${sqlString(this.tableName)}`;
    const sql = `SELECT sum(bytes_on_disk), sum(data_uncompressed_bytes) FROM system.parts WHERE ${where}`;
    const [[bytes = 0, uncompressed = 0] = []] = await this.numbers(sql);
    return {
      bytes,
      uncompressedBytes: uncompressed,
      source: `ClickHouse system.parts, active parts: ${sql}`,
    };
  }

  /** Drop the table if it exists (a previous cell's rows would corrupt the ledger) and create it anew. */
  async prepare(): Promise<void> {
    await this.query(`DROP TABLE IF EXISTS ${this.table}`);
    this.storedAt = storedAtColumn((await this.query("SELECT version() FORMAT TabSeparated")).trim());
    await this.query(
      createTableStatement(`${this.database}.${this.tableName}`, this.ctx.fields, this.storedAt),
    );
    this.maxActiveParts = 0;
    this.newest = null;
    this.foreign = null;
  }

  /** Query settings that log a sample's query under its tag (see the file comment). */
  private tagged(tag: string): Record<string, string | number> {
    return { log_queries: 1, query_id: `${this.token}-${tag}-${++this.queryNo}` };
  }

  /**
   * A timed metadata count (system.parts rows less another run's rows) with the table's active parts and the server's
   * clock, in one query; another run's rows recounted by the first and every `full` sample (see the file comment).
   */
  async sample(options: { full?: boolean; tag?: string } = {}): Promise<CountSample> {
    const tag = (options.tag ?? "sample").replace(/[^A-Za-z0-9_]/g, "_");
    const parts = `FROM system.parts WHERE active AND database = ${sqlString(this.database)} AND table = ${sqlString(this.tableName)}`;
    const recount = options.full || this.foreign === null;
    const foreignSql = recount
      ? `(SELECT count() FROM ${this.table} WHERE ${this.foreignRows()})`
      : "toUInt64(0)";
    const sql = `SELECT (SELECT sum(rows) ${parts}), (SELECT count() ${parts}), ${foreignSql}, ${this.storedAt?.now ?? "toUInt64(0)"}`;
    const tBefore = now();
    const rows = await this.numbers(sql, this.tagged(tag));
    const tAfter = now();
    this.answered.set(tag, (this.answered.get(tag) ?? 0) + 1);
    const [total = 0, activeParts = 0, foreignNow = 0, clock = 0] = rows[0] ?? [];
    if (recount) this.foreign = foreignNow;
    this.maxActiveParts = Math.max(this.maxActiveParts, activeParts);
    return {
      tBefore,
      tAfter,
      stored: Math.max(0, total - (this.foreign ?? 0)),
      newestSentAtMs: this.newest,
      mark: `${clock}:${total}`,
    };
  }

  /** SQL condition: the row is another run's (core/ledger.ts, "Run identity"): a range of the primary key. */
  private foreignRows(): string {
    return `gen < ${this.genBase} OR gen >= ${this.genBase + GEN_STRIDE}`;
  }

  /**
   * Each sample's stored count (less another run's rows stamped before it), newest sent_at and delivery window, from
   * the samples' marks, after the load (see the file comment).
   */
  async afterLoad(marks: string[]): Promise<SettledSamples> {
    const st = this.storedAt;
    const n = marks.length;
    const windows: DeliveryWindow[] = Array.from({ length: n + 1 }, () => ({
      buckets: [],
      resolutionMs: st?.resolutionMs ?? 1000,
      unstamped: 0,
    }));
    if (!st) return { samples: marks.map(() => ({})), later: windows[n] };
    const clocks = marks.map((m) => Number(m.split(":")[0]));
    const totals = marks.map((m) => Number(m.split(":")[1]));
    /** the first sample whose clock is past stamp `s` (`reached`: has reached it); n: none */
    const windowOf = (s: number, reached = false): number => {
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (reached ? clocks[mid]! >= s : clocks[mid]! > s) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    };
    const c = quoteIdent(STORED_AT);
    const stamp = st.stamp;
    const stamps = (
      await this.numbers(
        `SELECT ${stamp} AS s, countIf(${this.ours}), countIf(NOT ${this.ours}), maxIf(sent_at, ${this.ours}) FROM ${this.table} GROUP BY s`,
      )
    ).map(([s = 0, mine = 0, other = 0, newest = 0]) => ({
      s,
      w: s === 0 ? -1 : windowOf(s),
      wOther: windowOf(s, true),
      mine,
      other,
      newest,
    }));
    const foreign = new Array<number>(n + 1).fill(0);
    const newest = new Array<number>(n + 1).fill(0);
    for (const x of stamps) {
      foreign[x.wOther]! += x.other;
      if (x.w < 0) {
        windows[n]!.unstamped += x.mine;
        continue;
      }
      if (x.mine > 0) newest[x.w] = Math.max(newest[x.w]!, x.newest);
    }
    const stamped = stamps.filter((x) => x.w >= 0 && x.mine > 0);
    if (stamped.length > 0) {
      const from = `[${stamped.map((x) => `toUInt64(${x.s})`).join(", ")}]`;
      const to = `[${stamped.map((x) => `toUInt64(${x.w})`).join(", ")}]`;
      for (const [w = 0, ms = 0, k = 0] of await this.numbers(
        `SELECT transform(${stamp}, ${from}, ${to}, toUInt64(${n})) AS w, toInt64(${st.epochMs}) - toInt64(sent_at) AS ms, count()
           FROM ${this.table} WHERE ${c} > ${st.toColumn(0)} AND ${this.ours} GROUP BY w, ms ORDER BY w, ms`,
        { max_query_size: 64 * 1024 * 1024 },
      ))
        windows[w]!.buckets.push([ms, k]);
    }
    let other = 0;
    let newestSoFar: number | null = null;
    const samples = windows.slice(0, n).map((delivery, i) => {
      other += foreign[i]!;
      if (newest[i]! > 0) newestSoFar = Math.max(newestSoFar ?? 0, newest[i]!);
      return { stored: Math.max(0, totals[i]! - other), newestSentAtMs: newestSoFar, delivery };
    });
    if (newestSoFar !== null) this.newest = newestSoFar;
    return { samples, later: windows[n] };
  }

  /** What the samples tagged `tag` cost the server, from system.query_log (see the file comment). */
  async sinkCost(tag: string): Promise<SinkCost> {
    const t = tag.replace(/[^A-Za-z0-9_]/g, "_");
    const expected = this.answered.get(t) ?? 0;
    const ev = (names: string[]): string =>
      `sum(arraySum(arrayMap((n, v) -> if(has([${names.map(sqlString).join(", ")}], n), v, 0), ProfileEvents.Names, ProfileEvents.Values)))`;
    const read = async (): Promise<number[]> => {
      await this.query("SYSTEM FLUSH LOGS");
      const [row = []] = await this.numbers(
        `SELECT count(), ${ev(["UserTimeMicroseconds", "SystemTimeMicroseconds"])}, ${ev(["RealTimeMicroseconds"])}, sum(read_rows)
          FROM system.query_log WHERE type IN (2, 4) AND startsWith(query_id, ${sqlString(`${this.token}-${t}-`)})`,
      );
      return row;
    };
    // In 18.16, SYSTEM FLUSH LOGS does not wait for entries still on their way to the log's buffer, so a sample
    // answered just before it can be missing (a CI run on a busy machine counted 3 of 4): read again until every
    // answered sample is logged, for at most SINK_COST_WAIT_MS, and say so when some never were.
    const deadline = now() + SINK_COST_WAIT_MS;
    let row = await read();
    while ((row[0] ?? 0) < expected && now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      row = await read();
    }
    const [queries = 0, cpuUs = 0, realUs = 0, readRows = 0] = row;
    const short =
      queries < expected
        ? `; ${expected - queries} of ${expected} answered samples not in the log after ${SINK_COST_WAIT_MS} ms, not counted`
        : "";
    return {
      queries,
      cpuMs: cpuUs / 1000,
      threadWallMs: realUs / 1000,
      readRows,
      source: `ClickHouse system.query_log ProfileEvents: UserTimeMicroseconds + SystemTimeMicroseconds (cpu), RealTimeMicroseconds (thread wall)${short}`,
    };
  }

  /**
   * Lost seqs and the first MAX_MISSING_RANGES missing ranges (gen as the generator's index), by the window walk of
   * the file comment; with sent and rejected totals and the distinct stored rejected seqs when `withRejected`.
   */
  private async walk(
    sent: number[],
    rejected: Array<Array<[number, number]>>,
    withRejected: boolean,
  ): Promise<{
    lost: number;
    ranges: Array<[number, number, number]>;
    totalSent: number;
    totalRejected: number;
    rejectedStored: number;
  }> {
    const big = { max_query_size: 64 * 1024 * 1024 };
    const ns = sent.map((n) => Math.max(0, Math.floor(n)));
    let totalSent = 0;
    let totalRejected = 0;
    let rejectedStored = 0;
    let lost = 0;
    const gaps = new GapCollector();
    for (let g = 0; g < ns.length; g++) {
      const n = ns[g]!;
      const gen = this.genBase + g;
      totalSent += n;
      const rej = normalizeRanges(rejected[g] ?? [], n);
      for (const [a, b] of rej) totalRejected += b - a + 1;
      if (n === 0) continue;
      if (withRejected && rej.length > 0) {
        const [[r = 0] = []] = await this.numbers(
          `SELECT uniqExact(seq) FROM ${this.table} WHERE gen = ${gen} AND (${rej.map(([a, b]) => `seq BETWEEN ${a} AND ${b}`).join(" OR ")})`,
          big,
        );
        rejectedStored += r;
      }
      // stored distinct non-rejected seqs per window, at the sink
      const counts = new Map<number, number>();
      for (const [w = 0, c = 0] of await this.numbers(
        `SELECT intDiv(seq, ${LEDGER_WINDOW}) AS w, uniqExact(seq) FROM ${this.table} WHERE gen = ${gen} AND seq < ${n}${notRejected(rej)} GROUP BY w ORDER BY w`,
        big,
      ))
        counts.set(w, c);
      const windows = Math.ceil(n / LEDGER_WINDOW);
      for (let w = 0; w < windows; w++) {
        const a = w * LEDGER_WINDOW;
        const b = Math.min(n, a + LEDGER_WINDOW);
        const inWindow = rej.filter(([x, y]) => y >= a && x < b);
        const deficit = outsideRanges(a, b, inWindow) - (counts.get(w) ?? 0);
        lost += deficit;
        if (gaps.closed >= MAX_MISSING_RANGES) continue;
        if (deficit === 0) {
          gaps.close(); // every seq of the window is stored or rejected
          continue;
        }
        const c = counts.get(w) ?? 0;
        if (c === 0 && inWindow.length === 0) {
          gaps.missing(g, a, b - 1);
          continue;
        }
        const seqs =
          c === 0
            ? []
            : (
                await this.numbers(
                  `SELECT DISTINCT seq FROM ${this.table} WHERE gen = ${gen} AND seq >= ${a} AND seq < ${b} ORDER BY seq`,
                )
              ).map((r) => r[0]!);
        let i = 0;
        let k = 0;
        for (let x = a; x < b && gaps.closed < MAX_MISSING_RANGES; x++) {
          while (i < seqs.length && seqs[i]! < x) i++;
          while (k < inWindow.length && inWindow[k]![1] < x) k++;
          const present = (i < seqs.length && seqs[i] === x) || (k < inWindow.length && inWindow[k]![0] <= x);
          if (present) gaps.close();
          else gaps.missing(g, x, x);
        }
      }
      gaps.close(); // a gap ends at sent[g]
    }
    return {
      lost,
      ranges: gaps.ranges.slice(0, MAX_MISSING_RANGES),
      totalSent,
      totalRejected,
      rejectedStored,
    };
  }

  /** The completion query: the window walk alone (see the file comment). */
  async missing(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Completion> {
    const tBefore = now();
    const w = await this.walk(sent, rejected, false);
    return { tBefore, tAfter: now(), missing: w.lost, missingRanges: w.ranges };
  }

  async ledger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<ClickHouseLedger> {
    const ns = sent.map((n) => Math.max(0, Math.floor(n)));
    const sentArray =
      ns.length > 0 ? `[${ns.map((n) => `toUInt64(${n})`).join(", ")}]` : "emptyArrayUInt64()";
    // arrayElement past the end gives 0, so a gen of the run's space without a generator makes every seq unexpected
    // distinct per (gen, window of seqs), summed: the windows are disjoint, and a window's hash set stays small (one
    // set of every (gen, seq) is several times slower: measured by bench/harness.ts); foreign rows by a key range
    const [totals] = await this.numbers(
      `SELECT sum(c), sum(d), sum(u), (SELECT count() FROM ${this.table} WHERE ${this.foreignRows()}) FROM
        (SELECT count() AS c, uniqExact(seq) AS d, countIf(seq >= arrayElement(${sentArray}, toUInt64(gen - ${this.genBase} + 1))) AS u
          FROM ${this.table} WHERE ${this.ours} GROUP BY gen, intDiv(seq, ${LEDGER_WINDOW}))`,
    );
    const [stored = 0, distinct = 0, unexpected = 0, foreign = 0] = totals ?? [];
    const w = await this.walk(sent, rejected, true);
    return {
      sent: w.totalSent,
      accepted: w.totalSent - w.totalRejected,
      stored,
      distinct,
      lost: w.lost,
      duplicated: stored - distinct,
      overwritten: 0,
      rejected: w.totalRejected,
      unexpected,
      missingRanges: w.ranges,
      foreign,
      rejectedStored: w.rejectedStored,
      deduplicated: 0,
      server: await this.serverStats(),
    };
  }

  /** Active parts of the table and the server's insert counters (see the file comment). */
  async serverStats(): Promise<ClickHouseServerStats> {
    const [[parts = 0] = []] = await this.numbers(this.partsQuery());
    this.maxActiveParts = Math.max(this.maxActiveParts, parts);
    // the log tables flushed first, so that no periodic flush falls between the counters and their rows below
    await this.query("SYSTEM FLUSH LOGS");
    const text = await this.query(
      "SELECT event, value FROM system.events WHERE event IN ('InsertQuery', 'InsertedRows', 'RejectedInserts', 'DelayedInserts') FORMAT TabSeparated",
    );
    const ev = new Map(
      text
        .split("\n")
        .filter(Boolean)
        .map((l) => {
          const [k = "", v = "0"] = l.split("\t");
          return [k, Number(v)] as const;
        }),
    );
    const insertQueries = ev.get("InsertQuery") ?? 0;
    // the server's own log tables (the samples' log_queries) count in InsertedRows too, not in InsertQuery: their rows
    // are taken off (what their active parts hold after SYSTEM FLUSH LOGS)
    const [[logRows = 0] = []] = await this.numbers(
      "SELECT sum(rows) FROM system.parts WHERE active AND database = 'system' AND table IN ('query_log', 'query_thread_log')",
    );
    const insertedRows = Math.max(0, (ev.get("InsertedRows") ?? 0) - logRows);
    return {
      activeParts: parts,
      maxActiveParts: this.maxActiveParts,
      insertQueries,
      insertedRows,
      rowsPerInsert: insertQueries > 0 ? insertedRows / insertQueries : 0,
      rejectedInserts: ev.get("RejectedInserts") ?? 0,
      delayedInserts: ev.get("DelayedInserts") ?? 0,
    };
  }

  /** Verifier.retarget: later queries go to `at` (each query is its own request: no connection to drop). */
  retarget(at: { host: string; port: number }): void {
    this.base = `http://${at.host.includes(":") ? `[${at.host}]` : at.host}:${at.port}/`;
  }

  async close(): Promise<void> {
    // fetch keeps no state of ours: nothing to close
  }
}

/** Factory "clickhouse": ctx.params.table (default "ib_events", may be "db.table"), database (default "default"), user (Basic auth with INGESTBENCH_CLICKHOUSE_PASSWORD: ./auth.ts). */
export const clickhouseVerifier: VerifierFactory = {
  name: "clickhouse",
  create: (ctx) => new ClickHouseVerifier(ctx),
};
