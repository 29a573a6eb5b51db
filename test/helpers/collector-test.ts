/**
 * For the tests of the syslog collector components (rsyslog, syslog-ng) on direct hosts: one scope per test file
 * that removes everything the file started in afterAll (collectors, hosts, pg clients, the embedded PostgreSQL, temp
 * dirs), the pin-mismatch check, real RFC 5424 frames from the syslog encoder sent over TCP, a poll for the stored
 * count, and the column-by-column check of the rows a collector wrote into PostgreSQL.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, expect } from "vitest";
import { VerificationError } from "../../core/errors.ts";
import { MAX_REPLAY_LINE_BYTES } from "../../core/events/replay-lines.ts";
import { createEventSource, type EventSource } from "../../core/events/source.ts";
import { SyslogEncoder } from "../../core/events/syslog.ts";
import type { EventField } from "../../core/events/types.ts";
import { openSocket, writeAll } from "../../harness/generators/syslog.ts";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import { createTableStatement } from "../../plugins/sinks/postgres/verifier.ts";
import type { Downstream, RunningComponent } from "../../core/component.ts";
import { createDirectHost, startTestPostgres, type DirectHost, type TestPostgres } from "./direct-host.ts";

/**
 * The component tests' event layout, the one expectSyslogRowsInPostgres checks: a timestamp, a short string named
 * `level` (as given: rsyslog's test uses "Level" to check that its column names are quoted), an int and the message.
 */
export function syslogTestFields(level: string): EventField[] {
  return [
    { name: "ts", type: "timestamp" },
    { name: level, type: "string", size: 8 },
    { name: "code", type: "int" },
    { name: "msg", type: "string", size: 120 },
  ];
}

/** A PostgreSQL downstream to render configs for (nothing connects to it). */
export const RENDER_PG_SINK = {
  name: "postgres",
  host: "10.214.0.3",
  port: 5432,
  params: { database: "postgres", user: "postgres", table: "ib_events" },
};

/**
 * Write a scenario `name` (generator and collector as YAML flow maps, e.g. "{ syslog: { batch: 100 } }"; one string
 * field, a pinned postgres sink, 2 s) into `dir` and return a call that plans it, for `expect(…).toThrow(…)`.
 */
export async function scenarioPlanning(
  dir: string,
  o: { name: string; generator: string; collector: string },
): Promise<() => unknown> {
  const file = await writeScenario(dir, o);
  return () => planCells(loadScenarioFile(file), file);
}

/**
 * Write a scenario `name` into `dir` and return its path: generator, collector, sink (default a pinned postgres) and
 * matrix (default none) as YAML flow maps, one string field, 2 s.
 */
export async function writeScenario(
  dir: string,
  o: { name: string; generator: string; collector: string; sink?: string; matrix?: string },
): Promise<string> {
  const file = join(dir, `${o.name}.yaml`);
  await writeFile(
    file,
    [
      `name: ${o.name}`,
      "event: [{ name: msg, type: string, size: 10 }]",
      `generator: ${o.generator}`,
      `collector: ${o.collector}`,
      `sink: ${o.sink ?? '{ postgres: { version: "18.4.0-beta.17" } }'}`,
      "duration: 2s",
      ...(o.matrix ? [`matrix: ${o.matrix}`] : []),
    ].join("\n"),
  );
  return file;
}

/** What a collector test file starts; everything is removed in the afterAll hook that collectorTestScope registers. */
export interface CollectorTestScope {
  /** a fresh temp dir */
  tmp(): Promise<string>;
  /** a direct host whose dataDir is owned by `dataOwner` (default: a collector host, run as root) */
  host(name?: string, dataOwner?: string): Promise<DirectHost>;
  /** keep `c` to stop it in afterAll; returns it */
  keep<C extends RunningComponent>(c: C): C;
  /** the components kept so far */
  readonly running: readonly RunningComponent[];
  /**
   * The embedded PostgreSQL on 127.0.0.1:`port` with an empty verifier table `table` for `fields` (dropped first),
   * and a connected client (ended in afterAll).
   */
  postgresTable(
    port: number,
    table: string,
    fields: EventField[],
  ): Promise<{ testPg: TestPostgres; db: pg.Client }>;
}

