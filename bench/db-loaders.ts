/**
 * The database-loader rows of `npm run bench:generators` (bench/generators.ts; `--only pg-copy,clickhouse-http`): a
 * fixed workload of `requests` batches of `batch` rows (default 250 × 8000 = 2,000,000 rows, one connection, rate
 * max) of scenarios/quickstart.yaml's row shape (ts timestamp, msg string size 180; seed 42, gen 0) loaded into a real
 * server started for the bench, once by our generator and once by the database's own client with the same rows in
 * the same batches, in the same run; the goal is ours ≥ 0.9× the reference's rows/s.
 *
 * - pg-copy (harness/generators/pg-copy.ts: `COPY … FROM STDIN` text format, one COPY per batch) vs `psql \copy`:
 *   the batches encoded by core/events/copy-text.ts encodeCopyBatch (the generator's own bytes; sent_at is stamped
 *   when the file is written, where ours stamps its send time: same length), one file per batch in a temp dir, and
 *   one psql process running `\copy <table> (<cols>) FROM '<file>'` once per file in one session (one connection,
 *   one COPY and transaction per batch, as ours). Server: the embedded PostgreSQL of plugins/sinks/postgres (as in
 *   scenarios/quickstart.yaml; fsync on) with autovacuum off and max_wal_size 4GB, so that neither side meets an
 *   autovacuum worker or a WAL-size checkpoint the other does not; the WAL segments a side writes created before
 *   anything is timed (warmWal: else the first side, ours in round 0, created and zero-filled ~34 segments the later
 *   ones reuse: 89k vs 112k–169k rows/s for psql's first round on a fresh server vs its next two, 105k vs 184k–218k for
 *   ours, AMD EPYC 2 cores, load average 4.6–6); TRUNCATE and CHECKPOINT before each side. Short of the goal, the
 *   bench prints why beside the ratio (shortfallReason: server CPU per row, the rounds' spread, client CPU).
 * - clickhouse-http (harness/generators/clickhouse-http.ts: `POST /?query=INSERT … FORMAT JSONEachRow`, one request
 *   per batch) vs `clickhouse-client` over the native protocol: the batches encoded by core/events/clickhouse-http.ts
 *   (JSONEachRow, timestamps as epoch ms), written as 250 `INSERT INTO <table> (<cols>) FORMAT JSONEachRow <rows>`
 *   statements into one file read by one `clickhouse-client --multiquery` session on its stdin (one connection, one
 *   INSERT per batch). In multiquery mode ClickHouse 18.16's client takes an INSERT's inline data up to the end of its
 *   line, so each batch's rows are on one line, separated by a space where our body has a LF (JSONEachRow reads
 *   either; the same rows and the same byte count). The client parses JSONEachRow itself and sends Native blocks:
 *   the parsing is in the client's CPU, where over HTTP it is the server's. Server: Debian's clickhouse-server 18.16
 *   (plugins/sinks/clickhouse); the table dropped and created anew before each side.
 *
 * Both sides are timed the same way: the wall time of the whole workload from the moment the tool may start to its
 * end (connect, every batch, disconnect); rows/s = rows / that. Ours runs in a child process (harness/generators/
 * process.ts, `clockSync` held until `go()`, so node's start-up is outside: from go() to its final report); the
 * reference from its spawn to its exit (a few ms of exec inside). The reference's files are written and fsynced
 * before anything is timed. After each side the table must hold exactly `requests × batch` rows (and ours must
 * report them all accepted), else the bench fails. With `rounds` > 1 (`--db-rounds`) both sides run that many times
 * on the same server, the order alternating (ours first in even rounds), and events/s is each side's median.
 *
 * CPU: the client's (ours: the generator child's /proc utime + stime between go() and its final report; the
 * reference's: bash's `times` for its child, the tool) and the server's over the same window (PostgreSQL: the
 * postmaster's utime + stime + cutime + cstime and those of its live children, read once the side's backend has
 * exited and been reaped; ClickHouse: the server process's utime + stime, every thread, background merges in the
 * window included). The table's events/cpu-s
 * is rows per CPU-second of client + server (the work the load costs the machine, steadier than rows/s on a busy
 * machine); the note has the client's own. The client is pinned to the load core, the server to the others, as the
 * blackhole rows are.
 *
 * Every server, process and file is released on success, error and Ctrl-C (the caller's cleanup calls the stops
 * registered here). Ports (127.0.0.1): PostgreSQL 15733, ClickHouse HTTP 18733 and native 19733 (none used by
 * bench/harness.ts or the tests).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import pg from "pg";
import { copyColumns, encodeCopyBatch, quoteIdent, quoteTable } from "../core/events/copy-text.ts";
import {
  ClickHouseJsonEachRowEncoder,
  clickHouseInsertQuery,
  parseClickHouseError,
} from "../core/events/clickhouse-http.ts";
import { createEventSource } from "../core/events/source.ts";
import type { EventField } from "../core/events/types.ts";
import { passwordEnvName } from "../core/secrets.ts";
import { childPids } from "../core/process.ts";
import type { LocalHost } from "../core/hosts.ts";
import type { RunningComponent } from "../core/component.ts";
import { startGeneratorProcess, type SpawnFn } from "../harness/generators/process.ts";
import type { GeneratorFinal } from "../harness/generators/types.ts";
import { embeddedPostgres, postgres } from "../plugins/sinks/postgres/component.ts";
import { createTableStatement as pgCreateTable } from "../plugins/sinks/postgres/verifier.ts";
import {
  CLICKHOUSE_SERVER_BIN,
  clickhouse,
  clickhouseSchema,
} from "../plugins/sinks/clickhouse/component.ts";
import { createTableStatement as chCreateTable } from "../plugins/sinks/clickhouse/verifier.ts";
import { createDirectHost, type DirectHost } from "../test/helpers/direct-host.ts";

export const DB_LOADERS = ["pg-copy", "clickhouse-http"] as const;
export type DbLoader = (typeof DB_LOADERS)[number];

const HOST = "127.0.0.1";
const PG_PORT = 15_733;
const CH_HTTP_PORT = 18_733;
const CH_TCP_PORT = 19_733;
const TABLE = "ib_bench";
const SEED = 42;
const PSQL = "/usr/bin/psql";
const CLICKHOUSE_CLIENT = "/usr/bin/clickhouse-client";
/** ours/ref rows/s the database loaders aim at */
export const DB_GOAL_RATIO = 0.9;
/** scenarios/quickstart.yaml's event */
const FIELDS: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
];

