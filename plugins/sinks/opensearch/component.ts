/**
 * Sink component "opensearch" on the local platform: one OpenSearch 2.19.6 node, from the project's own build
 * (./launcher/: OpenSearch's Maven Central modules started by a small Node subclass, scripts/build-opensearch.sh) or
 * an `opensearch` the user installed (the tarball's bin/opensearch on PATH, or the stack host's
 * `programs.opensearch`; core/program.ts). Its version is read from the program (`opensearch --version`) and held
 * against the pin before anything is provisioned.
 *
 * startLocal renders into <dataDir>/opensearch/config (OPENSEARCH_PATH_CONF, which both programs read):
 * - opensearch.yml: one node (`discovery.type: single-node`), HTTP on the host's data and control addresses
 *   (`http.bind_host`; `http.publish_host` the data address), transport on loopback, `path.data`/`path.logs` under
 *   <dataDir>/opensearch, the disk-based shard allocation off (`cluster.routing.allocation.disk.threshold_enabled`:
 *   a shared CI disk above 85 % full would otherwise leave the index unassigned), and, when the program is a
 *   distribution with the security plugin installed, `plugins.security.disabled: true` (the container image's
 *   DISABLE_SECURITY_PLUGIN);
 * - jvm.options: the distribution's own choices (config/jvm.options of 2.19: G1 with its reserve and occupancy,
 *   Netty and log4j flags), java.io.tmpdir under <dataDir>;
 * - log4j2.properties: the console only (the server's output goes to <dataDir>/opensearch.log).
 * The heap is OPENSEARCH_JAVA_OPTS `-Xms<h>m -Xmx<h>m`, h = half the host's memory cap (core/catalog.ts heapMiB, as
 * the container platforms size it), 1 GiB on a host without a cap. Ready when `GET /_cluster/health` answers green
 * (no index yet: the cluster state is recovered and the node elected itself), then `GET /` gives the version.
 * stop(): SIGTERM (the node closes its shards), ≤ 30 s, then SIGKILL; discard(): SIGKILL.
 *
 * Signals, every sample (RunningComponent.signals): the node's merges, `GET /_nodes/_local/stats/indices/merge`
 * (the metric is `merge`, the answer's object `merges`: `current`, `total`, `total_time_in_millis` and its other
 * numbers), named `merges.<field>`.
 */
