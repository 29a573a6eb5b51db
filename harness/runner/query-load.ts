/**
 * The query phase (scenario `query`, harness/scenario/schema.ts QueryPhase): write-up 001's query half
 * (docs/write-ups.md), statements run against the sink at concurrency × count cells, either once the ingest has
 * filled the table, every acknowledged seq present (`during: after`, the default: harness/runner/phases/query.ts runs it after
 * the completion wait, before the measurement ends, so the sink is still under its caps), or while the ingest runs
 * (`during: ingest`, mixed mode: from the end of the warmup, once a count has seen rows stored, to the end of the
 * load, so the run's rows/s and delivery
 * latency are measured under the query load; docs/design.md, "Query load").
 *
 * Per statement and cell: `concurrency` closed-loop workers, each sending `count` requests one after the other
 * (write-up 001's "100×10" is 100 workers × 10 requests), over `concurrency` connections opened before the cell's
 * clock starts (connection set-up is not query latency): ClickHouse over its HTTP
 * interface (POST / with the statement as body, the answer in TabSeparated: https://clickhouse.com/docs/en/interfaces/http),
 * PostgreSQL over its wire protocol (a node-postgres Pool). The harness process sends them, from the harness's side
 * of the sink's control address (as the verifier's counts do), not from the loadgen host.
 *
 * Latency per request, send to the whole answer read, goes into an HdrHistogram (hdr-histogram-js; microseconds,
 * 3 significant digits, Gil Tene's HdrHistogram). The loop is closed (a worker sends its next request when the
 * previous one answered), so coordinated omission correction does not apply: the latencies are what each request
 * waited, and requests/s is what the server sustained at that concurrency. Every answer is checked (`checkRows`):
 * a non-200 status, a server error or exception in the answer, or a row count or first value other than the
 * statement declares is an error, counted beside the requests, never a fast query.
 *
 * Before the first cell, over one connection and off the cells' clocks, the phase runs its `prepare` statements (e.g.
 * an index) and, when a statement names `{maxSeq}`, reads the newest seq once (`setUp`).
 */
import * as hdr from "hdr-histogram-js";
import pg from "pg";
import { Pool } from "undici";
import { quoteTable } from "../../core/events/copy-text.ts";
import { passwordOption } from "../../core/secrets.ts";
import { clickhouseHttpAuth } from "../../plugins/sinks/clickhouse/auth.ts";
import { ConfigurationError, VerificationError } from "../../core/errors.ts";
import type { QueryCellResult, QueryPhaseRecord } from "../results/types.ts";
import { latencySummaryMs } from "../stats/latency.ts";
import type { QueryPhase, QueryStatement } from "../scenario/schema.ts";

/** Where the harness reaches the sink (the run's "sink" event: control address, sink params). */
export interface QueryTarget {
  host: string;
  port: number;
  params: Record<string, string>;
}

/** Errors kept as text per cell. */
const ERROR_SAMPLES = 5;
/** How often a running phase reports its progress (`onProgress`), ms; a cell's start and end report too. */
export const QUERY_PROGRESS_MS = 1000;

/**
 * A query phase's progress, reported every QUERY_PROGRESS_MS and when a cell starts and ends (harness/runner/progress.ts
 * shows it). Counts are of the cell's current pass; rates are answers per second of wall time since the cell's clock
 * started; estimates in seconds, null when nothing has been answered yet to estimate from.
 */
export interface QueryProgress {
  /** the statement's name and the cell id ("count@10x5000", as in QueryCellResult.id) */
  statement: string;
  cellId: string;
  /** 1-based position of the cell among the phase's statements × cells, and how many there are */
  cellIndex: number;
  cells: number;
  /** during the ingest: the pass over the statements × cells (1-based); absent after the ingest */
  pass?: number;
  /** answers read in this pass of the cell (right, wrong and failed alike), of concurrency × count */
  done: number;
  total: number;
  /** errors so far in this pass of the cell (wrong answers, server errors, failed requests) */
  errors: number;
  /** seconds since the cell's clock started */
  elapsedS: number;
  /** done / elapsedS, null before the first answer */
  queriesPerSec: number | null;
  /** the cell's time left at its rate so far (total − done) / queriesPerSec */
  cellRemainingS: number | null;
  /**
   * the phase's time left: this cell's plus the requests of the cells not started at the phase's mean rate so far
   * (answers over wall time of all cells run); null during the ingest (the phase ends with the load)
   */
  phaseRemainingS: number | null;
  /** true on the report sent when the cell's pass ended */
  ended: boolean;
}

