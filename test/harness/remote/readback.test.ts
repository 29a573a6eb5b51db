/**
 * Limits read back on the REAL Docker engine (scripts/docker-engine.sh), never from what was handed to Docker: a
 * container created with 0.25 CPUs, 64 MiB and device IOPS/bps caps reads back exactly those from docker inspect and
 * from its own cgroup files; a limit changed behind the deployment's back (`docker update`, `tc qdisc change`) is a
 * mismatch with `enforced: false`. Also the OOM sources: a process over the memory cap is counted in the cgroup,
 * and a main process over it shows in State.OOMKilled.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import type { AppliedLimits } from "../../../core/limits.ts";
import { cgroupReadings, parseCgroupFiles, readBackLimits } from "../../../harness/remote/readback.ts";
import { checkOom, readOomCounter } from "../../../harness/remote/oom.ts";
import { dockerExecShell } from "../../../harness/remote/shell.ts";
import { shaperScript } from "../../../infra/docker/shaper.ts";
import { oomMessage } from "../../../harness/runner/site.ts";
import { useCleanups } from "../../helpers/cleanups.ts";
import {
  BASE_IMAGE,
  dataRootDevice,
  DOCKER_ENV,
  engine,
  runContainer,
  SHAPER_IMAGE,
} from "../../helpers/docker-engine.ts";

const MiB = 1024 * 1024;
const cleanups = useCleanups();
const track = (f: () => Promise<unknown>) => void cleanups.push(f);
const name = (what: string) => `ib-test-${process.pid}-${what}`;
const shell = (host: string, container: string) => dockerExecShell(host, container, { env: DOCKER_ENV });
const dockerCli = (...args: string[]) => execFileSync("docker", args, { env: DOCKER_ENV, encoding: "utf8" });

/** What infra/docker/flags.ts hands over for 0.25 cores, 64 MiB, 3000 read IOPS, 2000 write IOPS, 120 MiB/s writes. */
function handed(device: string): AppliedLimits {
  return {
    requested: { cpu: "0.25", memory: "64MiB", readIops: 3000, writeIops: 2000, writeBps: "120MiB/s" },
    applied: {
      cfsPeriodUs: 100_000,
      cfsQuotaUs: 25_000,
      memoryBytes: 64 * MiB,
      memorySwapBytes: 64 * MiB,
      readIops: 3000,
      writeIops: 2000,
      writeBytesPerSec: 120 * MiB,
      blkioDevice: device,
    },
    enforced: true,
    notes: [
      "applied = the values handed to the Docker engine; the provisioner reads them back with docker inspect",
    ],
  };
}

