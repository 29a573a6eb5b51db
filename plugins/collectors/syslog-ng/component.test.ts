// The syslog-ng collector component against the real syslog-ng 3.38 (Debian syslog-ng-core, syslog-ng-mod-sql,
// libdbd-pgsql) and the real embedded PostgreSQL: rendered configs pass `syslog-ng --syntax-only`, the version
// probe reads the installed binary, a pin mismatch refuses to start, and real RFC 5424 frames from the syslog
// encoder land in the verifier's table with every field in its column.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import type { EventField } from "../../../core/events/types.ts";
import { createTableStatement as clickhouseCreateTable } from "../../sinks/clickhouse/verifier.ts";
import { clickhouse, clickhouseSchema } from "../../sinks/clickhouse/component.ts";
import { collectors } from "../../registry.ts";
import {
  checkSyntax,
  columnTemplates,
  matchesSyslogNgPin,
  parseSignals,
  parseStats,
  probeSyslogNgVersion,
  renderSyslogNgConfig,
  SYSLOG_NG_PIN,
  syslogNg,
  syslogNgSchema,
} from "./component.ts";
import {
  collectorTestScope,
  expectRefusesPin,
  longLinesFile,
  pipeIntoPostgres,
  scenarioPlanning,
  RENDER_PG_SINK,
  sendSyslogFrames,
  syslogTestFields,
  waitForCount,
} from "../../../test/helpers/collector-test.ts";

const PG_PORT = 5463;
const SYSLOG_PORT = 5516;
const PG_PORT_LONG = 5493;
const SYSLOG_PORT_LONG = 5536;
const FIELDS = syslogTestFields("level");
const SINK = RENDER_PG_SINK;

const scope = collectorTestScope("ib-test-syslog-ng-");
const tmp = scope.tmp;

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
    await writeFile(bad, '@version: 3.38\nsource s { syslog(transport("tcp") nonsense(1)); };\n');
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
    expect(syslogNgSchema.parse({})).toMatchObject({
      version: SYSLOG_NG_PIN,
      "batch-lines": 1000,
      workers: 1,
      "log-fifo-size": 10000,
    });
    expect(syslogNgSchema.safeParse({ batch_lines: 10 }).success).toBe(false);
    expect(syslogNgSchema.safeParse({ "batch-lines": 0 }).success).toBe(false);
    expect(syslogNgSchema.safeParse({ "batch-timeout": -1 }).success).toBe(false); // syslog-ng's parser refuses it too
    expect(syslogNgSchema.safeParse({ "disk-buffer": { "disk-buf-size": 1000 } }).success).toBe(false);
    expect(() =>
      renderSyslogNgConfig({
        config: syslogNgSchema.parse({ workers: 2 }),
        dir: "/tmp",
        sink: SINK,
        fields: FIELDS,
      }),
    ).toThrow(ConfigurationError);
    expect(() =>
      renderSyslogNgConfig({
        config: syslogNgSchema.parse({ "batch-bytes": 1_000_000 }),
        dir: "/tmp",
        sink: SINK,
        fields: FIELDS,
      }),
    ).toThrow(/collector\.syslog-ng\.batch-bytes: .*sql\(\) destination has no batch-bytes/);
    expect(() =>
      renderSyslogNgConfig({
        config: syslogNgSchema.parse({}),
        dir: "/tmp",
        sink: { ...SINK, name: "elasticsearch" },
        fields: FIELDS,
      }),
    ).toThrow(/cannot write into sink "elasticsearch" \(supported: postgres, clickhouse\)/);
  });

  it("parses syslog-ng-ctl stats into the series' signals per destination: processed, written, dropped, queued, memory_usage", () => {
    const url = "http://10.214.0.3:8123/?query=INSERT";
    const csv = [
      "SourceName;SourceId;SourceInstance;State;Type;Number",
      "source;s_ib;;a;processed;5000",
      "src.syslog;s_ib#0;tcp,10.214.0.1;a;processed;5000",
      `dst.http;d_sink#0;http,${url};a;batch_size_avg;62925`,
      `dst.http;d_sink#0;http,${url};a;dropped;0`,
      `dst.http;d_sink#0;http,${url};a;processed;5000`,
      `dst.http;d_sink#0;http,${url};a;queued;250`,
      `dst.http;d_sink#0;http,${url};a;memory_usage;81920`,
      `dst.http;d_sink#0;http,${url};a;written;4750`,
      "center;;received;a;processed;5000",
    ].join("\n");
    expect(parseSignals(csv)).toEqual({
      "s_ib.processed": 5000,
      "d_sink#0.processed": 5000,
      "d_sink#0.written": 4750,
      "d_sink#0.dropped": 0,
      "d_sink#0.queued": 250,
      "d_sink#0.memory_usage": 81920,
    });
    expect(parseSignals("")).toEqual({});
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
    // the http() destination's rows (as syslog-ng 3.38 prints them), with the ones that are not counts around them
    const url =
      "http://10.214.0.3:8123/?query=INSERT%20INTO%20%22default%22.%22ib_events%22%20FORMAT%20JSONEachRow";
    const http = [
      "SourceName;SourceId;SourceInstance;State;Type;Number",
      "source;s_ib;;a;processed;5000",
      "src.syslog;s_ib#0;tcp,10.214.0.1;a;processed;5000",
      `dst.http;d_sink#0;http,${url};a;batch_size_avg;62925`,
      `dst.http;d_sink#0;http,${url};a;dropped;500`,
      `dst.http;d_sink#0;http,${url};a;processed;5000`,
      `dst.http;d_sink#0;http,${url};a;queued;250`,
      `dst.http;d_sink#0;http,${url};a;written;4250`,
      "destination;d_sink;;a;processed;5000",
    ].join("\n");
    expect(parseStats(http)).toEqual({ received: 5000, written: 4250, dropped: 500, queued: 250 });
  });

  it("is registered as a collector that receives syslog and writes into postgres and clickhouse; other pairings are refused before provisioning", async () => {
    expect(collectors["syslog-ng"].local).toBe(syslogNg);
    expect(syslogNg.kind).toBe("collector");
    expect(syslogNg.writesTo).toEqual(["postgres", "clickhouse"]);
    const dir = await tmp();
    expect(
      await scenarioPlanning(dir, {
        name: "pairing",
        generator: "{ pg-copy: { batch: 100 } }",
        collector: "{ syslog-ng: {} }",
      }),
    ).toThrow(/receives syslog, not the "pg-copy" generator/);
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
    await expectRefusesPin(scope, FIELDS, "3.37", await probeSyslogNgVersion(), (host, downstream) =>
      syslogNg.startLocal(host, syslogNgSchema.parse({ version: "3.37" }), undefined, downstream),
    );
  });
});

