/**
 * The Pulumi program (infra/index.ts) under Pulumi's own mocks (`pulumi.runtime.setMocks`: every resource's state
 * is its inputs, calls return {}), for every docker stack file in stacks/, plus a RAM-disk stack, a local stack and
 * an azure stack given as Pulumi config. No Pulumi CLI and no Docker engine are involved: what is checked is what
 * the program asks the engine for (limits, pins, ports, capabilities, labels) and the stack outputs it exports.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { afterEach, describe, expect, it, vi } from "vitest";
import { catalog, catalogEntry, imageRef } from "../../../infra/catalog.ts";
import { stackSubnet } from "../../../infra/docker/stack.ts";
import { resolveImage } from "../../../infra/docker/images.ts";
import { listStacks, loadPulumiStack, type PulumiStack } from "../../../infra/stack/schema.ts";
import {
  configOfFile,
  encodeConfig,
  outputValue,
  type RecordedResource,
  recordResources,
  runPulumiProgram,
} from "../../helpers/pulumi-program.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const stacksDir = path.join(root, "stacks");
const MIB = 1024 ** 2;

/** How many custom resources a docker stack makes: a network, and per host an image and a container, a volume unless
 *  on tmpfs, and a shaper image and container when network-capped. */
function expectedCustomResources(s: PulumiStack): number {
  let n = 1;
  for (const h of Object.values(s.spec.hosts)) {
    n += 2;
    if (h.limits.disk?.tmpfsBytes === undefined) n += 1;
    if (
      h.limits.network?.bandwidthBytesPerSec !== undefined ||
      h.limits.network?.delayMs !== undefined ||
      h.limits.network?.lossPercent !== undefined
    )
      n += 2;
  }
  return n;
}

async function deployed(s: PulumiStack, config: Record<string, string>) {
  const run = await runPulumiProgram(s.spec.name, config);
  await vi.waitFor(
    () => expect(run.resources.filter((r) => r.custom)).toHaveLength(expectedCustomResources(s)),
    { timeout: 5000 },
  );
  // let the program's last RPCs (registerOutputs) finish before the next test installs new mocks
  await run.settle();
  return run;
}

function labelsOf(r: RecordedResource): Record<string, string> {
  return Object.fromEntries(
    (r.inputs.labels as { label: string; value: string }[]).map((l) => [l.label, l.value]),
  );
}

function containerOf(resources: RecordedResource[], stack: string, host: string): RecordedResource {
  const c = resources.find(
    (r) => r.type === "docker:index/container:Container" && r.inputs.name === `ib-${stack}-${host}`,
  );
  if (!c) throw new Error(`no container for ${host}`);
  return c;
}

function shaperOf(resources: RecordedResource[], stack: string, host: string): RecordedResource | undefined {
  return resources.find(
    (r) => r.type === "docker:index/container:Container" && r.inputs.name === `ib-${stack}-${host}-shaper`,
  );
}

afterEach(() => {
  pulumi.runtime.setAllConfig({});
});

/** GridDB has no default password: the program takes it from INGESTBENCH_GRIDDB_PASSWORD (infra/secrets.ts) here. */
const GRIDDB_PW = "pw-docker-program-test";
/** How Pulumi's mocks show a secret input: { [SECRET_SIG]: SECRET_VALUE, value } (@pulumi/pulumi runtime/rpc.js specialSigKey, specialSecretSig). */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270";
process.env.INGESTBENCH_GRIDDB_PASSWORD = GRIDDB_PW;
/** PostgreSQL and ClickHouse have no default password either (their catalog secretEnv): test values here. */
process.env.INGESTBENCH_POSTGRES_PASSWORD = "pw-pg-program-test";
process.env.INGESTBENCH_CLICKHOUSE_PASSWORD = "pw-ch-program-test";

const dockerStacks = listStacks(stacksDir).filter(
  (n) => loadPulumiStack(n, stacksDir).spec.platform === "docker",
);

