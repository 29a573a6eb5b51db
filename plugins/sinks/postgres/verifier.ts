/**
 * Verifier "postgres": the sink-side half for PostgreSQL, over `pg` on the control link.
 *
 * Table `params.table` (default "ib_events"): the scenario's fields in order (string → text, timestamp →
 * timestamptz, int → bigint, float → double precision, bool → boolean), then gen int, seq bigint,
 * sent_at timestamptz, and `stored_at timestamptz DEFAULT clock_timestamp()`: the time PostgreSQL inserted the row,
 * written by the server itself (no writer lists the column: the pg-copy generator's COPY and the collectors' INSERTs
 * name their columns). No index and no key: ingest stays honest, and duplicates stay visible.
 *
 * Samples cost the sink almost nothing during the load, and are settled exactly after it (Verifier.afterLoad).
 * Every per-row read during the load costs the capped sink about as much as a few per cent of ingesting the row
 * (bench/harness.ts: reading every new row's stored_at and sent_at with a visibility
 * test per sample cost a large share of the capped sink's CPU, an exact incremental count of the new pages alone a
 * few per cent: docs/measurements.md, "Figures moved from code comments"), so a live sample reads no row of the
 * table: its `stored` is the server's statistics,
 * pg_stat_get_tuples_inserted (the table's inserts, flushed by each writing backend when its transaction ends, at
 * most about once a second: it lags the rows visible, and runs ahead of them only by the rows of aborted
 * transactions and of another run, which it counts too), its newest sent_at the max over the last TAIL_PAGES pages
 * the previous sample saw, and it records its snapshot (pg_current_snapshot(): the mark). Once the load and its
 * completion wait are over (the measured window is closed), one read-only query in one pass places every row of this
 * run at the first sample whose snapshot sees its inserting transaction (pg_visible_in_snapshot's rule: xid < xmin,
 * or < xmax and not in xip; a row's full xid is the transaction's stable xid minus age(xmin), stableXid; windowMap
 * turns the rule into a step function over xids that width_bucket applies) and groups the rows by (sample window, stored_at − sent_at in whole ms) with
 * their newest sent_at: each sample's exact stored count and newest sent_at, as if it had counted (a row becomes
 * visible at its transaction's commit, so a late commit is counted when it happened), and delivery latency per
 * window, each committed row in exactly one. (It was two passes, a GROUP BY xmin and a join on it: at 322M rows
 * about 8 minutes.) clock_timestamp() is the insert time, before the commit that makes the row visible:
 * a long transaction's commit wait is not in it. The same pass counts every row of this run its snapshot sees, the
rows after the last mark included (SettledSamples.final: a fixed workload's last point, so no full count follows it).
 * After a load with samples the completion check's pass does this itself: its COPY also carries each row's xmin,
 * sent_at and stored_at, and ./settle.ts PassSettler applies the same arithmetic at the harness, so the sink reads
 * the table once (docs/design.md "Delivery latency"); the settle query (settleIn) is the reference and the fallback.
`full` samples (the drain) count every row live, exactly.
 *
 * Ledger definitions (all exact), for generator g with sent[g] seqs 0..sent[g]-1. They are computed at the harness in
 * one sequential pass of the table, `COPY (SELECT gen, seq …) TO STDOUT (FORMAT binary)` in one REPEATABLE READ READ
 * ONLY snapshot, read incrementally (./binary-copy.ts) into core/ledger-scan.ts (a bit per sent seq): the table has no
 * index, and the SQL that computes the same figures at the sink (sqlLedger(), sqlMissing(): the reference, kept for
 * the fallbacks below and the tests) hashes every row for DISTINCT and sorts it for the window functions: several times
 * the scan's time (bench/harness.ts `--sink postgres`; docs/design.md, "The ledger"; docs/measurements.md, "Figures
 * moved from code comments"). The scan's one unbounded need, the distinct unexpected pairs, falls back to the SQL
 * DISTINCT count past core/ledger-scan.ts's limit:
 * - rejected: seqs inside g's rejected ranges (clamped to 0..sent[g]-1, overlaps merged), whether stored or not
 * - accepted = sent − rejected
 * - stored = count(*); distinct = count of distinct (gen, seq); duplicated = stored − distinct
 * - unexpected = stored rows whose gen is unknown or whose seq is outside 0..sent[gen]-1
 * - lost = accepted seqs absent from the table (= Σsent − distinct in range − rejected not stored)
 * - missingRanges = the first 20 runs of lost seqs, [gen, from, to] inclusive, ordered by gen then from
 *   (gaps-and-islands over distinct stored seqs ∪ rejected ranges, with sentinels −1 and sent[g])
 * - overwritten = 0 (plain INSERT/COPY never overwrites); deduplicated = 0 (no key)
 * - foreign = rows whose gen is outside this run's generator-id space [genBase, genBase + GEN_STRIDE) (core/ledger.ts,
 *   "Run identity"); every count above and every sample counts this run's rows only
 * - rejectedStored = distinct stored seqs inside rejected ranges
 * `missing` (the completion check) is the same scan's lost and missing ranges, in its own read-only transaction
 * (the reference: the gaps-and-islands query alone). The ledger takes the completion check's last pass instead of a
 * pass of its own when the table cannot have changed since (keptProof(); docs/design.md "The ledger").
 *
 * What the samples cost the sink (`sinkCost`): every sample is one query (see sample()), run on the verifier's one
 * connection, whose backend (pg_backend_pid(); no parallel workers, SAMPLE_SESSION_SETTINGS) does nothing else. Where that backend is a process
 * this machine sees (the local platform: /proc/<pid>/comm is "postgres"), its time on a CPU, /proc/<pid>/schedstat
 * field 1 in ns (Documentation/scheduler/sched-stats.rst), is read before and after each sample and the difference
 * summed per tag; elsewhere (a container's pid namespace) cpuMs is null and only the queries' wall time is known.
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import { CopyOutQuery } from "./copy-out.ts";
import { IngestbenchError } from "../../../core/errors.ts";
import { authRefusal, passwordOption, sinkLogin } from "../../../core/secrets.ts";
import { quoteIdent, quoteTable } from "../../../core/events/copy-text.ts";
import type { EventField, FieldType } from "../../../core/events/types.ts";
import { GEN_STRIDE, MAX_MISSING_RANGES, normalizeRanges } from "../../../core/ledger.ts";
import { LedgerScan, UNEXPECTED_DISTINCT_LIMIT } from "../../../core/ledger-scan.ts";
import type {
  Completion,
  CountSample,
  Ledger,
  LedgerPass,
  SettledSamples,
  SinkCost,
  Verifier,
  VerifierContext,
  VerifierFactory,
  StorageFootprint,
} from "../../../core/verifier.ts";
import type { StoredRow, StoredRowReader } from "../../../core/fidelity.ts";
import { pgRowReader, SampleLocator, type PgRowReader, type Wanted } from "./rows.ts";
import { BinaryCopyReader } from "./binary-copy.ts";
import {
  PassSettler,
  parseSnapshot,
  settledFrom,
  stableXid,
  windowMap,
  type Snapshot,
  type Stamp,
} from "./settle.ts";

/** PostgreSQL column type of each event field type. */
export const PG_TYPES: Readonly<Record<FieldType, string>> = {
  string: "text",
  timestamp: "timestamptz",
  int: "bigint",
  float: "double precision",
  bool: "boolean",
};