/** The table a statement's `{table}` names: `params.table` (default ib_events, may be "db.table") in `params.database`. */
export function tableRef(params: Record<string, string>): { database: string; ref: string } {
  const t = params.table ?? "ib_events";
  const dot = t.indexOf(".");
  const database = dot > 0 ? t.slice(0, dot) : (params.database ?? "default");
  const name = dot > 0 ? t.slice(dot + 1) : t;
  return { database, ref: `${database}.${name}` };
}

/** The statement as sent: `{table}` replaced, " FORMAT TabSeparated" appended (a trailing ";" dropped). */
export function statementText(st: QueryStatement, table: string): string {
  return `${st.sql.replaceAll("{table}", table).trim().replace(/;$/, "")} FORMAT TabSeparated`;
}

/** The placeholder for the newest seq in the table as the phase starts (`resolveMaxSeq`). */
export const MAX_SEQ = "{maxSeq}";

/**
 * The statements with `{maxSeq}` replaced by `maxSeq` (an integer; statements without it unchanged): the newest seq in
 * the table when the phase starts, the cursor a reader that tails the log holds, so that a statement can ask for the
 * newest entries by a key range (`WHERE seq > {maxSeq} - 10`) instead of sorting the whole table.
 */
export function resolveMaxSeq(statements: readonly QueryStatement[], maxSeq: number): QueryStatement[] {
  return statements.map((st) =>
    st.sql.includes(MAX_SEQ) ? { ...st, sql: st.sql.replaceAll(MAX_SEQ, String(maxSeq)) } : st,
  );
}

/** Bound of each `prepare` statement (an index over a large table on a small sink), ms. */
export const PREPARE_TIMEOUT_MS = 600_000;

/**
 * Before the first cell, over one connection and off the cells' clocks: run the phase's `prepare` statements in order
 * (a failed one stops the phase), then, when a statement names `{maxSeq}`, read `SELECT max(seq) FROM {table}` once
 * and put it in. Returns the statements as the cells send them and the ms `prepare` took (undefined without any).
 * @throws VerificationError E_QUERY_PREPARE when a prepare statement fails; E_QUERY_PREFILL when max(seq) is not a
 *   whole number (an empty PostgreSQL table answers NULL)
 */
async function setUp(
  phase: QueryPhase,
  sink: string,
  target: QueryTarget,
  signal?: AbortSignal,
): Promise<{ statements: QueryStatement[]; prepareMs?: number }> {
  const wantsMaxSeq = phase.statements.some((st) => st.sql.includes(MAX_SEQ));
  if (!phase.prepare && !wantsMaxSeq) return { statements: phase.statements };
  const session = SESSIONS[sink]!(
    target,
    1,
    Math.max(phase.timeout.ms, phase.prepare ? PREPARE_TIMEOUT_MS : 0),
  );
  // Ctrl-C ends a long `prepare` (an index over a large table) at once: the harness stops waiting for the statement
  // and leaves its connection to the teardown (a pg.Pool's end() would wait for the statement, node-postgres having
  // no cancel of its own)
  const aborted = signal
    ? new Promise<never>((_, reject) => {
        if (signal.aborted) reject(abortError(signal));
        else signal.addEventListener("abort", () => reject(abortError(signal)), { once: true });
      })
    : null;
  aborted?.catch(() => undefined);
  const race = <T>(p: Promise<T>): Promise<T> => (aborted ? Promise.race([p, aborted]) : p);
  try {
    await race(session.open());
    let prepareMs: number | undefined;
    if (phase.prepare) {
      const since = performance.now();
      for (const [i, sql] of phase.prepare.entries()) {
        const a = await race(session.send({ name: "prepare", sql }, true));
        if ("error" in a)
          throw new VerificationError(
            "E_QUERY_PREPARE",
            `query.prepare.${i} (${sql.slice(0, 80)}): ${a.error}`,
          );
      }
      prepareMs = performance.now() - since;
    }
    if (!wantsMaxSeq) return { statements: phase.statements, prepareMs };
    const a = await race(session.send({ name: "maxSeq", sql: "SELECT max(seq) FROM {table}" }));
    const v = "error" in a ? Number.NaN : Number(a.rows[0]?.[0]);
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new VerificationError(
        "E_QUERY_PREFILL",
        `${MAX_SEQ}: SELECT max(seq) answered ${"error" in a ? a.error : JSON.stringify(a.rows[0]?.[0] ?? null)}, not the newest seq of a filled table`,
      );
    }
    return { statements: resolveMaxSeq(phase.statements, v), prepareMs };
  } finally {
    if (signal?.aborted) void session.close(abortError(signal)).catch(() => undefined);
    else await session.close();
  }
}

