/**
 * Collector component "syslog-ng": syslog-ng 3.38 from Debian (syslog-ng-core; syslog-ng-mod-sql with libdbd-pgsql
 * for the sql() destination, syslog-ng-mod-http for http()), pinned by "major.minor" ("3.38" is satisfied by 3.38.1).
 *
 * Pipeline rendered into <dataDir>/syslog-ng/syslog-ng.conf, one structure for every sink (SINK_DRIVERS holds only
 * what differs):
 * - source: syslog(transport("tcp")) on `port` of every address of the host: RFC 5424 messages in RFC 6587
 *   octet-counting frames (what the `syslog` generator sends), with flow control, so that a full queue pushes back
 *   on the sender over TCP instead of dropping; the global `log-msg-size()` is above the largest message the generator
 *   can send for the scenario's fields (core/events/syslog.ts maxSyslogMessageBytes; never below the default 65536),
 *   since a longer frame closes its connection and what queued behind it is lost;
 * - columns: the scenario's fields, then gen, seq, sent_at, found where the syslog encoder puts them
 *   (core/events/syslog-columns.ts): the last string field is MSG (`${MESSAGE}`), the others PARAMs of `[ib@32473 ...]`;
 * - destination into the sink's DATA address (the shaped link), into the table the verifier created:
 *   - postgres: sql(type(pgsql)), `dont-create-tables`, no indexes, `flags(explicit-commits)`: one transaction per
 *     batch; values are the texts as the message carries them (PostgreSQL parses the ISO timestamps);
 *   - clickhouse: http() POSTing `INSERT INTO <db>.<table> (<cols>) FORMAT JSONEachRow` to ClickHouse's HTTP interface, one
 *     $(format-json) object per message, typed as the ClickHouse verifier's table (timestamps as UInt64 epoch ms,
 *     made by date-parser(); ints and floats as JSON numbers; bools as 0/1): one INSERT per batch.
 *
 * Scenario parameters are spelled as syslog-ng spells them: batch-lines, batch-bytes, batch-timeout (ms), workers,
 * retries, time-reopen (s), log-fifo-size, disk-buffer. An option the sink's destination lacks in 3.38 (workers > 1
 * or batch-bytes with sql()) is refused with a ConfigurationError rather than silently ignored; http() has real
 * worker threads, each with its own connection and batch.
 *
 * Process: `syslog-ng -F` + syslogNgArgs (`-e --no-caps -f <conf> -R <persist> -p <pidfile> -c <control socket>`,
 * all under <dataDir>/syslog-ng, see syslogNgPaths) through host.spawn; ready when a TCP connect to the source port
 * succeeds (≤ 30 s); stop = SIGTERM, ≤ 10 s, then SIGKILL. The container platforms render the same text and command
 * line with the image's paths (plugins/collectors/syslog-ng/render.ts): only the paths differ, so they are inputs here.
 * Version: `syslog-ng --version` ("syslog-ng 3 (3.38.1)"), compared with the pin before the process starts.
 * Claimed counts: `syslog-ng-ctl stats -c <control socket>` (received by the source; written, dropped, queued by the
 * destination, whichever driver it is); the same command every sample interval gives the series' signals per
 * destination (parseSignals).
 */
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { sinkPassword, writeSecretFile } from "../../../core/secrets.ts";
import { join } from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { parseCollectorConfig, requireDownstream } from "../../../core/collector.ts";
import { ConfigurationError, ProvisioningError, VerificationError } from "../../../core/errors.ts";
import { quoteIdent, quoteTable } from "../../../core/events/copy-text.ts";
import { maxSyslogMessageBytes, SYSLOG_SD_ID } from "../../../core/events/syslog.ts";
import type { EventField } from "../../../core/events/types.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import {
  listeningCollector,
  matchesVersionPrefix,
  probeVersion,
  startListeningDaemon,
} from "../../../core/process.ts";
import { syslogColumns, type SyslogColumn } from "../../../core/events/syslog-columns.ts";
import type { ComponentFactory, Downstream, RunningComponent } from "../../../core/component.ts";

const execFileP = promisify(execFile);

/** The catalog's pin: Debian 12's syslog-ng-core. */
export const SYSLOG_NG_PIN = "3.38";
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
/** Source connections syslog-ng accepts; the source window (log-iw-size) is shared among them. */
const MAX_CONNECTIONS = 16;