describe("docker stack files", () => {
  it("include 001's docker-4c4g and 004's caps on docker", () => {
    expect(dockerStacks).toEqual(expect.arrayContaining(["docker-4c4g", "docker-quarter-core"]));
  });

  describe.each(dockerStacks)("stack %s under pulumi mocks", (name) => {
    const stack = loadPulumiStack(name, stacksDir);

    it("creates each host's container with the stack's limits, pinned image, ports, labels and network address", async () => {
      const { resources, outputs } = await deployed(stack, configOfFile(stack.spec.file));
      const net = stackSubnet(name);

      const network = resources.find((r) => r.type === "docker:index/network:Network");
      expect(network?.inputs.name).toBe(`ib-${name}`);
      expect(network?.inputs.ipamConfigs).toEqual([{ subnet: net.subnet, gateway: net.gateway }]);
      expect(labelsOf(network!)).toMatchObject({
        "ingestbench.owner": stack.platform.owner,
        "ingestbench.stack": name,
      });

      Object.values(stack.spec.hosts).forEach((host, i) => {
        const component = resolveImage(
          stack.platform.components[host.name] ?? "loadgen",
          stack.platform.docker.images ?? "upstream",
          undefined,
        ).entry;
        const c = containerOf(resources, name, host.name);
        const { cpu, memoryBytes, disk, network: netCap } = host.limits;
        // CPU: CFS quota over period, µs
        expect(c.inputs.cpuPeriod).toBe(cpu?.periodUs);
        expect(c.inputs.cpuQuota).toBe(cpu?.quotaUs);
        // memory: whole MiB (the provider's "MB"), no swap
        expect(c.inputs.memory).toBe(memoryBytes === undefined ? undefined : Math.floor(memoryBytes / MIB));
        expect(c.inputs.memorySwap).toBe(c.inputs.memory);
        // blkio on the stack's device
        const device = stack.platform.docker.blkioDevice;
        const rate = (v: number | undefined) =>
          v === undefined || device === undefined ? undefined : [{ path: device, rate: v }];
        expect(c.inputs.deviceReadIops).toEqual(rate(disk?.readIops));
        expect(c.inputs.deviceWriteIops).toEqual(rate(disk?.writeIops));
        expect(c.inputs.deviceReadBps).toEqual(rate(disk?.readBytesPerSec));
        expect(c.inputs.deviceWriteBps).toEqual(rate(disk?.writeBytesPerSec));
        // pinned image, its ports on 127.0.0.1, fixed address on the stack network
        expect(c.inputs.image).toBe(imageRef(component));
        expect(c.inputs.image).toBe(
          `${component.repository}:${component.tag}${component.digest ? `@${component.digest}` : ""}`,
        );
        expect(c.inputs.ports ?? []).toEqual(
          component.ports.map((p) => ({ internal: p.port, ip: "127.0.0.1", protocol: p.protocol })),
        );
        expect(c.inputs.networksAdvanced).toEqual([
          { name: `ib-${name}`, ipv4Address: net.address(i), aliases: [host.name] },
        ]);
        expect(labelsOf(c)).toEqual({
          "ingestbench.managed-by": "pulumi",
          "ingestbench.stack": name,
          "ingestbench.owner": stack.platform.owner,
          "ingestbench.expiry-seconds": String(stack.spec.expiryMs / 1000),
          "ingestbench.host": host.name,
          "ingestbench.component": component.name,
        });
        expect(c.inputs.restart).toBe("no");
        // the component images never get NET_ADMIN: the shaper has it
        expect(c.inputs.capabilities).toBeUndefined();
        const shaper = shaperOf(resources, name, host.name);
        if (netCap?.bandwidthBytesPerSec !== undefined) {
          expect(shaper?.inputs.capabilities).toEqual({ adds: ["NET_ADMIN"] });
          expect(shaper?.inputs.networkMode).toBe(`container:ib-${name}-${host.name}`);
          const script = (shaper?.inputs.command as string[])[0]!;
          expect(script).toContain(`tbf rate ${netCap.bandwidthBytesPerSec * 8}bit`);
          expect(script).toContain(`ifb0 root handle 1: tbf rate ${netCap.bandwidthBytesPerSec * 8}bit`);
          expect(labelsOf(shaper!)).toMatchObject({
            "ingestbench.owner": stack.platform.owner,
            "ingestbench.role": "shaper",
          });
        } else {
          expect(shaper).toBeUndefined();
        }

        // outputs: address, applied limits, image
        const out = outputs.hosts[host.name]!;
        expect(out.address).toBe(net.address(i));
        expect(out.container).toBe(`ib-${name}-${host.name}`);
        expect(out.image).toBe(imageRef(component));
        expect(out.limits.requested).toEqual(host.requested);
        if (cpu)
          expect(out.limits.applied).toMatchObject({ cfsQuotaUs: cpu.quotaUs, cfsPeriodUs: cpu.periodUs });
        if (memoryBytes !== undefined)
          expect(out.limits.applied.memoryBytes).toBe(Math.floor(memoryBytes / MIB) * MIB);
        if (netCap?.bandwidthBytesPerSec !== undefined)
          expect(out.limits.applied.tbfRateBytesPerSec).toBe(netCap.bandwidthBytesPerSec);
        // endpoints and versions per component
        const ep = outputs.endpoints[component.name]?.find((e) => e.host === host.name);
        const data = component.ports.find((p) => p.role === "data");
        expect(ep?.data).toEqual(
          data ? { host: net.address(i), port: data.port, scheme: data.scheme } : null,
        );
        expect(outputs.versions[component.name]).toEqual({
          pinned: component.version,
          image: imageRef(component),
          digestResolved: component.digest !== null,
        });
      });

      expect(outputs.platform).toBe("docker");
      expect(outputs.stack).toBe(name);
      expect(outputs.network).toEqual({ name: `ib-${name}`, subnet: net.subnet });
      expect(Object.keys(outputs.hosts)).toEqual(Object.keys(stack.spec.hosts));
      expect(outputs.message).toBeUndefined();

      // every resource carries the owner and expiry labels
      for (const r of resources.filter((r) => r.custom && r.inputs.labels !== undefined)) {
        expect(labelsOf(r)).toMatchObject({
          "ingestbench.owner": stack.platform.owner,
          "ingestbench.expiry-seconds": "14400",
        });
      }
      // ComponentResources: one stack, one host per stack host, children named after their parent
      expect(resources.filter((r) => r.type === "ingestbench:docker:Stack").map((r) => r.name)).toEqual([
        `ib-${name}`,
      ]);
      expect(
        resources
          .filter((r) => r.type === "ingestbench:docker:Host")
          .map((r) => r.name)
          .sort(),
      ).toEqual(
        Object.keys(stack.spec.hosts)
          .map((h) => `ib-${name}-${h}`)
          .sort(),
      );
      for (const r of resources.filter((r) => r.custom && r.type !== "docker:index/network:Network")) {
        expect(Object.keys(stack.spec.hosts).some((h) => r.name.startsWith(`ib-${name}-${h}-`))).toBe(true);
      }
    });
  });
});