/**
 * Settings of every read-only snapshot after the load (SET LOCAL; see snapshot()): no parallel plan, sequential scans
 * allowed, and work_mem for the reference ledger's DISTINCT and window sort over every stored row.
 */
const LEDGER_SESSION_SETTINGS = [
  "max_parallel_workers_per_gather = 0",
  "enable_seqscan = on",
  "work_mem = '64MB'",
] as const;

/**
 * Session settings of the verifier's connection. The samples must read only recent pages through a TID range scan:
 * without statistics (the table is new and never analyzed) the planner may prefer a parallel sequential scan of
 * the whole table, which costs the sink CPU in proportion to its size and starts extra worker processes.
 */
export const SAMPLE_SESSION_SETTINGS = [
  "SET max_parallel_workers_per_gather = 0",
  "SET enable_seqscan = off",
] as const;

/** Pages at the end of the table (as the previous sample saw it) whose rows give a live sample's newest sent_at. */
export const TAIL_PAGES = 4;

const now = (): number => performance.timeOrigin + performance.now();

/** The column the sink stamps with its own insert time (see the file comment). */
export const STORED_AT = "stored_at";

/** `CREATE TABLE "t" (... fields ..., "gen" integer, "seq" bigint, "sent_at" timestamptz, "stored_at" timestamptz DEFAULT clock_timestamp())` */
export function createTableStatement(table: string, fields: readonly EventField[]): string {
  const cols = fields.map((f) => `${quoteIdent(f.name)} ${PG_TYPES[f.type]}`);
  cols.push(
    `${quoteIdent("gen")} integer`,
    `${quoteIdent("seq")} bigint`,
    `${quoteIdent("sent_at")} timestamptz`,
  );
  cols.push(`${quoteIdent(STORED_AT)} timestamptz DEFAULT clock_timestamp()`);
  return `CREATE TABLE ${quoteTable(table)} (${cols.join(", ")})`;
}

// shared with the other verifiers; re-exported for existing importers
export { MAX_MISSING_RANGES, normalizeRanges };

/** The postgres verifier; `sqlLedger` / `sqlMissing` are the reference SQL implementations (see the file comment). */
export class PostgresVerifier implements Verifier {
  /** a live sample's count is pg_stat_get_tuples_inserted, which lags (see the file comment; Verifier.liveCountLags) */
  readonly liveCountLags = true;
  private client: pg.Client | null = null;
  /** the connection's backend pid (see the file comment), null until connected */
  private backendPid: number | null = null;
  /** per sample tag: queries, the backend's CPU ns (null once unreadable), the queries' wall ms */
  private readonly costs = new Map<string, { queries: number; cpuNs: number | null; wallMs: number }>();
  private connecting: Promise<pg.Client> | null = null;
  /** the sample the next ledger's pass locates (StoredRowReader.expectSample, ./rows.ts) */
  private locator: SampleLocator | null = null;
  /** connections of their own by name (sideConn()), opened at their first use */
  private readonly sides = new Map<string, Promise<pg.Client>>();
  /** the samples settled from the completion check's last pass (./settle.ts PassSettler), for the next afterLoad with the same marks */
  private keptSettle: { key: string; settled: SettledSamples } | null = null;
  private readonly table: string;
  /** the table's pages at the previous sample (see sample()) */
  private blocks = 0;
  private newest: number | null = null;
  private readonly genBase: number;
  /** SQL condition: the row is this run's (core/ledger.ts, "Run identity") */
  private readonly ours: string;
  /** stored rows read back for the content check (./rows.ts) */
  readonly rows: StoredRowReader;
  private readonly reader: PgRowReader;
  /** the sample the content check will read (expectSample): the completion check's passes locate it too */
  private wanted: Wanted | null = null;
  /** the completion check's last pass, which the next ledger takes when the table cannot have changed since (ledger()) */
  private kept: KeptPass | null = null;
  /** how the last ledger was read (Verifier.ledgerPass) */
  ledgerPass: LedgerPass | undefined;
  /** distinct unexpected pairs the ledger's scan keeps before `distinct` falls back to SQL (core/ledger-scan.ts) */
  unexpectedLimit = UNEXPECTED_DISTINCT_LIMIT;