/** Scenario block `collector.syslog-ng`. */
export const syslogNgSchema = z
  .object({
    /** "major.minor" (or a full version) the running syslog-ng must report; default the catalog's pin */
    version: z
      .string()
      .regex(/^\d+\.\d+(\.\d+)?$/, 'a version like "3.38"')
      .default(SYSLOG_NG_PIN),
    /** rows per transaction of the destination (sql explicit-commits) */
    "batch-lines": z.number().int().positive().max(10_000_000).default(1000),
    /** ms after which a partial batch is committed; omitted = syslog-ng's default (-1: a partial batch is
     *  committed when the queue runs empty); syslog-ng's grammar takes no negative number here */
    "batch-timeout": z.number().int().positive().max(3_600_000).optional(),
    /** bytes of a batch after which it is sent (http() only; sql() in 3.38 has no batch-bytes); omitted = no limit */
    "batch-bytes": z.number().int().positive().max(2_147_483_647).optional(),
    /** destination worker threads, each with its own connection and batch (http(); sql() in 3.38 has none: more
     *  than 1 is refused for PostgreSQL) */
    workers: z.number().int().min(1).max(64).default(1),
    /** times a failed batch is retried before it is dropped (syslog-ng's default 3) */
    retries: z.number().int().min(1).max(1_000_000).default(3),
    /** seconds syslog-ng waits before retrying a failed batch or reconnecting (syslog-ng's default 60) */
    "time-reopen": z.number().int().min(1).max(3600).default(60),
    /** destination queue length in messages; also the source window (flow control), split over 16 connections */
    "log-fifo-size": z
      .number()
      .int()
      .min(MAX_CONNECTIONS * 100)
      .max(100_000_000)
      .default(10_000),
    /** optional disk buffer of the destination, in <dataDir>/syslog-ng/disk-buffer */
    "disk-buffer": z
      .object({
        reliable: z.boolean().default(false),
        "disk-buf-size": z.number().int().min(1_048_576),
        "mem-buf-length": z.number().int().positive().optional(),
        "mem-buf-size": z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    /** TCP port of the syslog source on the host's addresses */
    port: z.number().int().min(1).max(65535).default(5514),
    /**
     * syslog-ng's own load (a scenario with `generator: none`): the example-msg-generator() source of the
     * syslog-ng-mod-examples module makes the events inside syslog-ng, one per timer tick, in syslog-ng's own option
     * names: `num` messages (then it stops: required, so that the load ends), one every `freq` seconds (syslog-ng
     * keeps it in whole milliseconds; 0 = as fast as its event loop turns; syslog-ng's default 1). See
     * renderSyslogNgConfig for the seq it stamps and exampleMsgGeneratorSource for what it is read back by.
     */
    "example-msg-generator": z
      .object({
        num: z.number().int().min(1).max(1_000_000_000),
        freq: z
          .number()
          .min(0)
          .max(1)
          .default(1)
          .refine((f) => Number.isInteger(Math.round(f * 1e6) / 1e3), {
            message:
              "syslog-ng keeps freq in whole milliseconds (freq × 1000 as an integer): e.g. 0.001, 0.01 or 0",
          }),
      })
      .strict()
      .optional(),
  })
  .strict();

export type SyslogNgConfig = z.infer<typeof syslogNgSchema>;

/** "3.38" is satisfied by "3.38" and "3.38.1"; "3.38.1" only by "3.38.1". */
export const matchesSyslogNgPin = matchesVersionPrefix;

/** Version of the installed syslog-ng, from `syslog-ng --version` ("syslog-ng 3 (3.38.1)" → "3.38.1"). */
export function probeSyslogNgVersion(binary = "syslog-ng"): Promise<string> {
  return probeVersion({
    binary,
    args: ["--version"],
    patterns: [/^syslog-ng \d+ \((\d+\.\d+(?:\.\d+)?)/m, /Installer-Version:\s*(\d+\.\d+(?:\.\d+)?)/],
    code: "E_SYSLOG_NG",
    installHint: "install the Debian package syslog-ng-core",
  });
}

/** A syslog-ng string literal (double-quoted; backslash and quote escaped). */
function str(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * The files syslog-ng uses besides its config text. They differ between the local platform (all under
 * <dataDir>/syslog-ng) and a container (the image reads /etc/syslog-ng/syslog-ng.conf and keeps its state in
 * /var/lib/syslog-ng, the Debian build's localstatedir), so the renderer and the command line take them as input.
 */
export interface SyslogNgPaths {
  /** the rendered config (`-f`) */
  conf: string;
  /** persist file (`-R`): source positions and disk-buffer file names kept across restarts */
  persist: string;
  /** control socket (`-c`), which `syslog-ng-ctl stats -c` reads the claimed counts from */
  control: string;
  /** pid file (`-p`) */
  pid: string;
  /** disk-buffer(dir(...)); syslog-ng 3.38 creates it, parents included, when missing */
  diskBuffer: string;
}

/** The paths of a syslog-ng whose state lives in `dir`: `<dir>/syslog-ng.{persist,ctl,pid}`, `<dir>/disk-buffer`; the config `conf`, else `<dir>/syslog-ng.conf`. */
export function syslogNgPaths(dir: string, conf = join(dir, "syslog-ng.conf")): SyslogNgPaths {
  return {
    conf,
    persist: join(dir, "syslog-ng.persist"),
    control: join(dir, "syslog-ng.ctl"),
    pid: join(dir, "syslog-ng.pid"),
    diskBuffer: join(dir, "disk-buffer"),
  };
}

/**
 * syslog-ng's command line after `-F` (foreground, which the balabit/syslog-ng image's entrypoint
 * `/usr/sbin/syslog-ng -F` already gives): `-e` internal messages to stderr (the daemon log, `docker logs`),
 * `--no-caps` (syslog-ng asks for capabilities a container is not granted by default: the image's README, FAQ
 * "capabilities"; nothing here binds below port 1024), then the paths.
 */
export function syslogNgArgs(paths: SyslogNgPaths): string[] {
  return ["-e", "--no-caps", "-f", paths.conf, "-R", paths.persist, "-p", paths.pid, "-c", paths.control];
}

export interface RenderInput {
  config: SyslogNgConfig;
  /** syslog-ng's state directory (syslogNgPaths(dir)): the disk buffer goes in <dir>/disk-buffer */
  dir: string;
  /** the sink's data endpoint and connection params (database, user, table) */
  sink: { name: string; host: string; port: number; params: Record<string, string> };
  fields: readonly EventField[];
  /** SD-ID of the element carrying the fields; default "ib@32473" */
  sdId?: string;
  /**
   * the `gen` of the events example-msg-generator() makes (the run's genBase + this collector host's generator
   * index, core/ledger.ts "Run identity"); used only with `example-msg-generator`; default 0
   */
  genBase?: number;
}

/** The syslog-ng template of a column's text, as the message carries it: `${MESSAGE}` or `${.SDATA.<sdId>.<param>}`. */
function textTemplate(c: SyslogColumn): string {
  return c.from.part === "msg" ? "${MESSAGE}" : `\${.SDATA.${c.from.sdId}.${c.from.param}}`;
}

/** `${.ib.<column>}`: where the events example-msg-generator() makes carry a column's text (exampleMsgGeneratorSource). */
function madeTemplate(c: SyslogColumn): string {
  return `\${.ib.${c.column}}`;
}

/** The template of a column's text: as the syslog message carries it, or (self-load) as the generator set it. */
function columnText(c: SyslogColumn, selfLoad: boolean): string {
  return selfLoad ? madeTemplate(c) : textTemplate(c);
}

/** The columns and the template of each (the text as the message carries it), in table order: the fields, then gen, seq, sent_at. */
export function columnTemplates(fields: readonly EventField[], sdId = SYSLOG_SD_ID): Array<[string, string]> {
  return syslogColumns(fields, sdId).map((c) => [c.column, textTemplate(c)]);
}

/** date-parser() format of the encoder's timestamps (`2026-01-02T03:04:05.678Z`; %f = fraction, %z accepts "Z"). */
const ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%f%z";

/**
 * Epoch-millisecond templates of the timestamp columns, and the parsers that make them. The header TIMESTAMP is the
 * event's first timestamp field (core/events/syslog.ts), already parsed by the syslog() source into the message's
 * own stamp: `${S_UNIXTIME}${S_MSEC}` (seconds, then 3 digits of ms; frac-digits stays 0). Every other timestamp
 * (sent_at included) is parsed by date-parser() into the received stamp, which a rewrite then copies, as epoch ms,
 * into `.ib.<column>` before the next one is parsed (one message has only two stamps).
 */
function epochMsColumns(
  cols: readonly SyslogColumn[],
  fields: readonly EventField[],
  selfLoad: boolean,
): { parsers: string[]; ms: Map<string, string> } {
  const header = fields.find((f) => f.type === "timestamp")?.name;
  const parsers: string[] = [];
  const ms = new Map<string, string>();
  for (const c of cols) {
    if (c.type !== "timestamp") continue;
    // the generator set the epoch ms itself (exampleMsgGeneratorSource): nothing to parse
    if (selfLoad) {
      ms.set(c.column, `\${.ibms.${c.column}}`);
      continue;
    }
    if (c.column === header && c.from.part === "sd" && c.from.param === header) {
      ms.set(c.column, "${S_UNIXTIME}${S_MSEC}");
      continue;
    }
    const value = `.ib.${c.column}`;
    parsers.push(
      `parser { date-parser(format(${str(ISO_FORMAT)}) template(${str(textTemplate(c))}) time-stamp(recvd)); };`,
    );
    parsers.push(`rewrite { set("\${R_UNIXTIME}\${R_MSEC}" value(${str(value)})); };`);
    ms.set(c.column, `\${${value}}`);
  }
  return { parsers, ms };
}

/**
 * The $(format-json) pair of a column for ClickHouse, typed as the table the ClickHouse verifier creates
 * (plugins/sinks/clickhouse/verifier.ts CLICKHOUSE_TYPES): string → String, the text; int (and gen UInt32, seq UInt64) →
 * int64(); float → Float64, double(); timestamp (and sent_at) → UInt64 epoch ms, int64(); bool → UInt8, int64(1 or 0)
 * from the encoder's "true"/"false". The type hints make format-json write JSON numbers (value-pairs type hinting).
 */
function clickhouseJsonPair(c: SyslogColumn, ms: ReadonlyMap<string, string>, selfLoad: boolean): string {
  const text = columnText(c, selfLoad);
  switch (c.type) {
    case "string":
      return `${c.column}=${text}`;
    case "timestamp":
      return `${c.column}=int64(${ms.get(c.column)!})`;
    case "int":
      return `${c.column}=int64(${text})`;
    case "float":
      return `${c.column}=double(${text})`;
    case "bool":
      return `${c.column}=int64($(if ("${text}" eq "true") "1" "0"))`;
    default: {
      const never: never = c.type;
      throw new ConfigurationError(
        "E_COLLECTOR_SINK",
        `column ${c.column}: no JSONEachRow mapping for field type ${String(never)}`,
        { field: "event" },
      );
    }
  }
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** What differs between the destinations syslog-ng writes a sink with; everything else is rendered once. */
interface SinkDriver {
  /** syslog-ng's driver; its stats rows are named `dst.<driver>` */
  driver: "sql" | "http";
  /** options of the scenario block this driver does not have in syslog-ng 3.38 (refused, never ignored) */
  lacks: ReadonlyArray<{
    option: "workers" | "batch-bytes";
    when: (c: SyslogNgConfig) => boolean;
    why: string;
  }>;
  /** parsers and rewrites before the destination, and the driver's own options (connection and mapping) */
  render(input: RenderInput, cols: readonly SyslogColumn[]): { parsers: string[]; options: string[] };
}

const SINK_DRIVERS = {
  /** sql(type(pgsql)) into the table the PostgreSQL verifier created; one transaction per batch (explicit-commits). */
  postgres: {
    driver: "sql",
    lacks: [
      {
        option: "workers",
        when: (c) => c.workers > 1,
        why: "sql() destination has no workers() option; use workers: 1 with a PostgreSQL sink",
      },
      {
        option: "batch-bytes",
        when: (c) => c["batch-bytes"] !== undefined,
        why: "sql() destination has no batch-bytes() option",
      },
    ],
    render({ sink, config }, cols) {
      const selfLoad = config["example-msg-generator"] !== undefined;
      return {
        parsers: [],
        options: [
          `type(pgsql) host(${str(sink.host)}) port(${str(String(sink.port))})`,
          `username(${str(sink.params.user ?? "postgres")}) password(${str(sink.params.password ?? "")}) database(${str(sink.params.database ?? "postgres")})`,
          `table(${str(sink.params.table ?? "ib_events")})`,
          `columns(${cols.map((c) => str(c.column)).join(", ")})`,
          `values(${cols.map((c) => str(columnText(c, selfLoad))).join(", ")})`,
          `indexes() null("")`,
          `flags(explicit-commits, dont-create-tables)`,
        ],
      };
    },
  },
  /**
   * http() into ClickHouse's HTTP interface: POST `/?query=INSERT INTO <db>.<table> (<cols>) FORMAT JSONEachRow` (URL-encoded)
   * with one JSON object per message, newline-delimited (delimiter "\n", body-suffix "\n"): one INSERT per batch.
   * syslog-ng 3.38's http() counts only a 2xx answer as written. Its default mapping of other answers (no
   * response-action() set) treats ClickHouse's error answers — 404 for an unknown table, 500 with the error code in
   * the body for a refused insert, e.g. 252 TOO_MANY_PARTS — as "disconnected": the whole batch stays queued and is
   * sent again after time-reopen(), indefinitely (not counted against retries()); the queue fills and flow control
   * pushes back on the source. Nothing is dropped, and a lasting refusal shows as `queued` in the claimed counts
   * and as lost rows when the drain times out.
   */
  clickhouse: {
    driver: "http",
    lacks: [],
    render({ sink, fields, config }, cols) {
      const selfLoad = config["example-msg-generator"] !== undefined;
      const t = sink.params.table ?? "ib_events";
      const table = t.includes(".") ? t : `${sink.params.database ?? "default"}.${t}`;
      // the columns named: ClickHouse 18.16 fills a column left out of a JSONEachRow object with its DEFAULT only
      // when the INSERT names its columns (the sink's own stored_at, plugins/sinks/clickhouse/verifier.ts)
      const query = [
        `query=${encodeURIComponent(`INSERT INTO ${quoteTable(table)} (${cols.map((c) => quoteIdent(c.column)).join(", ")}) FORMAT JSONEachRow`)}`,
      ];
      // with a password, http()'s user() and password() (Basic auth, syslog-ng's http() destination options); ClickHouse
      // takes no ?user= beside an Authorization header (plugins/sinks/clickhouse/auth.ts)
      const auth =
        sink.params.password !== undefined
          ? [`user(${str(sink.params.user ?? "default")}) password(${str(sink.params.password)})`]
          : [];
      if (sink.params.user && auth.length === 0) query.push(`user=${encodeURIComponent(sink.params.user)}`);
      const { parsers, ms } = epochMsColumns(cols, fields, selfLoad);
      return {
        parsers,
        options: [
          `url(${str(`http://${urlHost(sink.host)}:${sink.port}/?${query.join("&")}`)})`,
          `method("POST")`,
          `body(${str(`$(format-json ${cols.map((c) => clickhouseJsonPair(c, ms, selfLoad)).join(" ")})`)})`,
          `delimiter("\\n") body-suffix("\\n")`,
          ...auth,
        ],
      };
    },
  },
} satisfies Readonly<Record<string, SinkDriver>>;

/** A sink syslog-ng writes into. */
export type SyslogNgSink = keyof typeof SINK_DRIVERS;

/** The sinks syslog-ng writes into (the catalog's `writesTo`, the container renderer's too). */
export const SYSLOG_NG_SINKS = Object.keys(SINK_DRIVERS) as SyslogNgSink[];

/** The ISO 8601 text of the message's receive stamp with milliseconds (what PostgreSQL's timestamptz parses), without frac-digits(). */
const RECEIVED_ISO_MS = "${R_YEAR}-${R_MONTH}-${R_DAY}T${R_HOUR}:${R_MIN}:${R_SEC}.${R_MSEC}${R_TZOFFSET}";
/** The message's receive stamp in epoch milliseconds (frac-digits stays 0, so R_UNIXTIME is whole seconds). */
const RECEIVED_EPOCH_MS = "${R_UNIXTIME}${R_MSEC}";
/** The seq of the events example-msg-generator() makes: $(iterate) keeps its state per template, so 0, 1, 2, … per source. */
export const GENERATED_SEQ = "$(iterate $(+ $_ 1) 0)";
/** The text of every generated string field, cut or repeated to the field's size. */
const GENERATED_TEXT = "syslog-ng example-msg-generator ";

/**
 * The example-msg-generator() source (syslog-ng-mod-examples; modules/examples/sources/msg-generator in the
 * syslog-ng sources): on each timer tick, `freq` ms apart, it sets its values() on a new message (each a template,
 * evaluated per message) and posts it, until `num` ticks have passed. A tick whose source window is full (flow
 * control: the destination has not written the earlier messages yet) makes no message, so `num` is an upper bound
 * and the number made is syslog-ng's own counter (`syslog-ng-ctl stats`: source s_gen processed, parseStats
 * `generated`). Every message carries, as name-value pairs `.ib.<column>`:
 * - gen: `genBase` (fixed); seq: GENERATED_SEQ, 0, 1, 2, … in the order made (only made messages evaluate it, so a
 *   skipped tick leaves no gap);
 * - sent_at and every timestamp field: the message's receive stamp, set when the generator made it (`.ib.<column>`
 *   as ISO 8601 with ms for PostgreSQL, `.ibms.<column>` as epoch ms for ClickHouse);
 * - strings: GENERATED_TEXT cut to the field's size; ints 0; floats 0.5; bools true (the same in every event: only
 *   gen, seq and sent_at vary, and the content check says that it compared none of them).
 */
function exampleMsgGeneratorSource(input: RenderInput, cols: readonly SyslogColumn[], fifo: number): string {
  const g = input.config["example-msg-generator"]!;
  const values: Array<[string, string]> = [];
  for (const c of cols) {
    const name = `.ib.${c.column}`;
    if (c.column === "gen") values.push([name, String(input.genBase ?? 0)]);
    else if (c.column === "seq") values.push([name, GENERATED_SEQ]);
    else if (c.type === "timestamp")
      values.push([name, RECEIVED_ISO_MS], [`.ibms.${c.column}`, RECEIVED_EPOCH_MS]);
    else if (c.type === "string") {
      const size = input.fields.find((f) => f.name === c.column)?.size ?? 16;
      values.push([name, GENERATED_TEXT.repeat(Math.ceil(size / GENERATED_TEXT.length)).slice(0, size)]);
    } else values.push([name, c.type === "float" ? "0.5" : c.type === "bool" ? "true" : "0"]);
  }
  return `source s_gen {
  example-msg-generator(num(${g.num}) freq(${g.freq}) log-iw-size(${fifo})
    values(${values.map(([k, v]) => `${str(k)} => ${str(v)}`).join("\n      ")}));
};
`;
}

/**
 * Render syslog-ng.conf. @throws ConfigurationError for a sink syslog-ng cannot write into, or options its
 * destination does not have in 3.38 (workers > 1 or batch-bytes with sql()).
 */
export function renderSyslogNgConfig(input: RenderInput): string {
  const { config, sink } = input;
  const d: SinkDriver | undefined = Object.hasOwn(SINK_DRIVERS, sink.name)
    ? SINK_DRIVERS[sink.name as SyslogNgSink]
    : undefined;
  if (!d) {
    throw new ConfigurationError(
      "E_COLLECTOR_SINK",
      `collector syslog-ng cannot write into sink "${sink.name}" (supported: ${SYSLOG_NG_SINKS.join(", ")})`,
      { field: "sink" },
    );
  }
  for (const l of d.lacks) {
    if (l.when(config)) {
      throw new ConfigurationError(
        "E_COLLECTOR_CONFIG",
        `collector.syslog-ng.${l.option}: syslog-ng ${SYSLOG_NG_PIN}'s ${l.why}`,
        { field: `collector.syslog-ng.${l.option}` },
      );
    }
  }
  const cols = syslogColumns(input.fields, input.sdId);
  const { parsers, options } = d.render(input, cols);
  const fifo = config["log-fifo-size"];
  const db = config["disk-buffer"];
  // the queue and batching options every threaded destination of 3.38 shares, in syslog-ng's spelling
  const common = [
    `batch-lines(${config["batch-lines"]})`,
    config["batch-bytes"] !== undefined ? `batch-bytes(${config["batch-bytes"]})` : "",
    config["batch-timeout"] !== undefined ? `batch-timeout(${config["batch-timeout"]})` : "",
    d.driver === "http" ? `workers(${config.workers})` : "",
    `retries(${config.retries}) time-reopen(${config["time-reopen"]})`,
    `log-fifo-size(${fifo})`,
  ]
    .filter(Boolean)
    .join(" ");
  const diskBuffer = db
    ? `disk-buffer(reliable(${db.reliable ? "yes" : "no"}) disk-buf-size(${db["disk-buf-size"]})` +
      (db["mem-buf-length"] !== undefined ? ` mem-buf-length(${db["mem-buf-length"]})` : "") +
      (db["mem-buf-size"] !== undefined ? ` mem-buf-size(${db["mem-buf-size"]})` : "") +
      ` dir(${str(syslogNgPaths(input.dir).diskBuffer)}))`
    : "";
  const body = [...options, common, diskBuffer].filter(Boolean).join("\n      ");
  const selfLoad = config["example-msg-generator"] !== undefined;
  // with its own load, the syslog() source stays (no sender: readiness is a TCP connect to it) beside the generator
  const generator = selfLoad ? `\n${exampleMsgGeneratorSource(input, cols, fifo)}` : "";
  const what = selfLoad
    ? "example-msg-generator() (syslog-ng's own load; the syslog() source has no sender)"
    : "RFC 5424 over TCP (octet counting)";
  // never below syslog-ng's default (65536): a frame above it closes its connection, losing what queued behind it
  const logMsgSize = Math.max(65_536, maxSyslogMessageBytes(input.fields));
  return `@version: ${SYSLOG_NG_PIN}
# Rendered by ingestbench (plugins/collectors/syslog-ng/component.ts). ${what} -> ${d.driver}() into ${sink.name}.
options { threaded(yes); use-dns(no); use-fqdn(no); dns-cache(no); keep-hostname(yes); chain-hostnames(no); stats-level(1); stats-freq(0); log-msg-size(${logMsgSize}); };

source s_ib {
  syslog(transport("tcp") ip("0.0.0.0") port(${config.port}) max-connections(${MAX_CONNECTIONS}) log-iw-size(${fifo}));
};
${generator}
destination d_sink {
  ${d.driver}(${body});
};

log { source(s_ib);${selfLoad ? " source(s_gen);" : ""}${parsers.map((p) => `\n  ${p}`).join("")}
  destination(d_sink); flags(flow-control);
};
`;
}

/** `syslog-ng --syntax-only -f <file>`: resolves with "" when accepted, else with syslog-ng's complaint. */
export async function checkSyntax(file: string): Promise<string> {
  try {
    await execFileP("syslog-ng", ["--syntax-only", "-f", file]);
    return "";
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    return `${e.stderr ?? ""}${e.stdout ?? ""}` || e.message;
  }
}

/** The numeric rows of `syslog-ng-ctl stats` (CSV: SourceName;SourceId;SourceInstance;State;Type;Number). */
function* statsRows(csv: string): Generator<{ name: string; id: string; type: string; n: number }> {
  for (const line of csv.split("\n")) {
    const p = line.split(";");
    if (p.length < 6) continue;
    const [name, id, , , type, num] = p as [string, string, string, string, string, string];
    const n = Number(num);
    if (Number.isFinite(n)) yield { name, id, type, n };
  }
}

/**
 * Parse `syslog-ng-ctl stats` (CSV: SourceName;SourceId;SourceInstance;State;Type;Number) into claimed counts:
 * received (source s_ib processed), written, dropped, queued (destination d_sink), and `generated` (source s_gen
 * processed: the messages example-msg-generator() made) when the config has that source.
 */
export function parseStats(csv: string): Record<string, number> {
  const out: Record<string, number> = { received: 0, written: 0, dropped: 0, queued: 0 };
  for (const { name, id, type, n } of statsRows(csv)) {
    if (name === "source" && id === "s_ib" && type === "processed") out.received! += n;
    // the messages example-msg-generator() made (only present with it: exampleMsgGeneratorSource)
    if (name === "source" && id === "s_gen" && type === "processed") out.generated = (out.generated ?? 0) + n;
    if (name.startsWith("dst.") && id.startsWith("d_sink")) {
      if (type === "written") out.written! += n;
      else if (type === "dropped") out.dropped! += n;
      else if (type === "queued") out.queued! += n;
    }
  }
  return out;
}

/** The counters and gauges of a destination that the series keeps (syslog-ng 3.38 stats-level 1). */
const SIGNAL_TYPES = new Set(["processed", "written", "dropped", "queued", "memory_usage"]);

/**
 * Parse `syslog-ng-ctl stats` into the series' signals: per destination of the rendered config (SourceId
 * `d_sink#<n>`, one per driver instance) `<id>.<type>` for processed, written, dropped, queued (messages in its
 * queue) and memory_usage (bytes of that queue), and the sources' `s_ib.processed` (and `s_gen.processed`, the messages
 * example-msg-generator() made, when the config has it); values as syslog-ng prints them
 * (cumulative counters, current gauges).
 */
export function parseSignals(csv: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const { name, id, type, n } of statsRows(csv)) {
    if (name === "source" && (id === "s_ib" || id === "s_gen") && type === "processed")
      out[`${id}.processed`] = (out[`${id}.processed`] ?? 0) + n;
    if (name.startsWith("dst.") && id.startsWith("d_sink") && SIGNAL_TYPES.has(type))
      out[`${id}.${type}`] = (out[`${id}.${type}`] ?? 0) + n;
  }
  return out;
}

function parseConfig(raw: unknown): SyslogNgConfig {
  return parseCollectorConfig("syslog-ng", syslogNgSchema, raw);
}

/** Component "syslog-ng" (kind collector): receives the `syslog` generator, writes into `postgres` (sql()) and `clickhouse` (http()). */
export const syslogNg: ComponentFactory<SyslogNgConfig> = {
  name: "syslog-ng",
  kind: "collector",
  matchesPin: matchesSyslogNgPin,
  accepts: ["syslog"],
  writesTo: SYSLOG_NG_SINKS,

  /**
   * Errors: ConfigurationError (bad config, no downstream, unsupported sink), VerificationError (installed version
   * ≠ pin, naming both), ProvisioningError (syntax rejected, exited or not ready in 30 s; with syslog-ng's output).
   */
  async startLocal(
    host: LocalHost,
    rawConfig: SyslogNgConfig,
    signal?: AbortSignal,
    downstreamOrNone?: Downstream,
  ): Promise<RunningComponent> {
    const config = parseConfig(rawConfig);
    const downstream = requireDownstream("syslog-ng", downstreamOrNone);
    const running = await probeSyslogNgVersion();
    if (!matchesSyslogNgPin(config.version, running)) {
      throw new VerificationError(
        "E_VERSION",
        `syslog-ng ${running} is installed but collector.syslog-ng.version pins ${config.version}; refusing to start`,
      );
    }
    const dir = join(host.dataDir, "syslog-ng");
    const paths = syslogNgPaths(dir);
    await mkdir(paths.diskBuffer, { recursive: true });
    const { conf, control: ctl } = paths;
    const { sink } = downstream;
    // the sink's password (INGESTBENCH_<SINK>_PASSWORD, core/secrets.ts) goes into the rendered file only, mode 0600
    const password = sinkPassword(sink.name);
    const text = renderSyslogNgConfig({
      config,
      dir,
      fields: downstream.fields,
      genBase: downstream.genBase,
      sink: {
        name: sink.name,
        host: sink.data.host,
        port: sink.data.port,
        params: { ...downstream.params, ...(password !== undefined ? { password } : {}) },
      },
    });
    if (password !== undefined) writeSecretFile(conf, text);
    else await writeFile(conf, text);
    const syntax = await checkSyntax(conf);
    if (syntax)
      throw new ProvisioningError("E_COLLECTOR_CONFIG", `syslog-ng rejects the rendered ${conf}:\n${syntax}`);

    const server = await startListeningDaemon(host, "syslog-ng", ["-F", ...syslogNgArgs(paths)], {
      daemon: "syslog-ng",
      code: "E_COLLECTOR",
      logFile: join(host.dataDir, "syslog-ng.log"),
      port: config.port,
      graceMs: STOP_GRACE_MS,
      timeoutMs: READY_TIMEOUT_MS,
      signal,
    });
    return listeningCollector({
      name: "syslog-ng",
      pinned: config.version,
      running,
      host,
      port: config.port,
      server,
      params: downstream.params,
      async stats() {
        const r = await execFileP("syslog-ng-ctl", ["stats", "-c", ctl], { timeout: 5000 });
        return parseStats(r.stdout);
      },
      async signals() {
        const r = await execFileP("syslog-ng-ctl", ["stats", "-c", ctl], { timeout: 5000 });
        return parseSignals(r.stdout);
      },
    });
  },
};