describe("docker-4c4g: 001's Docker Desktop split across the hosts", () => {
  it("gives the sink 2 cores and 2 GiB, the collector 1.5 and 1 GiB, the loadgen 0.5 and 512 MiB: 4 cores in all", async () => {
    const stack = loadPulumiStack("docker-4c4g", stacksDir);
    const { resources, outputs } = await deployed(stack, configOfFile(stack.spec.file));
    const c = (h: string) => containerOf(resources, "docker-4c4g", h).inputs;
    expect([c("sink").cpuQuota, c("sink").cpuPeriod, c("sink").memory]).toEqual([200000, 100000, 2048]);
    expect([c("collector").cpuQuota, c("collector").cpuPeriod, c("collector").memory]).toEqual([
      150000, 100000, 1024,
    ]);
    expect([c("loadgen").cpuQuota, c("loadgen").cpuPeriod, c("loadgen").memory]).toEqual([
      50000, 100000, 512,
    ]);
    const cores = ["sink", "collector", "loadgen"].reduce((a, h) => a + c(h).cpuQuota / c(h).cpuPeriod, 0);
    expect(cores).toBe(4);
    expect(c("sink").image).toMatch(/^clickhouse\/clickhouse-server:/);
    expect(c("collector").image).toMatch(/^fluent\/fluent-bit:/);
    expect(c("loadgen").command).toEqual(["sh", "-c", "trap 'exit 0' TERM INT; sleep infinity & wait"]);
    expect(c("sink").mounts).toEqual([
      { type: "volume", source: "ib-docker-4c4g-sink-data", target: "/var/lib/clickhouse" },
    ]);
    expect(resources.some((r) => r.inputs.capabilities !== undefined)).toBe(false); // no network caps: no shaper
    expect(outputs.endpoints["fluent-bit"]).toEqual([
      expect.objectContaining({
        host: "collector",
        data: { host: stackSubnet("docker-4c4g").address(1), port: 8888, scheme: "http" },
      }),
    ]);
    expect(outputs.endpoints.clickhouse?.[0]?.published.map((p) => p.internal)).toEqual([8123, 9000, 9363]);
    expect(
      outputs.endpoints.clickhouse?.[0]?.published.every((p) => p.ip === "127.0.0.1" && p.external === null),
    ).toBe(true);
  });
});

describe("docker-quarter-core: 004's caps on docker", () => {
  it("caps the Elasticsearch sink at 25000/100000 µs, 2048 MiB, 3000 IOPS and 125829120 B/s on /dev/vda, 96 Mbit/s both ways", async () => {
    const stack = loadPulumiStack("docker-quarter-core", stacksDir);
    const { resources, outputs } = await deployed(stack, configOfFile(stack.spec.file));
    const sink = containerOf(resources, "docker-quarter-core", "sink").inputs;
    expect(sink).toMatchObject({
      cpuQuota: 25000,
      cpuPeriod: 100000,
      memory: 2048,
      memorySwap: 2048,
      deviceReadIops: [{ path: "/dev/vda", rate: 3000 }],
      deviceWriteIops: [{ path: "/dev/vda", rate: 3000 }],
      deviceReadBps: [{ path: "/dev/vda", rate: 125829120 }],
      deviceWriteBps: [{ path: "/dev/vda", rate: 125829120 }],
      image: "docker.elastic.co/elasticsearch/elasticsearch:8.15.3",
    });
    expect(sink.envs).toEqual(
      expect.arrayContaining([
        "discovery.type=single-node",
        "xpack.security.enabled=false",
        "ES_JAVA_OPTS=-Xms1024m -Xmx1024m",
      ]),
    );
    const shaper = shaperOf(resources, "docker-quarter-core", "sink")!.inputs;
    expect(shaper.capabilities).toEqual({ adds: ["NET_ADMIN"] });
    expect(shaper.image).toBe(imageRef(catalog.shaper!));
    const script = (shaper.command as string[])[0]!;
    expect(script).toContain(
      "tc qdisc add dev eth0 root handle 1: tbf rate 96000000bit burst 120000 latency 50ms",
    );
    expect(script).toContain(
      "tc filter add dev eth0 parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev ifb0",
    );
    expect(() => execFileSync("sh", ["-n", "-c", script])).not.toThrow();
    expect(outputs.hosts.sink?.limits).toMatchObject({
      enforced: true,
      applied: {
        cfsQuotaUs: 25000,
        cfsPeriodUs: 100000,
        memoryBytes: 2 * 1024 ** 3,
        readIops: 3000,
        writeIops: 3000,
        readBytesPerSec: 125829120,
        writeBytesPerSec: 125829120,
        blkioDevice: "/dev/vda",
        tbfRateBytesPerSec: 12_000_000,
        tbfBurstBytes: 120_000,
      },
    });
    expect(outputs.versions.elasticsearch).toEqual({
      pinned: "8.15.3",
      image: "docker.elastic.co/elasticsearch/elasticsearch:8.15.3",
      digestResolved: false,
    });
  });
});