  constructor(private ctx: VerifierContext) {
    this.table = quoteTable(ctx.params.table ?? "ib_events");
    this.genBase = Math.floor(ctx.genBase ?? 0);
    this.ours = `(gen >= ${this.genBase} AND gen < ${this.genBase + GEN_STRIDE})`;
    this.reader = pgRowReader(
      () => this.sideConn("ingestbench-rows"),
      this.table,
      ctx.fields,
      () => this.locator,
    );
    this.rows = {
      ...this.reader,
      expectSample: (wanted) => {
        this.wanted = wanted;
        this.locator = SampleLocator.fits(wanted) ? new SampleLocator(wanted) : null;
      },
    };
  }

  /**
   * A new connection to the sink, as `applicationName`; `onLost` runs when it breaks (the next call reconnects).
   * @throws IngestbenchError E_SINK_AUTH (refused login) or E_VERIFIER_CONNECT (anything else)
   */
  private async connect(applicationName: string, onLost: (c: pg.Client) => void): Promise<pg.Client> {
    const c = new pg.Client({
      host: this.ctx.host,
      port: this.ctx.port,
      user: this.ctx.params.user ?? "postgres",
      database: this.ctx.params.database ?? "postgres",
      // INGESTBENCH_POSTGRES_PASSWORD (core/secrets.ts), never a param: params are recorded
      ...passwordOption("postgres"),
      connectionTimeoutMillis: 10_000,
      application_name: applicationName,
    });
    c.on("error", () => onLost(c));
    try {
      await c.connect();
    } catch (err) {
      // 28P01 invalid_password, 28000 invalid_authorization_specification (PostgreSQL's Appendix A, class 28)
      const code = (err as { code?: string }).code;
      if (code === "28P01" || code === "28000") {
        throw new IngestbenchError(
          "E_SINK_AUTH",
          `verifier: PostgreSQL at ${this.ctx.host}:${this.ctx.port}: ${authRefusal(sinkLogin("postgres", this.ctx.params))} (${(err as Error).message})`,
          { cause: err },
        );
      }
      throw new IngestbenchError(
        "E_VERIFIER_CONNECT",
        `verifier cannot connect to PostgreSQL at ${this.ctx.host}:${this.ctx.port}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return c;
  }

  private conn(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      let c: pg.Client;
      try {
        c = await this.connect("ingestbench-verifier", (lost) => {
          if (this.client === lost) this.client = null;
        });
      } finally {
        this.connecting = null;
      }
      for (const setting of SAMPLE_SESSION_SETTINGS) await c.query(setting);
      this.backendPid =
        Number((await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? NaN) ||
        null;
      this.client = c;
      return c;
    })();
    return this.connecting;
  }

  /**
   * A connection of its own named `name` (application_name), opened at its first use and kept: the row reader's
   * ("ingestbench-rows", ./rows.ts), so that the content check's reads do not queue behind the ledger's COPY on
   * `conn()` (harness/runner/fidelity.ts starts them together: a located sample waits for the ledger's pass and is then
   * fetched at once; a sample read by its own pass shares the table's reads with the ledger's, PostgreSQL's
   * synchronize_seqscans, on by default, §19.13.2).
   */
  private sideConn(name: string): Promise<pg.Client> {
    let opened = this.sides.get(name);
    if (!opened) {
      // forgotten when it breaks or fails to open: the next use opens another
      const forget = (): void => {
        if (this.sides.get(name) === opened) this.sides.delete(name);
      };
      opened = this.connect(name, forget).catch((err) => {
        forget();
        throw err;
      });
      this.sides.set(name, opened);
    }
    return opened;
  }

  /** The table on disk with its indexes and TOAST (pg_total_relation_size): the run's table holds only its rows. */
  async storage(): Promise<StorageFootprint> {
    const c = await this.conn();
    const sql = "SELECT pg_total_relation_size(to_regclass($1))::text AS bytes";
    const r = await c.query<{ bytes: string | null }>(sql, [this.table]);
    return {
      bytes: Number(r.rows[0]?.bytes ?? 0),
      source: `PostgreSQL pg_total_relation_size (heap, indexes, TOAST) of ${this.table}`,
    };
  }

  /** Drop the table if it exists (a previous cell's rows would corrupt the ledger) and create it anew. */
  async prepare(): Promise<void> {
    const c = await this.conn();
    await c.query(`DROP TABLE IF EXISTS ${this.table}`);
    await c.query(createTableStatement(this.ctx.params.table ?? "ib_events", this.ctx.fields));
    this.kept = null;
    this.wanted = null;
    this.blocks = 0;
    this.newest = null;
  }

  /**
   * A timed sample. Live (not `full`): one query that reads no row of the table, only the server's statistics and
   * the previous sample's last TAIL_PAGES pages (a TID range scan, PostgreSQL ≥ 14), and records its snapshot as the
   * mark; afterLoad() replaces its figures with exact ones (see the file comment). `full` (the drain): count(*) and
   * max(sent_at) over every row of this run, exact as it is taken.
   */
  async sample(options: { full?: boolean; tag?: string } = {}): Promise<CountSample> {
    const c = await this.conn();
    const pid = this.backendPid;
    const cpu0 = backendCpuNs(pid);
    const t0 = now();
    const s = await this.count(c, options);
    if (options.tag !== undefined) {
      const cpu1 = pid === this.backendPid ? backendCpuNs(pid) : null;
      const k = this.costs.get(options.tag) ?? { queries: 0, cpuNs: 0, wallMs: 0 };
      k.queries += 1;
      k.wallMs += now() - t0;
      k.cpuNs = k.cpuNs === null || cpu0 === null || cpu1 === null ? null : k.cpuNs + (cpu1 - cpu0);
      this.costs.set(options.tag, k);
    }
    return s;
  }

  /** What the samples tagged `tag` cost the sink: the backend's CPU where this machine sees it (see the file comment). */
  async sinkCost(tag: string): Promise<SinkCost> {
    const k = this.costs.get(tag) ?? { queries: 0, cpuNs: null, wallMs: 0 };
    return {
      queries: k.queries,
      cpuMs: k.cpuNs === null ? null : k.cpuNs / 1e6,
      threadWallMs: k.wallMs,
      readRows: null,
      source:
        k.cpuNs === null
          ? "the queries' wall time at the harness (the backend's process is not visible here)"
          : "the verifier backend's /proc/<pid>/schedstat time on a CPU around each sample",
    };
  }

  private async count(c: pg.Client, options: { full?: boolean }): Promise<CountSample> {
    const table = `'${this.table.replace(/'/g, "''")}'`;
    const common = `pg_relation_size(${table}) / current_setting('block_size')::bigint AS blocks, pg_current_snapshot()::text AS snap`;
    const tBefore = now();
    const r = await c.query<{ n: string; newest: number | null; blocks: string; snap: string }>(
      options.full
        ? `SELECT count(*) AS n, (extract(epoch FROM max(sent_at)) * 1000)::float8 AS newest, ${common} FROM ${this.table} WHERE ${this.ours}`
        : `SELECT pg_stat_get_tuples_inserted(${table}::regclass) AS n,
                (SELECT (extract(epoch FROM max(sent_at)) * 1000)::float8 FROM ${this.table}
                  WHERE ctid >= '(${Math.max(0, this.blocks - TAIL_PAGES)},0)'::tid AND ctid < '(${this.blocks},0)'::tid AND ${this.ours}) AS newest,
                ${common}`,
    );
    const tAfter = now();
    const row = r.rows[0]!;
    this.blocks = Number(row.blocks);
    if (row.newest !== null) this.newest = Math.max(this.newest ?? 0, Number(row.newest));
    return { tBefore, tAfter, stored: Number(row.n), newestSentAtMs: this.newest, mark: row.snap };
  }

