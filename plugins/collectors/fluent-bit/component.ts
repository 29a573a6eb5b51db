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
import { ConfigurationError, ProvisioningError, VerificationError } from "../../../core/errors.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import { hostProgram, type ProgramSpec } from "../../../core/program.ts";
import { startServer, tcpAccepts, waitReady } from "../../../core/process.ts";
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
  const parsed = fluentBitSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = `collector.fluent-bit.${issue.path.join(".")}`;
    throw new ConfigurationError("E_COLLECTOR_CONFIG", `${at}: ${issue.message}`, {
      field: at,
      cause: parsed.error,
    });
  }
  return parsed.data;
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
    downstream?: Downstream,
  ): Promise<RunningComponent> {
    const config = parseConfig(rawConfig);
    if (!downstream)
      throw new ConfigurationError(
        "E_COLLECTOR_DOWNSTREAM",
        "collector fluent-bit needs the sink it writes into (downstream)",
      );
    const program = hostProgram(host, FLUENT_BIT_PROGRAM);
    if (program.version !== config.version) {
      throw new VerificationError(
        "E_VERSION",
        `fluent-bit at ${program.argv.join(" ")} reports ${program.version} but collector.fluent-bit.version pins ${config.version}; refusing to start`,
      );
    }
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
    const [exe, ...pre] = program.argv;
    const server = startServer(host, exe!, [...pre, "-c", rendered.file], {
      env: { LC_ALL: "C" },
      logFile: join(host.dataDir, "fluent-bit.log"),
      stop: { signal: "SIGTERM", graceMs: STOP_GRACE_MS, continueFirst: true },
    });
    const metrics = { host: host.controlAddress, port: rendered.listens.metrics! };
    await waitReady(server, {
      signal,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 200,
      probe: async () => {
        if (!(await tcpAccepts(host.controlAddress, rendered.listens.data))) return undefined;
        await claims.read(metrics, signal);
        return true;
      },
      errors: {
        aborted: () =>
          new ProvisioningError("E_COLLECTOR_ABORTED", "aborted while waiting for fluent-bit to start"),
        spawnFailed: (e) =>
          new ProvisioningError("E_COLLECTOR_START", `cannot start fluent-bit: ${e.message}`, { cause: e }),
        exited: (code) =>
          new ProvisioningError(
            "E_COLLECTOR_START",
            `fluent-bit exited during startup (code ${code}); output:\n${server.log.text()}`,
          ),
        timedOut: (last) =>
          new ProvisioningError(
            "E_COLLECTOR_READY",
            `fluent-bit's input (${rendered.listens.data}) or HTTP server (${metrics.port}) not answering after ${READY_TIMEOUT_MS / 1000} s (${last}); output:\n${server.log.text()}`,
          ),
      },
    });
    return {
      name: "fluent-bit",
      pinned: config.version,
      running: program.version,
      data: { host: host.address, port: rendered.listens.data },
      control: { host: host.controlAddress, port: rendered.listens.data },
      params: downstream.params,
      pid: server.child.pid,
      stop: () => server.stop(),
      stats: () => claims.read(metrics),
      signals: () => fluentBitSignals(`http://${metrics.host}:${metrics.port}`),
    };
  },
};