/** A row of the generator bench's table (bench/generators.ts Row, with the goal as a ratio to the reference). */
export interface DbRow {
  protocol: string;
  tool: string;
  eventsPerSec: number | null;
  mibPerSec: number | null;
  eventsPerCpuS: number | null;
  note: string;
  reference: boolean;
  goalRatio?: number;
  /** why ours/ref may fall short of goalRatio here, from the measured figures (printed when the goal is not met) */
  goalReason?: string;
}

/** What bench/generators.ts lends: its pinning, its process tracking and cleanup, its temp dir, its stop flag. */
export interface DbLoaderEnv {
  /** the load core(s) and the server's cores, for taskset */
  loadCpus: string;
  sinkCpus: string;
  hasTaskset: boolean;
  /** spawn pinned to the load core and tracked for cleanup */
  pinnedSpawn: SpawnFn;
  /** track a child for cleanup (killed on error and Ctrl-C) */
  track(child: ChildProcess): ChildProcess;
  /** register an async stop for cleanup; returns its unregister */
  onCleanup(stop: () => Promise<void>): () => void;
  /** CPU seconds of `pids` so far (utime + stime), null when unreadable */
  cpuSecondsOf(pids: readonly number[]): number | null;
  tmp: string;
  interrupted(): boolean;
  projectRoot: string;
}