  /**
   * Each sample's exact stored count, newest sent_at and delivery window, from the samples' snapshots (`marks`),
   * in one read-only snapshot after the load (see the file comment): the completion check's, when its last pass
   * settled the same marks from its own rows (missing(), ./settle.ts PassSettler), else the settle query's pass.
   */
  async afterLoad(marks: string[]): Promise<SettledSamples> {
    const kept = this.keptSettle;
    this.keptSettle = null;
    if (kept && kept.key === marks.join(" ")) return { ...kept.settled, fromCompletionPass: true };
    return this.snapshot((c) => this.settleIn(c, marks));
  }

  /** afterLoad's query, in the open read-only snapshot of `c` (its first statement takes the snapshot). */
  private async settleIn(c: pg.Client, marks: string[]): Promise<SettledSamples> {
    const snaps = marks.map(parseSnapshot);
    const map = windowMap(snaps);
    const stored = quoteIdent(STORED_AT);
    // the transaction's stable xid (what age() counts from, PostgreSQL's GetStableLatestTransactionId): a row's full
    // xid is that minus age(xmin), cheaper per row than xmin's text form; this first statement takes the snapshot
    const tBefore = now();
    const at = (
      await c.query<{ a: number; xmax: string }>(
        "SELECT age('3'::xid) AS a, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax",
      )
    ).rows[0]!;
    const tAfter = now();
    const stable = stableXid(at.a, BigInt(at.xmax));
    // One pass: each row's window by one binary search (width_bucket over windowMap's breaks, an index into its
    // windows), stored_at − sent_at in µs rounded to ms half away from zero as numeric round() does, in integers;
    // rows and newest sent_at per (window, ms), grouped on integers
    const buckets = (
      await c.query<{ w: number; ms: string | null; n: string; newest: number | null }>(
        `SELECT w, ms::text AS ms, n::text AS n, newest FROM (
         SELECT ($2::int[])[width_bucket($3::bigint - age(xmin), $1::bigint[]) + 1] AS w,
                CASE WHEN us >= 0 THEN (us + 500) / 1000 ELSE -((500 - us) / 1000) END AS ms,
                count(*) AS n, (extract(epoch FROM max(sent_at)) * 1000)::float8 AS newest
           FROM (SELECT xmin, sent_at, round(date_part('epoch', ${stored} - sent_at) * 1000000)::bigint AS us FROM ${this.table} WHERE ${this.ours}) r
          GROUP BY 1, 2) g`,
        [map.breaks.map(String), map.windows, String(stable)],
      )
    ).rows;
    return settledFrom(
      buckets.map((b) => ({
        w: b.w,
        ms: b.ms === null ? null : Number(b.ms),
        n: Number(b.n),
        newest: b.newest === null ? null : Number(b.newest),
      })),
      snaps.length,
      tBefore,
      tAfter,
    );
  }

