/**
 * Sink component "victorialogs": VictoriaLogs' single-node server (`victoria-logs`), pinned by the version the program
 * itself prints (`-version`, e.g. "victoria-logs-20260716-022047-tags-v1.52.2"). The program is found through
 * core/program.ts: the stack host's `programs.victorialogs`, else the project's own build
 * (scripts/build-victorialogs.sh, ./build.ts), else `victoria-logs` or `victoria-logs-prod` on PATH.
 *
 * startLocal: `victoria-logs -storageDataPath=<dataDir>/victorialogs -httpListenAddr=<address>:<port>` (and a
 * second -httpListenAddr on the control address when it differs), `-retentionPeriod` when the scenario sets it,
 * `-memory.allowedBytes` = 60 % of the host's memory cap (VictoriaLogs' own default share, -memory.allowedPercent=60,
 * of the cap rather than of the machine) unless the scenario sets a memory.* flag itself, then any other flag of
 * `flags` by VictoriaLogs' own name (the server refuses an unknown one at start: its log tail is in the error).
 * Spawned through host.spawn (the host's cgroup and namespace); ready when `GET /health` answers "OK" (polled every
 * 50 ms, ≤ 60 s); the running version is the server's own `vm_app_version` metric (`GET /metrics`, its
 * short_version label), held against the pin. stop(): SIGTERM (VictoriaLogs flushes its in-memory parts and exits),
 * ≤ 30 s, then SIGKILL; discard(): SIGKILL at once (the data directory is removed next).
 *
 * How events arrive (VictoriaLogs docs, "Data ingestion" → "HTTP parameters"): every ingestion path the component
 * hands to generators and collectors (its params) carries the same query args, so that whatever protocol fed it, a
 * stored entry has the same shape for the verifier (./verifier.ts):
 * - `_msg_field=<_msg_field>` (default `msg`): the scenario's message field becomes VictoriaLogs' `_msg`, the field
 *   its docs require of every entry (without one it stores the placeholder "missing _msg field"); the verifier reads
 *   that field back from `_msg`.
 * - `_stream_fields=<_stream_fields>` (default `gen`): one log stream per generator. VictoriaLogs keeps a stream's
 *   entries together and sorted by time, so a generator's seqs are read back from one stream; gen has few values
 *   (a stream per distinct value is what its docs ask of stream fields), seq or sent_at would make a stream per entry.
 *   Not on the Loki path: there the push's labels are the stream (the loki-push generator's job and gen), as
 *   VictoriaLogs' Loki docs have it, and a line's JSON is parsed into fields beside them, so `gen` is both a label
 *   and a line field; `_stream_fields=gen` then makes the stream tags {gen="1",gen="1"}, and VictoriaLogs 1.52.2
 *   panics on them ("stream tags must be sorted in alphabetical order") and exits (./component.test.ts shows it).
 * - `_time_field=sent_at` on the JSON-lines and Elasticsearch bulk paths: `_time` is the send time. The seeded event
 *   time (`ts`, from 2024) is outside VictoriaLogs' retention (entries older than -retentionPeriod, 7 days by
 *   default, are dropped at ingestion), and the send time is what Loki push entries carry anyway (the loki-push
 *   generator's default `timestamp: "sent"`). VictoriaLogs moves the time field into `_time` (the entry has no
 *   sent_at field then). The Loki and OpenTelemetry paths take `_time` from the entry's own timestamp.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { ConfigurationError, ProvisioningError, VerificationError } from "../../../core/errors.ts";
import type { ComponentFactory, RunningComponent } from "../../../core/component.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import { memoryCapOf } from "../../../core/memory-cap.ts";
import { exited, startServer, waitReady } from "../../../core/process.ts";
import { hostProgram, type ProgramSpec } from "../../../core/program.ts";
import { builtVictoriaLogs } from "./build.ts";

/** The release the project builds and pins. */
export const VICTORIALOGS_VERSION = "1.52.2";
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 30_000;
/** VictoriaLogs' default share of memory for its caches (-memory.allowedPercent), applied to the host's cap. */
export const MEMORY_SHARE = 0.6;