export interface DbWorkload {
  requests: number;
  batch: number;
  /** rounds of both sides on one server, the order alternating (default 1) */
  rounds: number;
}

const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim()) || 100;

/** utime + stime (+ cutime + cstime with `reaped`) of one process, seconds; null when unreadable. */
function procCpu(pid: number, reaped: boolean): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const t = Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0);
  return t / CLK_TCK;
}

/** PostgreSQL's CPU so far: the postmaster's own and reaped children's, plus its live children's (see the file comment). */
function postmasterCpu(pid: number): number | null {
  const own = procCpu(pid, true);
  if (own === null) return null;
  let sum = own;
  for (const c of childPids(pid)) sum += procCpu(c, true) ?? 0;
  return sum;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `host` with every spawn wrapped in `taskset -c cpus` (the server and what it forks inherit the affinity). */
function pinnedHost(host: DirectHost, cpus: string, hasTaskset: boolean): LocalHost {
  if (!hasTaskset) return host;
  return {
    ...host,
    spawn: (cmd, args, options) => host.spawn("taskset", ["-c", cpus, cmd, ...args], options),
  };
}

/** Write `chunks` to `file` and fsync it, so that no writeback of it falls in a timed window. */
function writeSynced(file: string, chunks: Iterable<Buffer>): number {
  const fd = openSync(file, "w");
  let n = 0;
  try {
    for (const c of chunks) n += writeSync(fd, c);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return n;
}

/** One side's measurement. */
interface Side {
  wallS: number;
  clientCpuS: number | null;
  serverCpuS: number | null;
  bytes: number;
  stored: number;
}

/**
 * Ours: the generator `name` in a child process pinned to the load core, held until go(); timed from go() to its
 * final report. `serverCpu` reads the server's CPU; `settle` waits until the server has finished with the client.
 */
async function runOurs(
  env: DbLoaderEnv,
  name: string,
  config: Record<string, unknown>,
  target: { port: number; params: Record<string, string> },
  serverCpu: () => number | null,
  settle: () => Promise<void>,
): Promise<{ side: Omit<Side, "stored">; final: GeneratorFinal }> {
  const g = startGeneratorProcess(env.pinnedSpawn, {
    name,
    config,
    clockSync: true,
    projectRoot: env.projectRoot,
    ctx: { target: { host: HOST, port: target.port, params: target.params }, fields: FIELDS, genId: 0 },
  });
  try {
    await g.ready;
    const pid = g.child.pid ?? -1;
    if (g.child.exitCode !== null || g.child.signalCode !== null) await g.done; // throws with its stderr
    let end: { t: number; cpu: number | null } | null = null;
    // the final line arrives before the child exits: read its CPU then, in the same tick
    g.on("progress", (p: object) => {
      if ("latencyMs" in p && end === null) end = { t: performance.now(), cpu: env.cpuSecondsOf([pid]) };
    });
    const s0 = serverCpu();
    const c0 = env.cpuSecondsOf([pid]);
    const t0 = performance.now();
    g.go();
    const final = await g.done;
    const e = end ?? { t: performance.now(), cpu: null };
    await settle();
    const s1 = serverCpu();
    return {
      final,
      side: {
        wallS: (e.t - t0) / 1000,
        clientCpuS: c0 === null || e.cpu === null ? null : e.cpu - c0,
        serverCpuS: s0 === null || s1 === null ? null : s1 - s0,
        bytes: final.bytes,
      },
    };
  } finally {
    g.kill();
  }
}

/**
 * The reference: `command args` (stdin from `stdinFile` when given, else /dev/null) as the child of `bash -c '…;
 * times'` pinned to the load core; timed from spawn to exit; its CPU from bash's `times` (its waited-for children's
 * user + system).
 */
async function runReference(
  env: DbLoaderEnv,
  command: string,
  args: string[],
  stdinFile: string | null,
  serverCpu: () => number | null,
  settle: () => Promise<void>,
  childEnv: NodeJS.ProcessEnv = process.env,
): Promise<{ wallS: number; clientCpuS: number | null; serverCpuS: number | null; stdout: string }> {
  // the tool runs as bash's background child so that a TERM/INT to bash (cleanup, Ctrl-C) is passed on to it instead
  // of leaving it orphaned; `wait` is repeated after a trapped signal until the tool is gone
  const script =
    `"$@" < "\${IB_STDIN:-/dev/null}" & c=$!; trap 'kill -TERM $c 2>/dev/null' TERM INT HUP; ` +
    "wait $c; rc=$?; while kill -0 $c 2>/dev/null; do wait $c; rc=$?; done; times >&2; exit $rc";
  const bashArgs = ["-c", script, "bash", command, ...args];
  const [cmd, argv] = env.hasTaskset
    ? ["taskset", ["-c", env.loadCpus, "bash", ...bashArgs]]
    : ["bash", bashArgs];
  const s0 = serverCpu();
  const t0 = performance.now();
  const child = env.track(
    spawn(cmd, argv, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...childEnv, IB_STDIN: stdinFile ?? "/dev/null" },
    }),
  );
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout = (stdout + d.toString()).slice(-1_000_000);
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  const code = await new Promise<number | string>((res) => {
    child.once("close", (c, sig) => res(c ?? sig ?? "?"));
    child.once("error", (e) => res(e.message));
  });
  const wallS = (performance.now() - t0) / 1000;
  await settle();
  const s1 = serverCpu();
  // `times`: two lines "XmY.YYYs XmY.YYYs", the shell's own user/system, then its children's
  const lines = stderr.trim().split("\n");
  const times = lines.slice(-2);
  const sec = (s: string): number | null => {
    const m = /^(\d+)m([\d.]+)s$/.exec(s);
    return m ? Number(m[1]) * 60 + Number(m[2]) : null;
  };
  const kids = times[1]?.trim().split(/\s+/).map(sec) ?? [];
  if (code !== 0)
    throw new Error(`${command} exited with ${code}: ${lines.slice(0, -2).join("\n").slice(-2000)}`);
  const clientCpuS = kids.length === 2 && kids[0] !== null && kids[1] !== null ? kids[0]! + kids[1]! : null;
  return { wallS, clientCpuS, serverCpuS: s0 === null || s1 === null ? null : s1 - s0, stdout };
}