/** Summed figures of a query phase for scenario checks (`query.requests`, `query.ok`, `query.errors`). */
export function queryTotals(
  q: QueryPhaseRecord | undefined,
): { requests: number; ok: number; errors: number } | undefined {
  if (!q) return undefined;
  return q.cells.reduce(
    (t, c) => ({ requests: t.requests + c.requests, ok: t.ok + c.ok, errors: t.errors + c.errors }),
    { requests: 0, ok: 0, errors: 0 },
  );
}

/** One answer as the sink sent it: its rows (each field as text), or what went wrong. */
export type Answer = { rows: string[][] } | { error: string };

/**
 * One cell's connections to the sink, `concurrency` of them: `send` runs a statement on one and reads the whole
 * answer; `close` releases them all (and fails what is still in flight).
 */
interface QuerySession {
  /** open the connections before the cell's clock starts (a connection's set-up is not a query's latency) */
  open(): Promise<void>;
  /** `raw`: the statement as written (`{table}` replaced), without the FORMAT clause (ClickHouse DDL takes none) */
  send(st: QueryStatement, raw?: boolean): Promise<Answer>;
  close(reason?: Error): Promise<void>;
}

/** What the expected row count ("{stored}") may be for one answer: exact after the ingest, at least `min` during it. */
export interface StoredBounds {
  min: number;
  max: number;
}

/**
 * Check one answer's rows against the statement: `rows` rows when declared, and the first field of the first row
 * equal to `value` when declared; `value: "{stored}"` is the table's rows, within `stored` (min = max after the
 * ingest: exact; during the ingest the table grows, so at least what the last count saw before the request was sent).
 * Returns the rows returned, or the error in words.
 */
export function checkRows(
  rows: readonly (readonly string[])[],
  st: QueryStatement,
  stored: StoredBounds,
): { rows: number } | { error: string } {
  if (st.rows !== undefined && rows.length !== st.rows)
    return { error: `wrong answer: ${rows.length} rows, expected ${st.rows}` };
  if (st.value !== undefined) {
    const first = rows[0]?.[0];
    const n = first === undefined ? Number.NaN : Number(first);
    if (st.value !== "{stored}") {
      if (n !== st.value)
        return { error: `wrong answer: first value ${first ?? "(no row)"}, expected ${st.value}` };
    } else if (!(n >= stored.min && n <= stored.max)) {
      const expected =
        stored.min === stored.max
          ? `${stored.min}`
          : `at least ${stored.min}${Number.isFinite(stored.max) ? ` and at most ${stored.max}` : ""}`;
      return {
        error: `wrong answer: first value ${first ?? "(no row)"}, expected ${expected} (the rows in the table)`,
      };
    }
  }
  return { rows: rows.length };
}

/**
 * Check one ClickHouse answer (status and TabSeparated body) against the statement: status 200, no ClickHouse
 * exception text, then `checkRows` over its lines ("{stored}" = `tableRows`, exact). Returns the rows returned, or the
 * error in words.
 */