  /** Generators (genBase + index), sent counts and merged rejected ranges as the query parameters $1..$5. */
  private ledgerParams(
    sent: number[],
    rejected: Array<Array<[number, number]>>,
  ): { params: number[][]; totalSent: number; totalRejected: number } {
    const gens: number[] = [];
    const ns: number[] = [];
    const rg: number[] = [];
    const ra: number[] = [];
    const rb: number[] = [];
    let totalSent = 0;
    let totalRejected = 0;
    sent.forEach((n, g) => {
      gens.push(this.genBase + g);
      ns.push(n);
      totalSent += n;
      for (const [a, b] of normalizeRanges(rejected[g] ?? [], n)) {
        rg.push(this.genBase + g);
        ra.push(a);
        rb.push(b);
        totalRejected += b - a + 1;
      }
    });
    return { params: [gens, ns, rg, ra, rb], totalSent, totalRejected };
  }

  /**
   * Gaps-and-islands over this run's rows ($1..$5 of ledgerParams): islands are distinct stored in-range seqs and
   * rejected ranges, plus sentinels -1 and n per generator; a gap is where an island starts more than one past the
   * furthest end seen before it. Answers lost and the first MAX_MISSING_RANGES ranges (gen as stored).
   */
  private gapsQuery(): string {
    return `WITH sent(gen, n) AS (SELECT * FROM unnest($1::int[], $2::bigint[])),
         rej(gen, a, b) AS (SELECT * FROM unnest($3::int[], $4::bigint[], $5::bigint[])),
         islands(gen, a, b) AS (
           SELECT e.gen, e.seq, e.seq FROM (SELECT DISTINCT gen, seq FROM ${this.table} WHERE ${this.ours}) e
             JOIN sent s ON s.gen = e.gen AND e.seq >= 0 AND e.seq < s.n
           UNION ALL SELECT gen, a, b FROM rej
           UNION ALL SELECT gen, -1, -1 FROM sent
           UNION ALL SELECT gen, n, n FROM sent),
         running AS (
           SELECT gen, a, b, max(b) OVER (PARTITION BY gen ORDER BY a, b ROWS UNBOUNDED PRECEDING) AS run_end FROM islands),
         ordered AS (
           SELECT gen, a, lag(run_end) OVER (PARTITION BY gen ORDER BY a, b) AS prev_end FROM running),
         gaps AS (SELECT gen, prev_end + 1 AS f, a - 1 AS t FROM ordered WHERE a > prev_end + 1)
         SELECT (SELECT coalesce(sum(t - f + 1), 0) FROM gaps) AS lost,
                (SELECT json_agg(json_build_array(gen, f, t) ORDER BY gen, f)
                   FROM (SELECT gen, f, t FROM gaps ORDER BY gen, f LIMIT ${MAX_MISSING_RANGES}) g) AS ranges`;
  }

