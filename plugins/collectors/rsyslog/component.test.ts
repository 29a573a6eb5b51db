// The rsyslog collector component against the real rsyslog 8.2302 (Debian rsyslog, rsyslog-pgsql) and the real
// embedded PostgreSQL: rendered configs pass `rsyslogd -N1` with every scenario parameter under rsyslog's own name,
// the version probe reads the installed binary, a pin mismatch refuses to start naming both versions, and real
// RFC 5424 frames from the syslog encoder land in the verifier's table with every field in its column.
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { collectors } from "../../registry.ts";
import {
  checkConfig,
  impstatsReader,
  impstatsSignals,
  insertTemplate,
  matchesRsyslogPin,
  parseImpstats,
  probeRsyslogVersion,
  renderRsyslogConfig,
  RSYSLOG_PREFIX,
  rsyslogInstall,
  RSYSLOG_PIN,
  rsyslog,
  rsyslogSchema,
} from "./component.ts";
import { syslogColumns } from "../../../core/events/syslog-columns.ts";
import {
  collectorTestScope,
  expectRefusesPin,
  longLinesFile,
  pipeIntoPostgres,
  scenarioPlanning,
  RENDER_PG_SINK,
  syslogTestFields,
} from "../../../test/helpers/collector-test.ts";

const PG_PORT = 5473;
const SYSLOG_PORT = 5526;
const PG_PORT_LONG = 5494;
const SYSLOG_PORT_LONG = 5537;
const FIELDS = syslogTestFields("Level");
const SINK = RENDER_PG_SINK;

const scope = collectorTestScope("ib-test-rsyslog-");
const tmp = scope.tmp;