/** How core/program.ts finds and identifies victoria-logs. */
export const victoriaLogsProgram: ProgramSpec = {
  plugin: "victorialogs",
  names: ["victoria-logs", "victoria-logs-prod"],
  versionArgs: ["-version"],
  // "victoria-logs-20260716-022047-tags-v1.52.2" (ours), "victoria-logs-20250715-…-tags-v1.25.1-0-g8fc1d6e2d1" (a release)
  patterns: [/-v(\d+\.\d+\.\d+)\b/],
  install: `bash scripts/build-victorialogs.sh builds VictoriaLogs ${VICTORIALOGS_VERSION} from its Go module (Go >= 1.26.5 and gcc needed)`,
  built: () => builtVictoriaLogs(),
};

const flagName = z
  .string()
  .regex(
    /^[a-zA-Z][a-zA-Z0-9._-]*$/,
    "a victoria-logs flag name without the dash, e.g. search.maxQueryDuration",
  );
/** a field name VictoriaLogs takes in _msg_field and _stream_fields (no comma: those args are comma-separated) */
const fieldName = z.string().regex(/^[A-Za-z_@][A-Za-z0-9_.@-]*$/, "a field name such as msg or gen");

/** Scenario block `sink.victorialogs`, in VictoriaLogs' own names (its flags and its ingestion HTTP parameters). */
export const victoriaLogsSchema = z
  .object({
    /** the release the program reports, e.g. "1.52.2" (`victoria-logs -version` … -tags-v1.52.2) */
    version: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, "a VictoriaLogs release such as 1.52.2")
      .default(VICTORIALOGS_VERSION),
    /** the port of -httpListenAddr, as VictoriaLogs writes it (":9428"); the component binds the host's addresses */
    httpListenAddr: z
      .string()
      .regex(/^:\d{1,5}$/, 'the port part of -httpListenAddr, e.g. ":9428"')
      .refine((s) => Number(s.slice(1)) >= 1 && Number(s.slice(1)) <= 65535, "a port 1-65535")
      .default(":9428"),
    /** -retentionPeriod, e.g. "7d" (VictoriaLogs' default), "30d", "1y"; entries older than it are dropped at ingestion */
    retentionPeriod: z
      .string()
      .regex(/^\d+(\.\d+)?[hdwy]?$/, 'a VictoriaLogs duration such as "7d", "4w" or "1y"')
      .optional(),
    /** other victoria-logs flags by name, e.g. { "search.maxConcurrentRequests": 2 } */
    flags: z.record(flagName, z.union([z.string(), z.number(), z.boolean()])).default({}),
    /** the field that becomes `_msg` (ingestion arg _msg_field) */
    _msg_field: fieldName.default("msg"),
    /** the log stream fields (ingestion arg _stream_fields); [] leaves each protocol's own default */
    _stream_fields: z.array(fieldName).default(["gen"]),
  })
  .strict();

export type VictoriaLogsConfig = z.infer<typeof victoriaLogsSchema>;

/** Flags the component sets itself (or that a scenario sets by its own key). */
const RESERVED_FLAGS = new Set(["storageDataPath", "httpListenAddr", "retentionPeriod", "version", "help"]);