  /** Run `f` in one read-only snapshot with the ledger's session settings (see ledger()). */
  private async snapshot<T>(f: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = await this.conn();
    // No parallel plan and a larger work_mem: with PostgreSQL 18.4 a parallel partial HashAggregate for DISTINCT
    // (gen, seq) that spills at the default 4 MB work_mem ran for minutes at 100 % CPU on an 800k-row table that was
    // never ANALYZEd (serial: ~1.5 s).
    await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    try {
      for (const setting of LEDGER_SESSION_SETTINGS) await c.query(`SET LOCAL ${setting}`);
      const out = await f(c);
      await c.query("COMMIT");
      return out;
    } catch (err) {
      await c.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

  private ranges(raw: Array<[number, number, number]> | null): Array<[number, number, number]> {
    return (raw ?? []).map(
      ([gen, f, t]) => [Number(gen) - this.genBase, Number(f), Number(t)] as [number, number, number],
    );
  }

  /**
   * One sequential pass over (gen, seq) of every row, in the open snapshot of `c`: `COPY (SELECT gen, seq …) TO STDOUT
   * (FORMAT binary)` read off the socket (./copy-out.ts) and decoded (./binary-copy.ts) into a LedgerScan (core/ledger-scan.ts). A stream
   * broken midway leaves the connection unusable: it is ended, and the next call reconnects.
   */
  private async scan(
    c: pg.Client,
    sent: number[],
    rejected: Array<Array<[number, number]>>,
    locator: SampleLocator | null = null,
    settler: PassSettler | null = null,
  ): Promise<LedgerScan> {
    const scan = new LedgerScan(sent, rejected, this.genBase, this.unexpectedLimit);
    const lo = this.genBase;
    const hi = this.genBase + GEN_STRIDE;
    // columns: gen, seq, then ctid (the locator's), then xmin, sent_at and stored_at (the settler's, of this run's rows)
    const at = locator ? 3 : 2;
    const reader = new BinaryCopyReader((f) => {
      const gen = f[0]!;
      scan.add(gen, f[1]!);
      locator?.see(gen, f[1]!, f[2]!);
      if (settler && !settler.abandoned && typeof gen === "number" && gen >= lo && gen < hi) {
        // a row the settler cannot take costs the settling, never the pass: afterLoad's settle query reads the marks
        try {
          settler.add((f[at] as number) >>> 0, f[at + 1] as Stamp | null, f[at + 2] as Stamp | null);
        } catch {
          settler.abandoned = true;
        }
      }
    });
    const columns = `gen, seq${locator ? ", ctid" : ""}${settler ? `, xmin, sent_at, ${quoteIdent(STORED_AT)}` : ""}`;
    const copy = new CopyOutQuery(
      `COPY (SELECT ${columns} FROM ${this.table}) TO STDOUT (FORMAT binary)`,
      (b) => reader.push(b),
    );
    try {
      c.query(copy as never); // a submittable: node-postgres returns it, and `done` settles it
      await copy.done;
      reader.end();
    } catch (err) {
      if (this.client === c) this.client = null;
      await c.end().catch(() => undefined);
      throw err;
    }
    return scan;
  }

  /**
   * The completion check: lost and the first missing ranges from one scan of the table (scan()) in its own read-only
   * snapshot; sqlMissing() is the same figure from the gaps-and-islands query alone. The pass is kept for the ledger
   * (ledger(), KeptPass): its scan, its snapshot, and the content check's sample (expectSample) located by the same
   * pass and fetched close behind it, as the ledger's own pass would.
   */
  async missing(
    sent: number[],
    rejected: Array<Array<[number, number]>>,
    marks?: string[],
  ): Promise<Completion> {
    if (sent.length > GEN_STRIDE) return this.sqlMissing(sent, rejected);
    this.kept = null; // one pass kept at a time (its bits are the ledger's)
    this.keptSettle = null;
    const tBefore = now();
    const wanted = this.wanted;
    const locator = wanted && SampleLocator.fits(wanted) ? new SampleLocator(wanted) : null;
    // a failed fetch leaves the sample to the ledger's own pass (a failed pass: finish(false) below)
    const rows = locator && wanted ? this.reader.fetchLocated(locator, wanted).catch(() => null) : null;
    let scanned = false;
    try {
      const r = await this.snapshot(async (c) => {
        // this first statement takes the snapshot; with marks, the settling's stable xid too (settleIn)
        const t0 = now();
        const head = (
          await c.query<{ l: string; snap: string; a: number }>(
            "SELECT pg_current_wal_insert_lsn()::text AS l, pg_current_snapshot()::text AS snap, age('3'::xid) AS a",
          )
        ).rows[0]!;
        const t1 = now();
        // the samples settled from this pass's own rows (afterLoad takes them; without, its settle query reads them)
        const settler = marks?.length
          ? passSettler(marks, stableXid(head.a, parseSnapshot(head.snap).xmax))
          : null;
        const scan = await this.scan(c, sent, rejected, locator, settler);
        scanned = true;
        if (settler && !settler.abandoned && marks)
          this.keptSettle = {
            key: marks.join(" "),
            settled: settledFrom(settler.buckets(), marks.length, t0, t1),
          };
        const wal = await c.query<{ b: string }>(
          "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::bigint::text AS b",
          [head.l],
        );
        return { scan, snap: head.snap, walBytes: Number(wal.rows[0]!.b) };
      });
      const done = r.scan.completion();
      this.kept = {
        inputs: passInputs(sent, rejected),
        scan: r.scan,
        snap: r.snap,
        sample: locator && wanted ? { key: wantedKey(wanted), locator, rows } : null,
      };
      return {
        tBefore,
        tAfter: now(),
        missing: done.missing,
        missingRanges: done.missingRanges,
        stored: done.stored,
        walBytes: r.walBytes,
      };
    } finally {
      locator?.finish(scanned);
    }
  }

  /** The reference completion query: the gaps query alone (see the file comment). */
  async sqlMissing(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Completion> {
    const { params } = this.ledgerParams(sent, rejected);
    const tBefore = now();
    const g = await this.snapshot(
      async (c) =>
        (
          await c.query<{ lost: string; ranges: Array<[number, number, number]> | null }>(
            this.gapsQuery(),
            params,
          )
        ).rows[0]!,
    );
    return { tBefore, tAfter: now(), missing: Number(g.lost), missingRanges: this.ranges(g.ranges) };
  }

  /**
   * The ledger from one scan of the table (scan()) in one read-only snapshot. The scan keeps at most
   * UNEXPECTED_DISTINCT_LIMIT distinct unexpected pairs (core/ledger-scan.ts): past that, `distinct` alone is the
   * reference SQL DISTINCT count (distinctQuery()), in the same snapshot. More generators than a run's id space
   * (GEN_STRIDE) cannot be scanned: the reference SQL ledger (sqlLedger()) answers.
   */
  async ledger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Ledger> {
    // a sample told beforehand is located by this pass (or, without one, read by its own: ./rows.ts)
    const locator = this.locator?.done === false ? this.locator : null;
    let located = false;
    const kept = this.kept;
    this.kept = null;
    try {
      if (sent.length > GEN_STRIDE) {
        this.ledgerPass = {
          tookCompletionPass: false,
          detail: "the reference SQL ledger (more generators than a run's id space)",
        };
        return await this.sqlLedger(sent, rejected);
      }
      const taken = await this.keptProof(kept, sent, rejected, locator);
      if ("proof" in taken) {
        if (locator) locator.adopt(kept!.sample!.locator, kept!.sample!.rows);
        located = true;
        this.ledgerPass = {
          tookCompletionPass: true,
          detail: `the completion check's last pass (${taken.proof})`,
        };
        return kept!.scan.result();
      }
      this.ledgerPass = { tookCompletionPass: false, detail: `its own pass (${taken.why})` };
      return await this.snapshot(async (c) => {
        const scan = await this.scan(c, sent, rejected, locator);
        located = true;
        if (scan.unexpectedDistinct !== null) return scan.result();
        return scan.result(
          Number((await c.query<{ n: string }>(`SELECT ${this.distinctQuery()} AS n`)).rows[0]!.n),
        );
      });
    } finally {
      locator?.finish(located);
    }
  }

  /**
   * Whether the ledger can take the completion check's last pass `kept` (`proof`: why it may) or not (`why`). It can
   * when the pass was over the same sent and rejected seqs, counted every distinct pair itself, located the same
   * sample, and no transaction committed at the sink since its snapshot: then every row visible now was visible to
   * the pass and none has gone. Read from the sink's transaction ids alone (PostgreSQL §9.28.5 "Transaction ID and
   * Snapshot Information Functions"): a transaction that ended since has an xid in the old snapshot's xip or at or
   * above its xmax, below the new one's xmax and not in its xip (endedSince); pg_xact_status says which committed.
   * Any commit counts, whatever it wrote: the sink does not say which tables a transaction wrote, and neither an
   * ANALYZE's row versions in pg_statistic nor the table's statistics counters (flushed only once a backend is idle
   * outside a transaction) can rule out a write beside it.
   */
  private async keptProof(
    kept: KeptPass | null,
    sent: number[],
    rejected: Array<Array<[number, number]>>,
    locator: SampleLocator | null,
  ): Promise<{ proof: string } | { why: string }> {
    if (!kept) return { why: "no completion check's pass to take" };
    if (kept.inputs !== passInputs(sent, rejected))
      return { why: "the completion check counted other sent seqs" };
    if (kept.scan.unexpectedDistinct === null)
      return {
        why: `more than ${this.unexpectedLimit} distinct unexpected pairs: distinct is counted at the sink`,
      };
    if (locator && (!kept.sample || kept.sample.key !== wantedKey(this.wanted ?? [])))
      return { why: "the completion check did not locate the content check's sample" };
    // the rows fetched behind the pass are read before the snapshot below, so that what it proves covers them too
    await kept.sample?.rows;
    const c = await this.conn();
    const then = parseSnapshot(kept.snap);
    const nowSnap = parseSnapshot(
      (await c.query<{ s: string }>("SELECT pg_current_snapshot()::text AS s")).rows[0]!.s,
    );
    const ended = endedSince(then, nowSnap);
    if (ended === null) return { why: "the sink's transaction ids went back since the completion check" };
    if (ended.length > MAX_ENDED_CHECKED)
      return {
        why: `${ended.length.toLocaleString("en")} transactions ended at the sink since the completion check`,
      };
    const committed =
      ended.length === 0
        ? 0
        : Number(
            (
              await c.query<{ n: string }>(
                "SELECT count(*) AS n FROM unnest($1::text[]) x WHERE pg_xact_status(x::xid8) = 'committed'",
                [ended.map(String)],
              )
            ).rows[0]!.n,
          );
    if (committed === 0) return { proof: "no transaction committed at the sink since its snapshot" };
    return {
      why: `${committed} transaction${committed === 1 ? "" : "s"} committed at the sink since the completion check's snapshot`,
    };
  }

  /** count(*) of distinct (gen, seq) over this run's rows and those whose gen is NULL, as a scalar subquery. */
  private distinctQuery(): string {
    return `(SELECT count(*) FROM (SELECT DISTINCT gen, seq FROM ${this.table} WHERE ${this.ours} OR gen IS NULL) d)`;
  }

  /** The reference ledger: the counts query and the gaps query, in SQL at the sink, in one snapshot (see the file comment). */
  async sqlLedger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Ledger> {
    const { params, totalSent, totalRejected } = this.ledgerParams(sent, rejected);
    const [gens, ns, rg, ra, rb] = params;
    // One snapshot for both queries.
    const { row, g } = await this.snapshot(async (c) => {
      const counts = await c.query<{
        stored: string;
        distinct: string;
        unexpected: string;
        foreign: string;
        rejected_stored: string;
      }>(
        `WITH sent(gen, n) AS (SELECT * FROM unnest($1::int[], $2::bigint[])),
         rej(gen, a, b) AS (SELECT * FROM unnest($3::int[], $4::bigint[], $5::bigint[]))
         SELECT count(*) FILTER (WHERE ${this.ours.replace(/gen/g, "e.gen")} OR e.gen IS NULL) AS stored,
                count(*) FILTER (WHERE NOT (${this.ours.replace(/gen/g, "e.gen")})) AS foreign,
                count(*) FILTER (WHERE (${this.ours.replace(/gen/g, "e.gen")} OR e.gen IS NULL) AND (s.n IS NULL OR e.seq IS NULL OR e.seq < 0 OR e.seq >= s.n)) AS unexpected,
                ${this.distinctQuery()} AS distinct,
                (SELECT count(*) FROM (SELECT DISTINCT t.gen, t.seq FROM ${this.table} t JOIN rej r ON r.gen = t.gen AND t.seq BETWEEN r.a AND r.b) x) AS rejected_stored
           FROM ${this.table} e LEFT JOIN sent s ON s.gen = e.gen`,
        [gens, ns, rg, ra, rb],
      );
      const gaps = await c.query<{ lost: string; ranges: Array<[number, number, number]> | null }>(
        this.gapsQuery(),
        params,
      );
      return { row: counts.rows[0]!, g: gaps.rows[0]! };
    });
    const stored = Number(row.stored);
    const distinct = Number(row.distinct);
    return {
      sent: totalSent,
      accepted: totalSent - totalRejected,
      stored,
      distinct,
      lost: Number(g.lost),
      duplicated: stored - distinct,
      overwritten: 0,
      rejected: totalRejected,
      unexpected: Number(row.unexpected),
      missingRanges: this.ranges(g.ranges),
      foreign: Number(row.foreign),
      rejectedStored: Number(row.rejected_stored),
      deduplicated: 0,
    };
  }

  /**
   * Verifier.retarget: the next query connects to `at` (the session settings and the backend pid are set again on
   * that connection); the open one is ended.
   */
  retarget(at: { host: string; port: number }): void {
    if (at.host === this.ctx.host && at.port === this.ctx.port) return;
    this.ctx = { ...this.ctx, host: at.host, port: at.port };
    const c = this.client;
    this.client = null;
    this.backendPid = null;
    c?.end().catch(() => undefined);
    this.endSides();
  }

  /** End the side connections (sideConn()), open or opening. */
  private endSides(): Promise<void> {
    const all = [...this.sides.values()];
    this.sides.clear();
    return Promise.all(
      all.map((r) =>
        r
          .then(
            (c) => c.end(),
            () => undefined,
          )
          .catch(() => undefined),
      ),
    ).then(() => undefined);
  }

  async close(): Promise<void> {
    const c = this.client ?? (this.connecting ? await this.connecting.catch(() => null) : null);
    this.client = null;
    await c?.end().catch(() => undefined);
    await this.endSides();
  }
}

/** The backend's time on a CPU, ns (/proc/<pid>/schedstat field 1), when it is a postgres process this machine sees; else null. */
function backendCpuNs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "postgres") return null;
    const ns = Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
    return Number.isFinite(ns) ? ns : null;
  } catch {
    return null;
  }
}