describe("stacks given only as Pulumi config (the fromPulumiConfig path)", () => {
  const ramDisk = {
    "ingestbench:platform": "docker",
    "ingestbench:hosts": {
      loadgen: { cpu: "1" },
      collector: { cpu: "0.5", memory: "768MiB", disk: { tmpfs: "256MiB" } },
      sink: {
        cpu: { quota: "50ms", period: "100ms" },
        memory: "1GiB",
        disk: { iops: 500 },
        network: { bandwidth: "10Mbit/s", delay: "5ms" },
      },
    },
    "ingestbench:components": { collector: "vector", sink: "clickhouse" },
    "ingestbench:owner": "bench-ci",
    "ingestbench:expiry": "90m",
    "docker:host": "unix:///var/run/docker.sock",
  };

  it("puts a RAM-disk host's data directory on a tmpfs, and records disk caps without a blkio device as not enforced", async () => {
    const config = encodeConfig(ramDisk);
    const { fromPulumiConfig } = await import("../../../infra/stack/schema.ts");
    const stack = fromPulumiConfig("docker-ramdisk", config);
    const { resources, outputs } = await deployed(stack, config);
    const collector = containerOf(resources, "docker-ramdisk", "collector").inputs;
    expect(collector.tmpfs).toEqual({ "/var/lib/vector": `rw,size=${256 * MIB},mode=1777` });
    expect(collector.mounts).toBeUndefined();
    expect(
      resources.some(
        (r) =>
          r.type === "docker:index/volume:Volume" && r.inputs.name === "ib-docker-ramdisk-collector-data",
      ),
    ).toBe(false);
    expect(outputs.hosts.collector?.limits.applied).toMatchObject({
      tmpfsBytes: 256 * MIB,
      tmpfsPath: "/var/lib/vector",
      memoryBytes: 768 * MIB,
    });

    const sink = containerOf(resources, "docker-ramdisk", "sink").inputs;
    expect([sink.cpuQuota, sink.cpuPeriod, sink.memory]).toEqual([50000, 100000, 1024]);
    expect(sink.deviceWriteIops).toBeUndefined();
    expect(outputs.hosts.sink?.limits.enforced).toBe(false);
    expect(outputs.hosts.sink?.limits.notes.join("\n")).toMatch(
      /disk caps \(readIops, writeIops\) not applied.*blkioDevice/,
    );
    const script = (shaperOf(resources, "docker-ramdisk", "sink")!.inputs.command as string[])[0]!;
    expect(script).toContain("tc qdisc add dev eth0 root handle 1: netem delay 5ms");
    expect(script).toContain("tc qdisc add dev eth0 parent 1: handle 2: tbf rate 10000000bit");
    expect(labelsOf(containerOf(resources, "docker-ramdisk", "sink"))).toMatchObject({
      "ingestbench.owner": "bench-ci",
      "ingestbench.expiry-seconds": "5400",
    });
    expect(outputs.versions).toMatchObject({
      vector: { pinned: "0.49.0" },
      clickhouse: { pinned: "25.8" },
      loadgen: { pinned: "20.18.0" },
    });
  });

  it("exports a message and deploys nothing for a local stack", async () => {
    const file = path.join(stacksDir, "Pulumi.local-quarter-core.yaml");
    const { resources, outputs, settle } = await runPulumiProgram("local-quarter-core", configOfFile(file));
    await settle();
    expect(outputs).toMatchObject({
      platform: "local",
      stack: "local-quarter-core",
      hosts: {},
      endpoints: {},
      versions: {},
      network: null,
    });
    expect(outputs.message).toMatch(/ingestbench bench --stack local-quarter-core/);
    expect(resources.filter((r) => r.custom)).toEqual([]);
  });

  it("fails an azure stack without its ingestbench:azure block with a clear message, before creating anything (azure stacks: test/infra/azure)", async () => {
    await expect(
      runPulumiProgram(
        "azure-d2s-v5",
        encodeConfig({ "ingestbench:platform": "azure", "ingestbench:hosts": { sink: { cpu: "2" } } }),
      ),
    ).rejects.toThrow(
      /config\.ingestbench:azure: an azure stack needs ingestbench:azure: \{ location, allowFrom/,
    );
  });

  it("rejects bad config with the same schema and messages as a stack file", async () => {
    const badCpu = encodeConfig({ ...ramDisk, "ingestbench:hosts": { sink: { cpu: "25 100" } } });
    await expect(runPulumiProgram("docker-bad", badCpu)).rejects.toThrow(
      /Pulumi\.docker-bad\.yaml \(pulumi config\):\d+:\d+: config\.ingestbench:hosts\.sink\.cpu: .*"25000 100000"/,
    );
    const badComponents = encodeConfig({
      ...ramDisk,
      "ingestbench:components": { sink: "mongodb", ghost: "vector" },
    });
    await expect(runPulumiProgram("docker-bad", badComponents)).rejects.toThrow(
      /ingestbench:components\.sink: "mongodb" is not a component of the catalog/,
    );
    await expect(runPulumiProgram("docker-bad", badComponents)).rejects.toThrow(
      /ingestbench:components\.ghost: no host "ghost"/,
    );
    const onLocal = encodeConfig({
      "ingestbench:platform": "local",
      "ingestbench:hosts": { sink: {} },
      "ingestbench:docker": { blkioDevice: "vda" },
    });
    await expect(runPulumiProgram("local-bad", onLocal)).rejects.toThrow(
      /ingestbench:docker\.blkioDevice: a block device path/,
    );
    await expect(runPulumiProgram("local-bad", onLocal)).rejects.toThrow(
      /ingestbench:docker is for docker and azure stacks/,
    );
  });
});

describe("collector configs and image builds (DockerStack under pulumi mocks; no Docker engine, no real collector)", () => {
  /** Build a DockerStack directly (with an explicit cell) under mocks; resources recorded, outputs resolved. */
  /** expectedCustomResources, less the pulled image of each host running a built image, plus the builds */
  async function stackWithCell(
    name: string,
    config: Record<string, unknown>,
    cell?: import("../../../infra/docker/pipeline.ts").CellPipeline,
    builtHosts = 0,
    builds = 0,
  ) {
    const resources = await recordResources(name);
    const { fromPulumiConfig } = await import("../../../infra/stack/schema.ts");
    const { DockerStack } = await import("../../../infra/docker/stack.ts");
    const stack = fromPulumiConfig(name, encodeConfig(config));
    let ds: InstanceType<typeof DockerStack>;
    try {
      ds = new DockerStack(`ib-${name}`, cell ? { stack, cell } : { stack });
    } catch (err) {
      // the component was registered before the constructor threw: let its RPCs end before the next mocks
      await pulumi.runtime.disconnect();
      expect(resources.filter((r) => r.custom)).toEqual([]); // nothing was created
      throw err;
    }
    const outputs = await outputValue(ds.outputs);
    await vi.waitFor(
      () =>
        expect(resources.filter((r) => r.custom)).toHaveLength(
          expectedCustomResources(stack) - builtHosts + builds,
        ),
      { timeout: 5000 },
    );
    await pulumi.runtime.disconnect();
    return { resources, outputs };
  }

  const fields = [
    { name: "host", type: "string" as const, size: 8 },
    { name: "code", type: "int" as const },
  ];
  const fluentdBlock = {
    system: { workers: 2 },
    source: { sample: { events_per_second: 150000, size: 250 } },
    buffer: { chunk_limit_records: 50000, flush_thread_count: 8, flush_interval: "1s" },
  };

  it("builds the Fluentd + fluent-plugin-griddb image (docker.Image, context images/fluentd-griddb, not pushed) and uploads fluent.conf rendered from the cell", async () => {
    const { renderCollector } = await import("../../../infra/render/index.ts");
    const { REPO_ROOT } = await import("../../../infra/docker/host.ts");
    const { resources, outputs } = await stackWithCell(
      "docker-griddb",
      {
        "ingestbench:platform": "docker",
        "ingestbench:hosts": { collector: { cpu: "2", memory: "2GiB" }, sink: { cpu: "2", memory: "4GiB" } },
        "ingestbench:components": { collector: "fluentd", sink: "griddb" },
      },
      {
        event: fields,
        blocks: { fluentd: fluentdBlock, griddb: { container: "fluentdStress" } },
        source: "stack config",
      },
      1,
      1,
    );
    // the GridDB sink's own build (images/griddb-webapi) is asserted in its own test below
    const builds = resources.filter(
      (r) =>
        r.type === "docker:index/image:Image" && r.inputs.imageName.startsWith("ingestbench/fluentd-griddb:"),
    );
    expect(builds).toHaveLength(1);
    const build = catalogEntry("fluentd").build!;
    expect(builds[0]!.inputs).toMatchObject({
      imageName: `ingestbench/fluentd-griddb:${build.tag}`,
      skipPush: true,
      build: {
        context: path.join(REPO_ROOT, "images/fluentd-griddb"),
        dockerfile: path.join(REPO_ROOT, "images/fluentd-griddb/Dockerfile"),
      },
    });
    expect(builds[0]!.name).toBe("ib-docker-griddb-build-ingestbench-fluentd-griddb");
    expect(resources.some((r) => r.name === "ib-docker-griddb-collector-image")).toBe(false); // nothing pulled for it
    const collector = containerOf(resources, "docker-griddb", "collector").inputs;
    expect(collector.image).toBe(`ingestbench/fluentd-griddb:${build.tag}`);
    const net = stackSubnet("docker-griddb");
    // a sample input (generator: none) is deployed idle: each run uploads it with its own gens (harness/remote/site.ts)
    const expected = renderCollector(
      "fluentd",
      fluentdBlock,
      { name: "griddb", host: net.address(1), port: 8081, params: { container: "fluentdStress" } },
      fields,
      0,
      { idle: true },
    );
    expect(collector.uploads).toEqual([{ file: "/fluentd/etc/fluent.conf", content: expected.text }]);
    expect(collector.uploads[0].content).not.toContain("@type sample");
    expect(collector.uploads[0].content).toContain("chunk_limit_records 50000");
    expect(collector.uploads[0].content).toContain('container "fluentdStress"');
    // two workers: monitor_agent serves on 24220 and 24221 (port + worker id); both are published, so the harness
    // reads every worker's counts
    expect(collector.ports.map((p: { internal: number }) => p.internal)).toEqual([24224, 9880, 24220, 24221]);
    expect(outputs.endpoints.fluentd?.[0]?.published.map((p) => p.internal)).toEqual([
      24224, 9880, 24220, 24221,
    ]);
    expect(outputs.hosts.collector?.config).toMatchObject({
      file: "/fluentd/etc/fluent.conf",
      source: "stack config",
      built: { context: "images/fluentd-griddb" },
    });
    expect(outputs.hosts.collector?.config?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(outputs.versions.fluentd).toEqual({
      pinned: "1.12.0",
      image: `ingestbench/fluentd-griddb:${build.tag}`,
      digestResolved: false,
    });
    // the sink runs its own build (GridDB + Web API), not the pulled server-only image
    expect(
      resources.filter((r) => r.type === "docker:index/remoteImage:RemoteImage").map((r) => r.inputs.name),
    ).not.toContain("griddb/griddb:5.6.0");
  });

  it("deploys two Fluentd collectors with a sample input idle (no event before a run; the run renders gen = worker id + genBase, + 2 on the second: harness/remote/site.ts)", async () => {
    const { resources } = await stackWithCell(
      "docker-two-fluentd",
      {
        "ingestbench:platform": "docker",
        "ingestbench:hosts": { "collector-a": { cpu: "4" }, "collector-b": { cpu: "4" }, sink: { cpu: "2" } },
        "ingestbench:components": { "collector-a": "fluentd", "collector-b": "fluentd", sink: "griddb" },
      },
      { event: fields, blocks: { fluentd: fluentdBlock }, source: "stack config" },
      2,
      1,
    );
    const conf = (h: string) =>
      containerOf(resources, "docker-two-fluentd", h).inputs.uploads[0].content as string;
    for (const h of ["collector-a", "collector-b"]) {
      expect(conf(h)).not.toContain("@type sample");
      expect(conf(h)).not.toContain("worker_id");
      expect(conf(h)).toContain("the sample input is left out of this deploy-time config");
    }
    // one build for the stack, run by both collectors: they cannot drift apart as 000's nodes did
    const tag = `ingestbench/fluentd-griddb:${catalogEntry("fluentd").build!.tag}`;
    expect(
      resources.filter((r) => r.type === "docker:index/image:Image").map((r) => r.inputs.imageName),
    ).toEqual([tag, `ingestbench/griddb-webapi:${catalogEntry("griddb").build!.tag}`]);
    expect(
      ["collector-a", "collector-b"].map((h) => containerOf(resources, "docker-two-fluentd", h).inputs.image),
    ).toEqual([tag, tag]);
  });

  it("runs a GridDB sink from its own build, images/griddb-webapi (GridDB + Web API), once per stack, with 8081 published: docker-4c4g with sink griddb", async () => {
    const { REPO_ROOT } = await import("../../../infra/docker/host.ts");
    const { griddbSinkSchema } = await import("../../../plugins/sinks/griddb/schema.ts");
    const griddb = catalogEntry("griddb");
    const build = griddb.build!;
    const built = `ingestbench/griddb-webapi:${build.tag}`;
    const hosts = JSON.parse(
      configOfFile(path.join(stacksDir, "Pulumi.docker-4c4g.yaml"))["ingestbench:hosts"]!,
    );
    // with a Fluentd collector (two builds: the pairing's and the sink's), and with no collector at all (the sink's only)
    for (const [name, components, builtHosts] of [
      ["docker-4c4g-griddb", { collector: "fluentd", sink: "griddb" }, 2],
      ["docker-4c4g-griddb-only", { sink: "griddb" }, 1],
    ] as const) {
      const { resources, outputs } = await stackWithCell(
        name,
        {
          "ingestbench:platform": "docker",
          "ingestbench:hosts": hosts,
          "ingestbench:components": components,
        },
        undefined,
        builtHosts,
        builtHosts,
      );
      const sinkBuilds = resources.filter(
        (r) => r.type === "docker:index/image:Image" && r.inputs.imageName === built,
      );
      expect(sinkBuilds).toHaveLength(1);
      expect(sinkBuilds[0]!.name).toBe(`ib-${name}-build-ingestbench-griddb-webapi`);
      expect(sinkBuilds[0]!.inputs).toMatchObject({
        skipPush: true,
        build: {
          context: path.join(REPO_ROOT, "images/griddb-webapi"),
          dockerfile: path.join(REPO_ROOT, "images/griddb-webapi/Dockerfile"),
        },
      });
      // nothing pulled for the sink: the server-only griddb/griddb image is the build's base, not what runs
      expect(resources.some((r) => r.name === `ib-${name}-sink-image`)).toBe(false);
      expect(
        resources.filter((r) => r.type === "docker:index/remoteImage:RemoteImage").map((r) => r.inputs.name),
      ).not.toContain(imageRef(griddb));
      const sink = containerOf(resources, name, "sink").inputs;
      expect(sink.image).toBe(built);
      expect(sink.command).toBeUndefined(); // the image's ENTRYPOINT start.sh with CMD run
      expect(sink.ports).toEqual([
        { internal: 8081, ip: "127.0.0.1", protocol: "tcp" },
        { internal: 10001, ip: "127.0.0.1", protocol: "tcp" },
      ]);
      // start.sh's cluster name is the one the verifier addresses by default (sink param `cluster`)
      // the envs hold the password, so Pulumi marks them secret (its secret signature, @pulumi/pulumi runtime/rpc.js)
      expect(sink.envs[SECRET_SIG]).toBe(SECRET_VALUE);
      expect(sink.envs.value).toEqual(
        expect.arrayContaining([
          `GRIDDB_CLUSTER_NAME=${griddbSinkSchema.parse({}).cluster}`,
          "GRIDDB_USERNAME=admin",
          `GRIDDB_PASSWORD=${GRIDDB_PW}`,
        ]),
      );
      // the password comes from the environment (no default in the catalog), as a Pulumi secret (infra/secrets.ts)
      expect(catalogEntry("griddb").env).not.toHaveProperty("GRIDDB_PASSWORD");
      expect(sink.mounts).toEqual([
        expect.objectContaining({ type: "volume", target: "/var/lib/gridstore/data" }),
      ]);
      expect(sink.cpuQuota).toBe(200000);
      expect(outputs.hosts.sink?.image).toBe(built);
      expect(outputs.versions.griddb).toEqual({ pinned: "5.6.0", image: built, digestResolved: false });
      expect(outputs.endpoints.griddb?.[0]?.data).toEqual({
        host: outputs.hosts.sink!.address,
        port: 8081,
        scheme: "griddb-webapi",
      });
      expect(outputs.endpoints.griddb?.[0]?.published.map((p) => p.internal)).toEqual([8081, 10001]);
      if ("collector" in components) {
        // the collector writes into the built sink's Web API at the sink's address
        const conf = containerOf(resources, name, "collector").inputs.uploads[0].content as string;
        expect(conf).toContain(`host "http://${outputs.hosts.sink!.address}:8081/"`);
      }
    }
  });

  it("reads the cell from the validated ingestbench:cell stack key when present, else renders defaults and says so", async () => {
    const { pipelineOf } = await import("../../../infra/docker/pipeline.ts");
    const fromCell = pipelineOf({
      cell: {
        event: fields,
        collector: { name: "fluent-bit", config: { output: { workers: 4 } } },
        sink: { name: "clickhouse", config: { table: "t001" } },
      },
    });
    expect(fromCell).toEqual({
      event: fields,
      blocks: { "fluent-bit": { output: { workers: 4 } }, clickhouse: { table: "t001" } },
      source: "stack config",
    });
    expect(pipelineOf({ cell: undefined })).toMatchObject({ source: "defaults", blocks: {} });

    // docker-4c4g as committed (component names only): Fluent Bit's defaults into ClickHouse, said so in the outputs
    const stack = loadPulumiStack("docker-4c4g", stacksDir);
    const { resources, outputs } = await deployed(stack, configOfFile(stack.spec.file));
    const collector = containerOf(resources, "docker-4c4g", "collector").inputs;
    expect(collector.uploads).toHaveLength(1);
    expect(collector.uploads[0].file).toBe("/fluent-bit/etc/fluent-bit.conf");
    expect(collector.uploads[0].content).toContain(`Host          ${stackSubnet("docker-4c4g").address(2)}`);
    // the INSERT names its columns (plugins/collectors/fluent-bit/render.ts: ClickHouse 18.16 leaves stored_at 0 otherwise)
    expect(collector.uploads[0].content).toMatch(
      /URI +\/\?query=INSERT%20INTO%20default\.ib_events%20\(%22[^ ]*%22sent_at%22\)%20FORMAT%20JSONEachRow\n/,
    );
    expect(outputs.hosts.collector?.config).toMatchObject({
      source: "defaults",
      file: "/fluent-bit/etc/fluent-bit.conf",
    });
    const sink = containerOf(resources, "docker-4c4g", "sink").inputs;
    expect(sink.uploads).toEqual([catalogEntry("clickhouse").uploads![0]]);
    expect(resources.some((r) => r.type === "docker:index/image:Image")).toBe(false);
  });

  it("refuses a pairing the collector cannot render before creating anything", async () => {
    await expect(
      stackWithCell("docker-bad-pair", {
        "ingestbench:platform": "docker",
        "ingestbench:hosts": { collector: {}, sink: {} },
        "ingestbench:components": { collector: "vector", sink: "griddb" },
      }),
    ).rejects.toThrow(/collector vector cannot write into sink "griddb"/);
    await expect(
      stackWithCell("docker-bad-image", {
        "ingestbench:platform": "docker",
        "ingestbench:hosts": { collector: {}, sink: {} },
        "ingestbench:components": { collector: "fluentd", sink: "elasticsearch" },
      }),
    ).rejects.toThrow(/host "collector" runs fluentd into elasticsearch: .*no.* fluent-plugin-elasticsearch/);
  });

  it("renders a cell's parameter set as the ingestbench:cell stack key (chunk_limit_records 5000) into the uploaded fluent.conf", async () => {
    // the JSON text the provisioner sets (harness/provision/provisioner.ts cellConfig), as Pulumi hands it over
    const cell = JSON.stringify({
      event: fields,
      collector: {
        fluentd: {
          system: { workers: 2 },
          source: { forward: { port: 24224 } },
          buffer: { "@type": "memory", chunk_limit_records: 5000, flush_thread_count: 8 },
        },
      },
      sink: { griddb: { container: "fluentdStress" } },
    });
    const { resources, outputs } = await stackWithCell(
      "docker-cell-key",
      {
        "ingestbench:platform": "docker",
        "ingestbench:hosts": { loadgen: {}, collector: { cpu: "2" }, sink: { cpu: "2" } },
        "ingestbench:components": { collector: "fluentd", sink: "griddb" },
        "ingestbench:cell": cell,
      },
      undefined,
      1,
      1,
    );
    const conf = containerOf(resources, "docker-cell-key", "collector").inputs.uploads[0].content as string;
    expect(conf).toMatch(/<buffer tag>[\s\S]*\n    chunk_limit_records 5000\n[\s\S]*<\/buffer>/);
    expect(conf).toContain("    flush_thread_count 8\n");
    expect(conf).toContain("  workers 2\n");
    expect(conf).toContain('container "fluentdStress"');
    expect(outputs.hosts.collector?.config).toMatchObject({
      file: "/fluentd/etc/fluent.conf",
      source: "stack config",
    });
  });

  it("refuses an ingestbench:cell that names another collector than the hosts run, or a bad parameter, at its key", async () => {
    const base = {
      "ingestbench:platform": "docker",
      "ingestbench:hosts": { collector: {}, sink: {} },
      "ingestbench:components": { collector: "fluentd", sink: "griddb" },
    };
    await expect(
      stackWithCell("docker-cell-other", {
        ...base,
        "ingestbench:cell": { event: fields, collector: { vector: {} }, sink: { griddb: {} } },
      }),
    ).rejects.toThrow(
      /config\.ingestbench:cell\.collector: the cell's collector vector is not what the collector hosts run \(ingestbench:components: collector: fluentd, sink: griddb\)/,
    );
    await expect(
      stackWithCell("docker-cell-bad", {
        ...base,
        "ingestbench:cell": {
          event: fields,
          collector: { fluentd: { buffer: { chunk_limit_records: 0 } } },
          sink: { griddb: {} },
        },
      }),
    ).rejects.toThrow(
      /Pulumi\.docker-cell-bad\.yaml \(pulumi config\):\d+:\d+: config\.ingestbench:cell\.collector\.fluentd\.buffer\.chunk_limit_records: number must be greater than 0/,
    );
  });
  it("uploads syslog-ng.conf rendered from the cell (sql() into PostgreSQL, http() into ClickHouse) at the balabit/syslog-ng image's path, with its command line", async () => {
    const { renderCollector } = await import("../../../infra/render/index.ts");
    const { syslogNgArgs, syslogNgPaths } =
      await import("../../../plugins/collectors/syslog-ng/component.ts");
    const hosts = {
      loadgen: {},
      collector: { cpu: "1", memory: "1GiB" },
      sink: { cpu: "2", memory: "2GiB" },
    };
    for (const [stack, sinkName, collectorBlock, sinkBlock, port, expectLines] of [
      [
        "docker-syslog-ng-pg",
        "postgres",
        { "batch-lines": 5000, "batch-timeout": 250, "log-fifo-size": 100000 },
        { table: "t004" },
        5432,
        ["sql(type(pgsql)", 'table("t004")', "batch-lines(5000) batch-timeout(250)", "log-fifo-size(100000)"],
      ],
      [
        "docker-syslog-ng-ch",
        "clickhouse",
        { "batch-lines": 20000, workers: 4, "disk-buffer": { "disk-buf-size": 104857600 } },
        { table: "t001" },
        8123,
        ["http(url(", "batch-lines(20000)", "workers(4)", 'dir("/var/lib/syslog-ng/disk-buffer")'],
      ],
    ] as const) {
      // the cell as the provisioner sets it: the ingestbench:cell stack key, validated with the renderer's schema
      const cell = {
        event: fields,
        collector: { "syslog-ng": collectorBlock },
        sink: { [sinkName]: sinkBlock },
      };
      const { resources, outputs } = await stackWithCell(stack, {
        "ingestbench:platform": "docker",
        "ingestbench:hosts": hosts,
        "ingestbench:components": { collector: "syslog-ng", sink: sinkName },
        "ingestbench:cell": JSON.stringify(cell),
      });
      const collector = containerOf(resources, stack, "collector").inputs;
      expect(collector.image).toBe("balabit/syslog-ng:3.38.1");
      const sinkAddress = outputs.hosts.sink!.address;
      expect(sinkAddress).toMatch(/^10\./);
      const expected = renderCollector(
        "syslog-ng",
        collectorBlock,
        { name: sinkName, host: sinkAddress, port, params: { table: sinkBlock.table } },
        fields,
      );
      expect(collector.uploads).toEqual([{ file: "/etc/syslog-ng/syslog-ng.conf", content: expected.text }]);
      const conf = collector.uploads[0].content as string;
      for (const line of expectLines) expect(conf, line).toContain(line);
      expect(conf).toContain(
        sinkName === "postgres" ? `host("${sinkAddress}") port("5432")` : `url("http://${sinkAddress}:8123/`,
      );
      expect(conf).toContain("port(5514)");
      // appended to the image's entrypoint `/usr/sbin/syslog-ng -F`: the uploaded file, state on the data volume
      expect(collector.command).toEqual(
        syslogNgArgs(syslogNgPaths("/var/lib/syslog-ng", "/etc/syslog-ng/syslog-ng.conf")),
      );
      expect(collector.command).toEqual(
        expect.arrayContaining([
          "--no-caps",
          "-f",
          "/etc/syslog-ng/syslog-ng.conf",
          "-c",
          "/var/lib/syslog-ng/syslog-ng.ctl",
        ]),
      );
      expect(collector.mounts).toEqual([expect.objectContaining({ target: "/var/lib/syslog-ng" })]);
      expect(collector.ports).toEqual([expect.objectContaining({ internal: 5514, protocol: "tcp" })]);
      expect(outputs.hosts.collector?.config).toMatchObject({
        file: "/etc/syslog-ng/syslog-ng.conf",
        source: "stack config",
      });
      expect(outputs.hosts.collector?.config?.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(resources.some((r) => r.type === "docker:index/image:Image")).toBe(false);
    }
  });
});
