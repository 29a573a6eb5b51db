/**
 * Verifier "griddb": the sink-side half for GridDB, over the GridDB Web API (griddb/webapi, "GridDB Web API
 * Reference") with undici (core/http.ts `HttpJsonApi`), Basic authentication, Content-Type
 * `application/json; charset=UTF-8`, under `/griddb/v2/<cluster>/dbs/<database>`.
 *
 * Rows are positional (the griddb-webapi generator and fluent-plugin-griddb send arrays matched to columns by
 * position), so the container must have exactly the scenario's fields in order, then gen, seq, sent_at. `prepare`:
 * - reads `GET …/containers/<container>/info`; if the container exists, its columns must match in count and in
 *   type, position by position, or the run stops before it starts with an error listing both column lists (a
 *   mismatch would otherwise surface only as "Row data is invalid" or conversion errors on every batch, write-up 000);
 *   names may differ (they do not matter to positional rows). A matching container is dropped and created anew
 *   (a previous cell's rows would corrupt the ledger), keeping its container type;
 * - else creates it (`POST …/containers`): types string → STRING, timestamp → TIMESTAMP, int → LONG,
 *   float → DOUBLE, bool → BOOL, gen INTEGER, seq LONG, sent_at TIMESTAMP with a TREE index (the column's
 *   `"index": ["TREE"]`, Web API "Creating a container"; for the live samples below); container type
 *   `params.containerType`, COLLECTION (default: no row key, duplicates stay visible) or TIME_SERIES (row key = the
 *   first column, which must be a timestamp field; rows sharing a timestamp then replace each other, as in write-up
 *   000).
 *
 * - sample, live (the load's samples): windowed, so that what it reads at the sink does not grow with the run. One SQL
 *   statement through `POST …/sql/select` ("SQL SELECT execution"; answer `[{"columns":[..],"results":[[..]]}]`):
 *   `SELECT COUNT(*), MAX(sent_at), SUM(CASE WHEN sent_at <= TIMESTAMP('<cut>') THEN 1 ELSE 0 END) … WHERE
 *   sent_at > TIMESTAMP('<frontier>') AND gen >= genBase AND gen < genBase + GEN_STRIDE` (this run's rows only,
 *   core/ledger.ts "Run identity"; another run's are the ledger's `foreign`). stored = the rows frozen before + the
 *   count; then the rows of (frontier, cut] are frozen (the CASE sum) and the frontier moves to the cut = now − H.
 *   GridDB SQL scans through a TREE index for a comparison of an indexed column with a constant expression, and
 *   with AND uses the first indexed column's (GridDB SQL Tuning Guide, "Index selection rules"); gen has no index,
 *   so the scan reads the rows sent after the frontier only (H × the rate, constant over the run, where the
 *   unwindowed count read the whole container). sent_at is the only column that orders rows by time (seq is per
 *   generator, gen has 256 values). The index's price: every inserted row also inserts its sent_at into the tree,
 *   mostly at its right edge as sent_at grows (not measured here: no GridDB on this machine). The first live sample
 *   has no frontier (`sent_at IS NOT NULL`; before the load the container is empty).
 *   The horizon H = 2 × the newest row's age (now − MAX(sent_at) seen; before any row, now − prepare), at least
 *   `LIVE_HORIZON_MS` (60 s), at most `LIVE_HORIZON_MAX_MS` (1 h; core/verifier.ts liveHorizonMs): the age grows while delivery stalls, so the
 *   frontier waits for late rows; the margin covers the generator's clock against the harness's (sent_at is the
 *   generator's). A row that arrives with a sent_at at or before the frontier (delivered more than H after it was
 *   sent, ahead of newer rows), or without a sent_at, is missing from the live figure, which is low by it, never
 *   high; the `full` samples and the ledger count it. MAX(sent_at) of the rows after the frontier is the newest: a
 *   row newer than the newest seen is younger than that row's age, so after the frontier.
 * - sample, `full` (the drain): `SELECT COUNT(*), MAX(sent_at) … WHERE gen >= genBase AND gen < genBase +
 *   GEN_STRIDE` over the whole container, exact. `params.sqlPath: "sql"` selects the older `POST …/sql` endpoint,
 *   whose statements carry `"type": "sql-select"`.
 * - ledger (definitions in core/ledger.ts): `COUNT(*)` gives stored; the stored (gen, seq) pairs with their row counts
 *   come from `SELECT gen, seq, COUNT(*) … GROUP BY gen, seq ORDER BY gen, seq`, paged by key (gen, seq) in pages of
 *   `GRIDDB_PAGE` rows (the Web API's default maxLimit); rows with a NULL gen or seq are unexpected.
 *   overwritten: a TIME_SERIES upsert leaves no trace in the container, so the collisions are computed from what was
 *   sent (core/ledger.ts SinkCollisions): the row key of seq s of generator g is the first field's timestamp in epoch
 *   ms (GridDB TIMESTAMP keeps milliseconds), recomputed from the seeded event source (ctx.seed, genBase + g); an
 *   absent seq whose key is held by another stored seq is overwritten, not lost. A COLLECTION has no key:
 *   overwritten = 0. Without ctx.seed the keys cannot be recomputed and a TIME_SERIES ledger says overwritten 0.
 *   deduplicated = 0 (GridDB drops nothing).
 */