import { existsSync } from "node:fs";
import { chown, mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import { dirname, join } from "node:path";
import { heapMiB } from "../../../core/catalog.ts";
import type { ComponentFactory, RunningComponent } from "../../../core/component.ts";
import { ConfigurationError, ProvisioningError } from "../../../core/errors.ts";
import type { LocalHost } from "../../../core/hosts.ts";
import { memoryCapOf } from "../../../core/memory-cap.ts";
import { accountFor, startServer, waitReady, type ServerAccount } from "../../../core/process.ts";
import { hostProgram, type ProgramSpec } from "../../../core/program.ts";
import { builtLauncher } from "./launcher.ts";
import { OPENSEARCH_VERSION, opensearchSinkSchema, type OpensearchSinkConfig } from "./schema.ts";

/** OpenSearch's default HTTP and transport ports (inside the host's own network namespace). */
export const HTTP_PORT = 9200;
const TRANSPORT_PORT = 9300;
/** The node starts without the CPU cap (harness/runner/local-site.ts); a busy 2-core machine took ~30 s. */
const READY_TIMEOUT_MS = 180_000;
const STOP_GRACE_MS = 30_000;
const SIGNALS_TIMEOUT_MS = 2_000;

/** The program: the project's build, else `opensearch` on PATH (a distribution's bin/opensearch). */
export const OPENSEARCH_PROGRAM: ProgramSpec = {
  plugin: "opensearch",
  names: ["opensearch"],
  versionArgs: ["--version"],
  // org.opensearch.bootstrap.OpenSearch (and ./launcher): "Version: 2.19.6, Build: tar/<hash>/<date>, JVM: 17.0.15"
  patterns: [/^Version: (\d+\.\d+\.\d+)/m],
  install:
    "build the project's own with `bash scripts/build-opensearch.sh` (Maven, Java 17), or install OpenSearch 2.19.6's tarball and put its bin/ on PATH",
  built: () => builtLauncher(),
};

/** The distribution's jvm.options (2.19) that matter to a node's work, one option a line. */
export function renderJvmOptions(tmpDir: string): string {
  return [
    "# rendered by ingestbench (plugins/sinks/opensearch/component.ts); the heap comes from OPENSEARCH_JAVA_OPTS",
    "-XX:+UseG1GC",
    "-XX:G1ReservePercent=25",
    "-XX:InitiatingHeapOccupancyPercent=30",
    "-Dio.netty.noUnsafe=true",
    "-Dio.netty.noKeySetOptimization=true",
    "-Dio.netty.recycler.maxCapacityPerThread=0",
    "-Dlog4j.shutdownHookEnabled=false",
    "-Dlog4j2.disable.jmx=true",
    "-Dlog4j2.formatMsgNoLookups=true",
    "-Djava.security.manager=allow",
    `-Djava.io.tmpdir=${tmpDir}`,
    "",
  ].join("\n");
}

/** Console only; the server's stdout is appended to <dataDir>/opensearch.log. */
export const LOG4J2_PROPERTIES = `# rendered by ingestbench (plugins/sinks/opensearch/component.ts)
status = error
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] [%node_name]%marker %m%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
`;

/** The opensearch.yml of a node on `host` rooted at `root` (see the file comment). */
export function renderOpensearchYml(o: {
  root: string;
  address: string;
  controlAddress: string;
  securityPlugin: boolean;
}): string {
  const hosts = [...new Set([o.address, o.controlAddress])].map((a) => JSON.stringify(a)).join(", ");
  return [
    "# rendered by ingestbench (plugins/sinks/opensearch/component.ts)",
    "cluster.name: ingestbench",
    "node.name: sink",
    "discovery.type: single-node",
    `path.data: ${JSON.stringify(join(o.root, "data"))}`,
    `path.logs: ${JSON.stringify(join(o.root, "logs"))}`,
    `http.bind_host: [${hosts}]`,
    `http.publish_host: ${JSON.stringify(o.address)}`,
    `http.port: ${HTTP_PORT}`,
    "transport.host: 127.0.0.1",
    `transport.port: ${TRANSPORT_PORT}`,
    "cluster.routing.allocation.disk.threshold_enabled: false",
    ...(o.securityPlugin ? ["plugins.security.disabled: true"] : []),
    "",
  ].join("\n");
}

/** The heap, MiB, for a host whose cgroup caps memory at `capBytes` (null, or at least the machine's RAM: no cap). */
export function opensearchHeapMiB(capBytes: number | null, totalBytes: number = os.totalmem()): number {
  return heapMiB(capBytes === null || capBytes >= totalBytes ? undefined : capBytes);
}

function urlHost(h: string): string {
  return h.includes(":") ? `[${h}]` : h;
}

/** `GET url` with a timeout; status and parsed JSON (null when the body is not JSON). */
async function getJson(url: string, timeoutMs: number): Promise<{ status: number; json: any; text: string }> {
  const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await r.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, json, text };
}

/**
 * The numbers of the merges object of `GET /_nodes/_local/stats/indices/merge` as `merges.<field>` (one node: the
 * first of `nodes`). @throws Error when the answer has no merges object
 */
export function mergeSignals(answer: unknown): Record<string, number> {
  const nodes = (answer as { nodes?: Record<string, { indices?: { merges?: Record<string, unknown> } }> })
    ?.nodes;
  const merges = nodes ? Object.values(nodes)[0]?.indices?.merges : undefined;
  if (!merges || typeof merges !== "object")
    throw new Error(`no nodes.*.indices.merges in ${JSON.stringify(answer).slice(0, 200)}`);
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(merges)) if (typeof v === "number") out[`merges.${k}`] = v;
  return out;
}

