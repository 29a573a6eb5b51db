/**
 * The Pulumi program (infra/index.ts) for every azure stack file in stacks/, under Pulumi's own mocks
 * (test/helpers/pulumi-program.ts). No Azure subscription, Pulumi CLI or Docker engine is involved: what is checked is
 * what the program asks Azure for (VM sizes, Premium SSD v2 caps, NSG rules, tags, auto-shutdown), the cloud-init it
 * hands each VM (limit flags, pinned images, tc rate; every script passes `bash -n`) and the stack outputs.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseYaml } from "yaml";
import { afterEach, describe, expect, it, vi } from "vitest";
import { catalog, catalogEntry, imageRef } from "../../../infra/catalog.ts";
import { DATA_DISK_DEVICE } from "../../../infra/azure/cloud-init.ts";
import { ADDRESS_SPACE, hostAddress, SUBNET } from "../../../infra/azure/network.ts";
import { VM_SIZES } from "../../../infra/azure/sizes.ts";
import { listStacks, loadPulumiStack, type PulumiStack } from "../../../infra/stack/schema.ts";
import {
  configOfFile,
  encodeConfig,
  type RecordedResource,
  runPulumiProgram,
} from "../../helpers/pulumi-program.ts";
import { cellConfig } from "../../../harness/provision/provisioner.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const stacksDir = path.join(root, "stacks");
const MIB = 1024 ** 2;
/** a caller's address, as the user sets it before `pulumi up` (the committed files carry a documentation address) */
const CALLER = "100.64.12.34/32";
const SSH_KEY =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTheMockedProgramOnly0000000000000 test@ingestbench";
const T = {
  rg: "azure-native:resources:ResourceGroup",
  vnet: "azure-native:network:VirtualNetwork",
  subnet: "azure-native:network:Subnet",
  nsg: "azure-native:network:NetworkSecurityGroup",
  ip: "azure-native:network:PublicIPAddress",
  nic: "azure-native:network:NetworkInterface",
  disk: "azure-native:compute:Disk",
  vm: "azure-native:compute:VirtualMachine",
  schedule: "azure-native:devtestlab:GlobalSchedule",
};

afterEach(() => {
  pulumi.runtime.setAllConfig({});
});

/** GridDB has no default password: the program takes it from INGESTBENCH_GRIDDB_PASSWORD (infra/secrets.ts) here. */
const GRIDDB_PW = "pw-azure-program-test";
process.env.INGESTBENCH_GRIDDB_PASSWORD = GRIDDB_PW;
/** PostgreSQL and ClickHouse have no default password either (their catalog secretEnv): test values here. */
process.env.INGESTBENCH_POSTGRES_PASSWORD = "pw-pg-program-test";
process.env.INGESTBENCH_CLICKHOUSE_PASSWORD = "pw-ch-program-test";

/** The stack file's config with the caller's address and key set, as `pulumi config set --path` would. */
function deployConfig(s: PulumiStack, azure: Record<string, unknown> = {}): Record<string, string> {
  const cfg = configOfFile(s.spec.file);
  const block = JSON.parse(cfg["ingestbench:azure"]!) as Record<string, unknown>;
  return {
    ...cfg,
    "ingestbench:azure": JSON.stringify({ ...block, allowFrom: CALLER, sshPublicKey: SSH_KEY, ...azure }),
  };
}

/** Public addresses Azure would assign: 20.50.0.<host index + 1> by resource name order. */
const publicIps = new Map<string, string>();
function azureState(type: string, name: string): Record<string, unknown> {
  if (type !== T.ip) return {};
  if (!publicIps.has(name)) publicIps.set(name, `20.50.0.${publicIps.size + 1}`);
  return { ipAddress: publicIps.get(name) };
}

async function deployed(s: PulumiStack, config: Record<string, string>) {
  const started = Date.now();
  const run = await runPulumiProgram(s.spec.name, config, azureState);
  const ended = Date.now();
  const hosts = Object.keys(s.spec.hosts).length;
  // resource group, vnet, nsg, subnet; per host: public ip, nic, disk, vm, shutdown schedule
  await vi.waitFor(() => expect(run.resources.filter((r) => r.custom)).toHaveLength(4 + 5 * hosts), {
    timeout: 5000,
  });
  await run.settle();
  return { ...run, started, ended };
}

function one(resources: RecordedResource[], type: string, name: string): RecordedResource {
  const found = resources.filter((r) => r.type === type && r.name === name);
  expect(found, `${type} ${name}`).toHaveLength(1);
  return found[0]!;
}

/**
 * The scripts of a VM's cloud-init (customData is base64 of a #cloud-config document): the /opt/ingestbench/*.sh
 * files by name, and every other written file (configs, build context) by its path on the VM.
 */
/** How Pulumi's mocks show a secret input: { [SECRET_SIG]: SECRET_VALUE, value } (@pulumi/pulumi runtime/rpc.js specialSigKey, specialSecretSig). */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270";
const isSecret = (v: unknown): v is { value: any } =>
  typeof v === "object" && v !== null && (v as Record<string, unknown>)[SECRET_SIG] === SECRET_VALUE;

