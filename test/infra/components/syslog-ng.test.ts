// The syslog-ng collector component against the real syslog-ng 3.38 (Debian syslog-ng-core, syslog-ng-mod-sql,
// libdbd-pgsql) and the real embedded PostgreSQL: rendered configs pass `syslog-ng --syntax-only`, the version
// probe reads the installed binary, a pin mismatch refuses to start, and real RFC 5424 frames from the syslog
// encoder land in the verifier's table with every field in its column.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError, VerificationError } from "../../../harness/errors.ts";
import { createEventSource } from "../../../harness/events/source.ts";
import { SyslogEncoder } from "../../../harness/events/syslog.ts";
import type { EventField } from "../../../harness/events/types.ts";
import { openSocket, writeAll } from "../../../harness/generators/syslog.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import { createTableStatement } from "../../../harness/verifiers/postgres.ts";
import { components } from "../../../infra/components/index.ts";
import {
  checkSyntax, columnTemplates, matchesSyslogNgPin, parseStats, probeSyslogNgVersion, renderSyslogNgConfig,
  SYSLOG_NG_PIN, syslogNg, syslogNgSchema,
} from "../../../infra/components/syslog-ng.ts";
import type { RunningComponent } from "../../../infra/components/types.ts";
import { createDirectHost, startTestPostgres, type DirectHost, type TestPostgres } from "../../helpers/direct-host.ts";

const PG_PORT = 5463;
const SYSLOG_PORT = 5516;
const FIELDS: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "level", type: "string", size: 8 },
  { name: "code", type: "int" },
  { name: "msg", type: "string", size: 120 },
];
const SINK = { name: "postgres", host: "10.214.0.3", port: 5432, params: { database: "postgres", user: "postgres", table: "ib_events" } };

const tmpDirs: string[] = [];
const hosts: DirectHost[] = [];
const running: RunningComponent[] = [];
let testPg: TestPostgres | undefined;

afterAll(async () => {
  for (const r of running) await r.stop().catch(() => undefined);
  for (const h of hosts) await h.cleanup();
  await testPg?.cleanup();
  for (const d of tmpDirs) await rm(d, { recursive: true, force: true });
});

async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "ib-test-syslog-ng-"));
  tmpDirs.push(d);
  return d;
}

