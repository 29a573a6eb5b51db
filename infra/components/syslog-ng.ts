/**
 * Collector component "syslog-ng": the Debian package syslog-ng-core (with syslog-ng-mod-sql and libdbd-pgsql for
 * the sql() destination), pinned by "major.minor" (e.g. "3.38" is satisfied by 3.38.1).
 *
 * Pipeline rendered into <dataDir>/syslog-ng/syslog-ng.conf:
 * - source: syslog(transport("tcp")) on `port` of every address of the host: RFC 5424 messages in RFC 6587
 *   octet-counting frames (what the `syslog` generator sends), with flow control, so that a full queue pushes back
 *   on the sender over TCP instead of dropping;
 * - destination: sql(type(pgsql)) into the sink's DATA address (the shaped link), into the table the verifier
 *   created (`dont-create-tables`, no indexes). Columns are the scenario's fields, then gen, seq, sent_at, mapped
 *   from the message as the syslog encoder (harness/events/syslog.ts) puts them: the last string field is MSG
 *   (`${MESSAGE}`), every other field and gen, seq, sent_at are PARAMs of the SD element `[ib@32473 ...]`
 *   (`${.SDATA.ib@32473.<name>}`). `flags(explicit-commits)` with `batch-lines`/`batch-timeout`: batching is
 *   syslog-ng's own (one transaction per batch).
 *
 * Scenario parameters are spelled as syslog-ng spells them: batch-lines, batch-timeout (ms), workers, log-fifo-size,
 * disk-buffer. syslog-ng 3.38's sql() destination has no workers() option: `workers` above 1 with a PostgreSQL sink
 * is refused with a ConfigurationError rather than silently ignored.
 *
 * Process: `syslog-ng -F -e --no-caps -f <conf> -R <persist> -p <pidfile> -c <control socket>` through host.spawn;
 * ready when a TCP connect to the source port succeeds (≤ 30 s); stop = SIGTERM, ≤ 10 s, then SIGKILL.
 * Version: `syslog-ng --version` ("syslog-ng 3 (3.38.1)"), compared with the pin before the process starts.
 * Claimed counts: `syslog-ng-ctl stats -c <control socket>` (received, written, dropped, queued).
 */
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { ConfigurationError, ProvisioningError, VerificationError } from "../../harness/errors.ts";
import { SYSLOG_SD_ID } from "../../harness/events/syslog.ts";
import type { EventField } from "../../harness/events/types.ts";
import type { LocalHost } from "../local/types.ts";
import { startServer, waitReady } from "./process.ts";
import type { ComponentFactory, Downstream, RunningComponent } from "./types.ts";

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
    version: z.string().regex(/^\d+\.\d+(\.\d+)?$/, 'a version like "3.38"').default(SYSLOG_NG_PIN),
    /** rows per transaction of the destination (sql explicit-commits) */
    "batch-lines": z.number().int().positive().max(10_000_000).default(1000),
    /** ms after which a partial batch is committed; omitted = syslog-ng's default (-1: a partial batch is
     *  committed when the queue runs empty); syslog-ng's grammar takes no negative number here */
    "batch-timeout": z.number().int().positive().max(3_600_000).optional(),
    /** destination worker threads (sql() in 3.38 has none: more than 1 is refused for PostgreSQL) */
    workers: z.number().int().min(1).max(64).default(1),
    /** destination queue length in messages; also the source window (flow control), split over 16 connections */
    "log-fifo-size": z.number().int().min(MAX_CONNECTIONS * 100).max(100_000_000).default(10_000),
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
  })
  .strict();

export type SyslogNgConfig = z.infer<typeof syslogNgSchema>;

/** "3.38" is satisfied by "3.38" and "3.38.1"; "3.38.1" only by "3.38.1". */
export function matchesSyslogNgPin(pinned: string, running: string): boolean {
  return running === pinned || running.startsWith(`${pinned}.`);
}

