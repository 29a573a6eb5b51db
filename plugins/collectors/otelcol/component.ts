/**
 * The OpenTelemetry Collector on the local platform: the project's own build (./build.ts, scripts/build-otelcol.sh),
 * or an otelcol / otelcol-contrib the user installed (a stack host's `programs: { otelcol: <path> }`, else PATH;
 * core/program.ts), run inside the collector host's cgroup and namespace with the config ./render.ts renders for the
 * container platforms too; only the config's path differs (`<dataDir>/otelcol/config.yaml`).
 *
 * - Version: `<program> --version` ("otelcol-ingestbench version 0.165.0", "otelcol-contrib version 0.165.0"), held
 *   against the scenario's `version` (default OTELCOL_PIN) before anything is provisioned (local-site.ts
 *   checkPrograms, E_VERSION with both versions) and again here.
 * - Before it starts: `<program> validate --config <file>`, which refuses a component the binary does not contain
 *   (e.g. the elasticsearch exporter with the project's build) with the Collector's own words.
 * - Ready: the health_check extension answers GET / with 200 (its "Server available" status), which it does once
 *   every pipeline has started; the receiver's port is listening by then.
 * - Claims (stats): its internal telemetry's Prometheus reader (./claims.ts otelcolCounts): received, refused,
 *   written, dropped, queued. Signals, every sample: per exporter id `<id>.sent`, `<id>.send_failed`,
 *   `<id>.enqueue_failed`, `<id>.queue_size`, `<id>.queue_capacity`, and per receiver `<id>.accepted`,
 *   `<id>.refused` (log records; queue gauges in the queue's sizer, requests by default).
 * - Stop: SIGTERM (the Collector drains its pipelines and the sending queue, up to its own shutdown timeouts),
 *   SIGKILL after 15 s.
 */
import type { OutputPressure } from "../../../core/plugin.ts";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { request } from "undici";
import type { ComponentFactory, Downstream, RunningComponent } from "../../../core/component.ts";
import {
  parseCollectorConfig,
  pinnedProgram,
  requireDownstream,
  startCollector,
} from "../../../core/collector.ts";
import { ConfigurationError, ProvisioningError } from "../../../core/errors.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import { listeningCollector, matchesVersionPrefix } from "../../../core/process.ts";
import { parsePrometheusText, type PromSamples } from "../../../core/prometheus.ts";
import type { ProgramSpec } from "../../../core/program.ts";
import { passwordEnvName, sinkPassword } from "../../../core/secrets.ts";
import { otelcolBuilt, OTELCOL_BUILD_SCRIPT } from "./build.ts";
import { claims } from "./claims.ts";
import { OTELCOL_LOCAL_SINKS, otelcolSchema, renderOtelcolConfig, type OtelcolConfig } from "./render.ts";

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 15_000;

/** How the local platform finds the Collector (core/program.ts). */
export const OTELCOL_PROGRAM: ProgramSpec = {
  plugin: "otelcol",
  names: ["otelcol-contrib", "otelcol"],
  versionArgs: ["--version"],
  // cobra's version template: "<command> version <version>" (the releases print it without a leading v)
  patterns: [/^\S+ version v?(\d+\.\d+\.\d+)\b/m],
  install: `build the project's Collector with \`bash ${OTELCOL_BUILD_SCRIPT}\` (Go ≥ 1.26 and the Go module proxy), or install an otelcol-contrib release (github.com/open-telemetry/opentelemetry-collector-releases)`,
  built: otelcolBuilt,
};

/** The port of a "host:port" endpoint. */
function portOf(endpoint: string): number {
  return Number(endpoint.slice(endpoint.lastIndexOf(":") + 1));
}

/** Does the health_check extension at `host`:`port` answer 200? Never throws (false). */
async function healthy(host: string, port: number): Promise<boolean> {
  try {
    const r = await request(`http://${host}:${port}/`, {
      reset: true,
      signal: AbortSignal.timeout(1000),
    });
    await r.body.text();
    return r.statusCode === 200;
  } catch {
    return false;
  }
}

/** The sample values of `metric` by the value of its `label` (summed over the other labels). */
function byLabel(samples: PromSamples, metric: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples.get(metric) ?? []) {
    const id = s.labels[label];
    if (id !== undefined) out.set(id, (out.get(id) ?? 0) + s.value);
  }
  return out;
}

/**
 * The series' signals from one Prometheus payload of the Collector's internal telemetry (module doc): counters
 * under their `_total` names, else the bare ones.
 */
export function otelcolSignals(text: string): Record<string, number> {
  const samples = parsePrometheusText(text);
  const out: Record<string, number> = {};
  const counter = (bare: string, label: string, as: string): void => {
    const name = samples.has(`${bare}_total`) ? `${bare}_total` : bare;
    for (const [id, v] of byLabel(samples, name, label)) out[`${id}.${as}`] = v;
  };
  // an exporter's queue gauges exist from its start, its sent / send_failed series from its first success / failure
  for (const [id, v] of byLabel(samples, "otelcol_exporter_queue_size", "exporter")) {
    out[`${id}.queue_size`] = v;
    out[`${id}.sent`] = 0;
    out[`${id}.send_failed`] = 0;
  }
  for (const [id, v] of byLabel(samples, "otelcol_exporter_queue_capacity", "exporter"))
    out[`${id}.queue_capacity`] = v;
  counter("otelcol_receiver_accepted_log_records", "receiver", "accepted");
  counter("otelcol_receiver_refused_log_records", "receiver", "refused");
  counter("otelcol_exporter_sent_log_records", "exporter", "sent");
  counter("otelcol_exporter_send_failed_log_records", "exporter", "send_failed");
  counter("otelcol_exporter_enqueue_failed_log_records", "exporter", "enqueue_failed");
  return out;
}