const mib = 1024 * 1024;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sum = (xs: Array<number | null>): number | null =>
  xs.some((x) => x === null) ? null : xs.reduce<number>((a, x) => a + x!, 0);

/**
 * The two rows of a loader from its rounds: events/s the median over rounds of rows / wall; events/cpu-s the rows of
 * every round over their client + server CPU; the note each round's rows/s and the CPU.
 */
function rowsOf(
  protocol: string,
  refTool: string,
  rows: number,
  ours: Side[],
  ourNote: string,
  ref: Side[],
  refNote: string,
): DbRow[] {
  const row = (sides: Side[], tool: string, note: string, reference: boolean): DbRow => {
    const client = sum(sides.map((s) => s.clientCpuS));
    const server = sum(sides.map((s) => s.serverCpuS));
    const all = rows * sides.length;
    const perRound = sides.map(
      (s) => `${Math.round(rows / s.wallS).toLocaleString("en-US")}/s in ${s.wallS.toFixed(2)} s`,
    );
    return {
      protocol,
      tool,
      reference,
      eventsPerSec: median(sides.map((s) => rows / s.wallS)),
      mibPerSec: median(sides.map((s) => s.bytes / s.wallS / mib)),
      eventsPerCpuS: client === null || server === null ? null : all / (client + server),
      note:
        `${note}; ${sides.length > 1 ? `median of ${sides.length} rounds (${perRound.join(", ")})` : perRound[0]}; ` +
        `client cpu ${client === null ? "?" : client.toFixed(2)} s (${client ? Math.round(all / client).toLocaleString("en-US") : "-"} rows/client-cpu-s), ` +
        `server cpu ${server === null ? "?" : server.toFixed(2)} s; ${rows.toLocaleString("en-US")} rows stored${sides.length > 1 ? " each round" : ""}`,
      ...(reference ? {} : { goalRatio: DB_GOAL_RATIO }),
    };
  };
  return [
    { ...row(ours, "ingestbench", ourNote, false), goalReason: shortfallReason(rows, ours, ref, refTool) },
    row(ref, refTool, refNote, true),
  ];
}

