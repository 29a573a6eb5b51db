/**
 * Collector component "fluentd" on the local platform: a Fluentd the user installed (core/program.ts: the stack
 * host's `programs.fluentd`, e.g. `ruby /opt/fluentd-1.12.0/bin/fluentd`, else `fluentd` on PATH), run inside the
 * host's cgroup and namespace with the fluent.conf the container platforms get (./render.ts renderFluentdConfig;
 * only the config and buffer paths differ, under <dataDir>/fluentd).
 *
 * Version: `fluentd --version` ("fluentd 1.12.0"), equal to the scenario's `version`, checked before provisioning
 * (harness/runner/local-site.ts checkPrograms) and again here. Ready when every worker's monitor_agent answers
 * GET /api/plugins.json with its output plugin (port + worker id, ./claims.ts) and, for a forward or http source, the
 * data port accepts. Stop: SIGTERM to the supervisor (which flushes and stops its workers), ≤ 30 s, then SIGKILL to
 * it and its workers. Claims: ./claims.ts summed over the workers' ports; signals: monitorAgentSignals.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  parseCollectorConfig,
  pinnedProgram,
  requireDownstream,
  startCollector,
} from "../../../core/collector.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import type { ProgramSpec } from "../../../core/program.ts";
import { listeningCollector, tcpAccepts } from "../../../core/process.ts";
import type { ComponentFactory, Downstream, RunningComponent } from "../../../core/component.ts";
import { claims, combineSignal, monitorAgentSignals } from "./claims.ts";
import { fluentdRenderer, fluentdSchema, renderFluentdConfig, type FluentdConfig } from "./render.ts";

const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 30_000;

/** How the local platform finds Fluentd and reads its version. */
export const FLUENTD_PROGRAM: ProgramSpec = {
  plugin: "fluentd",
  names: ["fluentd"],
  versionArgs: ["--version"],
  patterns: [/^fluentd (\d+\.\d+\.\d+)/m],
  install:
    'install Fluentd (`gem install fluentd -v <version>`, or td-agent), or run it from its source tree with the stack host\'s `programs: { fluentd: "ruby /opt/fluentd-1.12.0/bin/fluentd" }` (plugins/collectors/fluentd/README.md)',
};

function parseConfig(raw: unknown): FluentdConfig {
  return parseCollectorConfig("fluentd", fluentdSchema, raw);
}

/** Several workers' readings, key by key: summed, the free buffer space the least (./claims.ts combineSignal). */
function sumReadings(all: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of all) for (const [k, v] of Object.entries(r)) out[k] = combineSignal(k, out[k], v);
  return out;
}

/** Component "fluentd" (kind collector): forward or http input (or its own sample input) into ./render.ts's sinks. */
export const fluentd: ComponentFactory<FluentdConfig> = {
  name: "fluentd",
  kind: "collector",
  matchesPin: (pinned, running) => pinned === running,
  // the generators the default source (forward) receives; the plan reads the renderer's accepts per config
  accepts: ["fluent-forward", "http-json"],
  writesTo: fluentdRenderer.writesTo,
  program: { spec: FLUENTD_PROGRAM, pin: (c) => parseConfig(c).version },

  /**
   * Errors: ConfigurationError (bad config, no downstream, unsupported sink, program missing), VerificationError
   * E_VERSION (the program's version ≠ pin, naming both), ProvisioningError E_COLLECTOR_START / E_COLLECTOR_READY
   * (exited, or not answering in 60 s; with Fluentd's output).
   */
  async startLocal(
    host: LocalHost,
    rawConfig: FluentdConfig,
    signal?: AbortSignal,
    downstreamOrNone?: Downstream,
  ): Promise<RunningComponent> {
    const config = parseConfig(rawConfig);
    const downstream = requireDownstream("fluentd", downstreamOrNone);
    const program = pinnedProgram(host, FLUENTD_PROGRAM, config.version);
    const dir = join(host.dataDir, "fluentd");
    await mkdir(join(dir, "buffer"), { recursive: true });
    const { sink } = downstream;
    const rendered = renderFluentdConfig(
      {
        config,
        fields: downstream.fields,
        genBase: downstream.genBase,
        sink: { name: sink.name, host: sink.data.host, port: sink.data.port, params: downstream.params },
      },
      { file: join(dir, "fluent.conf"), buffer: join(dir, "buffer", "ib"), root: join(dir, "root") },
    );
    // the sink's password stays in the environment (the config reads it as "#{ENV['…']}", ./render.ts envPassword)
    await writeFile(rendered.file, rendered.text);
    const ports = claims.ports!(config.monitor_agent.port, config);
    const at = (port: number) => ({ host: host.controlAddress, port });
    const readAll = async (s?: AbortSignal) =>
      sumReadings(await Promise.all(ports.map((p) => claims.read(at(p), s))));
    const dataPort = config.source.sample ? undefined : rendered.listens.data;
    const server = await startCollector(host, "fluentd", [...program.argv, "-c", rendered.file], {
      env: { LC_ALL: "C" },
      graceMs: STOP_GRACE_MS,
      killChildren: true,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 200,
      signal,
      probe: async () => {
        if (dataPort !== undefined && !(await tcpAccepts(host.controlAddress, dataPort))) return undefined;
        await readAll(signal);
        return true;
      },
      notReady: (last) =>
        `fluentd's monitor_agent (${ports.join(", ")}) or data port not answering after ${READY_TIMEOUT_MS / 1000} s (${last})`,
    });
    return listeningCollector({
      name: "fluentd",
      pinned: config.version,
      running: program.version,
      host,
      port: rendered.listens.data,
      server,
      params: downstream.params,
      stats: () => readAll(),
      async signals() {
        return sumReadings(
          await Promise.all(ports.map((p) => monitorAgentSignals(`http://${host.controlAddress}:${p}`))),
        );
      },
    });
  },
};