describe("syslog-ng component: a real pipeline into PostgreSQL", () => {
  it("stores every frame of the syslog encoder with each field in its column, in batches of batch-lines", async () => {
    const { collector, stats, sizes } = await pipeIntoPostgres(scope, {
      pgPort: PG_PORT,
      syslogPort: SYSLOG_PORT,
      fields: FIELDS,
      start: (host, downstream) =>
        syslogNg.startLocal(
          host,
          syslogNgSchema.parse({ port: SYSLOG_PORT, "batch-lines": 500, "batch-timeout": 100 }),
          undefined,
          downstream,
        ),
    });
    expect(collector.running).toBe(await probeSyslogNgVersion());
    expect(stats).toMatchObject({ received: 2000, written: 2000, dropped: 0 });
    // explicit-commits: one transaction (one xmin) per batch of at most batch-lines rows
    expect(Math.max(...sizes)).toBeLessThanOrEqual(500);
    expect(sizes.length).toBeGreaterThanOrEqual(4);
  });

  it("stores replayed lines at the generators' 64 KiB cut whole: log-msg-size is above the largest frame (maxSyslogMessageBytes)", async () => {
    const { stats } = await pipeIntoPostgres(scope, {
      pgPort: PG_PORT_LONG,
      syslogPort: SYSLOG_PORT_LONG,
      fields: FIELDS,
      replayFile: await longLinesFile(scope),
      start: (host, downstream) =>
        syslogNg.startLocal(host, syslogNgSchema.parse({ port: SYSLOG_PORT_LONG }), undefined, downstream),
    });
    expect(stats).toMatchObject({ received: 2000, written: 2000, dropped: 0 });
  });
});

const CH_HTTP_PORT = 18263;
const CH_TCP_PORT = 19263;
const CH_SYSLOG_PORT = 5517;
/** every field type the verifier's ClickHouse table has a column type for */
const CH_FIELDS: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "level", type: "string", size: 8 },
  { name: "code", type: "int" },
  { name: "ratio", type: "float" },
  { name: "ok", type: "bool" },
  { name: "msg", type: "string", size: 120 },
];
const CH_SINK = {
  name: "clickhouse",
  host: "10.214.0.3",
  port: 8123,
  params: { database: "default", user: "default", table: "ib_events" },
};