/**
 * What the figures say about a shortfall: the server's CPU per row on each side (the same work, or not), how far
 * each side's own rounds differ (beyond the goal's margin, the machine's other load decides, not the loader), and
 * the clients' CPU per row (ours generates its rows on the load core, the reference reads them from files).
 */
function shortfallReason(rows: number, ours: Side[], ref: Side[], refTool: string): string {
  const us = (xs: Array<number | null>): number | null => {
    const t = sum(xs);
    return t === null ? null : (t / (rows * xs.length)) * 1e6;
  };
  const [so, sr, co, cr] = [
    us(ours.map((s) => s.serverCpuS)),
    us(ref.map((s) => s.serverCpuS)),
    us(ours.map((s) => s.clientCpuS)),
    us(ref.map((s) => s.clientCpuS)),
  ];
  const spread = (sides: Side[]): number =>
    Math.max(...sides.map((s) => s.wallS)) / Math.min(...sides.map((s) => s.wallS));
  const worst = Math.max(spread(ours), spread(ref));
  const parts = [
    so !== null && sr !== null
      ? `server CPU ${so.toFixed(2)} vs ${sr.toFixed(2)} µs/row (${so > sr * 1.1 ? "more work per row for ours" : "the same work per row"})`
      : "server CPU unreadable",
  ];
  if (ours.length > 1) {
    parts.push(
      `each side's rounds differ by up to ${worst.toFixed(2)}x in wall time${worst > 1 / DB_GOAL_RATIO ? `, more than the ${Math.round((1 / DB_GOAL_RATIO - 1) * 100)}% the goal allows: the machine's other load (see its load average) decides, not the loader` : ""}`,
    );
  } else
    parts.push(
      "one round: the machine's other load cannot be told from the loader (use --db-rounds 3 or more)",
    );
  if (co !== null && cr !== null)
    parts.push(
      `client CPU ${co.toFixed(2)} vs ${cr.toFixed(2)} µs/row (ours generates its rows, ${refTool} reads files; both on the load core other load shares)`,
    );
  return parts.join("; ");
}

/**
 * `rounds` rounds of both sides on one server, the order alternating (ours first in even rounds), `reset` before
 * each side (an empty table). Stops early on Ctrl-C (null).
 */
async function rounds(
  env: DbLoaderEnv,
  n: number,
  reset: () => Promise<void>,
  ours: () => Promise<Side>,
  ref: () => Promise<Side>,
): Promise<{ ours: Side[]; ref: Side[] } | null> {
  const out = { ours: [] as Side[], ref: [] as Side[] };
  for (let r = 0; r < n; r++) {
    for (const side of r % 2 === 0 ? (["ours", "ref"] as const) : (["ref", "ours"] as const)) {
      if (env.interrupted()) return null;
      await reset();
      out[side].push(await (side === "ours" ? ours() : ref()));
    }
  }
  return out;
}

function checkStored(what: string, stored: number, rows: number, final?: GeneratorFinal): void {
  if (stored !== rows) throw new Error(`${what}: the table holds ${stored} rows, not ${rows}`);
  if (final && (final.accepted !== rows || final.rejected !== 0))
    throw new Error(
      `${what}: the generator reports ${final.accepted} accepted, ${final.rejected} rejected of ${rows}; errors: ${final.errors.slice(0, 3).join("; ")}`,
    );
}