describe("limits read back from a real container (docker inspect + its cgroup)", () => {
  it("--cpus 0.25 --memory 64m and device IOPS/bps caps read back exactly, each value with its source", async () => {
    const docker = await engine();
    const dev = dataRootDevice();
    const c = name("caps");
    await runContainer(
      docker,
      {
        name: c,
        Image: BASE_IMAGE,
        Cmd: ["sleep", "600"],
        HostConfig: {
          NanoCpus: 250_000_000,
          Memory: 64 * MiB,
          MemorySwap: 64 * MiB,
          BlkioDeviceReadIOps: [{ Path: dev.path, Rate: 3000 }],
          BlkioDeviceWriteIOps: [{ Path: dev.path, Rate: 2000 }],
          BlkioDeviceWriteBps: [{ Path: dev.path, Rate: 120 * MiB }],
        },
      },
      track,
    );
    const got = await readBackLimits(shell("sink", c), handed(dev.path));
    expect(got.mismatches).toEqual([]);
    expect(got.enforced).toBe(true);
    expect(got.applied).toMatchObject({
      cfsQuotaUs: 25_000,
      cfsPeriodUs: 100_000,
      memoryLimitBytes: 64 * MiB,
      readIops: 3000,
      writeIops: 2000,
      writeBytesPerSec: 120 * MiB,
      blkioDevice: dev.majorMinor,
      "docker.NanoCpus": 250_000_000,
      "docker.Memory": 64 * MiB,
      "docker.MemorySwap": 64 * MiB,
      "docker.BlkioDeviceReadIOps": 3000,
      "docker.BlkioDeviceReadIOpsPath": dev.path,
    });
    // cgroup v1 here: memsw = memory + swap = the memory cap (no swap)
    if (got.sources!.cfsQuotaUs!.startsWith("cgroup v1"))
      expect(got.applied.memorySwapLimitBytes).toBe(64 * MiB);
    expect(got.sources!.cfsQuotaUs).toMatch(
      new RegExp(`^cgroup v[12] /sys/fs/cgroup/.*(cpu\\.cfs_quota_us|cpu\\.max) in ${c}$`),
    );
    expect(got.sources!.readIops).toMatch(/blkio\.throttle\.read_iops_device|io\.max/);
    expect(got.sources!["docker.NanoCpus"]).toBe(`docker inspect ${c} HostConfig.NanoCpus`);
    expect(got.handed).toEqual(handed(dev.path).applied);
    expect(got.notes.some((n) => n.startsWith("applied = the values handed"))).toBe(false);
  });

  it("a limit changed after the deploy (docker update) is a mismatch: enforced false, the reason names both sources", async () => {
    const docker = await engine();
    const c = name("tampered");
    await runContainer(
      docker,
      {
        name: c,
        Image: BASE_IMAGE,
        Cmd: ["sleep", "600"],
        HostConfig: { NanoCpus: 250_000_000, Memory: 64 * MiB, MemorySwap: 64 * MiB },
      },
      track,
    );
    const asked: AppliedLimits = {
      requested: {},
      applied: { cfsPeriodUs: 100_000, cfsQuotaUs: 25_000, memoryBytes: 64 * MiB, memorySwapBytes: 64 * MiB },
      enforced: true,
      notes: [],
    };
    expect((await readBackLimits(shell("sink", c), asked)).enforced).toBe(true);

    dockerCli("update", "--cpus", "0.5", "--memory", "96m", "--memory-swap", "96m", c);
    const got = await readBackLimits(shell("sink", c), asked);
    expect(got.enforced).toBe(false);
    expect(got.applied).toMatchObject({
      cfsQuotaUs: 50_000,
      memoryLimitBytes: 96 * MiB,
      "docker.NanoCpus": 500_000_000,
      "docker.Memory": 96 * MiB,
    });
    const m = got.mismatches!.join("\n");
    expect(m).toMatch(/CPU: asked 0\.25 cores .*docker inspect says 0\.5/);
    expect(m).toMatch(/CPU: asked 0\.25 cores, the cgroup says 0\.5 \(50000\/100000/);
    expect(m).toMatch(
      new RegExp(
        `memoryBytes: asked ${64 * MiB}, read back ${96 * MiB} \\(docker inspect ${c} HostConfig.Memory\\)`,
      ),
    );
    expect(m).toMatch(new RegExp(`memoryBytes: asked ${64 * MiB}, read back ${96 * MiB} \\(cgroup v[12] `));
    expect(got.notes.filter((n) => n.startsWith("NOT enforced as asked: ")).length).toBe(
      got.mismatches!.length,
    );
  });

  it("the tc rates are read in the shaper's namespace (tc -j qdisc, eth0 and the ingress ifb): as asked, then changed behind its back", async () => {
    const docker = await engine();
    const c = name("shaped");
    await runContainer(docker, { name: c, Image: BASE_IMAGE, Cmd: ["sleep", "600"] }, track);
    // the shaper as infra/docker/host.ts runs it (its own script): NET_ADMIN, in the host container's network namespace
    await runContainer(
      docker,
      {
        name: `${c}-shaper`,
        Image: SHAPER_IMAGE,
        Entrypoint: ["/bin/sh", "-c"],
        Cmd: [shaperScript({ rateBytesPerSec: 12_288_000, burstBytes: 131_072 })],
        HostConfig: { NetworkMode: `container:${c}`, CapAdd: ["NET_ADMIN"] },
      },
      track,
    );
    const asked: AppliedLimits = {
      requested: { bandwidth: "96Mbit" },
      applied: {
        tbfRateBytesPerSec: 12_288_000,
        tbfBurstBytes: 131_072,
        ingressTbfRateBytesPerSec: 12_288_000,
      },
      enforced: true,
      notes: [],
    };
    let got = await readBackLimits(shell("sink", c), asked, { shaper: `${c}-shaper` });
    for (let i = 0; i < 20 && got.mismatches!.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 250)); // the shaper's script may not have run yet
      got = await readBackLimits(shell("sink", c), asked, { shaper: `${c}-shaper` });
    }
    expect(got.mismatches).toEqual([]);
    expect(got.applied.tbfRateBytesPerSec).toBe(12_288_000);
    expect(got.sources!.tbfRateBytesPerSec).toBe(`tc -j qdisc show dev eth0 in ${c}-shaper`);
    expect(got.applied.ingressTbfRateBytesPerSec).toBe(12_288_000);
    expect(got.sources!.ingressTbfRateBytesPerSec).toBe(`tc -j qdisc show dev ifb0 in ${c}-shaper`);

    dockerCli(
      "exec",
      `${c}-shaper`,
      "tc",
      "qdisc",
      "change",
      "dev",
      "eth0",
      "root",
      "handle",
      "1:",
      "tbf",
      "rate",
      "50mbit",
      "burst",
      "131072",
      "latency",
      "50ms",
    );
    got = await readBackLimits(shell("sink", c), asked, { shaper: `${c}-shaper` });
    expect(got.enforced).toBe(false);
    expect(got.mismatches).toEqual([
      `tbfRateBytesPerSec: asked 12288000, read back 6250000 (tc -j qdisc show dev eth0 in ${c}-shaper)`,
    ]);
  });

  it("no engine answer for the container: the handed values stay, marked not read back and not enforced", async () => {
    await engine();
    const got = await readBackLimits(shell("sink", name("absent")), {
      requested: {},
      applied: { memoryBytes: 64 * MiB },
      enforced: true,
      notes: [],
    });
    expect(got.enforced).toBe(false);
    expect(got.applied).toEqual({ memoryBytes: 64 * MiB });
    expect(got.notes.join("\n")).toMatch(
      /limits NOT read back \(docker inspect ib-test-\d+-absent failed: .*No such container/,
    );
  });
});

