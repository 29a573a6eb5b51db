/**
 * Collector component "rsyslog": the Debian packages rsyslog and rsyslog-pgsql (ompgsql), pinned by "major.minor"
 * (e.g. "8.2302" is satisfied by 8.2302.0).
 *
 * Pipeline rendered in RainerScript into <dataDir>/rsyslog/rsyslog.conf (rsyslog 8 docs: imtcp, mmpstrucdata,
 * ompgsql, impstats, "General Queue Parameters"):
 * - input: imtcp on `port` of every address of the host, `supportOctetCountedFraming="on"` (RFC 6587 §3.4.1, what
 *   the `syslog` generator sends), bound to ruleset r_ib whose only parser is rsyslog.rfc5424 (pmrfc5424); the global
 *   `maxMessageSize` and imtcp's `maxFrameSize` are above the largest message the generator can send for the
 *   scenario's fields (core/events/syslog.ts maxSyslogMessageBytes), so no message is truncated for its size;
 * - mmpstrucdata (`sd_name.lowercase="off"`) parses the SD element `[ib@32473 ...]` into `$!rfc5424-sd!<sdId>!<name>`;
 * - action a_sink: ompgsql into the sink's DATA address (the shaped link) with a list template (option.stdsql)
 *   that renders one `INSERT INTO <table> (...) VALUES (NULLIF('<v>','')::<type>, ...)` per message, columns as
 *   core/events/syslog-columns.ts maps them (the last string field from MSG, every other field and gen, seq, sent_at from the
 *   SD element; an empty value is NULL, as syslog-ng's null("")). ompgsql is transactional: each batch the action
 *   queue hands it (≤ queue.dequeueBatchSize messages) is one BEGIN ... COMMIT, one INSERT statement per row.
 *
 * Scenario parameters are spelled as rsyslog spells them and set the action queue of a_sink: queue.type,
 * queue.size, queue.dequeueBatchSize, queue.workerThreads (each worker has its own PostgreSQL connection),
 * queue.timeoutEnqueue, and action.resumeRetryCount; and the global parser.escapeControlCharactersOnReceive (rsyslog's
 * default "on" stores a TAB as #011: with real log lines the content check then reports them altered, as they are). queue.timeoutEnqueue is also set on the main queue: with
 * the default (1 h) a full action queue blocks the main queue, which blocks imtcp, which pushes back on the sender
 * over TCP, instead of discarding messages after rsyslog's own default timeout (the "dropped" claim counts those).
 *
 * Process: `rsyslogd [-M <modules>] -n -f <conf> -i <pidfile>` (the install from rsyslogInstall()) through host.spawn: foreground, no system config, its own pid file
 * and work directory in <dataDir>/rsyslog; no imuxsock (no /dev/log) and no imklog. rsyslog's own messages
 * (processInternalMessages) go to its stderr, i.e. the component's log. Ready when a TCP connect to the input port
 * succeeds (≤ 30 s); stop = SIGTERM, ≤ 10 s, then SIGKILL.
 * Version: `rsyslogd -v` ("rsyslogd  8.2302.0 (aka 2023.02) ..."), compared with the pin before the process starts.
 * Claimed counts: impstats every second, JSON lines in <dataDir>/rsyslog/impstats.json, see parseImpstats; the
 * series' signals every sample interval from the same file, read incrementally (impstatsReader, impstatsSignals).
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, open, readFile, stat, writeFile } from "node:fs/promises";
import { sinkPassword, writeSecretFile } from "../../../core/secrets.ts";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { z } from "zod";
import { parseCollectorConfig, requireDownstream } from "../../../core/collector.ts";
import { ConfigurationError, ProvisioningError, VerificationError } from "../../../core/errors.ts";
import { quoteIdent, quoteTable } from "../../../core/events/copy-text.ts";
import { maxSyslogMessageBytes } from "../../../core/events/syslog.ts";
import type { EventField } from "../../../core/events/types.ts";
import { PG_TYPES } from "../../sinks/postgres/verifier.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import {
  listeningCollector,
  matchesVersionPrefix,
  probeVersion,
  startListeningDaemon,
} from "../../../core/process.ts";
import { syslogColumns } from "../../../core/events/syslog-columns.ts";
import type { ComponentFactory, Downstream, RunningComponent } from "../../../core/component.ts";

const execFileP = promisify(execFile);

/** The catalog's pin: Debian 12's rsyslog. */
export const RSYSLOG_PIN = "8.2302";
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
/** TCP sessions imtcp accepts (imtcp's maxSessions). */
const MAX_SESSIONS = 16;
/** impstats interval, s (its smallest) */
const STATS_INTERVAL_S = 1;
/** how long stats() waits for impstats to write a record newer than the call, ms */
const STATS_WAIT_MS = 3 * STATS_INTERVAL_S * 1000;
/** names in the rendered config that impstats reports under */
const INPUT_NAME = "i_ib";
const ACTION_NAME = "a_sink";