/** The parameters of the action a_sink in a rendered config, as name → value. */
function actionParams(text: string): Record<string, string> {
  const m = /action\(name="a_sink"([^)]*)\)/s.exec(text);
  expect(m, text).not.toBeNull();
  return Object.fromEntries([...m![1]!.matchAll(/([\w.]+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
}

describe("rsyslog component: config", () => {
  it("renders each scenario parameter under rsyslog's own name, in configs the real rsyslogd -N1 accepts", async () => {
    const dir = await tmp();
    await mkdir(join(dir, "work")); // the work directory startLocal creates
    for (const [i, raw] of [
      {},
      {
        "queue.type": "FixedArray",
        "queue.size": 50000,
        "queue.dequeueBatchSize": 256,
        "queue.workerThreads": 4,
        "queue.timeoutEnqueue": 0,
        "action.resumeRetryCount": 10,
      },
      { "queue.dequeueBatchSize": 5000, "action.resumeRetryCount": -1, port: 6514 },
    ].entries()) {
      const config = rsyslogSchema.parse(raw);
      const text = renderRsyslogConfig({ config, dir, sink: SINK, fields: FIELDS });
      const file = join(dir, `c${i}.conf`);
      await writeFile(file, text);
      expect(await checkConfig(file), text).toBe("");
      expect(actionParams(text)).toMatchObject({
        type: "ompgsql",
        server: "10.214.0.3",
        port: "5432",
        db: "postgres",
        user: "postgres",
        template: "t_ib_insert",
        "queue.type": config["queue.type"],
        "queue.size": String(config["queue.size"]),
        "queue.dequeueBatchSize": String(config["queue.dequeueBatchSize"]),
        "queue.workerThreads": String(config["queue.workerThreads"]),
        "queue.timeoutEnqueue": String(config["queue.timeoutEnqueue"]),
        "action.resumeRetryCount": String(config["action.resumeRetryCount"]),
      });
      expect(text).toContain(`main_queue(queue.timeoutEnqueue="${config["queue.timeoutEnqueue"]}")`);
      expect(text).toContain(
        `input(type="imtcp" name="i_ib" port="${config.port}" ruleset="r_ib" supportOctetCountedFraming="on")`,
      );
      expect(text).toContain('ruleset(name="r_ib" parser="rsyslog.rfc5424")');
      expect(text).toContain('action(type="mmpstrucdata" sd_name.lowercase="off")');
      expect(text).toContain(`log.file="${join(dir, "impstats.json")}"`);
      // not a daemon of the system: no /dev/log, no kernel log
      expect(text).not.toMatch(/imuxsock|imklog|imjournal/);
    }
    // and rejections do come back (the check is real)
    const bad = join(dir, "bad.conf");
    await writeFile(
      bad,
      renderRsyslogConfig({ config: rsyslogSchema.parse({}), dir, sink: SINK, fields: FIELDS }).replace(
        "queue.workerThreads=",
        "queue.workerthreadz=",
      ),
    );
    expect(await checkConfig(bad)).toMatch(/queue\.workerthreadz/);
  });

  it("renders one INSERT per message: the last string field from MSG, every other field, gen, seq, sent_at from the SD element, empty as NULL", () => {
    expect(
      syslogColumns(FIELDS).map((c) => [
        c.column,
        c.from.part === "msg" ? "MSG" : `${c.from.sdId}/${c.from.param}`,
      ]),
    ).toEqual([
      ["ts", "ib@32473/ts"],
      ["Level", "ib@32473/Level"],
      ["code", "ib@32473/code"],
      ["msg", "MSG"],
      ["gen", "ib@32473/gen"],
      ["seq", "ib@32473/seq"],
      ["sent_at", "ib@32473/sent_at"],
    ]);
    expect(insertTemplate("public.ib_events", FIELDS)).toEqual([
      `constant(value="INSERT INTO \\"public\\".\\"ib_events\\" (\\"ts\\", \\"Level\\", \\"code\\", \\"msg\\", \\"gen\\", \\"seq\\", \\"sent_at\\") VALUES (NULLIF('")`,
      'property(name="$!rfc5424-sd!ib@32473!ts")',
      `constant(value="','')::timestamptz, NULLIF('")`,
      'property(name="$!rfc5424-sd!ib@32473!Level")',
      `constant(value="','')::text, NULLIF('")`,
      'property(name="$!rfc5424-sd!ib@32473!code")',
      `constant(value="','')::bigint, NULLIF('")`,
      'property(name="msg")',
      `constant(value="','')::text, NULLIF('")`,
      'property(name="$!rfc5424-sd!ib@32473!gen")',
      `constant(value="','')::bigint, NULLIF('")`,
      'property(name="$!rfc5424-sd!ib@32473!seq")',
      `constant(value="','')::bigint, NULLIF('")`,
      'property(name="$!rfc5424-sd!ib@32473!sent_at")',
      `constant(value="','')::timestamptz)")`,
    ]);
  });

  it("has a strict schema in rsyslog's own option names", () => {
    expect(rsyslogSchema.parse({})).toMatchObject({
      version: RSYSLOG_PIN,
      "queue.type": "LinkedList",
      "queue.size": 20000,
      "queue.dequeueBatchSize": 1000,
      "queue.workerThreads": 1,
      "action.resumeRetryCount": -1,
      port: 5514,
    });
    expect(rsyslogSchema.safeParse({ queue_size: 10 }).success).toBe(false);
    expect(rsyslogSchema.safeParse({ "queue.dequeuebatchsize": 10 }).success).toBe(false); // spelled as rsyslog's docs
    expect(rsyslogSchema.safeParse({ "queue.type": "Direct" }).success).toBe(false);
    expect(rsyslogSchema.safeParse({ "queue.size": 10 }).success).toBe(false);
    expect(rsyslogSchema.safeParse({ "action.resumeRetryCount": -2 }).success).toBe(false);
    expect(() =>
      renderRsyslogConfig({
        config: rsyslogSchema.parse({}),
        dir: "/tmp",
        sink: { ...SINK, name: "clickhouse" },
        fields: FIELDS,
      }),
    ).toThrow(/cannot write into sink "clickhouse"/);
  });

  it("parses impstats JSON lines into claimed counts, the last record of each name", () => {
    const lines = (
      received: number,
      processed: number,
      failed: number,
      qsize: number,
      discarded: number,
    ): string[] => [
      `Sun Nov 29 22:30:16 2026: { "name": "action-0-mmpstrucdata", "origin": "core.action", "processed": ${received}, "failed": 0, "suspended": 0, "suspended.duration": 0, "resumed": 0 }`,
      `Sun Nov 29 22:30:16 2026: { "name": "a_sink", "origin": "core.action", "processed": ${processed}, "failed": ${failed}, "suspended": 0, "suspended.duration": 0, "resumed": 0 }`,
      `Sun Nov 29 22:30:16 2026: { "name": "i_ib(5514)", "origin": "imtcp", "submitted": ${received} }`,
      `Sun Nov 29 22:30:16 2026: { "name": "a_sink queue", "origin": "core.queue", "size": ${qsize}, "enqueued": ${received}, "full": 0, "discarded.full": ${discarded}, "discarded.nf": 0, "maxqsize": 1830 }`,
      `Sun Nov 29 22:30:16 2026: { "name": "main Q", "origin": "core.queue", "size": 2, "enqueued": ${received + 1}, "full": 0, "discarded.full": 0, "discarded.nf": 1, "maxqsize": 2744 }`,
    ];
    const text = [
      ...lines(1000, 900, 0, 100, 0),
      ...lines(3000, 2800, 5, 150, 40),
      'Sun Nov 29 22:30:17 2026: { "name": "a_sink", "orig',
    ].join("\n");
    expect(parseImpstats(text)).toEqual({ received: 3000, written: 2795, dropped: 5 + 40 + 1, queued: 152 });
    expect(parseImpstats("")).toEqual({ received: 0, written: 0, dropped: 0, queued: 0 });
  });

  it("reads impstats incrementally for the series: only what was appended, a half-written line kept for the next read", async () => {
    const file = join(await tmp(), "impstats.json");
    const read = impstatsReader(file);
    expect(impstatsSignals(await read())).toEqual({}); // not written yet
    const rec = (name: string, counters: Record<string, number>, origin = "core.queue"): string =>
      `Sun Nov 29 22:30:16 2026: ${JSON.stringify({ name, origin, ...counters })}\n`;
    await writeFile(
      file,
      rec("a_sink queue", {
        size: 300,
        enqueued: 1000,
        full: 1,
        "discarded.full": 0,
        "discarded.nf": 0,
        maxqsize: 900,
      }) +
        rec(
          "a_sink",
          { processed: 700, failed: 0, suspended: 2, "suspended.duration": 30, resumed: 2 },
          "core.action",
        ),
    );
    expect(impstatsSignals(await read())).toEqual({
      "a_sink queue.size": 300,
      "a_sink queue.enqueued": 1000,
      "a_sink queue.full": 1,
      "a_sink queue.discarded.full": 0,
      "a_sink queue.discarded.nf": 0,
      "a_sink queue.maxqsize": 900,
      "a_sink.processed": 700,
      "a_sink.failed": 0,
      "a_sink.suspended": 2,
      "a_sink.suspended.duration": 30,
      "a_sink.resumed": 2,
    });
    const next =
      rec("a_sink queue", {
        size: 0,
        enqueued: 1500,
        full: 1,
        "discarded.full": 4,
        "discarded.nf": 0,
        maxqsize: 900,
      }) + rec("i_ib(5514)", { submitted: 1500 }, "imtcp");
    await appendFile(file, next.slice(0, 40)); // impstats is mid-line
    expect(impstatsSignals(await read())["a_sink queue.size"]).toBe(300);
    await appendFile(file, next.slice(40));
    expect(impstatsSignals(await read())).toMatchObject({
      "a_sink queue.size": 0,
      "a_sink queue.enqueued": 1500,
      "a_sink queue.discarded.full": 4,
      "a_sink.processed": 700,
      "i_ib.submitted": 1500,
    });
  });

  it("is registered as a collector that receives syslog and writes into postgres; other pairings are refused before provisioning", async () => {
    expect(collectors.rsyslog.local).toBe(rsyslog);
    expect(rsyslog.kind).toBe("collector");
    const dir = await tmp();
    expect(
      await scenarioPlanning(dir, {
        name: "pairing",
        generator: "{ pg-copy: { batch: 100 } }",
        collector: "{ rsyslog: {} }",
      }),
    ).toThrow(/receives syslog, not the "pg-copy" generator/);
    expect(
      await scenarioPlanning(dir, {
        name: "typo",
        generator: "{ syslog: { batch: 100 } }",
        collector: "{ rsyslog: { queue.dequeueBatchsize: 10 } }",
      }),
    ).toThrow(/queue\.dequeueBatchsize/);
  });
});

describe("rsyslog component: version", () => {
  it("probes the installed rsyslogd and matches the 8.2302 pin by major.minor", async () => {
    const v = await probeRsyslogVersion();
    expect(v).toMatch(/^8\.2302\.\d+$/);
    expect(matchesRsyslogPin(RSYSLOG_PIN, v)).toBe(true);
    expect(matchesRsyslogPin("8.230", v)).toBe(false);
    expect(matchesRsyslogPin("8.2402", v)).toBe(false);
    expect(matchesRsyslogPin(v, v)).toBe(true);
    await expect(probeRsyslogVersion("/nonexistent/rsyslogd")).rejects.toThrow(
      /run scripts\/install-rsyslog.sh/,
    );
  });

  it("runs the copy scripts/install-rsyslog.sh unpacked beside syslog-ng (apt cannot install both), with its own modules", () => {
    const install = rsyslogInstall();
    expect(install.binary).toBe(`${RSYSLOG_PREFIX}/usr/sbin/rsyslogd`);
    expect(install.moduleDir).toMatch(new RegExp(`^${RSYSLOG_PREFIX}/usr/lib/[^/]+/rsyslog$`));
    // without the prefix, the system's rsyslogd on PATH
    expect(rsyslogInstall("/nonexistent-prefix")).toEqual({ binary: "rsyslogd" });
  });

  it("refuses to start on a pin mismatch, naming both versions, and starts nothing", async () => {
    await expectRefusesPin(scope, FIELDS, "8.2402", await probeRsyslogVersion(), (host, downstream) =>
      rsyslog.startLocal(host, rsyslogSchema.parse({ version: "8.2402" }), undefined, downstream),
    );
  });
});

describe("rsyslog component: a real pipeline into PostgreSQL", () => {
  it("stores every frame of the syslog encoder with each field in its column, one transaction per dequeued batch", async () => {
    const { collector, stats, sizes } = await pipeIntoPostgres(scope, {
      pgPort: PG_PORT,
      syslogPort: SYSLOG_PORT,
      fields: FIELDS,
      start: (host, downstream) =>
        rsyslog.startLocal(
          host,
          rsyslogSchema.parse({ port: SYSLOG_PORT, "queue.dequeueBatchSize": 500 }),
          undefined,
          downstream,
        ),
    });
    expect(collector.running).toBe(await probeRsyslogVersion());
    expect(stats).toEqual({ received: 2000, written: 2000, dropped: 0, queued: 0 });
    // the series' signals from the same impstats file, read without waiting (the claims above waited for a record)
    expect(await collector.signals!()).toMatchObject({
      "i_ib.submitted": 2000,
      "a_sink.processed": 2000,
      "a_sink.failed": 0,
      "a_sink.suspended": 0,
      "a_sink queue.size": 0,
      "a_sink queue.enqueued": 2000,
      "a_sink queue.discarded.full": 0,
      "main Q.size": 0,
    });
    // ompgsql is transactional: one transaction (one xmin) per dequeued batch of at most queue.dequeueBatchSize rows
    expect(Math.max(...sizes)).toBeLessThanOrEqual(500);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    expect(sizes.length).toBeGreaterThanOrEqual(4);
  });

  it("stores replayed lines at the generators' 64 KiB cut whole: maxMessageSize and imtcp's maxFrameSize are above the largest frame (maxSyslogMessageBytes)", async () => {
    const { stats } = await pipeIntoPostgres(scope, {
      pgPort: PG_PORT_LONG,
      syslogPort: SYSLOG_PORT_LONG,
      fields: FIELDS,
      replayFile: await longLinesFile(scope),
      // rsyslog's default escapes the TAB (#011): the bytes as sent only with the escaping off
      start: (host, downstream) =>
        rsyslog.startLocal(
          host,
          rsyslogSchema.parse({ port: SYSLOG_PORT_LONG, "parser.escapeControlCharactersOnReceive": "off" }),
          undefined,
          downstream,
        ),
    });
    expect(stats).toEqual({ received: 2000, written: 2000, dropped: 0, queued: 0 });
  });
});