/**
 * The completion check's last pass (PostgresVerifier.missing): `inputs` the sent and rejected seqs it counted
 * (passInputs), its scan and snapshot (pg_current_snapshot text), and the content check's sample it located, with
 * the rows fetched behind it (null when none was told).
 */
interface KeptPass {
  inputs: string;
  scan: LedgerScan;
  snap: string;
  sample: { key: string; locator: SampleLocator; rows: Promise<StoredRow[] | null> | null } | null;
}

/** The sent counts and rejected ranges as one comparable string. */
const passInputs = (sent: number[], rejected: Array<Array<[number, number]>>): string =>
  JSON.stringify([sent, rejected]);

/** A sample's keys as one comparable string. */
const wantedKey = (wanted: Wanted): string => wanted.map((w) => `${w.gen}:${w.seqs.join(",")}`).join(";");

/** Most ended transactions whose status the ledger looks up before it reads the table itself instead (keptProof). */
export const MAX_ENDED_CHECKED = 100_000;

/**
 * The xids of the transactions that ended (committed or aborted) between snapshot `then` and the later `now`: those
 * in `then`'s xip and those from `then`'s xmax, below `now`'s xmax and not in its xip (a snapshot's xmax is one past
 * the latest ended xid; PostgreSQL's pg_snapshot, §9.28.5). More than MAX_ENDED_CHECKED: the list is cut there (its
 * length then says "too many"). Null when `now`'s xmax is below `then`'s (another server).
 */
export function endedSince(then: Snapshot, now: Snapshot): bigint[] | null {
  if (now.xmax < then.xmax) return null;
  const out: bigint[] = [];
  for (const x of then.xip) if (!now.xip.has(x)) out.push(x);
  for (let x = then.xmax; x < now.xmax && out.length <= MAX_ENDED_CHECKED; x++)
    if (!now.xip.has(x)) out.push(x);
  return out;
}

/** A PassSettler of `marks`, or null when one cannot be made (a mark that does not parse, an xid beyond 2^53). */
function passSettler(marks: string[], stable: bigint): PassSettler | null {
  try {
    return new PassSettler(marks, stable);
  } catch {
    return null;
  }
}

/** Factory "postgres": ctx.params.table (default "ib_events"), user and database (default "postgres"); ctx.genBase (default 0). */
export const postgresVerifier: VerifierFactory = {
  name: "postgres",
  create: (ctx) => new PostgresVerifier(ctx),
};