export function checkAnswer(
  status: number,
  body: string,
  st: QueryStatement,
  tableRows: number,
): { rows: number } | { error: string } {
  const a = clickhouseAnswer(status, body);
  return "error" in a ? a : checkRows(a.rows, st, { min: tableRows, max: tableRows });
}

/** A ClickHouse HTTP answer as rows: a non-200 status or an exception streamed after the 200 header is the error. */
function clickhouseAnswer(status: number, body: string): Answer {
  if (status !== 200) return { error: `HTTP ${status}: ${body.trim().split("\n")[0]!.slice(0, 200)}` };
  // ClickHouse reports an exception raised while streaming the answer after a 200 header, in the body
  const exception = /Code: \d+, e\.displayText\(\) = DB::Exception|DB::Exception:/.exec(body);
  if (exception)
    return { error: `exception in the answer: ${body.slice(exception.index).split("\n")[0]!.slice(0, 200)}` };
  return {
    rows:
      body === ""
        ? []
        : body
            .replace(/\n$/, "")
            .split("\n")
            .map((l) => l.split("\t")),
  };
}

/**
 * ClickHouse's HTTP interface: POST / with the statement (FORMAT TabSeparated appended) as body,
 * ?database=…[&user=…], over one undici Pool of `concurrency` connections (https://clickhouse.com/docs/en/interfaces/http).
 */
function clickhouseSession(target: QueryTarget, concurrency: number, timeoutMs: number): QuerySession {
  const { database, ref } = tableRef(target.params);
  const search = new URLSearchParams({ database });
  // Basic auth with INGESTBENCH_CLICKHOUSE_PASSWORD, else ?user= (plugins/sinks/clickhouse/auth.ts)
  const auth = clickhouseHttpAuth(target.params);
  for (const [k, v] of Object.entries(auth.query)) search.set(k, v);
  const pool = new Pool(`http://${target.host}:${target.port}`, { connections: concurrency, pipelining: 1 });
  return {
    // undici connects on the first request over each connection; ClickHouse's HTTP keep-alive makes that one TCP handshake
    async open() {},
    async send(st, raw) {
      const body = raw ? st.sql.replaceAll("{table}", ref) : statementText(st, ref);
      const r = await pool.request({
        path: `/?${search}`,
        method: "POST",
        headers: auth.headers,
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      return clickhouseAnswer(r.statusCode, await r.body.text());
    },
    async close(reason) {
      if (reason) await pool.destroy(reason).catch(() => undefined);
      else await pool.close().catch(() => pool.destroy());
    },
  };
}

/** The PostgreSQL table a statement's `{table}` names: `params.table` (default ib_events, may be "schema.table"), quoted. */
export function pgTableRef(params: Record<string, string>): string {
  return quoteTable(params.table ?? "ib_events");
}

/**
 * PostgreSQL over its wire protocol (node-postgres): a pg.Pool of `concurrency` clients to `params.database`
 * (default postgres) as `params.user` (default postgres), the password from INGESTBENCH_POSTGRES_PASSWORD
 * (core/secrets.ts); each statement with `{table}` replaced, rows in array mode, every field as text (String of what
 * node-postgres parsed: count(*) is a bigint string). `query_timeout` bounds each request; an error the server
 * returns (relation missing, statement cancelled) is the answer's error.
 */
function postgresSession(target: QueryTarget, concurrency: number, timeoutMs: number): QuerySession {
  const pool = new pg.Pool({
    host: target.host,
    port: target.port,
    user: target.params.user ?? "postgres",
    database: target.params.database ?? "postgres",
    ...passwordOption("postgres"),
    max: concurrency,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    application_name: "ingestbench-query",
  });
  pool.on("error", () => undefined); // an idle client's lost connection: the next request takes a new one
  const table = pgTableRef(target.params);
  return {
    // every client connected (a backend forked and authenticated per connection) before the clock starts
    async open() {
      const clients = await Promise.all(Array.from({ length: concurrency }, () => pool.connect()));
      for (const c of clients) c.release();
    },
    async send(st) {
      try {
        const r = await pool.query({ text: st.sql.replaceAll("{table}", table), rowMode: "array" });
        return {
          rows: (r.rows as unknown[][]).map((row) =>
            row.map((v) => (v instanceof Date ? v.toISOString() : String(v))),
          ),
        };
      } catch (err) {
        const e = err as Error & { code?: string };
        // a server error is an answer (counted as an error); a lost connection is thrown as a failed request
        if (typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code))
          return { error: `PostgreSQL ${e.code}: ${e.message.slice(0, 200)}` };
        throw err;
      }
    },
    async close() {
      await pool.end().catch(() => undefined);
    },
  };
}

/** The query client of each sink the phase can run against (QUERY_SINKS in harness/scenario/schema.ts). */
const SESSIONS: Record<
  string,
  (target: QueryTarget, concurrency: number, timeoutMs: number) => QuerySession
> = {
  clickhouse: clickhouseSession,
  postgres: postgresSession,
};

/** What an aborted phase throws: the signal's reason when it is an Error, else an Error naming it (a signal name). */
function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new Error(`the query phase was stopped (${String(signal.reason ?? "aborted")})`);
}