describe("syslog-ng component: http() into ClickHouse", () => {
  it("renders http() configs that the real syslog-ng --syntax-only accepts, for workers 1..4, batch-bytes and a disk buffer", async () => {
    const dir = await tmp();
    for (const [i, raw] of [
      {},
      {
        "batch-lines": 50000,
        workers: 4,
        "batch-timeout": 1000,
        "batch-bytes": 4_000_000,
        retries: 10,
        "time-reopen": 1,
      },
      { workers: 2, "disk-buffer": { reliable: true, "disk-buf-size": 10485760, "mem-buf-size": 1048576 } },
    ].entries()) {
      const config = syslogNgSchema.parse(raw);
      const text = renderSyslogNgConfig({ config, dir, sink: CH_SINK, fields: CH_FIELDS });
      const file = join(dir, `h${i}.conf`);
      await writeFile(file, text);
      expect(await checkSyntax(file), text).toBe("");
      // the columns named: ClickHouse 18.16 fills the sink's stored_at with its DEFAULT only then
      const named = `(${[...CH_FIELDS.map((f) => f.name), "gen", "seq", "sent_at"].map((c) => `"${c}"`).join(", ")})`;
      expect(text).toContain(
        `url("http://10.214.0.3:8123/?query=${encodeURIComponent(`INSERT INTO "default"."ib_events" ${named} FORMAT JSONEachRow`)}&user=default")`,
      );
      expect(decodeURIComponent(/query=([^&"]+)/.exec(text)![1]!)).toBe(
        `INSERT INTO "default"."ib_events" ${named} FORMAT JSONEachRow`,
      );
      expect(text).toContain('method("POST")');
      expect(text).toContain('delimiter("\\n") body-suffix("\\n")');
      expect(text).toContain(`batch-lines(${config["batch-lines"]})`);
      expect(text).toContain(`workers(${config.workers})`);
      expect(text).toContain(`retries(${config.retries}) time-reopen(${config["time-reopen"]})`);
      if (config["batch-bytes"]) expect(text).toContain(`batch-bytes(${config["batch-bytes"]})`);
      // the header timestamp (ts) comes from the message's stamp; sent_at is parsed into .ib.sent_at
      expect(text).toContain("ts=int64(${S_UNIXTIME}${S_MSEC})");
      expect(text).toContain("sent_at=int64(${.ib.sent_at})");
      expect(text).toContain(
        'date-parser(format("%Y-%m-%dT%H:%M:%S.%f%z") template("${.SDATA.ib@32473.sent_at}") time-stamp(recvd))',
      );
    }
  });

  it("stores every frame with each field typed as the verifier's table, in inserts of at most batch-lines rows over 2 workers", async () => {
    const ch = scope.keep(
      await clickhouse.startLocal(
        await scope.host("sink", "clickhouse"),
        clickhouseSchema.parse({ version: "18.16.1", httpPort: CH_HTTP_PORT, tcpPort: CH_TCP_PORT }),
      ),
    );
    const q = async (sql: string): Promise<string> => {
      const r = await fetch(`http://127.0.0.1:${CH_HTTP_PORT}/`, { method: "POST", body: sql });
      const text = await r.text();
      if (r.status !== 200) throw new Error(`${sql}: HTTP ${r.status} ${text}`);
      return text;
    };
    const inserts = async (): Promise<number> =>
      Number((await q("SELECT value FROM system.events WHERE event = 'InsertQuery'")).trim() || 0);
    await q(clickhouseCreateTable("default.ib_events", CH_FIELDS));
    const collector = scope.keep(
      await syslogNg.startLocal(
        await scope.host(),
        syslogNgSchema.parse({ port: CH_SYSLOG_PORT, "batch-lines": 500, "batch-timeout": 100, workers: 2 }),
        undefined,
        {
          sink: ch,
          params: { ...ch.params, table: "ib_events" },
          fields: CH_FIELDS,
        },
      ),
    );
    const insertsBefore = await inserts();

    const sentAt = new Date("2026-01-02T03:04:05.678Z");
    const source = await sendSyslogFrames(CH_SYSLOG_PORT, {
      fields: CH_FIELDS,
      seed: 11,
      genId: 2,
      procId: "2",
      count: 3000,
      sentAt,
    });
    const n = await waitForCount(async () => Number((await q("SELECT count() FROM ib_events")).trim()), 3000);
    expect(n).toBe(3000);
    expect((await q("SELECT uniqExact(seq), min(seq), max(seq) FROM ib_events")).trim()).toBe(
      "3000\t0\t2999",
    );
    expect(await collector.stats!()).toMatchObject({ received: 3000, written: 3000, dropped: 0, queued: 0 });
    // one INSERT per batch of at most batch-lines rows
    expect((await inserts()) - insertsBefore).toBeGreaterThanOrEqual(6);

    const rows = (
      await q("SELECT * FROM ib_events WHERE seq IN (0, 1, 1234, 2999) ORDER BY seq FORMAT JSONEachRow")
    )
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, string | number>);
    expect(rows.map((r) => Number(r.seq))).toEqual([0, 1, 1234, 2999]);
    const text = (e: ReturnType<typeof source.fill>, i: number): string =>
      Buffer.from(e.bytes[i]!.subarray(0, e.len[i]!)).toString("utf8");
    for (const { stored_at: storedAt, ...row } of rows) {
      const e = source.fill(Number(row.seq));
      // the sink stamps stored_at itself (its DEFAULT, filled because the INSERT names its columns), never 0
      expect(storedAt).not.toBe("0000-00-00 00:00:00");
      expect(Date.parse(`${String(storedAt).replace(" ", "T")}Z`)).toBeGreaterThan(Date.now() - 600_000);
      // ClickHouse's JSONEachRow output quotes 64-bit integers
      expect(row).toEqual({
        ts: String(e.num[0]),
        level: text(e, 1),
        code: String(e.num[2]),
        ratio: e.num[3],
        ok: e.num[4] ? 1 : 0,
        msg: text(e, 5),
        gen: 2,
        seq: row.seq,
        sent_at: String(sentAt.getTime()),
      });
    }
    expect((await q("SELECT groupUniqArray(ok) FROM ib_events")).trim()).toMatch(/^\[[01],[01]\]$/); // both values occur
    await collector.stop();
  });

  it("counts only 2xx answers as written: ClickHouse's 404 (no table) and 500 (refused insert) keep the batch queued and retried until a 2xx", async () => {
    const ch = scope.running.find((r) => r.name === "clickhouse")!;
    const q = async (sql: string): Promise<void> => {
      const r = await fetch(`http://127.0.0.1:${CH_HTTP_PORT}/`, { method: "POST", body: sql });
      if (r.status !== 200) throw new Error(`${sql}: HTTP ${r.status} ${await r.text()}`);
    };
    await q("DROP TABLE IF EXISTS default.late_events");
    const host = await scope.host();
    const collector = scope.keep(
      await syslogNg.startLocal(
        host,
        syslogNgSchema.parse({ port: CH_SYSLOG_PORT + 1, "batch-lines": 100, "time-reopen": 1 }),
        undefined,
        {
          sink: ch,
          params: { ...ch.params, table: "late_events" },
          fields: CH_FIELDS,
        },
      ),
    );
    await sendSyslogFrames(CH_SYSLOG_PORT + 1, {
      fields: CH_FIELDS,
      seed: 1,
      genId: 0,
      count: 250,
      sentAt: new Date(),
    });
    const logText = (): Promise<string> => readFile(join(host.dataDir, "syslog-ng.log"), "utf8");
    const waitFor = async (what: string, ok: () => Promise<boolean>): Promise<void> => {
      for (let i = 0; i < 150; i++) {
        if (await ok()) return;
        await sleep(100);
      }
      throw new Error(`timed out waiting for ${what}; log:\n${(await logText()).slice(-2000)}`);
    };
    // 1. no table: 404, retried after time-reopen(1), nothing written, nothing dropped
    await waitFor(
      "two 404 answers",
      async () => ((await logText()).match(/status_code='404'/g) ?? []).length >= 2,
    );
    expect(await collector.stats!()).toEqual({ received: 250, written: 0, dropped: 0, queued: 250 });
    // 2. a table whose msg column cannot hold the text: ClickHouse refuses the insert with 500
    await q(clickhouseCreateTable("default.late_events", CH_FIELDS).replace('"msg" String', '"msg" UInt64'));
    await waitFor(
      "two 500 answers",
      async () => ((await logText()).match(/status_code='500'/g) ?? []).length >= 2,
    );
    expect(await collector.stats!()).toEqual({ received: 250, written: 0, dropped: 0, queued: 250 });
    // 3. the right table: every queued message arrives, exactly once
    await q("DROP TABLE default.late_events");
    await q(clickhouseCreateTable("default.late_events", CH_FIELDS));
    await waitFor("all 250 written", async () => (await collector.stats!()).written === 250);
    expect(await collector.stats!()).toEqual({ received: 250, written: 250, dropped: 0, queued: 0 });
    const r = await fetch(`http://127.0.0.1:${CH_HTTP_PORT}/`, {
      method: "POST",
      body: "SELECT count(), uniqExact(seq) FROM default.late_events",
    });
    expect((await r.text()).trim()).toBe("250\t250");
    await collector.stop();
  });
});