/** Scenario block `collector.rsyslog`; option names are rsyslog's own (case as in its docs). */
export const rsyslogSchema = z
  .object({
    /** "major.minor" (or a full version) the running rsyslogd must report; default the catalog's pin */
    version: z
      .string()
      .regex(/^\d+\.\d+(\.\d+)?$/, 'a version like "8.2302"')
      .default(RSYSLOG_PIN),
    /** the action queue's type: in-memory queues with their own worker threads (Direct and Disk are not offered) */
    "queue.type": z.enum(["LinkedList", "FixedArray"]).default("LinkedList"),
    /** the action queue's capacity in messages (rsyslog discourages fewer than ~100) */
    "queue.size": z.number().int().min(100).max(100_000_000).default(20_000),
    /** largest batch a worker dequeues: one ompgsql transaction */
    "queue.dequeueBatchSize": z.number().int().positive().max(10_000_000).default(1000),
    /** the action queue's worker threads, each with its own PostgreSQL connection */
    "queue.workerThreads": z.number().int().min(1).max(64).default(1),
    /** ms an enqueue into a full queue waits before the message is discarded (main and action queue); 0 discards */
    "queue.timeoutEnqueue": z.number().int().min(0).max(2_147_483_647).default(3_600_000),
    /** retries of a suspended action before its messages are discarded; -1 = forever */
    "action.resumeRetryCount": z.number().int().min(-1).max(1_000_000).default(-1),
    /**
     * rsyslog's global parser.escapeControlCharactersOnReceive: "on" (its default) stores a control character such as a
     * TAB as #011, which the content check reports as altered; "off" keeps the bytes as sent
     */
    "parser.escapeControlCharactersOnReceive": z.enum(["on", "off"]).default("on"),
    /** TCP port of the imtcp input on the host's addresses */
    port: z.number().int().min(1).max(65535).default(5514),
  })
  .strict();

export type RsyslogConfig = z.infer<typeof rsyslogSchema>;

/** "8.2302" is satisfied by "8.2302" and "8.2302.0"; "8.2302.0" only by "8.2302.0". */
export const matchesRsyslogPin = matchesVersionPrefix;

/** Where ingestbench unpacks Debian's rsyslog (scripts/install-rsyslog.sh); env INGESTBENCH_RSYSLOG_PREFIX overrides. */
export const RSYSLOG_PREFIX = "/opt/ingestbench/rsyslog";

/** The rsyslogd to run and, for an unpacked copy, its module directory (passed as `-M`). */
export interface RsyslogInstall {
  binary: string;
  /** rsyslog's module directory when it is not the compiled-in one; undefined for a system install */
  moduleDir?: string;
}