/** Version of the installed syslog-ng, from `syslog-ng --version` ("syslog-ng 3 (3.38.1)" → "3.38.1"). */
export async function probeSyslogNgVersion(binary = "syslog-ng"): Promise<string> {
  let out: string;
  try {
    out = (await execFileP(binary, ["--version"], { env: { ...process.env, LC_ALL: "C" } })).stdout;
  } catch (err) {
    throw new ProvisioningError("E_SYSLOG_NG_NOT_INSTALLED", `cannot run \`${binary} --version\` (install the Debian package syslog-ng-core): ${(err as Error).message}`, { cause: err });
  }
  const m = /^syslog-ng \d+ \((\d+\.\d+(?:\.\d+)?)/m.exec(out) ?? /Installer-Version:\s*(\d+\.\d+(?:\.\d+)?)/.exec(out);
  if (!m) throw new ProvisioningError("E_SYSLOG_NG_VERSION", `cannot read a version from \`${binary} --version\`: ${out.slice(0, 200)}`);
  return m[1]!;
}

/** A syslog-ng string literal (double-quoted; backslash and quote escaped). */
function str(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

export interface RenderInput {
  config: SyslogNgConfig;
  /** directory for the disk buffer */
  dir: string;
  /** the sink's data endpoint and connection params (database, user, table) */
  sink: { name: string; host: string; port: number; params: Record<string, string> };
  fields: readonly EventField[];
  /** SD-ID of the element carrying the fields; default "ib@32473" */
  sdId?: string;
}

/** The columns and the template of each, in table order: the fields, then gen, seq, sent_at. */
export function columnTemplates(fields: readonly EventField[], sdId = SYSLOG_SD_ID): Array<[string, string]> {
  const msgField = fields.map((f) => f.type).lastIndexOf("string");
  const cols: Array<[string, string]> = fields.map((f, i) => [f.name, i === msgField ? "${MESSAGE}" : `\${.SDATA.${sdId}.${f.name}}`]);
  for (const name of ["gen", "seq", "sent_at"]) cols.push([name, `\${.SDATA.${sdId}.${name}}`]);
  return cols;
}

/**
 * Render syslog-ng.conf. @throws ConfigurationError for a sink syslog-ng cannot write into, or options the
 * destination does not have (workers > 1 with sql()).
 */
export function renderSyslogNgConfig(input: RenderInput): string {
  const { config, sink } = input;
  if (sink.name !== "postgres") {
    throw new ConfigurationError("E_COLLECTOR_SINK", `collector syslog-ng cannot write into sink "${sink.name}" yet (supported: postgres)`, { field: "sink" });
  }
  if (config.workers > 1) {
    throw new ConfigurationError("E_COLLECTOR_CONFIG", `collector.syslog-ng.workers: ${config.workers}: syslog-ng ${SYSLOG_NG_PIN}'s sql() destination has no workers() option; use workers: 1 with a PostgreSQL sink`, { field: "collector.syslog-ng.workers" });
  }
  const cols = columnTemplates(input.fields, input.sdId);
  const fifo = config["log-fifo-size"];
  const db = config["disk-buffer"];
  const diskBuffer = db
    ? `\n      disk-buffer(reliable(${db.reliable ? "yes" : "no"}) disk-buf-size(${db["disk-buf-size"]})` +
      (db["mem-buf-length"] !== undefined ? ` mem-buf-length(${db["mem-buf-length"]})` : "") +
      (db["mem-buf-size"] !== undefined ? ` mem-buf-size(${db["mem-buf-size"]})` : "") +
      ` dir(${str(join(input.dir, "disk-buffer"))}))`
    : "";
  return `@version: ${SYSLOG_NG_PIN}
# Rendered by ingestbench (infra/components/syslog-ng.ts). RFC 5424 over TCP (octet counting) -> sql(pgsql).
options { threaded(yes); use-dns(no); use-fqdn(no); dns-cache(no); keep-hostname(yes); chain-hostnames(no); stats-level(1); stats-freq(0); };

source s_ib {
  syslog(transport("tcp") ip("0.0.0.0") port(${config.port}) max-connections(${MAX_CONNECTIONS}) log-iw-size(${fifo}));
};

destination d_sink {
  sql(type(pgsql) host(${str(sink.host)}) port(${str(String(sink.port))})
      username(${str(sink.params.user ?? "postgres")}) password("") database(${str(sink.params.database ?? "postgres")})
      table(${str(sink.params.table ?? "ib_events")})
      columns(${cols.map(([c]) => str(c)).join(", ")})
      values(${cols.map(([, v]) => str(v)).join(", ")})
      indexes() null("")
      flags(explicit-commits, dont-create-tables)
      batch-lines(${config["batch-lines"]})${config["batch-timeout"] !== undefined ? ` batch-timeout(${config["batch-timeout"]})` : ""}
      log-fifo-size(${fifo})${diskBuffer});
};

log { source(s_ib); destination(d_sink); flags(flow-control); };
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

/** Parse `syslog-ng-ctl stats` (CSV: SourceName;SourceId;SourceInstance;State;Type;Number) into claimed counts. */
export function parseStats(csv: string): Record<string, number> {
  const out: Record<string, number> = { received: 0, written: 0, dropped: 0, queued: 0 };
  for (const line of csv.split("\n")) {
    const p = line.split(";");
    if (p.length < 6) continue;
    const [name, id, , , type, num] = p as [string, string, string, string, string, string];
    const n = Number(num);
    if (!Number.isFinite(n)) continue;
    if (name === "source" && id === "s_ib" && type === "processed") out.received! += n;
    if (name.startsWith("dst.sql") && id.startsWith("d_sink")) {
      if (type === "written") out.written! += n;
      else if (type === "dropped") out.dropped! += n;
      else if (type === "queued") out.queued! += n;
    }
  }
  return out;
}

function tcpReady(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const t = setTimeout(() => { s.destroy(); resolve(false); }, 1000);
    s.once("connect", () => { clearTimeout(t); s.end(); s.destroy(); resolve(true); });
    s.once("error", () => { clearTimeout(t); resolve(false); });
  });
}

function parseConfig(raw: unknown): SyslogNgConfig {
  const parsed = syslogNgSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = `collector.syslog-ng.${issue.path.join(".")}`;
    throw new ConfigurationError("E_COLLECTOR_CONFIG", `${at}: ${issue.message}`, { field: at, cause: parsed.error });
  }
  return parsed.data;
}

/** Component "syslog-ng" (kind collector): receives the `syslog` generator, writes into `postgres`. */
export const syslogNg: ComponentFactory<SyslogNgConfig> = {
  name: "syslog-ng",
  kind: "collector",
  schema: syslogNgSchema,
  matchesPin: matchesSyslogNgPin,
  accepts: ["syslog"],
  writesTo: ["postgres"],

  /**
   * Errors: ConfigurationError (bad config, no downstream, unsupported sink), VerificationError (installed version
   * ≠ pin, naming both), ProvisioningError (syntax rejected, exited or not ready in 30 s; with syslog-ng's output).
   */
  async startLocal(host: LocalHost, rawConfig: SyslogNgConfig, signal?: AbortSignal, downstream?: Downstream): Promise<RunningComponent> {
    const config = parseConfig(rawConfig);
    if (!downstream) throw new ConfigurationError("E_COLLECTOR_DOWNSTREAM", "collector syslog-ng needs the sink it writes into (downstream)");
    const running = await probeSyslogNgVersion();
    if (!matchesSyslogNgPin(config.version, running)) {
      throw new VerificationError("E_VERSION", `syslog-ng ${running} is installed but collector.syslog-ng.version pins ${config.version}; refusing to start`);
    }
    const dir = join(host.dataDir, "syslog-ng");
    await mkdir(join(dir, "disk-buffer"), { recursive: true });
    const conf = join(dir, "syslog-ng.conf");
    const ctl = join(dir, "syslog-ng.ctl");
    const { sink } = downstream;
    await writeFile(conf, renderSyslogNgConfig({
      config, dir, fields: downstream.fields,
      sink: { name: sink.name, host: sink.data.host, port: sink.data.port, params: downstream.params },
    }));
    const syntax = await checkSyntax(conf);
    if (syntax) throw new ProvisioningError("E_COLLECTOR_CONFIG", `syslog-ng rejects the rendered ${conf}:\n${syntax}`);

    const server = startServer(host, "syslog-ng", ["-F", "-e", "--no-caps", "-f", conf, "-R", join(dir, "syslog-ng.persist"), "-p", join(dir, "syslog-ng.pid"), "-c", ctl], {
      env: { LC_ALL: "C" },
      logFile: join(host.dataDir, "syslog-ng.log"),
      stop: { signal: "SIGTERM", graceMs: STOP_GRACE_MS, continueFirst: true },
    });
    const { child, stop } = server;

    await waitReady(server, {
      signal,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 100,
      probe: async () => ((await tcpReady(host.controlAddress, config.port)) ? true : undefined),
      errors: {
        aborted: () => new ProvisioningError("E_COLLECTOR_ABORTED", "aborted while waiting for syslog-ng to start"),
        spawnFailed: (e) => new ProvisioningError("E_COLLECTOR_START", `cannot start syslog-ng: ${e.message}`, { cause: e }),
        exited: (code) => new ProvisioningError("E_COLLECTOR_START", `syslog-ng exited during startup (code ${code}); output:\n${server.log.text()}`),
        timedOut: () => new ProvisioningError("E_COLLECTOR_READY", `syslog-ng not accepting on ${host.controlAddress}:${config.port} after ${READY_TIMEOUT_MS / 1000} s; output:\n${server.log.text()}`),
      },
    });

    return {
      name: "syslog-ng",
      pinned: config.version,
      running,
      data: { host: host.address, port: config.port },
      control: { host: host.controlAddress, port: config.port },
      params: { ...downstream.params },
      ...(child.pid !== undefined ? { pid: child.pid } : {}),
      stop,
      async stats() {
        const r = await execFileP("syslog-ng-ctl", ["stats", "-c", ctl], { timeout: 5000 });
        return parseStats(r.stdout);
      },
    };
  },
};