describe("cgroup v2 files (cpu.max, memory.max, memory.swap.max, io.max, memory.events) as a container sees them", () => {
  it("parses the v2 layout the same way (this machine is cgroup v1: the files are the kernel's documented formats)", () => {
    const out = [
      "== version",
      "v2",
      "== /sys/fs/cgroup/cpu.max",
      "25000 100000",
      "== /sys/fs/cgroup/memory.max",
      "67108864",
      "== /sys/fs/cgroup/memory.swap.max",
      "0",
      "== /sys/fs/cgroup/io.max",
      "254:0 rbps=max wbps=125829120 riops=3000 wiops=max",
      "== /sys/fs/cgroup/memory.events",
      "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1",
    ].join("\n");
    const r = cgroupReadings(parseCgroupFiles(out), "c");
    expect(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.value]))).toEqual({
      cfsQuotaUs: 25000,
      cfsPeriodUs: 100000,
      memoryLimitBytes: 67108864,
      memorySwapLimitBytes: 67108864,
      writeBytesPerSec: 125829120,
      readIops: 3000,
      blkioDevice: "254:0",
    });
    expect(r.cfsQuotaUs!.source).toBe("cgroup v2 /sys/fs/cgroup/cpu.max in c");
  });
});

describe("OOM kills under a real memory cap", () => {
  it("a process over the cap is counted in the container's cgroup (memory.oom_control oom_kill), the container keeps running", async () => {
    const docker = await engine();
    const c = name("oom-child");
    await runContainer(
      docker,
      {
        name: c,
        Image: BASE_IMAGE,
        Cmd: ["sleep", "600"],
        HostConfig: { Memory: 16 * MiB, MemorySwap: 16 * MiB },
      },
      track,
    );
    const sh = shell("sink", c);
    const before = await readOomCounter(sh);
    expect(before?.count).toBe(0);
    expect(await checkOom(sh, before!.count, 16 * MiB)).toBeNull();
    // tail keeps the "line" of /dev/zero (no newline ever) in memory until the kernel kills it
    await sh.run("sh", ["-c", "tail /dev/zero; echo exit $?"], { timeoutMs: 60_000 });
    const k = await checkOom(sh, before!.count, 16 * MiB);
    expect(k).not.toBeNull();
    expect(k!.oomKilled).toBe(false);
    expect(k!.kills).toBeGreaterThanOrEqual(1);
    expect(k!.evidence).toMatch(
      /^cgroup v[12] \/sys\/fs\/cgroup\/memory.*(memory\.oom_control|memory\.events) oom_kill [1-9]/,
    );
    expect(oomMessage([k!])).toMatch(
      new RegExp(
        `^host sink: the kernel OOM-killed [1-9]\\d* process\\(es\\) in ${c} under its memory cap of ${16 * MiB} bytes`,
      ),
    );
  });

  it("a main process over the cap: docker inspect State.OOMKilled, or the engine's oom event before the 137 exit, is the evidence once the container is gone", async () => {
    const docker = await engine();
    const c = name("oom-main");
    // tail starts a second after the container (exec: it is the main process): the engine watches a container's
    // OOMs from after its start, and a tail started at once reached 16 MiB before that in one CI run (the kernel's
    // log named the kill; the engine had neither State.OOMKilled nor an oom event)
    const container = await runContainer(
      docker,
      {
        name: c,
        Image: BASE_IMAGE,
        Cmd: ["sh", "-c", "sleep 1; exec tail /dev/zero"],
        HostConfig: { Memory: 16 * MiB, MemorySwap: 16 * MiB },
      },
      track,
    );
    await container.wait();
    // containerd may deliver the OOM event after the exit (harness/remote/oom.ts): the engine's event log has it,
    // possibly a moment after the wait ends, so the check is asked again for up to 10 s
    let k = await checkOom(shell("sink", c), 0, 16 * MiB);
    for (let i = 0; k === null && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      k = await checkOom(shell("sink", c), 0, 16 * MiB);
    }
    expect(
      k,
      `docker inspect State: ${dockerCli("inspect", "-f", "{{json .State}}", c).trim()}`,
    ).toMatchObject({ host: "sink", container: c });
    // State.OOMKilled when the engine had the OOM event first; else the event log's count of OOM kills
    if (k!.oomKilled) {
      expect(k).toMatchObject({
        kills: null,
        evidence: `docker inspect ${c} State.OOMKilled true (status exited)`,
      });
      expect(oomMessage([k!])).toContain("OOM-killed the container's main process");
    } else {
      expect(k).toMatchObject({
        kills: 1,
        evidence: `docker events ${c}: 1 oom, then exit code 137 (State.OOMKilled false: the engine had the exit before the OOM event)`,
      });
      expect(oomMessage([k!])).toContain("OOM-killed 1 process(es)");
    }
  });
});