/** Create the scope of one test file (call at module level: it registers afterAll). `prefix` names its temp dirs. */
export function collectorTestScope(prefix: string): CollectorTestScope {
  const tmpDirs: string[] = [];
  const hosts: DirectHost[] = [];
  const running: RunningComponent[] = [];
  const clients: pg.Client[] = [];
  const servers: TestPostgres[] = [];
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    for (const r of running) await r.stop().catch(() => undefined);
    for (const h of hosts) await h.cleanup();
    for (const s of servers) await s.cleanup();
    for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
  });
  return {
    running,
    async tmp() {
      const d = await mkdtemp(join(tmpdir(), prefix));
      tmpDirs.push(d);
      return d;
    },
    async host(name = "collector", dataOwner = "root") {
      const h = await createDirectHost(name, dataOwner);
      hosts.push(h);
      return h;
    },
    keep(c) {
      running.push(c);
      return c;
    },
    async postgresTable(port, table, fields) {
      const testPg = await startTestPostgres(port);
      servers.push(testPg);
      const db = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
      clients.push(db);
      await db.connect();
      await db.query(`DROP TABLE IF EXISTS ${table}`);
      await db.query(createTableStatement(table, fields));
      return { testPg, db };
    },
  };
}

/**
 * A collector whose pin is `wrongPin` must refuse to start (VerificationError naming `wrongPin` and the installed
 * version) and spawn nothing. `start(host, downstream)` is the component's startLocal with that pin; the downstream
 * is a sink that does not exist (port 1), since nothing may reach it.
 */
export async function expectRefusesPin(
  scope: CollectorTestScope,
  fields: EventField[],
  wrongPin: string,
  installed: string,
  start: (host: DirectHost, downstream: Downstream) => Promise<RunningComponent>,
): Promise<void> {
  const host = await scope.host();
  const fakeSink = {
    name: "postgres",
    pinned: "x",
    running: "x",
    data: { host: "127.0.0.1", port: 1 },
    control: { host: "127.0.0.1", port: 1 },
    params: {},
    stop: async () => undefined,
  };
  const err = await start(host, { sink: fakeSink, params: { table: "t" }, fields }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VerificationError);
  expect((err as Error).message).toContain(wrongPin);
  expect((err as Error).message).toContain(installed);
  expect(host.children).toHaveLength(0);
}

/**
 * Send seqs 0..count-1 of generator `genId` (seed `seed`) as RFC 5424 frames of the syslog encoder (octet-counted,
 * RFC 6587 §3.4.1), stamped `sentAt`, over one TCP connection to 127.0.0.1:`port`, then close it.
 * @returns the event source, to compute what each stored row must hold
 */
export async function sendSyslogFrames(
  port: number,
  o: {
    fields: EventField[];
    seed: number;
    genId: number;
    count: number;
    sentAt: Date;
    procId?: string;
    replayFile?: string;
  },
): Promise<EventSource> {
  const source = createEventSource({
    fields: o.fields,
    seed: o.seed,
    genId: o.genId,
    replayFile: o.replayFile,
  });
  await source.load(0, o.count);
  const encoder = new SyslogEncoder(source, o.procId === undefined ? {} : { procId: o.procId });
  const batch = encoder.encode(0, o.count);
  encoder.stamp(batch, o.sentAt);
  const socket = await openSocket("127.0.0.1", port);
  await writeAll(socket, batch.payload);
  socket.end();
  return source;
}

/**
 * A replay file (in a temp dir of `scope`) whose lines reach the generators' cut (MAX_REPLAY_LINE_BYTES): an ASCII
 * line past it, a line of 3-byte characters that straddles it (cut at a character boundary), SD-like text with
 * quotes, backslashes and brackets, and a short line with a TAB. Seq k carries line k mod 4.
 */
export async function longLinesFile(scope: CollectorTestScope): Promise<string> {
  const file = join(await scope.tmp(), "long-lines.log");
  const lines = [
    "a".repeat(MAX_REPLAY_LINE_BYTES + 5000),
    "€".repeat(Math.ceil(MAX_REPLAY_LINE_BYTES / 3) + 10),
    `[ib@32473 msg="quoted \\ back ] bracket"] ${"x".repeat(MAX_REPLAY_LINE_BYTES - 100)}`,
    "short\twith a TAB",
  ];
  await writeFile(file, lines.join("\n") + "\n");
  return file;
}

/** Poll `count()` every 100 ms, at most 100 times, until it reaches `n`; the last count read. */
export async function waitForCount(count: () => Promise<number>, n: number): Promise<number> {
  let c = 0;
  for (let i = 0; i < 100 && c < n; i++) {
    await sleep(100);
    c = await count();
  }
  return c;
}

/** The number of rows in a PostgreSQL table. */
export async function pgCount(db: pg.Client, table: string): Promise<number> {
  return Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
}

/**
 * Check what a collector wrote into the PostgreSQL table ib_events for the event layout `fields` of
 * syslogTestFields: the rows of seqs 0 and 1234 hold, column by column,
 * what `source` generates (gen `genId`, sent_at `sentAt`), and `count` distinct seqs are stored.
 * @returns the sizes of the transactions that wrote the rows (rows per xmin), for the batch checks of each collector
 */
