/**
 * RemoteSite's checks on a deployed stack, through the RECORDING STAND-IN for the Docker CLI: the version gate over
 * collector hosts (each container's version command run for real — here a stand-in for the image's binary that
 * prints Fluent Bit's documented `--version` output), the generators' entry points in genId order, the replay file
 * placed on the loadgen host, and the errors for a stack that does not serve the cell. The full run on a deployed stack is test/e2e/deployed-stacks.test.ts.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StackOutputs } from "../../../core/outputs.ts";
import { loadStack } from "../../../infra/stack/schema.ts";
import { shellsFor } from "../../../harness/remote/hosts.ts";
import type { HostShell, UploadContent } from "../../../harness/remote/shell.ts";
import { RemoteSite } from "../../../harness/remote/site.ts";
import { matchesImagePin, versionIn } from "../../../harness/remote/versions.ts";
import { parseEnvironment } from "../../../harness/remote/environment.ts";
import type { CellPlan } from "../../../harness/runner/cell-plan.ts";
import { createDockerCliStandIn, type DockerCliStandIn } from "../../helpers/docker-cli-stand-in.ts";
import { ownClockSkewMs } from "../../helpers/own-skew.ts";

// the generator bundle's install is test/harness/remote/bundle.test.ts's (esbuild takes seconds): here it is a given file
vi.mock(import("../../../harness/remote/bundle.ts"), async (importOriginal) => ({
  ...(await importOriginal()),
  installGenerator: async () => ({ command: "node", args: ["/opt/ingestbench/generator-000000000000.mjs"] }),
}));

const repoRoot = path.resolve(import.meta.dirname, "../../..");
const STACK = "docker-4c4g";
let docker: DockerCliStandIn | undefined;
afterEach(() => {
  docker?.cleanup();
  docker = undefined;
});

const limits = {
  requested: {},
  applied: { cfsQuotaUs: 100000, cfsPeriodUs: 100000 },
  enforced: true,
  notes: [] as string[],
};
const ep = (host: string, address: string, port: number, external: number | null) => ({
  host,
  data: { host: address, port, scheme: "http" },
  metrics: null,
  published: [{ internal: port, external, ip: "127.0.0.1", protocol: "tcp" }],
});

/** A scale-out deployment: Fluent Bit on collector-1 and collector-2, ClickHouse on the sink. */
function outputs(sinkExternal: number | null = 49155): StackOutputs {
  const host = (address: string, component: string, image: string) => ({
    address,
    container: `ib-${STACK}-${address.split(".").pop()}`,
    component,
    image,
    limits,
  });
  return {
    platform: "docker",
    stack: STACK,
    network: { name: `ib-${STACK}`, subnet: "10.77.0.0/24" },
    hosts: {
      loadgen: host("10.77.0.10", "loadgen", "node:20.18.0-bookworm-slim"),
      "collector-1": host("10.77.0.11", "fluent-bit", "fluent/fluent-bit:4.0.3-debug"),
      "collector-2": host("10.77.0.12", "fluent-bit", "fluent/fluent-bit:4.0.3-debug"),
      sink: host("10.77.0.13", "clickhouse", "clickhouse/clickhouse-server:25.8"),
    },
    endpoints: {
      // listed out of order on purpose: entries follow collector-1, collector-2
      "fluent-bit": [
        ep("collector-2", "10.77.0.12", 8888, 49161),
        ep("collector-1", "10.77.0.11", 8888, 49160),
      ],
      clickhouse: [ep("sink", "10.77.0.13", 8123, sinkExternal)],
    },
    versions: {
      "fluent-bit": { pinned: "4.0.3", image: "fluent/fluent-bit:4.0.3-debug", digestResolved: false },
      clickhouse: { pinned: "25.8", image: "clickhouse/clickhouse-server:25.8", digestResolved: false },
    },
  };
}

const plan = {
  scenario: "fb-scale-out",
  sink: { name: "clickhouse", config: { version: "25.8" } },
  collector: { name: "fluent-bit", config: {} },
  fields: [],
  generator: { name: "http-json", config: {} },
} as unknown as CellPlan;

/** The stand-in containers, each with /fluent-bit/bin/fluent-bit printing the documented `--version` output of `v`. */
function containers(versions: Record<string, string>): DockerCliStandIn {
  const names = Object.fromEntries(
    ["10", "11", "12", "13"].map((n) => [`ib-${STACK}-${n}`, { paths: { "/fluent-bit": `fb-${n}` } }]),
  );
  const d = createDockerCliStandIn({ containers: names });
  for (const [n, v] of Object.entries(versions)) {
    const bin = path.join(d.hostPath(`ib-${STACK}-${n}`, "/fluent-bit"), "bin");
    mkdirSync(bin, { recursive: true });
    // Fluent Bit's `--version`: "Fluent Bit v4.0.3" then "Git commit: …" (fluent-bit src/fluent-bit.c, flb_version)
    writeFileSync(
      path.join(bin, "fluent-bit"),
      `#!/bin/sh\necho "Fluent Bit v${v}"\necho "Git commit: 0123456789abcdef"\n`,
    );
    chmodSync(path.join(bin, "fluent-bit"), 0o755);
  }
  return d;
}