/** A cell's figures while it runs (one pass, or summed over the passes of a phase during the ingest). */
interface CellTally {
  st: QueryStatement;
  cell: { concurrency: number; count: number };
  histogram: hdr.Histogram;
  requests: number;
  ok: number;
  errors: number;
  rows: number;
  samples: string[];
  elapsedMs: number;
}

/**
 * Run one statement at one concurrency × count cell, adding to its tally (see the module comment). `stop()` true
 * ends the cell before a worker's next request (a phase during the ingest ends with the load).
 * @throws the abort reason when `signal` aborts
 */
async function runCell(
  sink: string,
  target: QueryTarget,
  t: CellTally,
  opts: {
    timeoutMs: number;
    bounds: () => StoredBounds;
    stop?: () => boolean;
    signal?: AbortSignal;
    onClockStart?: () => void;
  },
): Promise<void> {
  const session = SESSIONS[sink]!(target, t.cell.concurrency, opts.timeoutMs);
  const fail = (e: string): void => {
    t.errors++;
    if (t.samples.length < ERROR_SAMPLES) t.samples.push(e);
  };
  const record = (since: number): void => {
    t.histogram.recordValue(Math.max(1, Math.round((performance.now() - since) * 1000)));
  };
  const worker = async (): Promise<void> => {
    for (let i = 0; i < t.cell.count; i++) {
      if (opts.signal?.aborted) throw abortError(opts.signal);
      if (opts.stop?.()) return;
      const bounds = opts.bounds();
      const since = performance.now();
      t.requests++;
      try {
        const answer = await session.send(t.st);
        record(since);
        const a = "error" in answer ? answer : checkRows(answer.rows, t.st, bounds);
        if ("error" in a) fail(a.error);
        else {
          t.ok++;
          t.rows += a.rows;
        }
      } catch (err) {
        if (opts.signal?.aborted) throw abortError(opts.signal);
        record(since);
        fail(`request failed: ${(err as Error).message}`);
      }
    }
  };
  // one abort listener for the cell (not one per request): aborting closes the session, failing what is in flight
  const onAbort = (): void => {
    void session.close(abortError(opts.signal!)).catch(() => undefined);
  };
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  let started = performance.now();
  try {
    await session.open().catch((err: unknown) => {
      if (opts.signal?.aborted) throw abortError(opts.signal);
      fail(`connect failed: ${(err as Error).message}`);
    });
    started = performance.now();
    opts.onClockStart?.();
    await Promise.all(Array.from({ length: t.cell.concurrency }, worker));
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    await session.close();
  }
  t.elapsedMs += performance.now() - started;
}

/** A cell's id, "<statement>@<concurrency>x<count>" (QueryCellResult.id). */
function cellIdOf(t: Pick<CellTally, "st" | "cell">): string {
  return `${t.st.name}@${t.cell.concurrency}x${t.cell.count}`;
}