export async function expectSyslogRowsInPostgres(
  db: pg.Client,
  source: EventSource,
  o: { fields: EventField[]; genId: number; sentAt: Date; count: number },
): Promise<number[]> {
  const level = o.fields[1]!.name;
  const r = await db.query<{
    gen: number;
    seq: string;
    sent: string;
    ts: string;
    level: string;
    code: string;
    msg: string;
  }>(
    "SELECT gen, seq, to_char(sent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS sent, " +
      `to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ts, "${level}" AS level, code, msg FROM ib_events WHERE seq IN (0, 1234) ORDER BY seq`,
  );
  expect(r.rows.map((x) => Number(x.seq))).toEqual([0, 1234]);
  for (const row of r.rows) {
    const e = source.fill(Number(row.seq));
    expect(row.gen).toBe(o.genId);
    expect(row.sent).toBe(o.sentAt.toISOString());
    expect(row.ts).toBe(new Date(e.num[0]!).toISOString());
    expect(row.level).toBe(Buffer.from(e.bytes[1]!.subarray(0, e.len[1]!)).toString("utf8"));
    expect(Number(row.code)).toBe(e.num[2]);
    expect(row.msg).toBe(Buffer.from(e.bytes[3]!.subarray(0, e.len[3]!)).toString("utf8"));
  }
  const distinct = await db.query<{ n: string }>("SELECT count(DISTINCT seq) AS n FROM ib_events");
  expect(Number(distinct.rows[0]!.n)).toBe(o.count);
  const tx = await db.query<{ n: string }>("SELECT count(*) AS n FROM ib_events GROUP BY xmin::text");
  return tx.rows.map((x) => Number(x.n));
}

/**
 * A collector between real syslog frames and the embedded PostgreSQL on 127.0.0.1:`pgPort`: create the verifier's
 * table ib_events, start the collector with `start(host, downstream)` on a collector host (it must listen on
 * 127.0.0.1:`syslogPort`), send seqs 0..1999 of generator 3 (seed 7, sent_at 2026-01-02T03:04:05.678Z), wait until
 * all 2000 rows are stored (≤ 10 s), read the collector's claims, check every row (expectSyslogRowsInPostgres; with
 * `replayFile`, the last string field carries its lines and each stored line's length and MD5 are compared), then
 * stop the collector and check that its process is gone.
 * @returns the collector (stopped), its claims read once everything was stored, and the rows per transaction
 */
export async function pipeIntoPostgres(
  scope: CollectorTestScope,
  o: {
    pgPort: number;
    syslogPort: number;
    fields: EventField[];
    start: (host: DirectHost, downstream: Downstream) => Promise<RunningComponent>;
    replayFile?: string;
  },
): Promise<{ collector: RunningComponent; stats: unknown; sizes: number[] }> {
  const count = 2000;
  const { testPg, db } = await scope.postgresTable(o.pgPort, "ib_events", o.fields);
  const collector = scope.keep(
    await o.start(await scope.host(), {
      sink: testPg.pg,
      params: { ...testPg.pg.params, table: "ib_events" },
      fields: o.fields,
    }),
  );
  expect(collector.data).toEqual({ host: "127.0.0.1", port: o.syslogPort });
  const sentAt = new Date("2026-01-02T03:04:05.678Z");
  const source = await sendSyslogFrames(o.syslogPort, {
    fields: o.fields,
    seed: 7,
    genId: 3,
    procId: "3",
    count,
    sentAt,
    replayFile: o.replayFile,
  });
  expect(await waitForCount(() => pgCount(db, "ib_events"), count)).toBe(count);
  const stats = await collector.stats!();
  const sizes = await expectSyslogRowsInPostgres(db, source, { fields: o.fields, genId: 3, sentAt, count });
  if (o.replayFile) {
    // every replayed line whole: its length and digest as the generator sent it
    const msg = o.fields.map((f) => f.type).lastIndexOf("string");
    const stored = await db.query<{ seq: string; len: number; md5: string }>(
      "SELECT seq, octet_length(msg) AS len, md5(msg) AS md5 FROM ib_events ORDER BY seq",
    );
    expect(stored.rows.map((r) => ({ seq: Number(r.seq), len: r.len, md5: r.md5 }))).toEqual(
      Array.from({ length: count }, (_, seq) => {
        const row = source.fill(seq);
        const line = Buffer.from(row.bytes[msg]!.subarray(0, row.len[msg]!));
        return { seq, len: line.length, md5: createHash("md5").update(line).digest("hex") };
      }),
    );
  }
  await collector.stop();
  expect(() => process.kill(collector.pid!, 0)).toThrow();
  return { collector, stats, sizes };
}