function site(o: StackOutputs, d: DockerCliStandIn): RemoteSite {
  return new RemoteSite({
    stack: loadStack(path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`)),
    plan,
    outputs: o,
    shell: shellsFor(o, { env: d.env }),
  });
}

describe("RemoteSite on a deployed scale-out stack (recording Docker CLI stand-in)", () => {
  it("gives one entry per collector host in collector-1, collector-2 order, after probing both versions in their containers", async () => {
    docker = containers({ "11": "4.0.3", "12": "4.0.3" });
    const s = site(outputs(), docker);
    // the stand-in's containers are this machine: the collectors' data port listens here (harness/remote/ready.ts)
    const listener = net.createServer();
    await new Promise<void>((r) => listener.listen(8888, "127.0.0.1", r));
    const entries = await s.startEntries().finally(() => listener.close());
    expect(entries).toEqual([
      { host: "10.77.0.11", port: 8888 },
      { host: "10.77.0.12", port: 8888 },
    ]);
    expect(s.versions).toEqual({
      "fluent-bit": { pinned: "4.0.3", running: "4.0.3" },
      "fluent-bit@collector-2": { pinned: "4.0.3", running: "4.0.3" },
    });
    const lines = docker.commandLines();
    expect(lines.slice(0, 2)).toEqual([
      `docker exec -i ib-${STACK}-11 sh -c /fluent-bit/bin/fluent-bit --version 2>&1`,
      `docker exec -i ib-${STACK}-12 sh -c /fluent-bit/bin/fluent-bit --version 2>&1`,
    ]);
    // then each waits for its data port to listen in its own network namespace; the waits run concurrently, so
    // their order is not part of the contract
    expect([...lines.slice(2)].sort()).toEqual([
      `docker exec -i ib-${STACK}-11 sh -c cat /proc/net/tcp /proc/net/tcp6 2>/dev/null || true`,
      `docker exec -i ib-${STACK}-12 sh -c cat /proc/net/tcp /proc/net/tcp6 2>/dev/null || true`,
    ]);
  });

  it("measures the sink's clock through its container's shell on azure (two VMs), and not on docker (one engine's clock)", async () => {
    docker = containers({});
    expect(await site(outputs(), docker).sinkClock()).toBeUndefined();
    const azure = new RemoteSite({
      stack: loadStack(path.join(repoRoot, "stacks", "Pulumi.azure-d2s-v5.yaml")),
      plan,
      outputs: outputs(),
      shell: shellsFor(outputs(), { env: docker.env }),
    });
    const o = await azure.sinkClock();
    // the stand-in's containers are this machine: the same wall clock, so the offset is this process's own
    // wall-minus-harness skew (0 unless the clock was stepped since the worker started) within the exchange's bound
    expect(o).toMatchObject({ measured: true, exchanges: 8 });
    expect(Math.abs(o!.offsetMs - ownClockSkewMs())).toBeLessThanOrEqual(
      (o as { boundMs: number }).boundMs + 1,
    );
    expect(docker.commandLines()).toContain(
      `docker exec -i ib-${STACK}-13 sh -c while IFS= read -r _; do date +%s%3N; done`,
    );
  });

  it("loadgen uploads the replay file beside the generator as { file } (streamed by the shell, never read here); an unreadable one is E_REPLAY before anything runs", async () => {
    docker = createDockerCliStandIn({
      containers: { [`ib-${STACK}-10`]: { paths: { "/opt/ingestbench": "loadgen-opt" } } },
    });
    const o = outputs();
    const shells = shellsFor(o, { env: docker.env });
    const uploads: Array<[string, UploadContent]> = [];
    const recording = (h: string): HostShell => {
      const sh = shells(h);
      return {
        ...sh,
        upload: (remote, content, mode) => {
          uploads.push([remote, content]);
          return sh.upload(remote, content, mode);
        },
      };
    };
    const s = new RemoteSite({
      stack: loadStack(path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`)),
      plan,
      outputs: o,
      shell: recording,
    });
    const replay = path.join(docker.dir, "access.log");
    const text = '127.0.0.1 - - [02/Dec/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 612\n'.repeat(2000);
    writeFileSync(replay, text);
    const lg = await s.loadgen(replay);
    expect(lg.replayFile).toBe("/opt/ingestbench/replay/access.log");
    expect(lg.program).toEqual({ command: "node", args: ["/opt/ingestbench/generator-000000000000.mjs"] });
    expect(uploads).toEqual([["/opt/ingestbench/replay/access.log", { file: replay }]]);
    expect(readFileSync(docker.hostPath(`ib-${STACK}-10`, lg.replayFile!), "utf8")).toBe(text);
    expect(docker.calls().at(-1)).toMatchObject({ stdinBytes: text.length, exitCode: 0 });

    const before = docker.calls().length;
    const missing = path.join(docker.dir, "no-such.log");
    const err = await s.loadgen(missing).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("E_REPLAY");
    expect((err as Error).message).toContain(`cannot read replay file ${missing}: ENOENT`);
    expect(docker.calls()).toHaveLength(before);
  });

  it("refuses collector hosts that run different builds, naming both hosts and versions", async () => {
    docker = containers({ "11": "4.0.3", "12": "4.0.30" });
    const err = await site(outputs(), docker)
      .startEntries()
      .catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("E_VERSION");
    expect((err as Error).message).toBe(
      "fluent-bit on host collector-2 runs version 4.0.30 but the scenario pins 4.0.3; refusing to start",
    );
  });

  it("says when this machine cannot reach the sink (no published port in the outputs)", async () => {
    docker = containers({});
    const err = await site(outputs(null), docker)
      .startSink()
      .catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("E_UNREACHABLE");
    expect((err as Error).message).toMatch(/sink's port 8123 is not reachable from this machine/);
    expect(docker.commandLines()).toEqual([]);
  });

  it("refuses a deployed stack that lacks a host the cell needs, before running anything", () => {
    docker = containers({});
    const o = outputs();
    delete o.hosts["collector-1"];
    delete o.hosts["collector-2"];
    expect(() => site(o, docker!)).toThrow(
      /this scenario needs hosts loadgen, collector, sink; the deployed stack has loadgen, sink/,
    );
  });
});