import { ConfigurationError, IngestbenchError } from "../../../core/errors.ts";
import {
  GRIDDB_CONTENT_TYPE,
  gridDbAuthorization,
  gridDbTarget,
} from "../../../core/events/griddb-webapi.ts";
import type { EventField, FieldType } from "../../../core/events/types.ts";
import { HttpJsonApi } from "../../../core/http.ts";
import { GEN_STRIDE, SeqLedger, type SinkCollisions } from "../../../core/ledger.ts";
import { createEventSource } from "../../../core/events/source.ts";
import {
  liveHorizonMs,
  type CountSample,
  type Ledger,
  type Verifier,
  type VerifierContext,
  type VerifierFactory,
} from "../../../core/verifier.ts";
import type { StoredRowReader } from "../../../core/fidelity.ts";
import { gridDbRowReader } from "./rows.ts";

/** GridDB column type of each event field type. */
export const GRIDDB_TYPES: Readonly<Record<FieldType, string>> = {
  string: "STRING",
  timestamp: "TIMESTAMP",
  int: "LONG",
  float: "DOUBLE",
  bool: "BOOL",
};

/** Rows per ledger page (the Web API's default maxLimit for SQL results). */
export const GRIDDB_PAGE = 10_000;

export type GridDbContainerType = "COLLECTION" | "TIME_SERIES";

/** A column as the Web API describes it. */
export interface GridDbColumn {
  name: string;
  type: string;
  /** the column's indexes, e.g. ["TREE"] (Web API container creation and information; absent: none) */
  index?: string[];
}

/**
 * The container's columns for `fields`: the fields in order, then gen, seq, sent_at, the last with a TREE index (the
 * live samples' range scan, see the file comment).
 */
export function gridDbColumns(fields: readonly EventField[]): GridDbColumn[] {
  return [
    ...fields.map((f) => ({ name: f.name, type: GRIDDB_TYPES[f.type] })),
    { name: "gen", type: "INTEGER" },
    { name: "seq", type: "LONG" },
    { name: "sent_at", type: "TIMESTAMP", index: ["TREE"] },
  ];
}

/**
 * Differences between an existing container's columns and the expected ones, by position: count, then type
 * (names are not compared: rows are positional). Empty when they match.
 */
export function columnMismatches(
  actual: readonly GridDbColumn[],
  expected: readonly GridDbColumn[],
): string[] {
  const out: string[] = [];
  if (actual.length !== expected.length)
    out.push(`it has ${actual.length} columns, the events have ${expected.length} values per row`);
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    if (a.type.toUpperCase() !== e.type)
      out.push(`column ${i + 1} "${a.name}" is ${a.type}, value ${i + 1} ("${e.name}") needs ${e.type}`);
  }
  return out;
}

/** A GridDB SQL TIMESTAMP constant for epoch ms (GridDB SQL Reference, TIMESTAMP function; TIMESTAMP keeps ms). */
const timestampSql = (ms: number): string => `TIMESTAMP('${new Date(ms).toISOString()}')`;

/** A GridDB identifier in SQL (double quotes doubled). */
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;

const now = (): number => performance.timeOrigin + performance.now();

/** One statement's answer of the SQL SELECT endpoint. */
interface SqlResult {
  columns?: GridDbColumn[];
  results?: unknown[][];
}

class GridDbVerifier implements Verifier {
  /** no delivery latency (core/verifier.ts Verifier.deliveryUnavailable) */
  readonly deliveryUnavailable =
    "GridDB's Web API stores the row as the writer sends it (no server-side column default) and returns no receive time";
  private readonly api: HttpJsonApi;
  private readonly base: string;
  private readonly container: string;
  private newest: number | null = null;
  /** when prepare() ran (or the verifier was made), epoch ms: the age of "no row yet" for the horizon */
  private openedAtMs = Date.now();
  /** live sample state (see the file comment): rows frozen, all of them sent at or before `frontierMs` (null: none yet) */
  private frozen = 0;
  private frontierMs: number | null = null;
  /** stored rows read back for the content check (./rows.ts) */
  readonly rows: StoredRowReader;
  /** the container type prepare() made (TIME_SERIES rows replace each other on their row key) */
  private containerType: GridDbContainerType | null = null;