/** A server on a direct host, pinned to the sink cores; its stop is registered for cleanup until it is stopped. */
async function startServerOn(
  env: DbLoaderEnv,
  owner: string,
  start: (host: LocalHost) => Promise<RunningComponent>,
): Promise<{ server: RunningComponent; host: DirectHost; stop: () => Promise<void> }> {
  const host = await createDirectHost("sink", owner);
  let server: RunningComponent | undefined;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await (server?.discard ?? server?.stop)?.call(server).catch(() => undefined);
      await host.cleanup();
    })());
  const unregister = env.onCleanup(stop);
  try {
    server = await start(pinnedHost(host, env.sinkCpus, env.hasTaskset));
  } catch (err) {
    await stop();
    unregister();
    throw err;
  }
  return {
    server,
    host,
    stop: async () => {
      await stop();
      unregister();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * Have the server create the WAL segments a side will write (`bytes` of COPY text: ~1.15 bytes of WAL each, measured;
 * 1.5 and 2 more here) before anything is timed: a fresh server has one segment, and the first side would create
 * and zero-fill (wal_init_zero) and fsync each new 16 MiB segment where the later sides reuse the ones a CHECKPOINT
 * recycled (max_wal_size 4GB keeps them). Each loop step writes a row and switches to a new segment; the reset's
 * TRUNCATE and CHECKPOINT then recycle them. Returns the segments in pg_wal.
 */
export async function warmWal(client: pg.Client, table: string, bytes: number): Promise<number> {
  const seg = Number(
    (
      await client.query<{ b: string }>(
        "SELECT setting AS b FROM pg_settings WHERE name = 'wal_segment_size'",
      )
    ).rows[0]!.b,
  );
  const n = Math.ceil((bytes * 1.5) / seg) + 2;
  await client.query(
    `DO $$ BEGIN FOR i IN 1..${n} LOOP INSERT INTO ${quoteTable(table)} (seq) VALUES (-1); PERFORM pg_switch_wal(); END LOOP; END $$`,
  );
  await client.query(`TRUNCATE ${quoteTable(table)}`);
  await client.query("CHECKPOINT");
  return Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_ls_waldir()")).rows[0]!.n);
}

/** pg-copy vs psql \copy (see the file comment). */
export async function pgCopyRows(env: DbLoaderEnv, w: DbWorkload): Promise<DbRow[]> {
  const rows = w.requests * w.batch;
  const dir = join(env.tmp, "pg-copy");
  // the reference's batches, written and synced before anything runs
  const src = createEventSource({ fields: FIELDS, seed: SEED, genId: 0 });
  const files: string[] = [];
  let refBytes = 0;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const sentAt = new Date();
  for (let k = 0; k < w.requests; k++) {
    const file = join(dir, `batch-${String(k).padStart(5, "0")}.copy`);
    refBytes += writeSynced(file, [encodeCopyBatch(src, k * w.batch, w.batch, sentAt)]);
    files.push(file);
  }
  const script = join(dir, "copy.psql");
  const cols = copyColumns(FIELDS).map(quoteIdent).join(", ");
  // psql's \copy takes the file name as a single-quoted literal; the temp path holds no quote
  writeSynced(script, [
    Buffer.from(files.map((f) => `\\copy ${quoteTable(TABLE)} (${cols}) FROM '${f}'\n`).join("")),
  ]);
  if (env.interrupted()) return [];

  const pgVersion = embeddedPostgres().version;
  const { server, host, stop } = await startServerOn(env, "postgres", (h) =>
    postgres.startLocal(h, {
      version: pgVersion,
      port: PG_PORT,
      settings: { autovacuum: "off", max_wal_size: "4GB" },
    }),
  );
  const client = new pg.Client({ host: HOST, port: PG_PORT, user: "postgres", database: "postgres" });
  client.on("error", () => undefined);
  try {
    const postmaster = host.children.filter((c) => c.exitCode === null && c.signalCode === null).at(-1)?.pid;
    if (postmaster === undefined) throw new Error("no running PostgreSQL process on the direct host");
    await client.connect();
    await client.query(pgCreateTable(TABLE, FIELDS));
    await warmWal(client, TABLE, refBytes);
    const baseline = new Set(childPids(postmaster));
    const serverCpu = (): number | null => postmasterCpu(postmaster);
    // the side's backend has exited and the postmaster reaped it (its CPU then in the postmaster's cutime/cstime)
    const settle = async (): Promise<void> => {
      const deadline = performance.now() + 10_000;
      while (childPids(postmaster).some((p) => !baseline.has(p)) && performance.now() < deadline)
        await sleep(20);
    };
    const count = async (): Promise<number> =>
      Number(
        (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteTable(TABLE)}`)).rows[0]!.n,
      );
    const config = { batch: w.batch, connections: 1, rate: "max", requests: w.requests, seed: SEED };
    const done = await rounds(
      env,
      w.rounds,
      async () => {
        await client.query(`TRUNCATE ${quoteTable(TABLE)}`);
        await client.query("CHECKPOINT");
        for (const p of childPids(postmaster)) baseline.add(p);
      },
      async () => {
        const o = await runOurs(
          env,
          "pg-copy",
          config,
          { port: PG_PORT, params: { ...server.params, table: TABLE } },
          serverCpu,
          settle,
        );
        const stored = await count();
        checkStored("pg-copy", stored, rows, o.final);
        return { ...o.side, stored };
      },
      async () => {
        const r = await runReference(
          env,
          PSQL,
          [
            "-X",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            HOST,
            "-p",
            String(PG_PORT),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-f",
            script,
          ],
          null,
          serverCpu,
          settle,
        );
        const copies = (r.stdout.match(/^COPY \d+$/gm) ?? []).length;
        if (copies !== w.requests)
          throw new Error(`psql ran ${copies} \\copy commands of ${w.requests}: ${r.stdout.slice(-500)}`);
        const stored = await count();
        checkStored("psql \\copy", stored, rows);
        return {
          wallS: r.wallS,
          clientCpuS: r.clientCpuS,
          serverCpuS: r.serverCpuS,
          bytes: refBytes,
          stored,
        };
      },
    );
    if (done === null) return [];
    const psqlVersion =
      spawnSync(PSQL, ["--version"], { encoding: "utf8" }).stdout?.replace(
        /^psql \(PostgreSQL\) (\S+).*$/s,
        "$1",
      ) ?? "?";
    return rowsOf(
      "pg-copy",
      "psql \\copy",
      rows,
      done.ours,
      `COPY FROM STDIN text, ${w.requests} × ${w.batch} rows, 1 conn, child process, go → final report`,
      done.ref,
      `psql ${psqlVersion}: ${w.requests} \\copy of the same bytes in one session (1 conn), spawn → exit; server PostgreSQL ${server.running}`,
    );
  } finally {
    await client.end().catch(() => undefined);
    await stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One statement over ClickHouse's HTTP interface on a connection of its own (no keep-alive to race the server's close). */
function clickhouseQuery(sql: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: HOST, port: CH_HTTP_PORT, method: "POST", path: "/", agent: false },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => {
          const e = parseClickHouseError(res.statusCode ?? 0, text);
          if (e) reject(new Error(`ClickHouse: ${sql.slice(0, 120)}: ${e.message}`));
          else resolve(text);
        });
        res.on("error", reject);
      },
    );
    req.setTimeout(60_000, () =>
      req.destroy(new Error(`ClickHouse: no answer within 60 s to ${sql.slice(0, 120)}`)),
    );
    req.on("error", reject);
    req.end(sql);
  });
}

/** clickhouse-http vs clickhouse-client (see the file comment). */
export async function clickhouseHttpRows(env: DbLoaderEnv, w: DbWorkload): Promise<DbRow[]> {
  const rows = w.requests * w.batch;
  const dir = join(env.tmp, "clickhouse-http");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // the reference's statements: one line per batch, the batch's LFs as spaces (see the file comment)
  const enc = new ClickHouseJsonEachRowEncoder(
    createEventSource({ fields: FIELDS, seed: SEED, genId: 0 }),
    "epoch-ms",
  );
  const head = Buffer.from(`${clickHouseInsertQuery(TABLE, FIELDS)} `);
  const sentAt = new Date();
  let refBytes = 0;
  const file = join(dir, "inserts.sql");
  writeSynced(
    file,
    (function* () {
      for (let k = 0; k < w.requests; k++) {
        const b = enc.encode(k * w.batch, w.batch);
        enc.stamp(b, sentAt);
        const body = Buffer.from(b.payload);
        refBytes += body.length;
        // every raw LF ends a row (JSON escapes a LF inside a string); the last one ends the statement's line
        for (let i = body.indexOf(0x0a); i >= 0 && i < body.length - 1; i = body.indexOf(0x0a, i + 1))
          body[i] = 0x20;
        yield head;
        yield body;
      }
    })(),
  );
  if (env.interrupted()) return [];

  const { server, stop } = await startServerOn(env, "clickhouse", (h) =>
    clickhouse.startLocal(
      h,
      clickhouseSchema.parse({ version: "18.16.1", httpPort: CH_HTTP_PORT, tcpPort: CH_TCP_PORT }),
    ),
  );
  try {
    const pid = server.pid;
    if (pid === undefined) throw new Error(`no ${CLICKHOUSE_SERVER_BIN} pid`);
    const count = async (): Promise<number> =>
      Number((await clickhouseQuery(`SELECT count() FROM ${quoteTable(TABLE)} FORMAT TabSeparated`)).trim());
    const serverCpu = (): number | null => procCpu(pid, false);
    const settle = (): Promise<void> => Promise.resolve();
    const config = { batch: w.batch, connections: 1, rate: "max", requests: w.requests, seed: SEED };
    const done = await rounds(
      env,
      w.rounds,
      async () => {
        await clickhouseQuery(`DROP TABLE IF EXISTS ${quoteTable(TABLE)}`);
        await clickhouseQuery(chCreateTable(TABLE, FIELDS));
      },
      async () => {
        const o = await runOurs(
          env,
          "clickhouse-http",
          config,
          { port: CH_HTTP_PORT, params: { ...server.params, table: TABLE } },
          serverCpu,
          settle,
        );
        const stored = await count();
        checkStored("clickhouse-http", stored, rows, o.final);
        return { ...o.side, stored };
      },
      async () => {
        const r = await runReference(
          env,
          CLICKHOUSE_CLIENT,
          ["--host", HOST, "--port", String(CH_TCP_PORT), "--multiquery"],
          file,
          serverCpu,
          settle,
        );
        const stored = await count();
        checkStored("clickhouse-client", stored, rows);
        return {
          wallS: r.wallS,
          clientCpuS: r.clientCpuS,
          serverCpuS: r.serverCpuS,
          bytes: refBytes,
          stored,
        };
      },
    );
    if (done === null) return [];
    return rowsOf(
      "clickhouse-http",
      "clickhouse-client",
      rows,
      done.ours,
      `JSONEachRow over HTTP, ${w.requests} × ${w.batch} rows, 1 conn, child process, go → final report`,
      done.ref,
      `clickhouse-client --multiquery: ${w.requests} INSERT … FORMAT JSONEachRow of the same rows (one line each) in one session on stdin (native protocol, 1 conn; the client parses the JSON), spawn → exit; server ClickHouse ${server.running}`,
    );
  } finally {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The environment variables of the sinks' passwords (core/secrets.ts): the bench's own servers take none. */
export const DB_PASSWORD_ENV = [passwordEnvName("postgres"), passwordEnvName("clickhouse")];