/**
 * Debian's rsyslog and syslog-ng-core conflict (both provide system-log-daemon), so next to syslog-ng rsyslog is
 * unpacked into a prefix by scripts/install-rsyslog.sh: `<prefix>/usr/sbin/rsyslogd` with its modules in
 * `<prefix>/usr/lib/<multiarch>/rsyslog`. Without that prefix, the system's `rsyslogd` on PATH.
 */
export function rsyslogInstall(
  prefix = process.env.INGESTBENCH_RSYSLOG_PREFIX ?? RSYSLOG_PREFIX,
): RsyslogInstall {
  const binary = join(prefix, "usr/sbin/rsyslogd");
  if (!existsSync(binary)) return { binary: "rsyslogd" };
  const lib = join(prefix, "usr/lib");
  const arch = readdirSync(lib).find((d) => existsSync(join(lib, d, "rsyslog", "imtcp.so")));
  return { binary, moduleDir: arch ? join(lib, arch, "rsyslog") : undefined };
}

/** rsyslogd's arguments that select the install's modules (`-M <dir>`), before any other. */
function moduleArgs(install: RsyslogInstall): string[] {
  return install.moduleDir ? ["-M", install.moduleDir] : [];
}

/** Version of the installed rsyslogd, from `rsyslogd -v` ("rsyslogd  8.2302.0 (aka 2023.02) ..." → "8.2302.0"). */
export function probeRsyslogVersion(binary = rsyslogInstall().binary): Promise<string> {
  return probeVersion({
    binary,
    args: ["-v"],
    patterns: [/^rsyslogd\s+(\d+\.\d+(?:\.\d+)?)/m],
    code: "E_RSYSLOG",
    installHint: `run scripts/install-rsyslog.sh: it unpacks Debian's rsyslog and rsyslog-pgsql into ${RSYSLOG_PREFIX}, beside syslog-ng`,
  });
}