/** GET the Collector's metrics text at `host`:`port` (claims' errors: E_CLAIMS). */
async function metricsText(host: string, port: number): Promise<string> {
  const r = await request(`http://${host}:${port}/metrics`, {
    reset: true,
    signal: AbortSignal.timeout(5000),
  });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`otelcol metrics at ${host}:${port}: HTTP ${r.statusCode}`);
  return text;
}

function parseConfig(raw: unknown): OtelcolConfig {
  return parseCollectorConfig("otelcol", otelcolSchema, raw);
}

/** Component "otelcol" (kind collector): receives `fluent-forward`, writes into OTELCOL_LOCAL_SINKS. */
export const otelcol: ComponentFactory<OtelcolConfig> = {
  name: "otelcol",
  kind: "collector",
  matchesPin: matchesVersionPrefix,
  accepts: ["fluent-forward"],
  writesTo: OTELCOL_LOCAL_SINKS,
  program: { spec: OTELCOL_PROGRAM, pin: (c) => parseConfig(c).version },

  /**
   * Errors: ConfigurationError (bad config, no downstream, a sink the local build cannot write into, no program),
   * VerificationError E_VERSION (the program's version ≠ the pin, naming both), ProvisioningError (the Collector's
   * `validate` refuses the rendered config; exited or not healthy in 30 s; with its output).
   */
  async startLocal(
    host: LocalHost,
    rawConfig: OtelcolConfig,
    signal?: AbortSignal,
    downstreamOrNone?: Downstream,
  ): Promise<RunningComponent> {
    const config = parseConfig(rawConfig);
    const downstream = requireDownstream("otelcol", downstreamOrNone);
    const { sink } = downstream;
    if (!OTELCOL_LOCAL_SINKS.includes(sink.name))
      throw new ConfigurationError(
        "E_COLLECTOR_SINK",
        `collector otelcol on the local platform cannot write into sink "${sink.name}" (local: ${OTELCOL_LOCAL_SINKS.join(", ") || "none"}; plugins/collectors/otelcol/README.md says why)`,
        { field: "sink" },
      );
    const program = pinnedProgram(host, OTELCOL_PROGRAM, config.version, matchesVersionPrefix);
    const dir = join(host.dataDir, "otelcol");
    await mkdir(dir, { recursive: true });
    const password = sinkPassword(sink.name);
    const rendered = renderOtelcolConfig(
      {
        config,
        fields: downstream.fields,
        genBase: downstream.genBase,
        sink: { name: sink.name, host: sink.data.host, port: sink.data.port, params: downstream.params },
      },
      join(dir, "config.yaml"),
    );
    // the password stays in the environment: the rendered file names it as ${env:INGESTBENCH_<SINK>_PASSWORD}
    await writeFile(rendered.file, rendered.text, { mode: 0o600 });
    const env: Record<string, string> = {
      LC_ALL: "C",
      ...(password !== undefined ? { [passwordEnvName(sink.name)]: password } : {}),
    };
    const [cmd, ...pre] = program.argv as [string, ...string[]];
    const check = spawnSync(cmd, [...pre, "validate", "--config", rendered.file], {
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 60_000,
    });
    if (check.status !== 0)
      throw new ProvisioningError(
        "E_COLLECTOR_CONFIG",
        `otelcol (${program.argv.join(" ")}) refuses the rendered ${rendered.file}:\n${`${check.stdout}\n${check.stderr}`.trim().slice(-2000)}`,
      );

    const healthPort = portOf(config.extensions.health_check.endpoint);
    const server = await startCollector(host, "otelcol", [cmd, ...pre, ...rendered.command!], {
      env,
      graceMs: STOP_GRACE_MS,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 100,
      signal,
      probe: async () => ((await healthy(host.controlAddress, healthPort)) ? true : undefined),
      notReady: () =>
        `otelcol's health_check on ${host.controlAddress}:${healthPort} did not answer 200 after ${READY_TIMEOUT_MS / 1000} s`,
    });
    const metricsPort = rendered.listens.metrics!;
    return listeningCollector({
      name: "otelcol",
      pinned: config.version,
      running: program.version,
      host,
      port: rendered.listens.data,
      server,
      params: downstream.params,
      stats: () => claims.read({ host: host.controlAddress, port: metricsPort }),
      signals: async () => otelcolSignals(await metricsText(host.controlAddress, metricsPort)),
    });
  },
};

/**
 * The exporters' queue readings (core/plugin.ts OutputPressure) from one host's series signals (otelcolSignals'
 * `<exporter>.<field>` keys): queue_size (items, the sending queue's batches or requests), queue_size / queue_capacity,
 * send_failed. The Collector's internal telemetry at its default level has no send latency, so no flush time.
 */
export function otelcolPressure(signals: Readonly<Record<string, number>>): OutputPressure[] {
  const ids = new Set(
    Object.keys(signals).flatMap((k) =>
      k.endsWith(".queue_size") ? [k.slice(0, -".queue_size".length)] : [],
    ),
  );
  return [...ids].map((id) => {
    const size = signals[`${id}.queue_size`]!;
    const capacity = signals[`${id}.queue_capacity`];
    const failed = signals[`${id}.send_failed`];
    return {
      output: id,
      queued: size,
      queuedUnit: "items" as const,
      ...(capacity !== undefined && capacity > 0 ? { queueUsed: Math.min(1, size / capacity) } : {}),
      ...(failed !== undefined ? { sendFailures: failed } : {}),
    };
  });
}