/** The pin "1.52.2" matches a running "1.52.2" (or "v1.52.2"): releases are compared whole. */
export function matchesVictoriaLogsPin(pinned: string, running: string): boolean {
  return pinned.replace(/^v/, "") === running.replace(/^v/, "");
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * The ingestion HTTP parameters of a path (see the file comment): `time` adds `_time_field=sent_at` (the JSON-lines
 * and Elasticsearch bulk paths), `streams` the `_stream_fields` (all but the Loki path).
 */
export function ingestArgs(
  config: Pick<VictoriaLogsConfig, "_msg_field" | "_stream_fields">,
  { time, streams }: { time: boolean; streams: boolean },
): string {
  const q = new URLSearchParams({ _msg_field: config._msg_field });
  if (streams && config._stream_fields.length > 0) q.set("_stream_fields", config._stream_fields.join(","));
  if (time) q.set("_time_field", "sent_at");
  return q.toString();
}

/**
 * The sink params (core/component.ts RunningComponent.params): where each protocol is taken, with its ingestion args,
 * by the generators (http-json reads `path`, es-bulk `bulkPath`, loki-push `lokiPushPath`) and collectors (an OTLP
 * exporter `otlpLogsPath`), and the `_msg_field` for the verifier (`msgField`).
 */
export function victoriaLogsParams(
  config: Pick<VictoriaLogsConfig, "_msg_field" | "_stream_fields">,
): Record<string, string> {
  return {
    path: `/insert/jsonline?${ingestArgs(config, { time: true, streams: true })}`,
    bulkPath: `/insert/elasticsearch/_bulk?${ingestArgs(config, { time: true, streams: true })}`,
    lokiPushPath: `/insert/loki/api/v1/push?${ingestArgs(config, { time: false, streams: false })}`,
    otlpLogsPath: `/insert/opentelemetry/v1/logs?${ingestArgs(config, { time: false, streams: true })}`,
    msgField: config._msg_field,
    streamFields: config._stream_fields.join(","),
  };
}

/**
 * The server's arguments (after the program's own argv) on a host with `address` and `controlAddress`, its data
 * directory `storageDataPath` and memory cap `capBytes` (null: none).
 * @throws ConfigurationError E_SINK_CONFIG for a flag the component sets itself
 */
export function victoriaLogsArgs(
  config: VictoriaLogsConfig,
  where: { address: string; controlAddress: string; storageDataPath: string; capBytes: number | null },
): string[] {
  for (const k of Object.keys(config.flags)) {
    if (RESERVED_FLAGS.has(k))
      throw new ConfigurationError(
        "E_SINK_CONFIG",
        `sink.victorialogs.flags.${k}: ${k === "retentionPeriod" ? "set it as sink.victorialogs.retentionPeriod" : "set by ingestbench itself; it cannot be overridden"}`,
        { field: `sink.victorialogs.flags.${k}` },
      );
  }
  const port = config.httpListenAddr.slice(1);
  const args = [
    `-storageDataPath=${where.storageDataPath}`,
    `-httpListenAddr=${urlHost(where.address)}:${port}`,
  ];
  if (where.controlAddress !== where.address)
    args.push(`-httpListenAddr=${urlHost(where.controlAddress)}:${port}`);
  if (config.retentionPeriod !== undefined) args.push(`-retentionPeriod=${config.retentionPeriod}`);
  const ownMemory = Object.keys(config.flags).some((k) => k.startsWith("memory."));
  if (where.capBytes !== null && !ownMemory)
    args.push(`-memory.allowedBytes=${Math.floor(where.capBytes * MEMORY_SHARE)}`);
  for (const [k, v] of Object.entries(config.flags)) args.push(`-${k}=${String(v)}`);
  return args;
}

/** The running server's release from its /metrics text (`vm_app_version{…short_version="v1.52.2"…} 1`), or null. */
export function versionFromMetrics(text: string): string | null {
  const m = /^vm_app_version\{[^}]*short_version="v?(\d+\.\d+\.\d+)[^"]*"/m.exec(text);
  return m ? m[1]! : null;
}

async function httpGet(url: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  return { status: r.status, body: await r.text() };
}