/** A RainerScript string literal (double-quoted; backslash and quote escaped). */
function str(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

export interface RenderInput {
  config: RsyslogConfig;
  /** rsyslog's directory: work directory and impstats file live here */
  dir: string;
  /** the sink's data endpoint and connection params (database, user, table) */
  sink: { name: string; host: string; port: number; params: Record<string, string> };
  fields: readonly EventField[];
  /** SD-ID of the element carrying the fields; default "ib@32473" */
  sdId?: string;
}

/** File impstats writes into, under the component's directory. */
export function impstatsFile(dir: string): string {
  return join(dir, "impstats.json");
}

/**
 * The body of the list template that renders one INSERT per message: constants and properties in order.
 * Each value is `NULLIF('<value>','')::<PostgreSQL type>` (the property is escaped by option.stdsql: ' → '').
 */
export function insertTemplate(table: string, fields: readonly EventField[], sdId?: string): string[] {
  const cols = syslogColumns(fields, sdId);
  const lines: string[] = [];
  let pending = `INSERT INTO ${quoteTable(table)} (${cols.map((c) => quoteIdent(c.column)).join(", ")}) VALUES (`;
  cols.forEach((c, i) => {
    lines.push(`constant(value=${str(`${pending}NULLIF('`)})`);
    const prop = c.from.part === "msg" ? "msg" : `$!rfc5424-sd!${c.from.sdId}!${c.from.param}`;
    lines.push(`property(name=${str(prop)})`);
    pending = `','')::${PG_TYPES[c.type]}${i === cols.length - 1 ? ")" : ", "}`;
  });
  lines.push(`constant(value=${str(pending)})`);
  return lines;
}

/**
 * Render rsyslog.conf. @throws ConfigurationError for a sink rsyslog cannot write into.
 */
export function renderRsyslogConfig(input: RenderInput): string {
  const { config, sink } = input;
  if (sink.name !== "postgres") {
    throw new ConfigurationError(
      "E_COLLECTOR_SINK",
      `collector rsyslog cannot write into sink "${sink.name}" yet (supported: postgres)`,
      { field: "sink" },
    );
  }
  const te = config["queue.timeoutEnqueue"];
  const template = insertTemplate(input.sink.params.table ?? "ib_events", input.fields, input.sdId);
  // every frame a generator can send, whole: a longer message is truncated (maxMessageSize), a longer octet-counted
  // frame switches imtcp to octet stuffing (maxFrameSize, default 200000; with MSG-LEN's digits)
  const maxMessage = Math.max(65_536, maxSyslogMessageBytes(input.fields));
  return `# Rendered by ingestbench (plugins/collectors/rsyslog/component.ts). RFC 5424 over TCP (octet counting) -> ompgsql.
global(workDirectory=${str(join(input.dir, "work"))} processInternalMessages="on" maxMessageSize="${maxMessage}"
       parser.escapeControlCharactersOnReceive="${config["parser.escapeControlCharactersOnReceive"]}")
main_queue(queue.timeoutEnqueue="${te}")

module(load="impstats" interval="${STATS_INTERVAL_S}" format="json" resetCounters="off" log.syslog="off" log.file=${str(impstatsFile(input.dir))})
module(load="imtcp" maxSessions="${MAX_SESSIONS}" maxFrameSize="${Math.max(200_000, maxMessage + 16)}")
module(load="mmpstrucdata")
module(load="ompgsql")

template(name="t_ib_insert" type="list" option.stdsql="on") {
  ${template.join("\n  ")}
}

# the default ruleset gets only rsyslog's own messages: to its stderr, the component's log
action(type="omfile" file="/dev/stderr")

ruleset(name="r_ib" parser="rsyslog.rfc5424") {
  action(type="mmpstrucdata" sd_name.lowercase="off")
  action(name="${ACTION_NAME}" type="ompgsql" server=${str(sink.host)} port="${sink.port}"
         db=${str(sink.params.database ?? "postgres")} user=${str(sink.params.user ?? "postgres")} pass=${str(sink.params.password ?? "")}
         template="t_ib_insert"
         queue.type="${config["queue.type"]}" queue.size="${config["queue.size"]}"
         queue.dequeueBatchSize="${config["queue.dequeueBatchSize"]}" queue.workerThreads="${config["queue.workerThreads"]}"
         queue.timeoutEnqueue="${te}" action.resumeRetryCount="${config["action.resumeRetryCount"]}")
}

input(type="imtcp" name="${INPUT_NAME}" port="${config.port}" ruleset="r_ib" supportOctetCountedFraming="on")
`;
}

/** `rsyslogd -N1 -f <file>`: resolves with "" when accepted, else with rsyslog's complaint. */
export async function checkConfig(file: string, install = rsyslogInstall()): Promise<string> {
  try {
    const r = await execFileP(install.binary, [...moduleArgs(install), "-N1", "-f", file], {
      env: { ...process.env, LC_ALL: "C" },
    });
    // rsyslogd -N1 exits 0 on warnings; errors are reported with "error" and a non-zero exit
    return /\berror\b/i.test(r.stderr) ? r.stderr : "";
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    return `${e.stderr ?? ""}${e.stdout ?? ""}` || e.message;
  }
}

/**
 * Claimed counts from impstats' JSON lines (`<date>: {"name": ..., "origin": ..., counters}`), the last record of
 * each name (counters are cumulative: resetCounters off):
 * - received = imtcp `submitted` of input i_ib (the record "i_ib(<port>)")
 * - written = action a_sink `processed` − `failed`
 * - dropped = a_sink `failed` + `discarded.full` + `discarded.nf` of the queues "a_sink queue" and "main Q"
 * - queued = `size` of "a_sink queue" + "main Q"
 */
export function parseImpstats(text: string): Record<string, number> {
  const last = new Map<string, Record<string, unknown>>();
  for (const line of text.split("\n")) {
    const brace = line.indexOf("{");
    if (brace < 0) continue;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line.slice(brace)) as Record<string, unknown>;
    } catch {
      continue; // a line being written
    }
    if (typeof rec.name === "string") last.set(rec.name, rec);
  }
  const n = (name: string | undefined, key: string): number => {
    const v = name === undefined ? undefined : last.get(name)?.[key];
    return typeof v === "number" ? v : 0;
  };
  const input = [...last.keys()].find(
    (k) => k.startsWith(`${INPUT_NAME}(`) && last.get(k)?.origin === "imtcp",
  );
  const queues = [`${ACTION_NAME} queue`, "main Q"];
  return {
    received: n(input, "submitted"),
    written: n(ACTION_NAME, "processed") - n(ACTION_NAME, "failed"),
    dropped:
      n(ACTION_NAME, "failed") +
      queues.reduce((s, q) => s + n(q, "discarded.full") + n(q, "discarded.nf"), 0),
    queued: queues.reduce((s, q) => s + n(q, "size"), 0),
  };
}

/** The impstats counters the series keeps, per record (rsyslog 8 docs, impstats: queue and action counters). */
const QUEUE_SIGNALS = ["enqueued", "size", "full", "discarded.full", "discarded.nf", "maxqsize"] as const;
const ACTION_SIGNALS = ["processed", "failed", "suspended", "suspended.duration", "resumed"] as const;

/**
 * The series' signals from impstats' newest record of each name: for the queues "a_sink queue" and "main Q"
 * `<queue>.<counter>` of enqueued, size (messages in it now), full (times it was full), discarded.full,
 * discarded.nf, maxqsize; for the action a_sink `a_sink.<counter>` of processed, failed, suspended,
 * suspended.duration, resumed; and the input's `i_ib.submitted`. Cumulative counters (resetCounters off) and gauges
 * (size) as impstats writes them.
 */
export function impstatsSignals(last: ReadonlyMap<string, Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (name: string, rec: Record<string, unknown> | undefined, keys: readonly string[]): void => {
    for (const k of keys) if (typeof rec?.[k] === "number") out[`${name}.${k}`] = rec[k] as number;
  };
  for (const q of [`${ACTION_NAME} queue`, "main Q"]) put(q, last.get(q), QUEUE_SIGNALS);
  put(ACTION_NAME, last.get(ACTION_NAME), ACTION_SIGNALS);
  const input = [...last.keys()].find(
    (k) => k.startsWith(`${INPUT_NAME}(`) && last.get(k)?.origin === "imtcp",
  );
  if (input) put(INPUT_NAME, last.get(input), ["submitted"]);
  return out;
}

/**
 * Reads impstats' JSON lines incrementally: each call reads what was appended since the previous one (a line still
 * being written is kept for the next call) and returns the newest record of each name seen so far. Never waits.
 */
export function impstatsReader(file: string): () => Promise<Map<string, Record<string, unknown>>> {
  let offset = 0;
  let rest = "";
  const last = new Map<string, Record<string, unknown>>();
  return async () => {
    const fh = await open(file, "r").catch(() => null);
    if (!fh) return last; // not written yet
    try {
      const size = (await fh.stat()).size;
      if (size < offset) {
        offset = 0;
        rest = "";
      } // truncated: read it anew
      if (size > offset) {
        const buf = Buffer.alloc(size - offset);
        const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
        offset += bytesRead;
        const lines = (rest + buf.subarray(0, bytesRead).toString("utf8")).split("\n");
        rest = lines.pop() ?? "";
        for (const line of lines) {
          const brace = line.indexOf("{");
          if (brace < 0) continue;
          try {
            const rec = JSON.parse(line.slice(brace)) as Record<string, unknown>;
            if (typeof rec.name === "string") last.set(rec.name, rec);
          } catch {
            // not a record
          }
        }
      }
    } finally {
      await fh.close();
    }
    return last;
  };
}

function parseConfig(raw: unknown): RsyslogConfig {
  return parseCollectorConfig("rsyslog", rsyslogSchema, raw);
}

async function fileSize(file: string): Promise<number> {
  return stat(file).then(
    (s) => s.size,
    () => 0,
  );
}

/** Component "rsyslog" (kind collector): receives the `syslog` generator, writes into `postgres`. */
export const rsyslog: ComponentFactory<RsyslogConfig> = {
  name: "rsyslog",
  kind: "collector",
  matchesPin: matchesRsyslogPin,
  accepts: ["syslog"],
  writesTo: ["postgres"],

  /**
   * Errors: ConfigurationError (bad config, no downstream, unsupported sink), VerificationError (installed version
   * ≠ pin, naming both), ProvisioningError (config rejected by `rsyslogd -N1`, exited or not ready in 30 s; with
   * rsyslog's output).
   */
  async startLocal(
    host: LocalHost,
    rawConfig: RsyslogConfig,
    signal?: AbortSignal,
    downstreamOrNone?: Downstream,
  ): Promise<RunningComponent> {
    const config = parseConfig(rawConfig);
    const downstream = requireDownstream("rsyslog", downstreamOrNone);
    const install = rsyslogInstall();
    const running = await probeRsyslogVersion(install.binary);
    if (!matchesRsyslogPin(config.version, running)) {
      throw new VerificationError(
        "E_VERSION",
        `rsyslog ${running} is installed but collector.rsyslog.version pins ${config.version}; refusing to start`,
      );
    }
    const dir = join(host.dataDir, "rsyslog");
    await mkdir(join(dir, "work"), { recursive: true });
    const conf = join(dir, "rsyslog.conf");
    const stats = impstatsFile(dir);
    const { sink } = downstream;
    // the sink's password (INGESTBENCH_<SINK>_PASSWORD, core/secrets.ts) goes into the rendered file only, mode 0600
    const password = sinkPassword(sink.name);
    const text = renderRsyslogConfig({
      config,
      dir,
      fields: downstream.fields,
      sink: {
        name: sink.name,
        host: sink.data.host,
        port: sink.data.port,
        params: { ...downstream.params, ...(password !== undefined ? { password } : {}) },
      },
    });
    if (password !== undefined) writeSecretFile(conf, text);
    else await writeFile(conf, text);
    const complaint = await checkConfig(conf, install);
    if (complaint)
      throw new ProvisioningError(
        "E_COLLECTOR_CONFIG",
        `rsyslogd rejects the rendered ${conf}:\n${complaint}`,
      );

    const server = await startListeningDaemon(
      host,
      install.binary,
      [...moduleArgs(install), "-n", "-f", conf, "-i", join(dir, "rsyslogd.pid")],
      {
        daemon: "rsyslogd",
        code: "E_COLLECTOR",
        logFile: join(host.dataDir, "rsyslog.log"),
        port: config.port,
        graceMs: STOP_GRACE_MS,
        timeoutMs: READY_TIMEOUT_MS,
        signal,
      },
    );
    const readSignals = impstatsReader(stats);
    return listeningCollector({
      name: "rsyslog",
      pinned: config.version,
      running,
      host,
      port: config.port,
      server,
      params: downstream.params,
      /** impstats' newest records (written every second), read incrementally; never waits */
      signals: async () => impstatsSignals(await readSignals()),
      /** the first impstats record written after the call (≤ 3 s), so that the claims are not older than the call */
      async stats() {
        const before = await fileSize(stats);
        const deadline = Date.now() + STATS_WAIT_MS;
        while ((await fileSize(stats)) <= before) {
          if (Date.now() > deadline)
            throw new Error(
              `rsyslogd wrote no impstats record into ${stats} for ${STATS_WAIT_MS / 1000} s (exited?)`,
            );
          await sleep(100);
        }
        await sleep(200); // impstats writes one record per line, all within a moment
        return parseImpstats(await readFile(stats, "utf8"));
      },
    });
  },
};