/** A VM's osProfile; with a secret environment its customData is a Pulumi secret, and the mocks wrap the whole osProfile. */
function osProfileOf(vm: RecordedResource): any {
  const p = vm.inputs.osProfile;
  return isSecret(p) ? p.value : p;
}

function cloudInitOf(vm: RecordedResource): {
  doc: any;
  scripts: Record<string, string>;
  files: Record<string, { content: string; permissions: string }>;
} {
  const text = Buffer.from(osProfileOf(vm).customData as string, "base64").toString("utf8");
  expect(text.startsWith("#cloud-config\n")).toBe(true);
  const doc = parseYaml(text) as {
    write_files: { path: string; content: string; permissions: string }[];
    runcmd: string[][];
  };
  const isScript = (p: string) => /^\/opt\/ingestbench\/[^/]+\.sh$/.test(p);
  return {
    doc,
    scripts: Object.fromEntries(
      doc.write_files.filter((f) => isScript(f.path)).map((f) => [path.basename(f.path), f.content]),
    ),
    files: Object.fromEntries(
      doc.write_files
        .filter((f) => !isScript(f.path))
        .map((f) => [f.path, { content: f.content, permissions: f.permissions }]),
    ),
  };
}

/** `bash -n` on a script written to a temp file (removed afterwards); returns bash's stderr on failure. */
function bashSyntax(script: string): void {
  const dir = mkdtempSync(path.join(tmpdir(), "ingestbench-cloudinit-"));
  try {
    const file = path.join(dir, "script.sh");
    writeFileSync(file, script);
    execFileSync("bash", ["-n", file], { stdio: ["ignore", "ignore", "pipe"] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The expiry tag the program must write for a deployment between `started` and `ended` ms. */
function expiryWindow(s: PulumiStack, started: number, ended: number): [number, number] {
  const ceilMin = (t: number) => Math.ceil(t / 60_000) * 60_000;
  return [ceilMin(started + s.spec.expiryMs), ceilMin(ended + s.spec.expiryMs)];
}

const azureStacks = listStacks(stacksDir).filter(
  (n) => loadPulumiStack(n, stacksDir).spec.platform === "azure",
);

describe("azure stack files", () => {
  it("include 000's 2- and 4-core collector VMs, the two-collector scale-out and 004's caps on a 2-core VM", () => {
    expect(azureStacks).toEqual(
      expect.arrayContaining([
        "azure-d2s-v5",
        "azure-d4s-v5",
        "azure-d4s-v5-two-collectors",
        "azure-quarter-core",
      ]),
    );
  });

  describe.each(azureStacks)("stack %s under pulumi mocks", (name) => {
    const stack = loadPulumiStack(name, stacksDir);
    const azure = stack.platform.azure!;

    it("creates a VM per host with the stack's size, its Premium SSD v2 caps, cloud-init limit flags, NSG, tags and outputs", async () => {
      const { resources, outputs, started, ended } = await deployed(stack, deployConfig(stack));
      const base = `ib-${name}`;
      const zone = azure.zone ?? "1";

      const rg = one(resources, T.rg, `${base}-rg`);
      expect(rg.inputs).toMatchObject({ resourceGroupName: base, location: azure.location });
      expect(one(resources, T.vnet, `${base}-net-vnet`).inputs.addressSpace).toEqual({
        addressPrefixes: [ADDRESS_SPACE],
      });
      const subnet = one(resources, T.subnet, `${base}-net-subnet`);
      expect(subnet.inputs.addressPrefix).toBe(SUBNET);
      expect(subnet.inputs.networkSecurityGroup).toEqual({ id: `${base}-net-nsg-id` });

      // NSG: from outside the virtual network, only the caller's address is admitted; everything else is denied
      const rules = one(resources, T.nsg, `${base}-net-nsg`).inputs.securityRules as Record<string, any>[];
      const allows = rules.filter((r) => r.access === "Allow" && r.direction === "Inbound");
      for (const r of allows) expect([CALLER, ADDRESS_SPACE]).toContain(r.sourceAddressPrefix);
      expect(
        allows.filter((r) => r.sourceAddressPrefix === ADDRESS_SPACE).map((r) => r.destinationAddressPrefix),
      ).toEqual([ADDRESS_SPACE]);
      expect(
        rules.some(
          (r) => r.access === "Allow" && ["*", "Internet", "0.0.0.0/0"].includes(r.sourceAddressPrefix),
        ),
      ).toBe(false);
      expect(rules.find((r) => r.name === "deny-all-inbound")).toMatchObject({
        access: "Deny",
        sourceAddressPrefix: "*",
        destinationPortRange: "*",
        priority: 4096,
      });
      const callerPorts = allows
        .filter((r) => r.sourceAddressPrefix === CALLER && r.protocol === "Tcp")
        .flatMap((r) => r.destinationPortRanges as string[]);
      const componentPorts = Object.keys(stack.spec.hosts).flatMap((h) =>
        catalogEntry(stack.platform.components[h] ?? "loadgen").ports.map((p) => String(p.port)),
      );
      expect(new Set(callerPorts)).toEqual(new Set(["22", "9100", ...componentPorts]));

      Object.values(stack.spec.hosts).forEach((host, i) => {
        const hb = `${base}-${host.name}`;
        const vmName = `ib-${name}-${host.name}`;
        const size = azure.vmSizes[host.name]!;
        const component = catalogEntry(stack.platform.components[host.name] ?? "loadgen");
        const { cpu, memoryBytes, disk: diskCap, network: netCap } = host.limits;

        // disk: Premium SSD v2 at the host's caps (MBps rounded down), else at the VM size's uncached cap
        const disk = one(resources, T.disk, `${hb}-data`).inputs;
        const capIops = diskCap?.readIops;
        const capBps = diskCap?.readBytesPerSec;
        expect(disk).toMatchObject({
          diskName: `${vmName}-data`,
          sku: { name: "PremiumV2_LRS" },
          zones: [zone],
          creationData: { createOption: "Empty" },
          diskSizeGB: 64,
        });
        expect(disk.diskIOPSReadWrite).toBe(capIops ?? VM_SIZES[size].uncachedIops);
        expect(disk.diskMBpsReadWrite).toBe(
          capBps !== undefined ? Math.floor(capBps / 1e6) : Math.max(125, VM_SIZES[size].uncachedMBps),
        );
        if (capIops !== undefined) expect(capIops).toBeLessThanOrEqual(VM_SIZES[size].uncachedIops);
        if (capBps !== undefined) expect(capBps).toBeLessThanOrEqual(VM_SIZES[size].uncachedMBps * 1e6);

        // VM: size, zone, SSH key only, the data disk at LUN 0 uncached, the NIC
        const vm = one(resources, T.vm, `${hb}-vm`);
        expect(vm.inputs.vmName).toBe(vmName);
        expect(vm.inputs.hardwareProfile).toEqual({ vmSize: size });
        expect(vm.inputs.zones).toEqual([zone]);
        expect(osProfileOf(vm).linuxConfiguration).toEqual({
          disablePasswordAuthentication: true,
          ssh: { publicKeys: [{ path: "/home/ingestbench/.ssh/authorized_keys", keyData: SSH_KEY }] },
        });
        expect(osProfileOf(vm).adminPassword).toBeUndefined();
        expect(vm.inputs.storageProfile.dataDisks).toEqual([
          {
            lun: 0,
            createOption: "Attach",
            caching: "None",
            managedDisk: { id: `${hb}-data-id` },
            deleteOption: "Detach",
          },
        ]);
        expect(vm.inputs.networkProfile.networkInterfaces).toEqual([{ id: `${hb}-nic-id`, primary: true }]);
        const nic = one(resources, T.nic, `${hb}-nic`).inputs;
        expect(nic.ipConfigurations[0]).toMatchObject({
          privateIPAllocationMethod: "Static",
          privateIPAddress: hostAddress(i),
          publicIPAddress: { id: `${hb}-ip-id` },
          subnet: { id: `${base}-net-subnet-id` },
        });
        expect(one(resources, T.ip, `${hb}-ip`).inputs).toMatchObject({
          sku: { name: "Standard" },
          publicIPAllocationMethod: "Static",
        });

        // cloud-init: the docker platform's flags on `docker run`, the pinned image, tc rate; bash -n on every script
        const { doc, scripts, files } = cloudInitOf(vm);
        expect(Object.keys(scripts)).toEqual(["data-disk.sh", "install.sh", "containers.sh"]);
        expect(doc.runcmd.map((c: string[]) => c[2]!.split(" ")[0])).toEqual([
          "/opt/ingestbench/data-disk.sh",
          "/opt/ingestbench/install.sh",
          "/opt/ingestbench/containers.sh",
        ]);
        for (const script of Object.values(scripts)) expect(() => bashSyntax(script)).not.toThrow();
        expect(scripts["install.sh"]).toContain("apt-get install -y -q docker.io prometheus-node-exporter");
        expect(scripts["data-disk.sh"]).toContain(`dev=${DATA_DISK_DEVICE}`);
        expect(scripts["data-disk.sh"]).toContain("LABEL=ibdata /var/lib/docker ext4");
        const lines = scripts["containers.sh"]!.split("\n");
        // the image: pulled at its pin, or built on the VM from the catalog's build context (Fluentd into GridDB)
        const build =
          component.build &&
          (component.build.always || component.build.forSinks.includes(stack.platform.components.sink ?? ""))
            ? component.build
            : undefined;
        const image = build ? `${build.repository}:${build.tag}` : imageRef(component);
        if (build) {
          // Fluentd into GridDB (images/fluentd-griddb), and GridDB itself with its Web API (images/griddb-webapi)
          const [dir, context, script] =
            build.repository === "ingestbench/griddb-webapi"
              ? [
                  "ingestbench-griddb-webapi",
                  [
                    "Dockerfile",
                    "griddb_webapi.properties.in",
                    "logback.xml",
                    "repository.json.in",
                    "start.sh",
                  ],
                  "start.sh",
                ]
              : [
                  "ingestbench-fluentd-griddb",
                  ["Dockerfile", "apply-fix.sh", "fix-buffered-write.sed"],
                  "apply-fix.sh",
                ];
          expect(lines).toContain(`docker build --quiet --tag ${image} /opt/ingestbench/build/${dir}`);
          expect(lines.some((l) => l.startsWith(`docker pull ${imageRef(component)}`))).toBe(false);
          expect(
            Object.keys(files)
              .filter((f) => f.startsWith("/opt/ingestbench/build/"))
              .sort(),
          ).toEqual(context.map((f) => `/opt/ingestbench/build/${dir}/${f}`));
          expect(files[`/opt/ingestbench/build/${dir}/${script}`]!.permissions).toBe("0755");
        } else {
          expect(lines).toContain(`docker pull ${image}`);
        }
        // config files: written by cloud-init, mounted read-only at their path in the container
        const uploads = [
          ...(component.uploads ?? []).map((u) => u.file),
          ...(component.kind === "collector" ? [outputs.hosts[host.name]!.config!.file] : []),
        ];
        for (const f of uploads) expect(files[`/opt/ingestbench/etc${f}`], f).toBeDefined();
        const run = lines.find((l) => l.startsWith(`docker run -d --name=${vmName} `));
        expect(run, "docker run line of the host's container").toBeDefined();
        const flags = run!.split(" ");
        expect(flags).toContain("--network=host");
        const flag = (f: string) => flags.filter((x) => x.startsWith(`${f}=`));
        expect(flag("--cpu-period")).toEqual(cpu ? [`--cpu-period=${cpu.periodUs}`] : []);
        expect(flag("--cpu-quota")).toEqual(cpu ? [`--cpu-quota=${cpu.quotaUs}`] : []);
        expect(flag("--memory")).toEqual(
          memoryBytes !== undefined ? [`--memory=${Math.floor(memoryBytes / MIB)}m`] : [],
        );
        expect(flag("--memory-swap")).toEqual(
          memoryBytes !== undefined ? [`--memory-swap=${Math.floor(memoryBytes / MIB)}m`] : [],
        );
        expect(flag("--device-write-iops")).toEqual(
          diskCap?.writeIops !== undefined
            ? [`--device-write-iops=${DATA_DISK_DEVICE}:${diskCap.writeIops}`]
            : [],
        );
        expect(flag("--device-read-bps")).toEqual(
          diskCap?.readBytesPerSec !== undefined
            ? [`--device-read-bps=${DATA_DISK_DEVICE}:${diskCap.readBytesPerSec}`]
            : [],
        );
        expect(flags).toContain(image);
        for (const f of uploads) expect(flags).toContain(`--volume=/opt/ingestbench/etc${f}:${f}:ro`);
        expect(flags.some((f) => f.startsWith("--cap-add"))).toBe(false); // the component never gets NET_ADMIN
        // the shaper's tc script is one quoted, multi-line argument: take its docker run up to the end of the script
        const shaperAt = scripts["containers.sh"]!.indexOf(`docker run -d --name=${vmName}-shaper `);
        const shaper = shaperAt >= 0 ? scripts["containers.sh"]!.slice(shaperAt) : undefined;
        if (netCap?.bandwidthBytesPerSec !== undefined) {
          expect(shaper).toContain("--cap-add=NET_ADMIN");
          expect(shaper).toContain(imageRef(catalog.shaper!));
          expect(shaper).toContain(
            `tc qdisc add dev eth0 root handle 1: tbf rate ${netCap.bandwidthBytesPerSec * 8}bit`,
          );
          expect(shaper).toContain(`ifb0 root handle 1: tbf rate ${netCap.bandwidthBytesPerSec * 8}bit`);
        } else {
          expect(shaper).toBeUndefined();
        }

        // daily auto-shutdown of this VM at the expiry's time of day (UTC)
        const schedule = one(resources, T.schedule, `${hb}-shutdown`).inputs;
        expect(schedule).toMatchObject({
          name: `shutdown-computevm-${vmName}`,
          taskType: "ComputeVmShutdownTask",
          status: "Enabled",
          timeZoneId: "UTC",
          targetResourceId: `${hb}-vm-id`,
        });
        const expiry = new Date(vm.inputs.tags.expiry as string);
        expect(schedule.dailyRecurrence).toEqual({
          time: `${String(expiry.getUTCHours()).padStart(2, "0")}${String(expiry.getUTCMinutes()).padStart(2, "0")}`,
        });

        // outputs: addresses, applied limits, endpoints, versions
        const out = outputs.hosts[host.name]!;
        // exactly the contract's keys (the provisioner parses them strictly)
        expect(Object.keys(out).sort()).toEqual(
          [
            "address",
            "component",
            "container",
            "image",
            "limits",
            "publicAddress",
            ...(component.kind === "collector" ? ["config"] : []),
          ].sort(),
        );
        expect(out).toMatchObject({
          address: hostAddress(i),
          container: vmName,
          component: component.name,
          image,
        });
        if (component.kind === "collector") {
          // the committed stack carries no ingestbench:cell: the collector's defaults, said so; the sha256 is of the written text
          const written = files[`/opt/ingestbench/etc${out.config!.file}`]!.content;
          expect(out.config).toMatchObject({
            source: "defaults",
            sha256: createHash("sha256").update(written).digest("hex"),
          });
        }
        const publicAddress = publicIps.get(`${hb}-ip`);
        expect(publicAddress).toMatch(/^20\.50\.0\.\d+$/);
        // where the harness reaches the VM over SSH (the loadgen VM publishes no port, so only this says it)
        expect(out.publicAddress).toBe(publicAddress);
        expect(out.limits.requested).toEqual(host.requested);
        expect(out.limits.applied).toMatchObject({
          vmSize: size,
          diskSku: "PremiumV2_LRS",
          diskIOPSReadWrite: disk.diskIOPSReadWrite,
          diskMBpsReadWrite: disk.diskMBpsReadWrite,
        });
        if (cpu)
          expect(out.limits.applied).toMatchObject({ cfsQuotaUs: cpu.quotaUs, cfsPeriodUs: cpu.periodUs });
        if (netCap?.bandwidthBytesPerSec !== undefined)
          expect(out.limits.applied.tbfRateBytesPerSec).toBe(netCap.bandwidthBytesPerSec);
        const ep = outputs.endpoints[component.name]?.find((e) => e.host === host.name);
        const data = component.ports.find((p) => p.role === "data");
        expect(ep?.data).toEqual(
          data ? { host: hostAddress(i), port: data.port, scheme: data.scheme } : null,
        );
        expect(ep?.published).toEqual(
          component.ports.map((p) => ({
            internal: p.port,
            external: p.port,
            ip: publicAddress,
            protocol: p.protocol,
          })),
        );
        expect(outputs.versions[component.name]).toEqual({
          pinned: component.version,
          image,
          digestResolved: !build && component.digest !== null,
        });
      });

      expect(outputs).toMatchObject({
        platform: "azure",
        stack: name,
        network: { name: `ib-${name}-vnet`, subnet: SUBNET },
      });
      expect(Object.keys(outputs.hosts)).toEqual(Object.keys(stack.spec.hosts));
      expect(outputs.message).toBeUndefined();

      // tags on every resource that takes tags (Azure subnets take none)
      const [lo, hi] = expiryWindow(stack, started, ended);
      for (const r of resources.filter((r) => r.custom && r.type !== T.subnet)) {
        expect(Object.keys(r.inputs.tags ?? {}).sort(), `${r.type} ${r.name}`).toEqual([
          "expiry",
          "ingestbench-stack",
          "owner",
        ]);
        expect(r.inputs.tags).toMatchObject({ owner: stack.platform.owner, "ingestbench-stack": name });
        expect(r.inputs.tags.expiry).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
        const t = Date.parse(r.inputs.tags.expiry);
        expect(
          t >= lo && t <= hi,
          `expiry ${r.inputs.tags.expiry} within [${new Date(lo).toISOString()}, ${new Date(hi).toISOString()}]`,
        ).toBe(true);
      }
      // ComponentResources: one stack, one network, one host per stack host
      expect(resources.filter((r) => r.type === "ingestbench:azure:Stack").map((r) => r.name)).toEqual([
        base,
      ]);
      expect(
        resources
          .filter((r) => r.type === "ingestbench:azure:Host")
          .map((r) => r.name)
          .sort(),
      ).toEqual(
        Object.keys(stack.spec.hosts)
          .map((h) => `${base}-${h}`)
          .sort(),
      );
    });
  });
});

describe("azure-quarter-core: 004's caps on a 2-core VM", () => {
  it("caps the Elasticsearch sink at 25000/100000 µs, 2048 MiB, a 3000 IOPS / 125 MBps disk on a Standard_E2bs_v5, 96 Mbit/s by tc", async () => {
    const stack = loadPulumiStack("azure-quarter-core", stacksDir);
    const { resources, outputs } = await deployed(stack, deployConfig(stack));
    const b = "ib-azure-quarter-core-sink";
    const vm = one(resources, T.vm, `${b}-vm`).inputs;
    expect(vm.hardwareProfile).toEqual({ vmSize: "Standard_E2bs_v5" });
    expect(VM_SIZES.Standard_E2bs_v5.vcpus).toBe(2);
    expect(one(resources, T.disk, `${b}-data`).inputs).toMatchObject({
      diskIOPSReadWrite: 3000,
      diskMBpsReadWrite: 125,
    });
    const containers = cloudInitOf(one(resources, T.vm, `${b}-vm`)).scripts["containers.sh"]!;
    const dev = DATA_DISK_DEVICE;
    expect(containers).toContain(
      `docker run -d --name=ib-azure-quarter-core-sink --network=host --restart=no --cpu-period=100000 --cpu-quota=25000 --memory=2048m --memory-swap=2048m ` +
        `--device-read-iops=${dev}:3000 --device-write-iops=${dev}:3000 --device-read-bps=${dev}:125829120 --device-write-bps=${dev}:125829120 ` +
        `--volume=ib-azure-quarter-core-sink-data:/usr/share/elasticsearch/data --env=discovery.type=single-node --env=xpack.security.enabled=false ` +
        `--env=bootstrap.memory_lock=false '--env=ES_JAVA_OPTS=-Xms1024m -Xmx1024m'`,
    );
    expect(containers).toContain("docker pull docker.elastic.co/elasticsearch/elasticsearch:8.15.3");
    expect(containers).toContain(
      "tc qdisc add dev eth0 root handle 1: tbf rate 96000000bit burst 120000 latency 50ms",
    );
    expect(containers).toContain(
      "tc filter add dev eth0 parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev ifb0",
    );
    expect(outputs.hosts.sink?.limits).toMatchObject({
      enforced: true,
      applied: {
        cfsQuotaUs: 25000,
        cfsPeriodUs: 100000,
        memoryBytes: 2 * 1024 ** 3,
        readIops: 3000,
        writeBytesPerSec: 125829120,
        diskIOPSReadWrite: 3000,
        diskMBpsReadWrite: 125,
        vmSize: "Standard_E2bs_v5",
        tbfRateBytesPerSec: 12_000_000,
      },
    });
    expect(outputs.hosts.sink?.limits.notes.join("\n")).toContain(
      "bandwidth 125829120 B/s rounded down to 125 MBps",
    );
    // the loadgen has no disk cap: its disk runs at the D2s_v5's uncached IOPS, throughput at Premium SSD v2's minimum (above the VM's 85)
    expect(one(resources, T.disk, "ib-azure-quarter-core-loadgen-data").inputs).toMatchObject({
      diskIOPSReadWrite: 3750,
      diskMBpsReadWrite: 125,
    });
  });
});

describe("azure-d4s-v5-two-collectors: 000's scale-out", () => {
  it("runs the same pinned Fluentd on two Standard_D4s_v5 collectors, listed as two fluentd endpoints", async () => {
    const stack = loadPulumiStack("azure-d4s-v5-two-collectors", stacksDir);
    const { resources, outputs } = await deployed(stack, deployConfig(stack));
    const vms = resources.filter((r) => r.type === T.vm);
    expect(vms.map((v) => v.inputs.hardwareProfile.vmSize)).toEqual(Array(4).fill("Standard_D4s_v5"));
    expect(outputs.endpoints.fluentd?.map((e) => e.host)).toEqual(["collector-1", "collector-2"]);
    const images = ["collector-1", "collector-2"].map((h) => outputs.hosts[h]?.image);
    // into GridDB: both build the same pinned Fluentd + fluent-plugin-griddb image from the same context
    const built = `${catalog.fluentd!.build!.repository}:${catalog.fluentd!.build!.tag}`;
    expect(images).toEqual([built, built]);
    expect(outputs.endpoints.fluentd?.map((e) => e.data?.host)).toEqual([hostAddress(1), hostAddress(2)]);
  });
});

describe("a GridDB sink on azure: its own image (images/griddb-webapi, GridDB + Web API) built on the VM", () => {
  it("azure-d4s-v5-two-collectors' sink VM: cloud-init writes the build context byte for byte, docker-builds it, runs it with the catalog's env; nothing pulled for it", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const stack = loadPulumiStack("azure-d4s-v5-two-collectors", stacksDir);
    expect(stack.platform.components.sink).toBe("griddb");
    const { resources, outputs } = await deployed(stack, deployConfig(stack));
    const build = catalogEntry("griddb").build!;
    const built = `${build.repository}:${build.tag}`;
    const { scripts, files } = cloudInitOf(one(resources, T.vm, "ib-azure-d4s-v5-two-collectors-sink-vm"));
    const vmDir = "/opt/ingestbench/build/ingestbench-griddb-webapi";
    const context = readdirSync(path.join(root, "images/griddb-webapi")).sort();
    expect(context).toEqual([
      "Dockerfile",
      "griddb_webapi.properties.in",
      "logback.xml",
      "repository.json.in",
      "start.sh",
    ]);
    expect(
      Object.keys(files)
        .filter((f) => f.startsWith("/opt/ingestbench/build/"))
        .sort(),
    ).toEqual(context.map((f) => `${vmDir}/${f}`));
    for (const f of context) {
      expect(files[`${vmDir}/${f}`]!.content, f).toBe(
        readFileSync(path.join(root, "images/griddb-webapi", f), "utf8"),
      );
      expect(files[`${vmDir}/${f}`]!.permissions, f).toBe(f === "start.sh" ? "0755" : "0644");
    }
    const lines = scripts["containers.sh"]!.split("\n");
    const buildAt = lines.indexOf(`docker build --quiet --tag ${built} ${vmDir}`);
    const runAt = lines.findIndex((l) =>
      l.startsWith("docker run -d --name=ib-azure-d4s-v5-two-collectors-sink "),
    );
    expect(buildAt).toBeGreaterThan(-1);
    expect(runAt).toBeGreaterThan(buildAt);
    expect(lines.some((l) => l.startsWith("docker pull griddb/griddb"))).toBe(false);
    const run = lines[runAt]!.split(" ");
    // the image's ENTRYPOINT start.sh runs: nothing after the image name
    expect(run.at(-1)).toBe(built);
    expect(run).toEqual(
      expect.arrayContaining([
        "--network=host",
        "--env=GRIDDB_CLUSTER_NAME=myCluster",
        "--env=GRIDDB_USERNAME=admin",
        "--env-file=/opt/ingestbench/etc/ib-azure-d4s-v5-two-collectors-sink.env",
        "--volume=ib-azure-d4s-v5-two-collectors-sink-data:/var/lib/gridstore/data",
      ]),
    );
    // the password never on the docker run line: a 0600 env file from a Pulumi secret, so customData is a secret
    expect(scripts["containers.sh"]).not.toContain(GRIDDB_PW);
    expect(files["/opt/ingestbench/etc/ib-azure-d4s-v5-two-collectors-sink.env"]).toEqual({
      content: `GRIDDB_PASSWORD=${GRIDDB_PW}\n`,
      permissions: "0600",
    });
    const sinkVm = one(resources, T.vm, "ib-azure-d4s-v5-two-collectors-sink-vm");
    expect(isSecret(sinkVm.inputs.osProfile)).toBe(true);
    // a VM without a password in its environment keeps a plain customData
    expect(isSecret(one(resources, T.vm, "ib-azure-d4s-v5-two-collectors-loadgen-vm").inputs.osProfile)).toBe(
      false,
    );
    expect(() => bashSyntax(scripts["containers.sh"]!)).not.toThrow();
    expect(outputs.hosts.sink?.image).toBe(built);
    expect(outputs.versions.griddb).toEqual({ pinned: "5.6.0", image: built, digestResolved: false });
    expect(outputs.endpoints.griddb?.[0]?.data).toEqual({
      host: outputs.hosts.sink!.address,
      port: 8081,
      scheme: "griddb-webapi",
    });
    // the Web API's port is open to allowFrom (the harness's verifier) on the sink VM
    const nsg = resources.find((r) => r.type === T.nsg)!;
    expect(JSON.stringify(nsg.inputs.securityRules)).toContain("8081");
  });
});

describe("a scenario cell on an azure stack (ingestbench:cell as the provisioner sets it)", () => {
  it("000's chunk_limit_records=5000 cell: fluent.conf with it written by cloud-init onto both collector VMs and mounted; scripts pass bash -n", async () => {
    const stack = loadPulumiStack("azure-d4s-v5-two-collectors", stacksDir);
    const file = path.join(root, "scenarios", "fluentd-griddb-chunk-limit-records.yaml");
    const plan = planCells(loadScenarioFile(file), file, { replicates: 1 }).find(
      (p) => p.cell === "chunk_limit_records=5000",
    )!;
    const cell = cellConfig(stack.spec, plan)["ingestbench:cell"]!.value;
    const { resources, outputs } = await deployed(stack, {
      ...deployConfig(stack),
      "ingestbench:cell": cell,
    });
    const sinkAddress = hostAddress(Object.keys(stack.spec.hosts).indexOf("sink"));
    for (const h of ["collector-1", "collector-2"]) {
      const { scripts, files } = cloudInitOf(one(resources, T.vm, `ib-azure-d4s-v5-two-collectors-${h}-vm`));
      const conf = files["/opt/ingestbench/etc/fluentd/etc/fluent.conf"];
      expect(conf?.permissions).toBe("0644");
      expect(conf!.content).toMatch(/<buffer tag>[\s\S]*\n    chunk_limit_records 5000\n[\s\S]*<\/buffer>/);
      expect(conf!.content).toContain("    chunk_limit_size 64MB\n");
      expect(conf!.content).toContain("  workers 2\n");
      expect(conf!.content).toContain('container "fluentdStress"');
      expect(conf!.content).toContain(sinkAddress); // the GridDB Web API on the sink VM's private address
      expect(scripts["containers.sh"]).toContain(
        `--volume=/opt/ingestbench/etc/fluentd/etc/fluent.conf:/fluentd/etc/fluent.conf:ro`,
      );
      for (const script of Object.values(scripts)) expect(() => bashSyntax(script)).not.toThrow();
      expect(outputs.hosts[h]?.config).toMatchObject({
        file: "/fluentd/etc/fluent.conf",
        source: "stack config",
        sha256: createHash("sha256").update(conf!.content).digest("hex"),
        built: { context: "images/fluentd-griddb" },
      });
    }
  });

  it("refuses a cell whose collector cannot write into the stack's sink before creating anything", async () => {
    const stack = loadPulumiStack("azure-d2s-v5", stacksDir);
    const cell = JSON.stringify({
      event: [{ name: "msg", type: "string", size: 10 }],
      collector: { fluentd: {} },
      sink: { postgres: {} },
    });
    const config = {
      ...deployConfig(stack),
      "ingestbench:components": JSON.stringify({ collector: "fluentd", sink: "postgres" }),
      "ingestbench:cell": cell,
    };
    await expect(runPulumiProgram("azure-d2s-v5", config)).rejects.toThrow(
      /collector fluentd cannot write into sink "postgres"/,
    );
  });
});

describe("azure deploy-time checks and validation", () => {
  it("refuses the committed documentation address and a missing SSH key, before creating anything", async () => {
    const stack = loadPulumiStack("azure-d2s-v5", stacksDir);
    const committed = configOfFile(stack.spec.file);
    const withKey = {
      ...committed,
      "ingestbench:azure": JSON.stringify({
        ...JSON.parse(committed["ingestbench:azure"]!),
        sshPublicKey: SSH_KEY,
      }),
    };
    await expect(runPulumiProgram("azure-d2s-v5", withKey)).rejects.toThrow(
      /allowFrom is 203\.0\.113\.10\/32, a documentation address \(RFC 5737\).*pulumi config set --path ingestbench:azure\.allowFrom/,
    );
    const noKey = {
      ...committed,
      "ingestbench:azure": JSON.stringify({
        ...JSON.parse(committed["ingestbench:azure"]!),
        allowFrom: CALLER,
      }),
    };
    await expect(runPulumiProgram("azure-d2s-v5", noKey)).rejects.toThrow(
      /ingestbench:azure\.sshPublicKey is not set/,
    );
  });

  it("reports 004's disk caps on a Standard_D2s_v5 as above the VM size's uncached cap, at the cap's line", async () => {
    const stack = loadPulumiStack("azure-quarter-core", stacksDir);
    const cfg = deployConfig(stack, { vmSizes: { loadgen: "Standard_D2s_v5", sink: "Standard_D2s_v5" } });
    await expect(runPulumiProgram("azure-small", cfg)).rejects.toThrow(
      /Pulumi\.azure-small\.yaml \(pulumi config\):\d+:\d+: config\.ingestbench:hosts\.sink\.disk\.bandwidth: 125829120 B\/s \(125\.83 MBps\) is above Standard_D2s_v5's uncached disk cap of 85 MBps/,
    );
    const tooManyIops = {
      ...cfg,
      "ingestbench:hosts": JSON.stringify({
        loadgen: {},
        sink: { disk: { iops: 5000, bandwidth: "80MB/s" } },
      }),
    };
    await expect(runPulumiProgram("azure-small", tooManyIops)).rejects.toThrow(
      /sink\.disk\.iops: 5000 IOPS is above Standard_D2s_v5's uncached disk cap of 3750 IOPS/,
    );
  });

  it("accepts an azure stack given only as Pulumi config, with its own owner, expiry, zone and admin user", async () => {
    const config = encodeConfig({
      "ingestbench:platform": "azure",
      "ingestbench:hosts": { loadgen: null, sink: { cpu: "1", memory: "4GiB", disk: { tmpfs: "1GiB" } } },
      "ingestbench:components": { sink: "clickhouse" },
      "ingestbench:owner": "bench-ci",
      "ingestbench:expiry": "90m",
      "ingestbench:azure": {
        location: "northeurope",
        zone: "2",
        allowFrom: CALLER,
        sshPublicKey: SSH_KEY,
        adminUsername: "bench",
        vmSizes: { loadgen: "Standard_D2s_v5", sink: "Standard_D8s_v5" },
      },
      "azure-native:location": "northeurope",
    });
    const { fromPulumiConfig } = await import("../../../infra/stack/schema.ts");
    const stack = fromPulumiConfig("azure-ramdisk", config);
    const { resources, outputs } = await deployed(stack, config);
    const vm = one(resources, T.vm, "ib-azure-ramdisk-sink-vm").inputs;
    expect(vm.zones).toEqual(["2"]);
    // the ClickHouse sink has a password in its environment: its customData, and so the mocked osProfile, is a secret
    expect(osProfileOf(one(resources, T.vm, "ib-azure-ramdisk-sink-vm")).adminUsername).toBe("bench");
    expect(vm.tags.owner).toBe("bench-ci");
    const containers = cloudInitOf(one(resources, T.vm, "ib-azure-ramdisk-sink-vm")).scripts[
      "containers.sh"
    ]!;
    expect(containers).toContain(`--tmpfs=/var/lib/clickhouse:rw,size=${1024 ** 3},mode=1777`);
    expect(containers).not.toContain("--volume=ib-azure-ramdisk-sink-data");
    expect(containers).not.toContain("docker volume create");
    expect(outputs.hosts.sink?.limits.applied).toMatchObject({
      tmpfsBytes: 1024 ** 3,
      memoryBytes: 4 * 1024 ** 3,
      diskIOPSReadWrite: 12800,
      diskMBpsReadWrite: 290,
    });
    expect(outputs.endpoints.clickhouse?.[0]?.metrics).toEqual({
      host: hostAddress(1),
      port: 9363,
      scheme: "prometheus",
    });
  });
});