describe("syslog-ng component: config", () => {
  it("renders configs that the real syslog-ng --syntax-only accepts (with and without a disk buffer)", async () => {
    const dir = await tmp();
    for (const [i, raw] of [
      {},
      { "batch-lines": 5000, "batch-timeout": 250, "log-fifo-size": 100000 },
      { "disk-buffer": { reliable: true, "disk-buf-size": 10485760, "mem-buf-size": 1048576 } },
      { "disk-buffer": { "disk-buf-size": 10485760, "mem-buf-length": 5000 } },
    ].entries()) {
      const config = syslogNgSchema.parse(raw);
      const text = renderSyslogNgConfig({ config, dir, sink: SINK, fields: FIELDS });
      const file = join(dir, `c${i}.conf`);
      await writeFile(file, text);
      expect(await checkSyntax(file), text).toBe("");
      expect(text).toContain(`batch-lines(${config["batch-lines"]})`);
      expect(text).toContain("flags(explicit-commits, dont-create-tables)");
      expect(text).toContain('host("10.214.0.3") port("5432")');
      expect(text).toContain('table("ib_events")');
    }
    // and syntax errors do come back (the check is real)
    const bad = join(dir, "bad.conf");
    await writeFile(bad, "@version: 3.38\nsource s { syslog(transport(\"tcp\") nonsense(1)); };\n");
    expect(await checkSyntax(bad)).toMatch(/syntax error/);
  });

  it("maps the last string field to MSG and every other field, gen, seq and sent_at to the SD element", () => {
    expect(columnTemplates(FIELDS)).toEqual([
      ["ts", "${.SDATA.ib@32473.ts}"],
      ["level", "${.SDATA.ib@32473.level}"],
      ["code", "${.SDATA.ib@32473.code}"],
      ["msg", "${MESSAGE}"],
      ["gen", "${.SDATA.ib@32473.gen}"],
      ["seq", "${.SDATA.ib@32473.seq}"],
      ["sent_at", "${.SDATA.ib@32473.sent_at}"],
    ]);
  });

  it("has a strict schema in syslog-ng's own option names, and refuses what the sql() destination lacks", () => {
    expect(syslogNgSchema.parse({})).toMatchObject({ version: SYSLOG_NG_PIN, "batch-lines": 1000, workers: 1, "log-fifo-size": 10000 });
    expect(syslogNgSchema.safeParse({ batch_lines: 10 }).success).toBe(false);
    expect(syslogNgSchema.safeParse({ "batch-lines": 0 }).success).toBe(false);
    expect(syslogNgSchema.safeParse({ "batch-timeout": -1 }).success).toBe(false); // syslog-ng's parser refuses it too
    expect(syslogNgSchema.safeParse({ "disk-buffer": { "disk-buf-size": 1000 } }).success).toBe(false);
    expect(() => renderSyslogNgConfig({ config: syslogNgSchema.parse({ workers: 2 }), dir: "/tmp", sink: SINK, fields: FIELDS }))
      .toThrow(ConfigurationError);
    expect(() => renderSyslogNgConfig({ config: syslogNgSchema.parse({}), dir: "/tmp", sink: { ...SINK, name: "clickhouse" }, fields: FIELDS }))
      .toThrow(/cannot write into sink "clickhouse"/);
  });

  it("parses syslog-ng-ctl stats into claimed counts", () => {
    const csv = [
      "SourceName;SourceId;SourceInstance;State;Type;Number",
      "source;s_ib;;a;processed;1200",
      "dst.sql;d_sink#0;sql,pgsql,10.214.0.3,5432,postgres,ib_events;a;written;1100",
      "dst.sql;d_sink#0;sql,pgsql,10.214.0.3,5432,postgres,ib_events;a;dropped;0",
      "dst.sql;d_sink#0;sql,pgsql,10.214.0.3,5432,postgres,ib_events;a;queued;100",
    ].join("\n");
    expect(parseStats(csv)).toEqual({ received: 1200, written: 1100, dropped: 0, queued: 100 });
  });

  it("is registered as a collector that receives syslog and writes into postgres; other pairings are refused before provisioning", async () => {
    expect(components["syslog-ng"]).toBe(syslogNg);
    expect(syslogNg.kind).toBe("collector");
    const dir = await tmp();
    const file = join(dir, "s.yaml");
    await writeFile(file, [
      "name: pairing",
      "event: [{ name: msg, type: string, size: 10 }]",
      "generator: { pg-copy: { batch: 100 } }",
      "collector: { syslog-ng: {} }",
      'sink: { postgres: { version: "18.4.0-beta.17" } }',
      "duration: 2s",
    ].join("\n"));
    expect(() => planCells(loadScenarioFile(file), file)).toThrow(/receives syslog, not the "pg-copy" generator/);
  });
});

describe("syslog-ng component: version", () => {
  it("probes the installed syslog-ng and matches the 3.38 pin by major.minor", async () => {
    const v = await probeSyslogNgVersion();
    expect(v).toMatch(/^3\.38\.\d+$/);
    expect(matchesSyslogNgPin(SYSLOG_NG_PIN, v)).toBe(true);
    expect(matchesSyslogNgPin("3.38", "3.380.1")).toBe(false);
    expect(matchesSyslogNgPin("3.37", v)).toBe(false);
    expect(matchesSyslogNgPin(v, v)).toBe(true);
  });

  it("refuses to start on a pin mismatch, naming both versions, and starts nothing", async () => {
    const host = await createDirectHost("collector", "root");
    hosts.push(host);
    const installed = await probeSyslogNgVersion();
    const fakeSink = { name: "postgres", pinned: "x", running: "x", data: { host: "127.0.0.1", port: 1 }, control: { host: "127.0.0.1", port: 1 }, params: {}, stop: async () => undefined };
    const err = await syslogNg.startLocal(host, syslogNgSchema.parse({ version: "3.37" }), undefined, { sink: fakeSink, params: { table: "t" }, fields: FIELDS })
      .then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(VerificationError);
    expect((err as Error).message).toContain("3.37");
    expect((err as Error).message).toContain(installed);
    expect(host.children).toHaveLength(0);
  });
});