/** A tally as run.json's QueryCellResult. */
function cellResult(t: CellTally): QueryCellResult {
  const none = t.requests === 0;
  return {
    id: cellIdOf(t),
    statement: t.st.name,
    concurrency: t.cell.concurrency,
    count: t.cell.count,
    requests: t.requests,
    ok: t.ok,
    errors: t.errors,
    errorSamples: t.samples,
    rows: t.rows,
    elapsedMs: t.elapsedMs,
    requestsPerSecond: t.elapsedMs > 0 ? (t.requests * 1000) / t.elapsedMs : Number.NaN,
    latencyMs: none
      ? { mean: Number.NaN, p50: Number.NaN, p99: Number.NaN, max: Number.NaN }
      : latencySummaryMs(t.histogram),
  };
}

/**
 * Run a query phase against the sink: every statement at every cell, statements outer, cells inner, one after the
 * other (cells never overlap).
 * - After the ingest (`phase.during` "after", the default): one pass; `tableRows` is what the table holds (the
 *   ingest's stored count, complete), and "{stored}" must equal it.
 * - During the ingest ("ingest"): passes repeat until `stop()` says the load is over (a worker sends no request after
 *   that; the cell in progress ends with its in-flight requests); each cell's figures are summed over the passes
 *   (`passes` in the record), "{stored}" must be at least `storedNow()` as sampled before each request (the table
 *   only grows), and `tableRows` is `storedNow()` at the end.
 * @throws ConfigurationError E_QUERY_SINK when the sink has no query support here; the abort reason when aborted
 */
export async function runQueryPhase(opts: {
  phase: QueryPhase;
  sink: string;
  target: QueryTarget;
  tableRows: number;
  signal?: AbortSignal;
  stop?: () => boolean;
  storedNow?: () => number;
  /** called every QUERY_PROGRESS_MS and at each cell's start and end (QueryProgress); a throw is ignored */
  onProgress?: (p: QueryProgress) => void;
}): Promise<QueryPhaseRecord> {
  if (!SESSIONS[opts.sink])
    throw new ConfigurationError(
      "E_QUERY_SINK",
      `the query phase runs against ${Object.keys(SESSIONS).join(", ")} sinks, not "${opts.sink}"`,
      { field: "query" },
    );
  const during = opts.phase.during ?? "after";
  // `prepare`, then `{maxSeq}`, once before the first cell (during the ingest the table only grows, so a key range
  // below the newest seq keeps its rows)
  const { statements, prepareMs } = await setUp(opts.phase, opts.sink, opts.target, opts.signal);
  const tallies: CellTally[] = statements.flatMap((st) =>
    opts.phase.cells.map((cell) => ({
      st,
      cell,
      requests: 0,
      ok: 0,
      errors: 0,
      rows: 0,
      samples: [],
      elapsedMs: 0,
      histogram: hdr.build({
        lowestDiscernibleValue: 1,
        highestTrackableValue: Math.max(2, opts.phase.timeout.ms * 1000 * 2),
        numberOfSignificantValueDigits: 3,
      }),
    })),
  );
  const bounds =
    during === "ingest"
      ? (): StoredBounds => ({ min: opts.storedNow?.() ?? 0, max: Number.POSITIVE_INFINITY })
      : (): StoredBounds => ({ min: opts.tableRows, max: opts.tableRows });
  let passes = 0;
  const tracker = new PhaseTracker(tallies, during === "ingest", opts.onProgress);
  try {
    do {
      passes++;
      for (const [i, t] of tallies.entries()) {
        if (during === "ingest" && opts.stop?.()) break;
        tracker.begin(i, passes);
        try {
          await runCell(opts.sink, opts.target, t, {
            timeoutMs: opts.phase.timeout.ms,
            bounds,
            stop: during === "ingest" ? opts.stop : undefined,
            signal: opts.signal,
            onClockStart: () => tracker.clockStarted(),
          });
        } finally {
          tracker.end();
        }
      }
    } while (during === "ingest" && !opts.stop?.());
    const record: QueryPhaseRecord = {
      sink: opts.sink,
      tableRows: during === "ingest" ? (opts.storedNow?.() ?? opts.tableRows) : opts.tableRows,
      cells: tallies.map(cellResult),
    };
    if (during === "ingest") {
      record.during = "ingest";
      record.passes = passes;
    }
    if (prepareMs !== undefined) record.prepareMs = prepareMs;
    return record;
  } finally {
    for (const t of tallies) t.histogram.destroy();
  }
}