/** Component "opensearch" (kind sink): data and control on HTTP port 9200; params the scenario block's. */
export const opensearch: ComponentFactory<OpensearchSinkConfig> = {
  name: "opensearch",
  kind: "sink",
  matchesPin: (pinned, running) => pinned === running,
  program: { spec: OPENSEARCH_PROGRAM, pin: (config) => config.version ?? OPENSEARCH_VERSION },

  /**
   * Start one node on `host`. Errors: ConfigurationError (bad block; E_PROGRAM_MISSING / E_PROGRAM_VERSION from
   * core/program.ts), ProvisioningError E_OS_START (exited during startup, with its output), E_OS_READY (not green in
   * 180 s), E_OS_ABORTED. The server is stopped before any of them is thrown.
   */
  async startLocal(host: LocalHost, rawConfig: OpensearchSinkConfig, signal?: AbortSignal) {
    const parsed = opensearchSinkSchema.safeParse(rawConfig);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = `sink.opensearch.${issue.path.join(".")}`;
      throw new ConfigurationError("E_SINK_CONFIG", `${field}: ${issue.message}`, {
        field,
        cause: parsed.error,
      });
    }
    const config = parsed.data;
    const program = hostProgram(host, OPENSEARCH_PROGRAM);
    // OpenSearch's own bin/opensearch refuses root ("can not run opensearch as root"); the project's build runs no
    // bootstrap and runs as the harness's user (its cache entry is private to that user)
    const account: ServerAccount =
      program.from === "built"
        ? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }
        : accountFor(
            ["opensearch", "nobody"],
            () =>
              new ProvisioningError(
                "E_OS_USER",
                `running as root, and neither an "opensearch" nor a "nobody" account exists to run ${program.argv[0]} as (OpenSearch refuses root)`,
              ),
          );
    const root = join(host.dataDir, "opensearch");
    const conf = join(root, "config");
    for (const d of [root, conf, join(root, "data"), join(root, "logs"), join(root, "tmp")]) {
      await mkdir(d, { recursive: true, mode: 0o750 });
      await chown(d, account.uid, account.gid);
    }
    const securityPlugin = existsSync(
      join(dirname(program.argv[0]!), "..", "plugins", "opensearch-security"),
    );
    const files: Array<[string, string]> = [
      [
        "opensearch.yml",
        renderOpensearchYml({
          root,
          address: host.address,
          controlAddress: host.controlAddress,
          securityPlugin,
        }),
      ],
      ["jvm.options", renderJvmOptions(join(root, "tmp"))],
      ["log4j2.properties", LOG4J2_PROPERTIES],
    ];
    for (const [name, text] of files) {
      await writeFile(join(conf, name), text);
      await chown(join(conf, name), account.uid, account.gid);
    }
    const heap = opensearchHeapMiB(memoryCapOf(host.cgroup));
    const server = startServer(host, program.argv[0]!, program.argv.slice(1), {
      user: account.user,
      env: {
        LC_ALL: "C",
        OPENSEARCH_PATH_CONF: conf,
        OPENSEARCH_JAVA_OPTS: `-Xms${heap}m -Xmx${heap}m`,
      },
      logFile: join(host.dataDir, "opensearch.log"),
      stop: { signal: "SIGTERM", graceMs: STOP_GRACE_MS, discardSignal: "SIGKILL" },
    });
    const base = `http://${urlHost(host.controlAddress)}:${HTTP_PORT}`;
    const name = `OpenSearch (${program.argv.join(" ")}, ${program.from})`;
    const running = await waitReady(server, {
      signal,
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 250,
      probe: async () => {
        const h = await getJson(`${base}/_cluster/health`, 2000);
        if (h.status !== 200 || h.json?.status !== "green")
          throw new Error(`_cluster/health: HTTP ${h.status} ${h.text.slice(0, 200)}`);
        const r = await getJson(`${base}/`, 2000);
        const number = r.json?.version?.number;
        if (typeof number !== "string") throw new Error(`GET /: HTTP ${r.status} ${r.text.slice(0, 200)}`);
        return number;
      },
      errors: {
        aborted: () => new ProvisioningError("E_OS_ABORTED", `aborted while waiting for ${name} to start`),
        spawnFailed: (e) =>
          new ProvisioningError("E_OS_START", `cannot start ${name}: ${e.message}`, { cause: e }),
        exited: (code) =>
          new ProvisioningError(
            "E_OS_START",
            `${name} exited during startup (code ${code}); output:\n${server.log.text()}`,
          ),
        timedOut: (last) =>
          new ProvisioningError(
            "E_OS_READY",
            `${name} not green at ${base} after ${READY_TIMEOUT_MS / 1000} s (last: ${last}); output:\n${server.log.text()}`,
          ),
      },
    });
    const params: Record<string, string> = {
      version: config.version,
      index: config.index,
      number_of_shards: String(config.number_of_shards),
      ...(config.refresh_interval !== undefined ? { refresh_interval: config.refresh_interval } : {}),
    };
    const component: RunningComponent = {
      name: "opensearch",
      pinned: config.version,
      running,
      data: { host: host.address, port: HTTP_PORT },
      control: { host: host.controlAddress, port: HTTP_PORT },
      params,
      ...(server.child.pid !== undefined ? { pid: server.child.pid } : {}),
      stop: server.stop,
      discard: server.discard,
      async signals() {
        const r = await getJson(`${base}/_nodes/_local/stats/indices/merge`, SIGNALS_TIMEOUT_MS);
        if (r.status !== 200) throw new Error(`_nodes/stats: HTTP ${r.status} ${r.text.slice(0, 200)}`);
        return mergeSignals(r.json);
      },
    };
    return component;
  },
};