describe("version parsing of the catalog's version commands (outputs as each tool documents them)", () => {
  it.each([
    ["postgres (PostgreSQL) 18.4 (Debian 18.4-1.pgdg120+1)", "18.4"],
    ["ClickHouse server version 25.8.2.29 (official build).", "25.8.2"],
    [
      "Version: 8.15.3, Build: docker/4ff5d7e1b81f5a9d8bd8f10fa6e5cbc8cee2cb40/2024-10-11T07:53:39.522474745Z, JVM: 22.0.2",
      "8.15.3",
    ],
    ["loki, version 3.5.0 (branch: release-3.5.x, revision: 5b9b1ee4)", "3.5.0"],
    ["vector 0.49.0 (x86_64-unknown-linux-gnu 2a8b8b8 2025-08-12 13:05:36.128930186)", "0.49.0"],
    ["fluentd 1.12.0", "1.12.0"],
    ["syslog-ng 3 (3.38.1)", "3.38.1"],
    ["v20.18.0", "20.18.0"],
  ])("%s → %s", (out, version) => {
    expect(versionIn(out)).toBe(version);
  });

  it("a pin is met by the same version or one that extends it, never by a longer number", () => {
    expect(matchesImagePin("25.8", "25.8.2")).toBe(true);
    expect(matchesImagePin("4.0.3", "4.0.3")).toBe(true);
    expect(matchesImagePin("3.38", "3.380")).toBe(false);
    expect(matchesImagePin("5.6.0", "5.6.0 (image tag, not probed)")).toBe(true);
    expect(matchesImagePin("18.4", "17.2")).toBe(false);
  });
});

describe("a deployed host's environment (uname -sr, /proc/cpuinfo, nproc, /proc/meminfo as proc(5) documents them)", () => {
  it("reads an Azure VM's answers", () => {
    const out = [
      "Linux 6.8.0-1015-azure",
      " Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
      "2",
      "MemTotal:        8130300 kB",
      "v2",
      "ib-azure-d2s-v5-sink",
      "",
    ].join("\n");
    expect(parseEnvironment("sink", out, "v20.18.0")).toEqual({
      kernel: "Linux 6.8.0-1015-azure",
      cpuModel: "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
      cores: 2,
      memoryBytes: 8130300 * 1024,
      cgroup: "v2",
      node: "v20.18.0",
      hostname: "ib-azure-d2s-v5-sink",
    });
  });

  it("refuses a truncated answer, naming the host", () => {
    expect(() => parseEnvironment("sink", "Linux 6.8.0\n model\nnot-a-number\n", "v20.18.0")).toThrow(
      /host sink: cannot read its environment/,
    );
  });
});