/**
 * The progress reports of one phase (QueryProgress): which cell runs, its counts at the start of its pass (a tally
 * sums over passes), the answers and wall time of the cells run before it, and the timer.
 */
class PhaseTracker {
  private index = -1;
  private pass = 1;
  private base = { answered: 0, errors: 0 };
  private clockAt = 0;
  /** answers and wall seconds of the cells' passes that ended (the phase's mean rate) */
  private doneAnswered = 0;
  private doneS = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly tallies: readonly CellTally[],
    private readonly duringIngest: boolean,
    private readonly onProgress?: (p: QueryProgress) => void,
  ) {}

  begin(index: number, pass: number): void {
    if (!this.onProgress) return;
    const t = this.tallies[index]!;
    this.index = index;
    this.pass = pass;
    this.base = { answered: t.ok + t.errors, errors: t.errors };
    this.clockAt = 0;
    this.report(false);
    this.timer = setInterval(() => this.report(false), QUERY_PROGRESS_MS);
    this.timer.unref();
  }

  /** the cell's connections are open: its clock (elapsedS, the rate) starts now */
  clockStarted(): void {
    this.clockAt = performance.now();
  }

  end(): void {
    if (!this.onProgress || this.index < 0) return;
    clearInterval(this.timer);
    const p = this.report(true);
    this.doneAnswered += p.done;
    this.doneS += p.elapsedS;
    this.index = -1;
  }

  /** The current cell's QueryProgress, handed to onProgress. */
  private report(ended: boolean): QueryProgress {
    const t = this.tallies[this.index]!;
    const total = t.cell.concurrency * t.cell.count;
    const done = Math.min(total, t.ok + t.errors - this.base.answered);
    const elapsedS = this.clockAt > 0 ? (performance.now() - this.clockAt) / 1000 : 0;
    const rate = done > 0 && elapsedS > 0 ? done / elapsedS : null;
    const cellLeft = rate === null ? null : ended ? 0 : (total - done) / rate;
    const meanRate =
      this.doneS + elapsedS > 0 && this.doneAnswered + done > 0
        ? (this.doneAnswered + done) / (this.doneS + elapsedS)
        : null;
    const later = this.tallies
      .slice(this.index + 1)
      .reduce((n, c) => n + c.cell.concurrency * c.cell.count, 0);
    const p: QueryProgress = {
      statement: t.st.name,
      cellId: cellIdOf(t),
      cellIndex: this.index + 1,
      cells: this.tallies.length,
      ...(this.duringIngest ? { pass: this.pass } : {}),
      done,
      total,
      errors: t.errors - this.base.errors,
      elapsedS,
      queriesPerSec: rate,
      cellRemainingS: cellLeft,
      // before this cell's first answer, its own requests at the phase's mean rate too
      phaseRemainingS:
        this.duringIngest || meanRate === null
          ? null
          : (cellLeft ?? (total - done) / meanRate) + later / meanRate,
      ended,
    };
    try {
      this.onProgress!(p);
    } catch {
      /* a display's failure never stops the phase */
    }
    return p;
  }
}

/** "count@10x50: 1,234 queries/s, p50 3.1 ms, p99 9.8 ms, max 12.0 ms, 500 requests, 0 errors" lines for the terminal. */
export function queryLines(q: QueryPhaseRecord): string[] {
  const f = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : "–");
  return [
    `  queries against ${q.sink} (${q.tableRows.toLocaleString("en-US")} rows in the table):`,
    ...q.cells.map(
      (c) =>
        `    ${c.id}: ${f(c.requestsPerSecond)} queries/s, p50 ${f(c.latencyMs.p50)} ms, p99 ${f(c.latencyMs.p99)} ms, max ${f(c.latencyMs.max)} ms; ` +
        `${c.requests} requests, ${c.errors} errors${c.errorSamples.length ? ` (first: ${c.errorSamples[0]})` : ""}`,
    ),
  ];
}
