/**
 * The docker CLI spelling of the docker platform's ContainerLimitArgs (infra/azure/docker-run.ts) and the Premium
 * SSD v2 provisioning of a host's disk caps (infra/azure/disk.ts). The quoting is checked by real bash.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { cloudConfig, cloudInitScripts, vmBuildDir, vmConfigPath } from "../../../infra/azure/cloud-init.ts";
import { premiumV2Disk } from "../../../infra/azure/disk.ts";
import { dockerRunLine, limitFlags, shellQuote } from "../../../infra/azure/docker-run.ts";
import { containerLimits } from "../../../infra/docker/flags.ts";

describe("docker run flags from the docker platform's translation", () => {
  it("spells every limit argument as its docker run flag", () => {
    const { args } = containerLimits(
      {
        name: "sink",
        requested: {},
        limits: {
          cpu: { quotaUs: 50000, periodUs: 100000 },
          memoryBytes: 3 * 1024 ** 3,
          disk: { readIops: 100, writeIops: 200, readBytesPerSec: 1_000_000, writeBytesPerSec: 2_000_000 },
        },
      },
      "/dev/sdc",
      "/data",
    );
    expect(limitFlags(args)).toEqual([
      "--cpu-period=100000",
      "--cpu-quota=50000",
      "--memory=3072m",
      "--memory-swap=3072m",
      "--device-read-iops=/dev/sdc:100",
      "--device-write-iops=/dev/sdc:200",
      "--device-read-bps=/dev/sdc:1000000",
      "--device-write-bps=/dev/sdc:2000000",
    ]);
    const tmpfs = containerLimits(
      { name: "c", requested: {}, limits: { disk: { tmpfsBytes: 1024 } } },
      undefined,
      "/buf",
    ).args;
    expect(limitFlags(tmpfs)).toEqual(["--tmpfs=/buf:rw,size=1024,mode=1777"]);
    expect(limitFlags({})).toEqual([]);
  });

  it("quotes every argument so bash hands it over unchanged (checked with real bash)", () => {
    const nasty = [
      "plain",
      "with space",
      "it's",
      'dq"x',
      "$HOME",
      "a;b",
      "multi\nline",
      "-Xms1024m -Xmx1024m",
    ];
    const line = ["printf", "%s\\0", ...nasty].map(shellQuote).join(" ");
    const out = execFileSync("bash", ["-c", line], { encoding: "utf8" });
    expect(out.split("\0").slice(0, -1)).toEqual(nasty);
    const run = dockerRunLine({
      name: "n",
      image: "img:1",
      limits: {},
      labels: { k: "v w" },
      env: { A: "x y" },
      command: ["-c", "echo 'hi'"],
    });
    expect(run).toBe(
      "docker run -d --name=n --network=host --restart=no '--env=A=x y' '--label=k=v w' img:1 -c 'echo '\\''hi'\\'''",
    );
    expect(() => execFileSync("bash", ["-n", "-c", run])).not.toThrow();
  });
});

describe("config files on the VM", () => {
  it("mounts each written file read-only at its container path; cloud-init writes files before the scripts run", () => {
    const run = dockerRunLine({
      name: "c",
      image: "fluent/fluentd:v1.12.0-debian-1.0",
      limits: {},
      labels: {},
      volume: ["c-data", "/fluentd/buffer"],
      files: [[vmConfigPath("/fluentd/etc/fluent.conf"), "/fluentd/etc/fluent.conf"]],
    });
    expect(run).toBe(
      "docker run -d --name=c --network=host --restart=no --volume=c-data:/fluentd/buffer --volume=/opt/ingestbench/etc/fluentd/etc/fluent.conf:/fluentd/etc/fluent.conf:ro fluent/fluentd:v1.12.0-debian-1.0",
    );
    const scripts = cloudInitScripts({
      images: [],
      builds: [["ingestbench/fluentd-griddb:1", vmBuildDir("ingestbench/fluentd-griddb")]],
      volumes: [],
      dockerRuns: [run],
    });
    expect(scripts["containers.sh"]).toContain(
      "docker build --quiet --tag ingestbench/fluentd-griddb:1 /opt/ingestbench/build/ingestbench-fluentd-griddb\n",
    );
    expect(() => execFileSync("bash", ["-n", "-c", scripts["containers.sh"]])).not.toThrow();
    const doc = parseYaml(
      cloudConfig(scripts, [
        {
          path: "/opt/ingestbench/etc/fluentd/etc/fluent.conf",
          content: "<system>\n  workers 2\n</system>\n",
          permissions: "0644",
        },
      ]).slice("#cloud-config\n".length),
    ) as {
      write_files: Array<{ path: string; content: string; permissions: string }>;
    };
    expect(doc.write_files.map((f) => [f.path, f.permissions])).toEqual([
      ["/opt/ingestbench/etc/fluentd/etc/fluent.conf", "0644"],
      ["/opt/ingestbench/data-disk.sh", "0755"],
      ["/opt/ingestbench/install.sh", "0755"],
      ["/opt/ingestbench/containers.sh", "0755"],
    ]);
    expect(doc.write_files[0]!.content).toBe("<system>\n  workers 2\n</system>\n");
  });
});

describe("Premium SSD v2 provisioning of a host's disk caps", () => {
  it("provisions the caps as asked (MBps rounded down), else the VM size's uncached cap", () => {
    expect(
      premiumV2Disk(
        { readIops: 3000, writeIops: 3000, readBytesPerSec: 125_829_120, writeBytesPerSec: 125_829_120 },
        "Standard_E2bs_v5",
      ),
    ).toMatchObject({
      sizeGiB: 64,
      diskIOPSReadWrite: 3000,
      diskMBpsReadWrite: 125,
    });
    expect(premiumV2Disk(undefined, "Standard_D4s_v5")).toMatchObject({
      diskIOPSReadWrite: 6400,
      diskMBpsReadWrite: 145,
    });
    // 8 GiB allows 4000 IOPS (500 per GiB): the D8s_v5's 12800 cannot all be provisioned
    expect(premiumV2Disk(undefined, "Standard_D8s_v5", 8)).toMatchObject({
      diskIOPSReadWrite: 4000,
      diskMBpsReadWrite: 290,
    });
  });
});
