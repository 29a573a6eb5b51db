import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import { listStacks, loadPulumiStack, loadStack } from "../../../infra/stack/schema.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const stacksDir = path.join(root, "stacks");

let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-stack-"));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** Write a stack file into the temp dir and return its path. */
function stackFileWith(name: string, text: string): string {
  const file = path.join(tmp, `Pulumi.${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** Load and return the ConfigurationError it must throw. */
function errorOf(nameOrPath: string, dir = tmp): ConfigurationError {
  try {
    loadStack(nameOrPath, dir);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigurationError);
    return e as ConfigurationError;
  }
  throw new Error(`expected ${nameOrPath} to be rejected`);
}

describe("the stack files in stacks/", () => {
  it("lists them", () => {
    expect(listStacks(stacksDir)).toEqual(
      expect.arrayContaining(["local-2-cores", "local-quarter-core", "local-quarter-core-cpu-only"]),
    );
    expect(listStacks(path.join(tmp, "missing"))).toEqual([]);
  });

  it("local-quarter-core has 004's caps in canonical units", () => {
    const s = loadStack("local-quarter-core", stacksDir);
    expect(s.name).toBe("local-quarter-core");
    expect(s.file).toBe(path.join(stacksDir, "Pulumi.local-quarter-core.yaml"));
    expect(s.platform).toBe("local");
    expect(s.expiryMs).toBe(4 * 3600 * 1000);
    // the collector host is provisioned only for scenarios with a collector (harness/runner/site.ts hostRoles)
    expect(Object.keys(s.hosts)).toEqual(["loadgen", "sink", "collector"]);
    expect(s.hosts.collector?.limits).toEqual({
      cpu: { quotaUs: 100000, periodUs: 100000 },
      memoryBytes: 1024 ** 3,
    });
    expect(s.hosts.loadgen).toEqual({
      name: "loadgen",
      requested: { cpu: "1" },
      limits: { cpu: { quotaUs: 100000, periodUs: 100000 } },
    });
    expect(s.hosts.sink?.limits).toEqual({
      cpu: { quotaUs: 25000, periodUs: 100000 },
      memoryBytes: 2 * 1024 ** 3,
      // libvirt total_*: the same cap on each direction, and the one budget for reads + writes kept beside them
      disk: {
        readIops: 3000,
        writeIops: 3000,
        readBytesPerSec: 125829120,
        writeBytesPerSec: 125829120,
        totalIops: 3000,
        totalBytesPerSec: 125829120,
      },
      network: { bandwidthBytesPerSec: 12_000_000 },
    });
    expect(s.hosts.sink?.requested).toEqual({
      cpu: "0.25",
      memory: "2GiB",
      disk: { iops: 3000, bandwidth: "125829120B/s" },
      network: { bandwidth: "12000KB/s" },
    });
  });

  it("local-2-cores gives the sink two cores and 4 GiB, no disk or network caps", () => {
    const s = loadStack(path.join(stacksDir, "Pulumi.local-2-cores.yaml"));
    expect(s.name).toBe("local-2-cores");
    expect(s.platform).toBe("local");
    expect(s.hosts.loadgen?.limits).toEqual({ cpu: { quotaUs: 100000, periodUs: 100000 } });
    expect(s.hosts.sink?.limits).toEqual({
      cpu: { quotaUs: 200000, periodUs: 100000 },
      memoryBytes: 4 * 1024 ** 3,
    });
  });

  it("local-quarter-core-cpu-only caps only the sink's CPU (and memory)", () => {
    const s = loadStack("local-quarter-core-cpu-only", stacksDir);
    expect(s.hosts.sink?.limits).toEqual({
      cpu: { quotaUs: 25000, periodUs: 100000 },
      memoryBytes: 2 * 1024 ** 3,
    });
    expect(s.expiryMs).toBe(4 * 3600 * 1000);
  });
});

describe("stack file forms", () => {
  it("accepts every limit form, ignores other namespaces and Pulumi keys, defaults expiry to 4h", () => {
    const file = stackFileWith(
      "forms",
      [
        "secretsprovider: passphrase",
        "config:",
        "  azure-native:location: westeurope",
        "  ingestbench:platform: docker",
        "  ingestbench:hosts:",
        "    loadgen: { cpu: 1 }",
        "    collector-1:",
        "      cpu: { quota: 25ms, period: 100ms }",
        "      disk: { tmpfs: 1GiB }",
        "    collector-2:",
        "    sink:",
        '      cpu: "50000 100000"',
        "      memory: 512MiB",
        "      disk: { readIops: 100, writeIops: 200, readBandwidth: 10MB/s, writeBandwidth: 20MiB/s }",
        "      network: { bandwidth: 96Mbit/s, delay: 10ms, loss: 0.1% }",
        "",
      ].join("\n"),
    );
    const s = loadStack(file);
    expect(s.platform).toBe("docker");
    expect(s.expiryMs).toBe(4 * 3600 * 1000);
    expect(s.hosts.loadgen?.limits.cpu).toEqual({ quotaUs: 100000, periodUs: 100000 });
    expect(s.hosts["collector-1"]?.limits).toEqual({
      cpu: { quotaUs: 25000, periodUs: 100000 },
      disk: { tmpfsBytes: 1024 ** 3 },
    });
    expect(s.hosts["collector-2"]).toEqual({ name: "collector-2", requested: {}, limits: {} });
    expect(s.hosts.sink?.limits).toEqual({
      cpu: { quotaUs: 50000, periodUs: 100000 },
      memoryBytes: 512 * 1024 ** 2,
      disk: { readIops: 100, writeIops: 200, readBytesPerSec: 10_000_000, writeBytesPerSec: 20 * 1024 ** 2 },
      network: { bandwidthBytesPerSec: 12_000_000, delayMs: 10, lossPercent: 0.1 },
    });
  });
});

describe("stack file errors", () => {
  it('"25 100" in a file is reported at the line and column of that value, with the field path and the fix', () => {
    const file = stackFileWith(
      "cpumax",
      [
        "# 004's cpu.max, copied verbatim",
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        "    loadgen: { cpu: '1' }",
        "    sink:",
        '      cpu: "25 100"',
        "      memory: 2GiB",
        "",
      ].join("\n"),
    );
    const err = errorOf(file);
    expect(err.code).toBe("E_STACK_FIELD");
    expect(err.location).toBe(`${file}:7`);
    expect(err.field).toBe("config.ingestbench:hosts.sink.cpu");
    expect(err.message).toMatch(
      new RegExp(
        `^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:7:12: config\\.ingestbench:hosts\\.sink\\.cpu: "25 100" looks like a cgroup cpu\\.max`,
      ),
    );
    expect(err.message).toContain("the kernel wants microseconds, at least 1000");
    expect(err.message).toContain('write "25000 100000"');
  });

  it("reports every bad value, one per line, each at its own line", () => {
    const file = stackFileWith(
      "many",
      [
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        "    sink:",
        "      memory: 2Gb",
        "      disk:",
        "        iops: lots",
        "      network:",
        "        bandwidth: 12000",
        "  ingestbench:expiry: 4 hours",
        "",
      ].join("\n"),
    );
    const err = errorOf(file);
    const lines = err.message.split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      /:5:15: config\.ingestbench:hosts\.sink\.memory: "2Gb" is not a size \(lowercase "b" means bits/,
    );
    expect(lines[1]).toMatch(/:7:15: config\.ingestbench:hosts\.sink\.disk\.iops: "lots" is not an IOPS cap/);
    expect(lines[2]).toMatch(
      /:9:20: config\.ingestbench:hosts\.sink\.network\.bandwidth: 12000 is a bare number.*12000KB\/s/,
    );
    expect(lines[3]).toMatch(/:10:23: config\.ingestbench:expiry: "4 hours" is not a duration/);
    expect(err.location).toBe(`${file}:5`);
  });

  it("rejects unknown keys, naming the key at its line and listing the allowed ones", () => {
    const file = stackFileWith(
      "unknown",
      [
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        "    sink:",
        "      cpu: '0.25'",
        "      swap: 1GiB",
        "      disk: { iops: 3000, burst: 10 }",
        "  ingestbench:region: westeurope",
        "",
      ].join("\n"),
    );
    const err = errorOf(file);
    const lines = err.message.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /:6:7: config\.ingestbench:hosts\.sink\.swap: unknown key "swap"; allowed keys: cpu, memory, disk, network, pricePerHour, programs$/,
    );
    expect(lines[1]).toMatch(
      /:7:27: config\.ingestbench:hosts\.sink\.disk\.burst: unknown key "burst"; allowed keys: iops, readIops/,
    );
    expect(lines[2]).toMatch(
      /:8:3: config\.ingestbench:region: unknown key "ingestbench:region"; allowed keys: ingestbench:platform, ingestbench:hosts, ingestbench:expiry$/,
    );
    expect(err.field).toBe("config.ingestbench:hosts.sink.swap");
  });

  it("rejects bad platforms, bad host names, empty host lists, missing keys and conflicting disk caps", () => {
    const file = stackFileWith(
      "bad",
      [
        "config:",
        "  ingestbench:platform: kvm",
        "  ingestbench:hosts:",
        "    Sink: { cpu: '1' }",
        "    db:",
        "      disk: { iops: 3000, readIops: 100, tmpfs: 1GiB }",
        "",
      ].join("\n"),
    );
    const lines = errorOf(file).message.split("\n");
    expect(lines[0]).toMatch(
      /:2:25: config\.ingestbench:platform: invalid enum value\. Expected 'local' \| 'docker' \| 'azure', received 'kvm'/,
    );
    expect(
      lines.some((l) => /:6:37: config\.ingestbench:hosts\.db\.disk\.readIops: give either iops/.test(l)),
    ).toBe(true);
    expect(
      lines.some((l) => /:6:49: config\.ingestbench:hosts\.db\.disk\.tmpfs: a tmpfs is memory/.test(l)),
    ).toBe(true);
    expect(
      lines.some((l) => /:4:5: config\.ingestbench:hosts\.Sink: host name "Sink" must match/.test(l)),
    ).toBe(true);

    const empty = stackFileWith("empty", "config:\n  ingestbench:platform: local\n  ingestbench:hosts: {}\n");
    expect(errorOf(empty).message).toMatch(
      /:3:22: config\.ingestbench:hosts: a stack needs at least one host/,
    );

    const missing = stackFileWith("missing", "config:\n  ingestbench:platform: local\n");
    const err = errorOf(missing);
    expect(err.message).toMatch(/:2:3: config\.ingestbench:hosts: required, but missing/);
    expect(err.field).toBe("config.ingestbench:hosts");
  });

  it("turns YAML syntax errors into ConfigurationError with the line", () => {
    const file = stackFileWith(
      "syntax",
      "config:\n  ingestbench:platform: local\n  ingestbench:hosts:\n    sink: { cpu: '1'\n",
    );
    const err = errorOf(file);
    expect(err.code).toBe("E_YAML_SYNTAX");
    expect(err.location).toMatch(new RegExp(`^${file.replace(/[.]/g, "\\.")}:\\d+$`));
    expect(err.message).toContain("YAML syntax error");

    const dup = stackFileWith(
      "dup",
      "config:\n  ingestbench:platform: local\n  ingestbench:platform: docker\n",
    );
    const dupErr = errorOf(dup);
    expect(dupErr.code).toBe("E_YAML_SYNTAX");
    expect(dupErr.location).toBe(`${dup}:3`);
  });

  it("names the known stacks when a stack is not found", () => {
    const err = errorOf("no-such-stack", stacksDir);
    expect(err.code).toBe("E_STACK_NOT_FOUND");
    expect(err.message).toContain("local-quarter-core");
    const wrongName = path.join(tmp, "stack.yaml");
    writeFileSync(wrongName, "config: {}\n");
    expect(errorOf(wrongName).message).toMatch(/Pulumi\.<stack>\.yaml/);
  });
});

describe("azure stack files", () => {
  const azureBlock = [
    "  ingestbench:azure:",
    "    location: westeurope",
    "    allowFrom: 198.51.100.7/32",
    "    vmSizes: { loadgen: Standard_D2s_v5, sink: Standard_D4s_v5 }",
  ];

  it("loads the azure options: location, zone, allowFrom, one VM size per host, admin user, SSH key, data disk size", () => {
    const file = stackFileWith(
      "azure-ok",
      [
        "config:",
        "  ingestbench:platform: azure",
        "  ingestbench:hosts:",
        "    loadgen:",
        "    sink: { cpu: '1', disk: { iops: 6000, bandwidth: 140MB/s } }",
        "  ingestbench:azure:",
        "    location: westeurope",
        '    zone: "2"',
        "    allowFrom: 198.51.100.7/32",
        "    vmSizes: { loadgen: Standard_D2s_v5, sink: Standard_D4s_v5 }",
        "    adminUsername: bench",
        "    sshPublicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIabc user@host",
        "    dataDiskGiB: 128",
        "",
      ].join("\n"),
    );
    const s = loadPulumiStack(file);
    expect(s.spec.platform).toBe("azure");
    expect(s.platform.azure).toEqual({
      location: "westeurope",
      zone: "2",
      allowFrom: "198.51.100.7/32",
      vmSizes: { loadgen: "Standard_D2s_v5", sink: "Standard_D4s_v5" },
      adminUsername: "bench",
      sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIabc user@host",
      dataDiskGiB: 128,
    });
    expect(s.spec.hosts.sink?.requested).toEqual({ cpu: "1", disk: { iops: 6000, bandwidth: "140MB/s" } });
    expect(loadPulumiStack("local-quarter-core", stacksDir).platform.azure).toBeUndefined();
  });

  it("requires the azure block on azure stacks, and a VM size for every host and only for hosts", () => {
    const missing = stackFileWith(
      "azure-missing",
      "config:\n  ingestbench:platform: azure\n  ingestbench:hosts:\n    sink:\n",
    );
    expect(errorOf(missing).message).toMatch(
      /:1:1: config\.ingestbench:azure: an azure stack needs ingestbench:azure: \{ location, allowFrom \(your address, \/32\), vmSizes/,
    );

    const sizes = stackFileWith(
      "azure-sizes",
      [
        "config:",
        "  ingestbench:platform: azure",
        "  ingestbench:hosts:",
        "    loadgen:",
        "    collector:",
        "  ingestbench:azure:",
        "    location: westeurope",
        "    allowFrom: 198.51.100.7/32",
        "    vmSizes:",
        "      loadgen: Standard_D2s_v5",
        "      sink: Standard_D4s_v5",
        "",
      ].join("\n"),
    );
    const lines = errorOf(sizes).message.split("\n");
    expect(
      lines.some((l) =>
        /:10:7: config\.ingestbench:azure\.vmSizes: host "collector" has no VM size; give one, e\.g\. collector: Standard_D2s_v5/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(
      lines.some((l) =>
        /:11:13: config\.ingestbench:azure\.vmSizes\.sink: no host "sink" in ingestbench:hosts \(hosts: loadgen, collector\)/.test(
          l,
        ),
      ),
    ).toBe(true);
  });

  it("rejects a bad region, an open or malformed allowFrom, unknown VM sizes, keys and SSH keys, each at its line", () => {
    const file = stackFileWith(
      "azure-bad",
      [
        "config:",
        "  ingestbench:platform: azure",
        "  ingestbench:hosts:",
        "    loadgen:",
        "    sink:",
        "  ingestbench:azure:",
        "    location: West Europe",
        "    allowFrom: 0.0.0.0/0",
        "    vmSizes: { loadgen: Standard_D2s_v5, sink: Standard_B1s }",
        "    sshPublicKey: my key",
        "    adminUsername: root",
        "    region: westeurope",
        "",
      ].join("\n"),
    );
    const lines = errorOf(file).message.split("\n");
    const has = (re: RegExp) =>
      expect(
        lines.some((l) => re.test(l)),
        `${re} in\n${lines.join("\n")}`,
      ).toBe(true);
    has(/:7:15: config\.ingestbench:azure\.location: an Azure region name such as "westeurope"/);
    has(
      /:8:16: config\.ingestbench:azure\.allowFrom: "0\.0\.0\.0\/0" opens the stack to \/0: give the caller's address \(\/32, at most a \/24\)/,
    );
    has(
      /:9:48: config\.ingestbench:azure\.vmSizes\.sink: invalid enum value\. Expected 'Standard_D2s_v5' \| 'Standard_D4s_v5'/,
    );
    has(/:10:19: config\.ingestbench:azure\.sshPublicKey: an OpenSSH public key line/);
    has(/:11:20: config\.ingestbench:azure\.adminUsername: [Aa]zure rejects this admin user name/);
    has(
      /:12:5: config\.ingestbench:azure\.region: unknown key "region"; allowed keys: location, zone, allowFrom, vmSizes/,
    );

    const notCidr = stackFileWith(
      "azure-cidr",
      [
        "config:",
        "  ingestbench:platform: azure",
        "  ingestbench:hosts:",
        "    loadgen:",
        "  ingestbench:azure:",
        "    location: westeurope",
        "    allowFrom: 198.51.100.300",
        "    vmSizes: { loadgen: Standard_D2s_v5 }",
        "",
      ].join("\n"),
    );
    expect(errorOf(notCidr).message).toMatch(
      /:7:16: config\.ingestbench:azure\.allowFrom: "198\.51\.100\.300" is not an IPv4 CIDR/,
    );
  });

  it("reports a disk cap above the VM size's uncached cap, below Premium SSD v2's minimum, or split read/write, at the cap", () => {
    const file = stackFileWith(
      "azure-caps",
      [
        "config:",
        "  ingestbench:platform: azure",
        "  ingestbench:hosts:",
        "    loadgen:",
        "      disk: { readIops: 3000, writeIops: 4000 }",
        "    sink:",
        "      disk:",
        "        iops: 8000",
        "        bandwidth: 50MB/s",
        ...azureBlock,
        "",
      ].join("\n"),
    );
    const lines = errorOf(file).message.split("\n");
    const has = (re: RegExp) =>
      expect(
        lines.some((l) => re.test(l)),
        `${re} in\n${lines.join("\n")}`,
      ).toBe(true);
    has(
      /:5:25: config\.ingestbench:hosts\.loadgen\.disk\.readIops: readIops 3000 and writeIops 4000 differ: a Premium SSD v2 disk has one IOPS budget/,
    );
    has(
      /:8:15: config\.ingestbench:hosts\.sink\.disk\.iops: 8000 IOPS is above Standard_D4s_v5's uncached disk cap of 6400 IOPS/,
    );
    has(
      /:9:20: config\.ingestbench:hosts\.sink\.disk\.bandwidth: 50000000 B\/s is below Premium SSD v2's minimum of 125 MBps/,
    );
  });

  it("keeps the azure block off other platforms and the docker block off azure", () => {
    const onDocker = stackFileWith(
      "docker-azure",
      [
        "config:",
        "  ingestbench:platform: docker",
        "  ingestbench:hosts:",
        "    loadgen:",
        "    sink:",
        ...azureBlock,
        "",
      ].join("\n"),
    );
    expect(errorOf(onDocker).message).toMatch(
      /:7:5: config\.ingestbench:azure: ingestbench:azure applies to azure stacks only/,
    );
    const onLocal = stackFileWith(
      "local-azure",
      [
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        "    loadgen:",
        "    sink:",
        ...azureBlock,
        "",
      ].join("\n"),
    );
    expect(errorOf(onLocal).message).toMatch(
      /config\.ingestbench:azure: ingestbench:azure is for docker and azure stacks/,
    );
    const dockerOnAzure = stackFileWith(
      "azure-docker",
      [
        "config:",
        "  ingestbench:platform: azure",
        "  ingestbench:hosts:",
        "    loadgen:",
        "    sink:",
        ...azureBlock,
        "  ingestbench:docker: { blkioDevice: /dev/vda }",
        "",
      ].join("\n"),
    );
    expect(errorOf(dockerOnAzure).message).toMatch(
      /config\.ingestbench:docker: ingestbench:docker applies to docker stacks only/,
    );
  });
});

describe("ingestbench:cell (the scenario cell a docker or azure stack's components run)", () => {
  const head = [
    "config:",
    "  ingestbench:platform: docker",
    "  ingestbench:hosts:",
    "    loadgen:",
    "    collector:",
    "    sink:",
    "  ingestbench:components: { collector: fluentd, sink: griddb }",
  ];

  it("loads a cell written as a map or as the JSON text the provisioner sets, with its event and raw blocks", () => {
    const cell = {
      event: [
        { name: "host", type: "string", size: 8 },
        { name: "code", type: "int" },
      ],
      collector: {
        fluentd: {
          system: { workers: 2 },
          buffer: { "@type": "memory", chunk_limit_records: 5000, flush_thread_interval: 0.1 },
        },
      },
      sink: { griddb: { container: "fluentdStress" } },
    };
    const expected = {
      event: cell.event,
      collector: { name: "fluentd", config: cell.collector.fluentd },
      sink: { name: "griddb", config: { container: "fluentdStress" } },
    };
    const asMap = stackFileWith(
      "cell-map",
      [
        ...head,
        "  ingestbench:cell:",
        `    event: ${JSON.stringify(cell.event)}`,
        `    collector: ${JSON.stringify(cell.collector)}`,
        `    sink: ${JSON.stringify(cell.sink)}`,
        "",
      ].join("\n"),
    );
    expect(loadPulumiStack(asMap, tmp).platform.cell).toEqual(expected);
    // JSON text keeps 0.1 a number (pulumi config set --path would have made it the string "0.1")
    const asText = stackFileWith(
      "cell-text",
      [...head, `  ingestbench:cell: '${JSON.stringify(cell)}'`, ""].join("\n"),
    );
    expect(loadPulumiStack(asText, tmp).platform.cell).toEqual(expected);
    const none = stackFileWith(
      "cell-none",
      [
        ...head.slice(0, 6),
        "  ingestbench:components: { sink: clickhouse }",
        '  ingestbench:cell: { event: [{ name: msg, type: string }], collector: none, sink: { clickhouse: { version: "25.8" } } }',
        "",
      ].join("\n"),
    );
    expect(loadPulumiStack(none, tmp).platform.cell).toEqual({
      event: [{ name: "msg", type: "string" }],
      collector: null,
      sink: { name: "clickhouse", config: { version: "25.8" } },
    });
    expect(loadPulumiStack("docker-4c4g", stacksDir).platform.cell).toBeUndefined();
  });

  it("checks the collector's parameters with its renderer's schema and the sink's with its own, each at its line", () => {
    const file = stackFileWith(
      "cell-bad",
      [
        ...head,
        "  ingestbench:cell:",
        "    event: [{ name: Host, type: string }]",
        "    collector:",
        "      fluentd:",
        "        buffer: { chunk_limit_records: -5 }",
        "    sink: { griddb: { containerType: HEAP } }",
        "",
      ].join("\n"),
    );
    const msg = errorOf(file).message;
    // the scenario's own event-field schema (core/events/field-schema.ts), so the scenario's wording
    expect(msg).toMatch(/:9:21: config\.ingestbench:cell\.event\.0\.name: field names must match/);
    expect(msg).toMatch(
      /:12:40: config\.ingestbench:cell\.collector\.fluentd\.buffer\.chunk_limit_records: number must be greater than 0/,
    );
    expect(msg).toMatch(/:13:38: config\.ingestbench:cell\.sink\.griddb\.containerType: invalid enum value/);
  });

  it("refuses a component that is not of the role, a cell that is not what the hosts run, and the key on a local stack", () => {
    const kind = stackFileWith(
      "cell-kind",
      [
        ...head,
        "  ingestbench:cell: { event: [{ name: msg, type: string }], collector: { griddb: {} }, sink: { griddb: {} } }",
        "",
      ].join("\n"),
    );
    expect(errorOf(kind).message).toMatch(
      /config\.ingestbench:cell\.collector\.griddb: "griddb" is not a collector of the catalog \(infra\/catalog\.ts\); collectors: fluent-bit, vector, fluentd, syslog-ng/,
    );
    // a misspelt name: the nearest component of the role
    const typo = stackFileWith(
      "cell-typo",
      [
        ...head,
        "  ingestbench:cell: { event: [{ name: msg, type: string }], collector: { fluentdd: {} }, sink: { griddb: {} } }",
        "",
      ].join("\n"),
    );
    expect(errorOf(typo).message).toMatch(
      /:8:\d+: config\.ingestbench:cell\.collector\.fluentdd: "fluentdd" is not a collector of the catalog .*; did you mean "fluentd"\?$/m,
    );
    const other = stackFileWith(
      "cell-other",
      [
        ...head,
        "  ingestbench:cell: { event: [{ name: msg, type: string }], collector: { vector: {} }, sink: { clickhouse: {} } }",
        "",
      ].join("\n"),
    );
    const otherMsg = errorOf(other).message;
    expect(otherMsg).toMatch(
      /:8:\d+: config\.ingestbench:cell\.collector: the cell's collector vector is not what the collector hosts run \(ingestbench:components: collector: fluentd, sink: griddb\)/,
    );
    expect(otherMsg).toMatch(
      /config\.ingestbench:cell\.sink: the cell's sink clickhouse is not what the sink hosts run/,
    );
    const noCollector = stackFileWith(
      "cell-nocoll",
      [
        ...head,
        "  ingestbench:cell: { event: [{ name: msg, type: string }], collector: none, sink: { griddb: {} } }",
        "",
      ].join("\n"),
    );
    expect(errorOf(noCollector).message).toMatch(
      /config\.ingestbench:cell\.collector: the cell has no collector, but hosts run one/,
    );
    const local = stackFileWith(
      "cell-local",
      [
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        "    loadgen:",
        "    sink:",
        "  ingestbench:cell: { event: [{ name: msg, type: string }], collector: none, sink: { postgres: {} } }",
        "",
      ].join("\n"),
    );
    expect(errorOf(local).message).toMatch(
      /config\.ingestbench:cell: ingestbench:cell is for docker and azure stacks/,
    );
  });
});
