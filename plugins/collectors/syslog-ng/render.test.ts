/**
 * syslog-ng config renderer of the container platforms (plugins/collectors/syslog-ng/render.ts), against the real syslog-ng 3.38
 * installed here (Debian syslog-ng-core, -mod-sql, -mod-http): the container config for each sink is compared with
 * a golden file, parsed back so each scenario parameter is found under syslog-ng's own option name in the
 * destination, and accepted by `syslog-ng --syntax-only` (the check is shown to refuse a broken option). No
 * container runs here: the image's paths and entrypoint are the ones its published sources document.
 */
import { writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import { catalogEntry } from "../../../infra/catalog.ts";
import {
  checkSyntax,
  GENERATED_SEQ,
  parseSignals,
  parseStats,
  renderSyslogNgConfig,
  SYSLOG_NG_SINKS,
  syslogNgSchema,
} from "./component.ts";
import { renderCollector } from "../../../infra/render/index.ts";
import { plugin } from "./index.ts";
import type { SinkEndpoint } from "../../../core/render.ts";
import { collectorTestScope, syslogTestFields } from "../../../test/helpers/collector-test.ts";
import { expectGolden } from "../../../test/helpers/golden.ts";
import { withEnv } from "../../../test/helpers/env.ts";
import { spawnSync } from "node:child_process";

const fields = syslogTestFields("level");
const sink = (
  name: SinkEndpoint["name"],
  port: number,
  params: Record<string, string> = {},
): SinkEndpoint => ({ name, host: "10.213.7.12", port, params });
const scope = collectorTestScope("ib-test-render-syslog-ng-");
const scenariosDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../scenarios");

/**
 * The top-level options of a syslog-ng block body, `name(args)` separated by blanks, as syslog-ng's grammar nests
 * them: parentheses balance outside double-quoted strings (backslash escapes inside). Returns name → raw args.
 * @throws Error for text that is not a sequence of options, or a repeated option
 */
function options(body: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < body.length) {
    if (/\s/.test(body[i]!)) {
      i++;
      continue;
    }
    const m = /^[a-z][a-z0-9-]*\(/.exec(body.slice(i));
    if (!m) throw new Error(`not an option at ${JSON.stringify(body.slice(i, i + 30))}`);
    const name = m[0].slice(0, -1);
    let j = i + m[0].length;
    let depth = 1;
    let quoted = false;
    for (; j < body.length && depth > 0; j++) {
      const c = body[j]!;
      if (quoted) {
        if (c === "\\") j++;
        else if (c === '"') quoted = false;
      } else if (c === '"') quoted = true;
      else if (c === "(") depth++;
      else if (c === ")") depth--;
    }
    if (depth !== 0) throw new Error(`unbalanced option ${name}`);
    if (out.has(name)) throw new Error(`option ${name} given twice`);
    out.set(name, body.slice(i + m[0].length, j - 1));
    i = j;
  }
  return out;
}

/** The destination `d_sink`: its driver and the driver's top-level options. */
function destination(text: string): { driver: string; opts: Map<string, string> } {
  const m = /\ndestination d_sink \{\n {2}([a-z]+)\(([\s\S]*?)\);\n\};\n/.exec(text);
  if (!m) throw new Error("no destination d_sink { <driver>(...); };");
  return { driver: m[1]!, opts: options(m[2]!) };
}

describe("syslog-ng container renderer (real syslog-ng 3.38 --syntax-only; golden files; no container runs here)", () => {
  it("renders sql() into PostgreSQL at the image's path, each parameter under syslog-ng's own option name, as the golden file", () => {
    const block = {
      "batch-lines": 5000,
      "batch-timeout": 250,
      retries: 5,
      "time-reopen": 10,
      "log-fifo-size": 100000,
      "disk-buffer": { reliable: true, "disk-buf-size": 104857600, "mem-buf-size": 1048576 },
    };
    const r = renderCollector(
      "syslog-ng",
      block,
      sink("postgres", 5432, { database: "bench", table: "t004" }),
      fields,
    );
    expect(r.file).toBe("/etc/syslog-ng/syslog-ng.conf");
    expect(r.command).toEqual([
      "-e",
      "--no-caps",
      "-f",
      "/etc/syslog-ng/syslog-ng.conf",
      "-R",
      "/var/lib/syslog-ng/syslog-ng.persist",
      "-p",
      "/var/lib/syslog-ng/syslog-ng.pid",
      "-c",
      "/var/lib/syslog-ng/syslog-ng.ctl",
    ]);
    expect(r.listens).toEqual({ data: 5514 });
    expectGolden("syslog-ng", "syslog-postgres.conf", r.text);
    const d = destination(r.text);
    expect(d.driver).toBe("sql");
    expect(Object.fromEntries(d.opts)).toMatchObject({
      type: "pgsql",
      host: '"10.213.7.12"',
      port: '"5432"',
      database: '"bench"',
      table: '"t004"',
      username: '"postgres"',
      "batch-lines": "5000",
      "batch-timeout": "250",
      retries: "5",
      "time-reopen": "10",
      "log-fifo-size": "100000",
      flags: "explicit-commits, dont-create-tables",
    });
    expect(d.opts.has("workers")).toBe(false); // sql() has none in 3.38
    expect(Object.fromEntries(options(d.opts.get("disk-buffer")!))).toEqual({
      reliable: "yes",
      "disk-buf-size": "104857600",
      "mem-buf-size": "1048576",
      dir: '"/var/lib/syslog-ng/disk-buffer"',
    });
    // the source listens on the catalog's data port; the source window is the queue length
    expect(r.text).toContain(
      'syslog(transport("tcp") ip("0.0.0.0") port(5514) max-connections(16) log-iw-size(100000));',
    );
  });

  it("renders http() into ClickHouse with workers and batch-bytes under their syslog-ng names, as the golden file", () => {
    const block = { "batch-lines": 20000, "batch-bytes": 4194304, "batch-timeout": 1000, workers: 4 };
    const r = renderCollector("syslog-ng", block, sink("clickhouse", 8123, { table: "t001" }), fields);
    expectGolden("syslog-ng", "syslog-clickhouse.conf", r.text);
    const d = destination(r.text);
    expect(d.driver).toBe("http");
    expect(Object.fromEntries(d.opts)).toMatchObject({
      // the columns named, so that ClickHouse 18.16 fills the sink's stored_at with its DEFAULT
      url: '"http://10.213.7.12:8123/?query=INSERT%20INTO%20%22default%22.%22t001%22%20(%22ts%22%2C%20%22level%22%2C%20%22code%22%2C%20%22msg%22%2C%20%22gen%22%2C%20%22seq%22%2C%20%22sent_at%22)%20FORMAT%20JSONEachRow"',
      method: '"POST"',
      "batch-lines": "20000",
      "batch-bytes": "4194304",
      "batch-timeout": "1000",
      workers: "4",
      retries: "3",
      "time-reopen": "60",
      "log-fifo-size": "10000",
    });
    expect(d.opts.has("disk-buffer")).toBe(false);
  });

  it("with a sink password set, refers to the container's variable (`INGESTBENCH_<SINK>_PASSWORD`) and never holds it; the real syslog-ng substitutes it from its environment", async () => {
    const dir = await scope.tmp();
    const env = {
      INGESTBENCH_CLICKHOUSE_PASSWORD: "ch-Render+pw/1",
      INGESTBENCH_POSTGRES_PASSWORD: "pg-Render+pw/1",
    };
    await withEnv(env, async () => {
      const ch = renderCollector("syslog-ng", {}, sink("clickhouse", 8123, { user: "default" }), fields);
      const d = destination(ch.text);
      // http()'s user() and password() (Basic auth); no ?user= beside it
      expect(d.opts.get("user")).toBe('"default"');
      expect(d.opts.get("password")).toBe('"`INGESTBENCH_CLICKHOUSE_PASSWORD`"');
      expect(d.opts.get("url")).not.toContain("user=");
      const pg = renderCollector("syslog-ng", {}, sink("postgres", 5432), fields);
      expect(destination(pg.text).opts.get("password")).toBe('"`INGESTBENCH_POSTGRES_PASSWORD`"');
      for (const [r, name, value] of [
        [ch, "clickhouse", env.INGESTBENCH_CLICKHOUSE_PASSWORD],
        [pg, "postgres", env.INGESTBENCH_POSTGRES_PASSWORD],
      ] as const) {
        expect(r.text).not.toContain(value);
        const file = join(dir, `auth-${name}.conf`);
        await writeFile(file, r.text);
        expect(await checkSyntax(file), r.text).toBe("");
        const out = join(dir, `auth-${name}.pre`);
        const pre = spawnSync("syslog-ng", [`--preprocess-into=${out}`, "-f", file], {
          encoding: "utf8",
          env: { ...process.env },
          timeout: 20_000,
        });
        expect(pre.status, pre.stderr).toBe(0);
        expect(readFileSync(out, "utf8")).toContain(`password(${JSON.stringify(value)})`);
      }
    });
  });

  it("renders the container config for both sinks as the real syslog-ng --syntax-only accepts it, and the check refuses a broken option", async () => {
    const dir = await scope.tmp();
    const cases: Array<[SinkEndpoint, Record<string, unknown>]> = [
      [sink("postgres", 5432), { "disk-buffer": { "disk-buf-size": 10485760, "mem-buf-length": 5000 } }],
      [
        sink("clickhouse", 8123),
        { workers: 2, "batch-bytes": 1048576, "disk-buffer": { reliable: true, "disk-buf-size": 10485760 } },
      ],
    ];
    for (const [s, block] of cases) {
      const r = renderCollector("syslog-ng", block, s, fields);
      const file = join(dir, `${s.name}.conf`);
      await writeFile(file, r.text);
      expect(await checkSyntax(file), r.text).toBe("");
      const broken = join(dir, `${s.name}-broken.conf`);
      await writeFile(broken, r.text.replace("batch-lines(", "batch-linez("));
      expect(await checkSyntax(broken)).toMatch(/syntax error/);
    }
  });

  it("is the local component's renderer and schema with the container's paths: one text, one schema", () => {
    const r = plugin.render;
    expect(plugin.schema).toBe(syslogNgSchema);
    expect(plugin.local.name).toBe("syslog-ng");
    expect(r.writesTo).toEqual(SYSLOG_NG_SINKS);
    expect(r.writesTo).toEqual(["postgres", "clickhouse"]);
    expect(r.accepts(syslogNgSchema.parse({}))).toEqual(["syslog"]);
    const config = syslogNgSchema.parse({ "batch-lines": 700 });
    const s = sink("postgres", 5432);
    expect(r.render({ config, sink: s, fields }).text).toBe(
      renderSyslogNgConfig({ config, dir: "/var/lib/syslog-ng", sink: s, fields }),
    );
    // the catalog publishes the data port the config listens on, and names no metrics port (counters: syslog-ng-ctl)
    const entry = catalogEntry("syslog-ng");
    expect(entry.ports.filter((p) => p.role === "data").map((p) => p.port)).toEqual([
      r.render({ config, sink: s, fields }).listens.data,
    ]);
    expect(entry.ports.some((p) => p.role === "metrics")).toBe(false);
    expect(entry.dataDir).toBe("/var/lib/syslog-ng");
  });

  it("renders every cell of the syslog-ng scenarios for a container, the swept batch-lines and workers under their syslog-ng names", () => {
    const file = path.join(scenariosDir, "syslog-ng-clickhouse-batch-sweep.yaml");
    const sweep = loadScenarioFile(file);
    expect(planCells(sweep, file, { replicates: 1 })).toHaveLength(12); // the pairing check passes: syslog in, clickhouse out
    for (const cell of sweep.cells) {
      const { collector, sink, event } = cell.scenario;
      const d = destination(
        renderCollector(
          "syslog-ng",
          collector!.config,
          { name: "clickhouse", host: "10.213.7.12", port: 8123, params: {} },
          event,
        ).text,
      );
      expect(sink.name).toBe("clickhouse");
      expect(d.opts.get("batch-lines"), cell.id).toBe(String(cell.values["collector.syslog-ng.batch-lines"]));
      expect(d.opts.get("workers"), cell.id).toBe(String(cell.values["collector.syslog-ng.workers"]));
    }
    const pg = loadScenarioFile(path.join(scenariosDir, "syslog-ng-postgres.yaml"));
    const d = destination(
      renderCollector(
        "syslog-ng",
        pg.collector!.config,
        { name: "postgres", host: "10.213.7.12", port: 5432, params: {} },
        pg.event,
      ).text,
    );
    expect(Object.fromEntries(d.opts)).toMatchObject({
      "batch-lines": "1000",
      "batch-timeout": "200",
      "log-fifo-size": "20000",
    });
  });

  it("renders example-msg-generator() (generator: none) for both sinks as the golden file, num and freq under syslog-ng's names, gen/seq/sent_at as name-value pairs, accepted by the real --syntax-only", async () => {
    const dir = await scope.tmp();
    const block = { "example-msg-generator": { num: 5000, freq: 0.001 }, "log-fifo-size": 20000 };
    const pg = renderCollector("syslog-ng", block, sink("postgres", 5432), fields, 4096);
    expectGolden("syslog-ng", "example-msg-generator-postgres.conf", pg.text);
    const src = /\nsource s_gen \{\n {2}example-msg-generator\(([\s\S]*?)\);\n\};\n/.exec(pg.text);
    expect(src).not.toBeNull();
    const o = options(src![1]!);
    expect(Object.fromEntries([...o].filter(([k]) => k !== "values"))).toEqual({
      num: "5000",
      freq: "0.001",
      "log-iw-size": "20000",
    });
    // gen is this host's genBase, seq counts the made messages from 0, sent_at is the moment each was made
    expect(o.get("values")).toContain('".ib.gen" => "4096"');
    expect(o.get("values")).toContain(`".ib.seq" => "${GENERATED_SEQ}"`);
    expect(o.get("values")).toContain(
      '".ib.sent_at" => "${R_YEAR}-${R_MONTH}-${R_DAY}T${R_HOUR}:${R_MIN}:${R_SEC}.${R_MSEC}${R_TZOFFSET}"',
    );
    // both sources feed the destination: the syslog() one has no sender (readiness is a TCP connect to it)
    expect(pg.text).toContain("log { source(s_ib); source(s_gen);");
    expect(destination(pg.text).opts.get("values")).toBe(
      '"${.ib.ts}", "${.ib.level}", "${.ib.code}", "${.ib.msg}", "${.ib.gen}", "${.ib.seq}", "${.ib.sent_at}"',
    );
    // ClickHouse: the epoch-ms pairs the generator set, no date-parser()
    const ch = renderCollector("syslog-ng", { ...block, workers: 2 }, sink("clickhouse", 8123), fields, 4096);
    expect(ch.text).not.toContain("date-parser");
    expect(destination(ch.text).opts.get("body")).toContain("sent_at=int64(${.ibms.sent_at})");
    expect(destination(ch.text).opts.get("workers")).toBe("2");
    for (const [name, r] of [
      ["postgres", pg],
      ["clickhouse", ch],
    ] as const) {
      const file = join(dir, `gen-${name}.conf`);
      await writeFile(file, r.text);
      expect(await checkSyntax(file), r.text).toBe("");
    }
    // without the block nothing of it is rendered
    expect(renderCollector("syslog-ng", {}, sink("postgres", 5432), fields).text).not.toContain("s_gen");
    // idle (the deploy-time config of a docker stack, RenderInput.idle): the config without the block, byte for byte
    expect(
      renderCollector("syslog-ng", block, sink("postgres", 5432), fields, 4096, { idle: true }).text,
    ).toBe(
      renderCollector("syslog-ng", { "log-fifo-size": 20000 }, sink("postgres", 5432), fields, 4096).text,
    );
  });

  it("counts what example-msg-generator() made from syslog-ng-ctl stats (source s_gen processed), only when the config has it", () => {
    const csv = [
      "SourceName;SourceId;SourceInstance;State;Type;Number",
      "src.none;s_gen#0;;a;processed;4000",
      "source;s_gen;;a;processed;4000",
      "source;s_ib;;a;processed;0",
      "dst.sql;d_sink#0;sql,pgsql,10.77.0.13,5432,postgres,ib_events;a;written;3990",
      "dst.sql;d_sink#0;sql,pgsql,10.77.0.13,5432,postgres,ib_events;a;queued;10",
    ].join("\n");
    expect(parseStats(csv)).toEqual({ received: 0, generated: 4000, written: 3990, dropped: 0, queued: 10 });
    expect(parseSignals(csv)).toMatchObject({
      "s_gen.processed": 4000,
      "s_ib.processed": 0,
      "d_sink#0.written": 3990,
    });
    expect(parseStats(csv.replace(/^.*s_gen.*$/gm, ""))).not.toHaveProperty("generated");
  });

  it("refuses an unpublished port, options sql() lacks, sinks it cannot write into and unknown keys, naming the field", () => {
    expect(() => renderCollector("syslog-ng", { port: 6514 }, sink("postgres", 5432), fields)).toThrow(
      /collector\.syslog-ng\.port: 6514 is not published .* data port 5514/,
    );
    expect(() => renderCollector("syslog-ng", { workers: 2 }, sink("postgres", 5432), fields)).toThrow(
      /collector\.syslog-ng\.workers: .*sql\(\) destination has no workers\(\)/,
    );
    expect(() => renderCollector("syslog-ng", {}, sink("loki", 3100), fields)).toThrow(
      /collector syslog-ng cannot write into sink "loki" \(supported: postgres, clickhouse\)/,
    );
    expect(() => renderCollector("syslog-ng", { batch_lines: 10 }, sink("clickhouse", 8123), fields)).toThrow(
      /collector\.syslog-ng: Unrecognized key.*batch_lines/,
    );
    expect(() =>
      renderCollector("syslog-ng", { "batch-lines": 0 }, sink("clickhouse", 8123), fields),
    ).toThrow(/collector\.syslog-ng\.batch-lines: /);
  });
});