  constructor(private readonly ctx: VerifierContext) {
    const t = gridDbTarget(ctx.params);
    const e = encodeURIComponent;
    this.base = `/griddb/v2/${e(t.cluster)}/dbs/${e(t.database)}`;
    this.container = t.container;
    this.api = new HttpJsonApi("GridDB Web API", ctx.host, ctx.port, {
      "Content-Type": GRIDDB_CONTENT_TYPE,
      Authorization: gridDbAuthorization(ctx.params),
    });
    this.rows = gridDbRowReader((stmt) => this.select(stmt), this.container, ctx.fields);
  }

  private containerPath(suffix = ""): string {
    return `${this.base}/containers/${encodeURIComponent(this.container)}${suffix}`;
  }

  /**
   * Check or create the container (see the file comment).
   * @throws ConfigurationError E_GRIDDB_SCHEMA when an existing container's columns do not match the events, or
   *   E_GRIDDB_CONTAINER_TYPE for a bad params.containerType or a TIME_SERIES without a leading timestamp field
   */
  async prepare(): Promise<void> {
    const expected = gridDbColumns(this.ctx.fields);
    const info = await this.api.call("GET", this.containerPath("/info"), undefined, [404]);
    let type = this.ctx.params.containerType as GridDbContainerType | undefined;
    if (info.status !== 404) {
      const doc = info.json as { container_type?: unknown; columns?: unknown } | null;
      const cols = Array.isArray(doc?.columns)
        ? (doc.columns as Array<{ name?: unknown; type?: unknown }>).map((c) => ({
            name: String(c.name),
            type: String(c.type),
          }))
        : null;
      if (cols === null)
        throw new IngestbenchError(
          "E_GRIDDB_ANSWER",
          `GridDB container info of "${this.container}" has no columns: ${info.body.slice(0, 200)}`,
        );
      const diff = columnMismatches(cols, expected);
      if (diff.length > 0) {
        const show = (cs: readonly GridDbColumn[]): string => cs.map((c) => `${c.name} ${c.type}`).join(", ");
        throw new ConfigurationError(
          "E_GRIDDB_SCHEMA",
          `GridDB container "${this.container}" does not match the scenario's event fields (rows are positional): ${diff.join("; ")}. ` +
            `Container: (${show(cols)}); events: (${show(expected)}). Drop the container or change the scenario's event fields.`,
          { field: "event" },
        );
      }
      type ??= doc?.container_type === "TIME_SERIES" ? "TIME_SERIES" : "COLLECTION";
      await this.api.call("DELETE", `${this.base}/containers`, [this.container]);
    }
    type ??= "COLLECTION";
    if (type !== "COLLECTION" && type !== "TIME_SERIES") {
      throw new ConfigurationError(
        "E_GRIDDB_CONTAINER_TYPE",
        `sink param containerType must be COLLECTION or TIME_SERIES, got "${String(type)}"`,
        { field: "sink.griddb.containerType" },
      );
    }
    if (type === "TIME_SERIES" && this.ctx.fields[0]?.type !== "timestamp") {
      throw new ConfigurationError(
        "E_GRIDDB_CONTAINER_TYPE",
        "a TIME_SERIES container's row key is its first column, which must be a timestamp: make the first event field a timestamp",
        { field: "event" },
      );
    }
    await this.api.call("POST", `${this.base}/containers`, {
      container_name: this.container,
      container_type: type,
      rowkey: type === "TIME_SERIES",
      columns: expected,
    });
    this.containerType = type;
    this.newest = null;
    this.openedAtMs = Date.now();
    this.frozen = 0;
    this.frontierMs = null;
  }

  /** Run one SELECT; resolves with its rows. */
  private async select(stmt: string): Promise<unknown[][]> {
    const old = this.ctx.params.sqlPath === "sql";
    const r = await this.api.call("POST", `${this.base}/${old ? "sql" : "sql/select"}`, [
      old ? { type: "sql-select", stmt } : { stmt },
    ]);
    const res = Array.isArray(r.json) ? (r.json[0] as SqlResult | undefined) : undefined;
    if (!res || !Array.isArray(res.results))
      throw new IngestbenchError(
        "E_GRIDDB_ANSWER",
        `GridDB SQL answered without results to \`${stmt.slice(0, 120)}\`: ${r.body.slice(0, 200)}`,
      );
    return res.results;
  }

