/**
 * Collector component "fluent-bit" on the local platform: a Fluent Bit the user installed (core/program.ts: the
 * stack host's `programs.fluent-bit`, else `fluent-bit` on PATH), run inside the host's cgroup and namespace with the
 * fluent-bit.conf the container platforms get (./render.ts renderFluentBitConfig; only the file's path differs,
 * <dataDir>/fluent-bit/fluent-bit.conf).
 *
 * Version: `fluent-bit --version` ("Fluent Bit v4.2.8"), equal to the scenario's `version`, checked before
 * provisioning (harness/runner/local-site.ts checkPrograms) and again here. Ready when the built-in HTTP server
 * answers /api/v2/metrics/prometheus (./claims.ts) and the input's port accepts. Stop: SIGTERM (Fluent Bit flushes
 * for its Grace period, 5 s by default), ≤ 15 s, then SIGKILL. Claims: ./claims.ts; signals: ./claims.ts
 * fluentBitSignals (/api/v1/metrics, and /api/v2/metrics where served).
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
import { claims, fluentBitSignals } from "./claims.ts";
import { fluentBitRenderer, fluentBitSchema, renderFluentBitConfig, type FluentBitConfig } from "./render.ts";

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 15_000;

/** How the local platform finds Fluent Bit and reads its version. */
export const FLUENT_BIT_PROGRAM: ProgramSpec = {
  plugin: "fluent-bit",
  names: ["fluent-bit"],
  versionArgs: ["--version"],
  patterns: [/^Fluent Bit v(\d+\.\d+\.\d+)/m],
  install:
    "install Fluent Bit (packages.fluentbit.io, or build it from its source: plugins/collectors/fluent-bit/README.md), or name its path in the stack host's `programs: { fluent-bit: /opt/fluent-bit/bin/fluent-bit }`",
};

function parseConfig(raw: unknown): FluentBitConfig {
  return parseCollectorConfig("fluent-bit", fluentBitSchema, raw);
}

/** Component "fluent-bit" (kind collector): http or forward input into ./render.ts's sinks. */
export const fluentBit: ComponentFactory<FluentBitConfig> = {
  name: "fluent-bit",
  kind: "collector",
  matchesPin: (pinned, running) => pinned === running,
  accepts: ["http-json", "fluent-forward"],
  writesTo: fluentBitRenderer.writesTo,
  program: { spec: FLUENT_BIT_PROGRAM, pin: (c) => parseConfig(c).version },

  /**
   * Errors: ConfigurationError (bad config, no downstream, unsupported sink, program missing), VerificationError
   * E_VERSION (the program's version ≠ pin, naming both), ProvisioningError E_COLLECTOR_START / E_COLLECTOR_READY
   * (exited, or not answering in 30 s; with Fluent Bit's output).
   */
  async startLocal(
    host: LocalHost,
    rawConfig: FluentBitConfig,
    signal?: AbortSignal,
    downstreamOrNone?: Downstream,
  ): Promise<RunningComponent> {
    const config = parseConfig(rawConfig);
    const downstream = requireDownstream("fluent-bit", downstreamOrNone);
    const program = pinnedProgram(host, FLUENT_BIT_PROGRAM, config.version);
    const dir = join(host.dataDir, "fluent-bit");
    await mkdir(dir, { recursive: true });
    const { sink } = downstream;
    const rendered = renderFluentBitConfig(
      {
        config,
        fields: downstream.fields,
        sink: { name: sink.name, host: sink.data.host, port: sink.data.port, params: downstream.params },
      },
      join(dir, "fluent-bit.conf"),
    );
    // the sink's password stays in the environment (the config names it as ${INGESTBENCH_<SINK>_PASSWORD})
    await writeFile(rendered.file, rendered.text);
    const metrics = { host: host.controlAddress, port: rendered.listens.metrics! };
    const server = await startCollector(host, "fluent-bit", [...program.argv, "-c", rendered.file], {
      env: { LC_ALL: "C" },
      graceMs: STOP_GRACE_MS,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 200,
      signal,
      probe: async () => {
        if (!(await tcpAccepts(host.controlAddress, rendered.listens.data))) return undefined;
        await claims.read(metrics, signal);
        return true;
      },
      notReady: (last) =>
        `fluent-bit's input (${rendered.listens.data}) or HTTP server (${metrics.port}) not answering after ${READY_TIMEOUT_MS / 1000} s (${last})`,
    });
    return listeningCollector({
      name: "fluent-bit",
      pinned: config.version,
      running: program.version,
      host,
      port: rendered.listens.data,
      server,
      params: downstream.params,
      stats: () => claims.read(metrics),
      signals: () => fluentBitSignals(`http://${metrics.host}:${metrics.port}`),
    });
  },
};