describe("syslog-ng component: a real pipeline into PostgreSQL", () => {
  it("stores every frame of the syslog encoder with each field in its column, in batches of batch-lines", async () => {
    testPg = await startTestPostgres(PG_PORT);
    const db = new pg.Client({ host: "127.0.0.1", port: PG_PORT, user: "postgres", database: "postgres" });
    await db.connect();
    try {
      await db.query("DROP TABLE IF EXISTS ib_events");
      await db.query(createTableStatement("ib_events", FIELDS));
      const host = await createDirectHost("collector", "root");
      hosts.push(host);
      const collector = await syslogNg.startLocal(host, syslogNgSchema.parse({ port: SYSLOG_PORT, "batch-lines": 500, "batch-timeout": 100 }), undefined, {
        sink: testPg.pg, params: { ...testPg.pg.params, table: "ib_events" }, fields: FIELDS,
      });
      running.push(collector);
      expect(collector.running).toBe(await probeSyslogNgVersion());
      expect(collector.data).toEqual({ host: "127.0.0.1", port: SYSLOG_PORT });

      const source = createEventSource({ fields: FIELDS, seed: 7, genId: 3 });
      const encoder = new SyslogEncoder(source, { procId: "3" });
      const batch = encoder.encode(0, 2000);
      const sentAt = new Date("2026-01-02T03:04:05.678Z");
      encoder.stamp(batch, sentAt);
      const socket = await openSocket("127.0.0.1", SYSLOG_PORT);
      await writeAll(socket, batch.payload);
      socket.end();

      let n = 0;
      for (let i = 0; i < 100 && n < 2000; i++) {
        await sleep(100);
        n = Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM ib_events")).rows[0]!.n);
      }
      expect(n).toBe(2000);
      const stats = await collector.stats!();
      expect(stats).toMatchObject({ received: 2000, written: 2000, dropped: 0 });

      const r = await db.query<{ gen: number; seq: string; sent: string; ts: string; level: string; code: string; msg: string }>(
        "SELECT gen, seq, to_char(sent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS sent, " +
          "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS ts, level, code, msg FROM ib_events WHERE seq IN (0, 1234) ORDER BY seq",
      );
      expect(r.rows.map((x) => Number(x.seq))).toEqual([0, 1234]);
      for (const row of r.rows) {
        const e = source.fill(Number(row.seq));
        expect(row.gen).toBe(3);
        expect(row.sent).toBe("2026-01-02T03:04:05.678Z");
        expect(row.ts).toBe(new Date(e.num[0]!).toISOString());
        expect(row.level).toBe(Buffer.from(e.bytes[1]!.subarray(0, e.len[1]!)).toString("utf8"));
        expect(Number(row.code)).toBe(e.num[2]);
        expect(row.msg).toBe(Buffer.from(e.bytes[3]!.subarray(0, e.len[3]!)).toString("utf8"));
      }
      const distinct = await db.query<{ n: string }>("SELECT count(DISTINCT seq) AS n FROM ib_events");
      expect(Number(distinct.rows[0]!.n)).toBe(2000);
      // explicit-commits: one transaction (one xmin) per batch of at most batch-lines rows
      const tx = await db.query<{ n: string }>("SELECT count(*) AS n FROM ib_events GROUP BY xmin::text");
      const sizes = tx.rows.map((x) => Number(x.n));
      expect(Math.max(...sizes)).toBeLessThanOrEqual(500);
      expect(sizes.length).toBeGreaterThanOrEqual(4);

      await collector.stop();
      expect(() => process.kill(collector.pid!, 0)).toThrow();
    } finally {
      await db.end();
    }
  });
});