  /**
   * A timed count of this run's rows: live, the rows sent after the frontier plus those frozen before it; `full` (the
   * drain), every row of the container (see the file comment).
   */
  async sample(options: { full?: boolean; tag?: string } = {}): Promise<CountSample> {
    const tBefore = now();
    const base = this.ctx.genBase ?? 0;
    const ours = `gen >= ${base} AND gen < ${base + GEN_STRIDE}`;
    const c = ident(this.container);
    let stored: number;
    let newestCell: unknown;
    if (options.full) {
      const [row] = await this.select(`SELECT COUNT(*), MAX(sent_at) FROM ${c} WHERE ${ours}`);
      stored = Number(row?.[0] ?? 0);
      newestCell = row?.[1];
    } else {
      const t = Date.now();
      const cut = Math.floor(t - liveHorizonMs(t - (this.newest ?? this.openedAtMs)));
      const after =
        this.frontierMs === null ? "sent_at IS NOT NULL" : `sent_at > ${timestampSql(this.frontierMs)}`;
      const freezeTo = Math.max(cut, this.frontierMs ?? cut);
      const [row] = await this.select(
        `SELECT COUNT(*), MAX(sent_at), SUM(CASE WHEN sent_at <= ${timestampSql(freezeTo)} THEN 1 ELSE 0 END) FROM ${c} WHERE ${after} AND ${ours}`,
      );
      const live = Number(row?.[0] ?? 0);
      const freezing = Number(row?.[2] ?? 0);
      if (!Number.isFinite(live) || !Number.isFinite(freezing))
        throw new IngestbenchError("E_GRIDDB_ANSWER", `GridDB's live count answered ${JSON.stringify(row)}`);
      stored = this.frozen + live;
      this.frozen += freezing;
      this.frontierMs = freezeTo;
      newestCell = row?.[1];
    }
    const tAfter = now();
    const newest = typeof newestCell === "string" ? Date.parse(newestCell) : Number.NaN;
    if (Number.isFinite(newest)) this.newest = Math.max(this.newest ?? 0, newest);
    return { tBefore, tAfter, stored, newestSentAtMs: this.newest };
  }

  async ledger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Ledger> {
    const c = ident(this.container);
    const [row] = await this.select(`SELECT COUNT(*) FROM ${c}`);
    const stored = Number(row?.[0] ?? 0);
    const acc = new SeqLedger(sent, rejected, this.ctx.genBase ?? 0);
    let keyed = 0;
    let after: [number, number] | null = null;
    for (;;) {
      const where = after
        ? `WHERE gen > ${after[0]} OR (gen = ${after[0]} AND seq > ${after[1]})`
        : "WHERE gen IS NOT NULL AND seq IS NOT NULL";
      const rows = await this.select(
        `SELECT gen, seq, COUNT(*) FROM ${c} ${where} GROUP BY gen, seq ORDER BY gen, seq LIMIT ${GRIDDB_PAGE}`,
      );
      for (const r of rows) {
        const n = Number(r[2]);
        acc.add(Number(r[0]), Number(r[1]), n);
        keyed += n;
      }
      if (rows.length < GRIDDB_PAGE) break;
      const last = rows.at(-1)!;
      after = [Number(last[0]), Number(last[1])];
    }
    if (keyed > stored)
      throw new IngestbenchError(
        "E_GRIDDB_ANSWER",
        `GridDB grouped ${keyed} rows but counted ${stored}: the container changed during the ledger`,
      );
    acc.addUnkeyed(stored - keyed);
    return acc.result(0, 0, this.rowKeys(sent.length));
  }

  /** TIME_SERIES row keys of what was sent (see the file comment), or undefined when there are none to compute. */
  private rowKeys(generators: number): SinkCollisions | undefined {
    const seed = this.ctx.seed;
    if (this.containerType !== "TIME_SERIES" || seed === undefined) return undefined;
    const sources = Array.from({ length: generators }, (_, g) =>
      createEventSource({ fields: this.ctx.fields, seed, genId: g, genBase: this.ctx.genBase }),
    );
    return { as: "overwritten", keyOf: (g, seq) => (sources[g]!.values(seq)[0] as Date).getTime() };
  }

  /** Verifier.retarget: the API's later calls go to `at`. */
  retarget(at: { host: string; port: number }): void {
    this.api.retarget(at.host, at.port);
  }

  async close(): Promise<void> {
    await this.api.close();
  }
}

/** Factory "griddb": ctx.params cluster, database, container, user (defaults as the griddb-webapi generator's); the password from INGESTBENCH_GRIDDB_PASSWORD (core/secrets.ts), containerType, sqlPath. */
export const griddbVerifier: VerifierFactory = {
  name: "griddb",
  create: (ctx) => new GridDbVerifier(ctx),
};