/** Component "victorialogs" (kind sink): data and control on -httpListenAddr's port; params victoriaLogsParams. */
export const victorialogs: ComponentFactory<VictoriaLogsConfig> = {
  name: "victorialogs",
  kind: "sink",
  matchesPin: matchesVictoriaLogsPin,
  program: { spec: victoriaLogsProgram, pin: (config) => config.version },

  /**
   * Start VictoriaLogs on `host`. Errors: ConfigurationError (bad config; E_PROGRAM_MISSING / E_PROGRAM_VERSION from
   * core/program.ts), ProvisioningError (server exited or not ready in 60 s: the message carries its log tail),
   * VerificationError E_VERSION (the running version differs from the pin; names both). On any failure after the
   * spawn the server is stopped before throwing.
   */
  async startLocal(
    host: LocalHost,
    rawConfig: VictoriaLogsConfig,
    signal?: AbortSignal,
  ): Promise<RunningComponent> {
    const parsed = victoriaLogsSchema.safeParse(rawConfig);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = `sink.victorialogs.${issue.path.join(".")}`;
      throw new ConfigurationError("E_SINK_CONFIG", `${field}: ${issue.message}`, {
        field,
        cause: parsed.error,
      });
    }
    const config = parsed.data;
    const program = hostProgram(host, victoriaLogsProgram);
    if (!matchesVictoriaLogsPin(config.version, program.version)) {
      throw new VerificationError(
        "E_VERSION",
        `${program.argv.join(" ")} (${program.from}) reports VictoriaLogs ${program.version}, but sink.victorialogs.version pins ${config.version}`,
      );
    }
    const storageDataPath = join(host.dataDir, "victorialogs");
    await mkdir(storageDataPath, { recursive: true, mode: 0o750 });
    const args = victoriaLogsArgs(config, {
      address: host.address,
      controlAddress: host.controlAddress,
      storageDataPath,
      capBytes: memoryCapOf(host.cgroup),
    });
    const server = startServer(host, program.argv[0]!, [...program.argv.slice(1), ...args], {
      env: { LC_ALL: "C", LANG: "C", TZ: "UTC" },
      logFile: join(host.dataDir, "victoria-logs.log"),
      // SIGTERM: VictoriaLogs stops its listeners, flushes in-memory parts and exits (app/victoria-logs/main.go)
      stop: { signal: "SIGTERM", graceMs: STOP_GRACE_MS, discardSignal: "SIGKILL" },
    });
    const { child, log, stop, discard, fail } = server;
    const port = Number(config.httpListenAddr.slice(1));
    const base = `http://${urlHost(host.controlAddress)}:${port}`;
    await waitReady(server, {
      signal,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 50,
      probe: async () => {
        const r = await httpGet(`${base}/health`, 2000);
        if (r.status === 200 && r.body.trim() === "OK") return true;
        throw new Error(`HTTP ${r.status}: ${r.body.trim().slice(0, 200)}`);
      },
      errors: {
        aborted: () =>
          new ProvisioningError("E_VL_ABORTED", "aborted while waiting for VictoriaLogs to start"),
        spawnFailed: (e) =>
          new ProvisioningError("E_VL_START", `cannot start ${program.argv[0]}: ${e.message}`, { cause: e }),
        exited: (code) =>
          new ProvisioningError(
            "E_VL_START",
            `VictoriaLogs exited during startup (code ${code}); log tail:\n${log.text()}`,
          ),
        timedOut: (lastError) =>
          new ProvisioningError(
            "E_VL_READY",
            `VictoriaLogs not ready on ${base}/health after ${READY_TIMEOUT_MS / 1000} s (last error: ${lastError}); log tail:\n${log.text()}`,
          ),
      },
    });
    let running: string | null;
    try {
      running = versionFromMetrics((await httpGet(`${base}/metrics`, 10_000)).body);
    } catch (err) {
      return fail(
        new ProvisioningError("E_VL_VERSION", `cannot read ${base}/metrics: ${(err as Error).message}`, {
          cause: err,
        }),
      );
    }
    if (exited(child)) {
      // whatever answered was not this server (another one on the same port?)
      return fail(
        new ProvisioningError(
          "E_VL_START",
          `VictoriaLogs exited during startup (code ${child.exitCode ?? child.signalCode}), yet ${base} answered; log tail:\n${log.text()}`,
        ),
      );
    }
    if (running === null)
      return fail(
        new ProvisioningError("E_VL_VERSION", `${base}/metrics has no vm_app_version with a release in it`),
      );
    if (!matchesVictoriaLogsPin(config.version, running)) {
      return fail(
        new VerificationError(
          "E_VERSION",
          `VictoriaLogs reports version ${running}, but sink.victorialogs.version pins ${config.version}`,
        ),
      );
    }
    return {
      name: "victorialogs",
      pinned: config.version,
      running,
      data: { host: host.address, port },
      control: { host: host.controlAddress, port },
      params: victoriaLogsParams(config),
      ...(child.pid !== undefined ? { pid: child.pid } : {}),
      stop,
      discard,
    };
  },
};
