/**
 * Remote observer. The script is run for real by `sh` on this machine through a local ObservedShell (execa), the
 * stand-in for `docker exec`/SSH: against a real cgroup v1 test group (busy loop under a 50 % CFS quota, direct IO,
 * loopback traffic), against this machine's own cgroup root (v1 detection), and against a temporary directory laid
 * out like a container's cgroup2 root (this machine's cgroup2 mount has no controllers). Parsers are checked
 * against the kernel's documented formats, named in each test. Needs root: as another user it fails, never skips.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { ProvisioningError } from "../../../core/errors.ts";
import { parseTaskSchedstatLines } from "../../../core/schedstat.ts";
import { createRemoteObserver, type ObservedShell } from "../../../harness/observers/remote.ts";
import {
  blockDeviceOf,
  cgroupProcsFiles,
  enableV1IoAccounting,
  listCgroupPids,
  parseCgroupUsage,
  removeHostCgroup,
} from "../../../infra/local/cgroup.ts";
import { parseProcNetDev } from "../../../infra/local/netns.ts";
import type { CgroupPaths } from "../../../core/hosts.ts";
import { useCleanups } from "../../helpers/cleanups.ts";

const cleanups = useCleanups();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const MiB = 1024 * 1024;

/** Runs the observer's command on this machine, as `docker exec` would run it in a container. */
function localShell(host: string): ObservedShell {
  return {
    host,
    async run(command, args, opts) {
      return (await execa(command, args, { timeout: opts?.timeoutMs })).stdout;
    },
  };
}

async function tmpDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A real v1 test cgroup /sys/fs/cgroup/{cpu,cpuacct,memory,blkio}/ingestbench-test-<rand>, removed after the test. */
async function testCgroup(): Promise<CgroupPaths> {
  const name = `ingestbench-test-${randomBytes(3).toString("hex")}`;
  const dirs: Record<string, string> = {};
  // Registered before mkdir so a failure halfway still removes what was made (processes are killed first).
  cleanups.push(async () => {
    await removeHostCgroup({ version: "v1", dirs }, { graceMs: 500 });
    const left = [];
    for (const d of Object.values(dirs))
      if (
        await fs.stat(d).then(
          () => true,
          () => false,
        )
      )
        left.push(d);
    expect(left, "test cgroup directories left behind").toEqual([]);
  });
  for (const c of ["cpu", "cpuacct", "memory", "blkio"]) {
    const dir = path.join("/sys/fs/cgroup", c, name);
    await fs.mkdir(dir, { recursive: true });
    dirs[c] = dir;
  }
  return { version: "v1", dirs };
}

/** Start `sh -c script` after it joined the cgroup; killed after the test. */
function spawnInCgroup(paths: CgroupPaths, script: string): ChildProcess {
  const join = cgroupProcsFiles(paths)
    .map((f) => `echo $$ > '${f}'`)
    .join("; ");
  const child = spawn("sh", ["-c", `${join}; ${script}`], { stdio: ["ignore", "pipe", "inherit"] });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await gone;
    }
  });
  return child;
}

async function waitForLine(child: ChildProcess, want: string, timeoutMs = 60_000): Promise<void> {
  let seen = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "${want}" from child within ${timeoutMs} ms: ${seen}`)),
      timeoutMs,
    );
    child.stdout?.on("data", (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(want)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`child exited (${code}) before "${want}"`)));
  });
}

/** Push `bytes` through a TCP connection over 127.0.0.1 and wait until the server has read them all. */
async function loopbackTraffic(bytes: number): Promise<void> {
  let received = 0;
  const server = net.createServer((sock) => sock.on("data", (d) => (received += d.length)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const port = (server.address() as net.AddressInfo).port;
    const client = net.connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => client.once("connect", resolve).once("error", reject));
    await new Promise<void>((resolve) => client.end(Buffer.alloc(bytes, 0x61), resolve));
    const start = Date.now();
    while (received < bytes && Date.now() - start < 10_000) await sleep(10);
    expect(received).toBe(bytes);
  } finally {
    server.close();
  }
}

describe("remote observer over a local shell (real cgroup v1, real sh, real /proc/net/dev)", () => {
  it("a busy loop under cfs_quota 50000/100000 reads ≤ 0.5 cores (≈0.5 and mostly throttled unless the machine is contended); direct IO, memory and loopback traffic show", async () => {
    const cg = await testCgroup();
    const cpu = cg.dirs.cpu as string;
    await fs.writeFile(path.join(cpu, "cpu.cfs_period_us"), "100000");
    await fs.writeFile(path.join(cpu, "cpu.cfs_quota_us"), "50000");
    // ~4 MB held in a shell variable (charged to the group after joining), then spin while the test process lives
    // (so an interrupted test leaves no spinning process behind).
    const loop = spawnInCgroup(
      cg,
      `x=$(head -c 4000000 /dev/zero | tr '\\0' a); echo ready; while kill -0 $PPID 2>/dev/null; do :; done`,
    );
    await waitForLine(loop, "ready");
    expect(await listCgroupPids(cg)).toContain(loop.pid);

    const observer = createRemoteObserver([localShell("sink")], {
      cappedHosts: new Set(["sink"]),
      interface: "lo",
      cgroupDirs: { sink: cg },
    });
    // The machine's own cgroup root, version detected by the script (v1 here): sees at least the busy loop.
    const machine = createRemoteObserver([localShell("machine")], {
      cappedHosts: new Set(),
      interface: "lo",
    });
    expect(await observer.read()).toBeNull();
    expect(await machine.read()).toBeNull();

    const data = await tmpDir("ib-remote-obs-");
    // the group counts the data dir's disk as a local host's does (its blk-throttle set up, infra/local/cgroup.ts
    // enableV1IoAccounting): on a machine where nothing had throttled that disk yet, the writes read as 0
    const { device } = await blockDeviceOf(data);
    expect(device).toBeDefined();
    expect(await enableV1IoAccounting(cg.dirs.blkio!, device!)).toBeNull();
    const io = spawnInCgroup(
      cg,
      `dd if=/dev/zero of='${data}/f' bs=64k count=32 oflag=direct 2>/dev/null && dd if='${data}/f' of=/dev/null bs=64k iflag=direct 2>/dev/null && echo done`,
    );
    await Promise.all([waitForLine(io, "done"), loopbackTraffic(4 * MiB)]);
    await sleep(1500);

    const w = await observer.read();
    const m = await machine.read();
    const h = w?.hosts.sink;
    expect(h).toBeDefined();
    if (!w || !h || !m?.hosts.machine) throw new Error("no window");
    const dtS = w.dtMs / 1000;
    expect(w.dtMs).toBeGreaterThan(1400);
    const mh = m.hosts.machine;
    // The quota holds whatever else runs; the loop reaches it only when the machine has a free half core, which the
    // machine's own reading in the same window tells (less than 0.6 of a core idle: it was contended).
    expect(h.cpuCores).toBeLessThan(0.6);
    const contended = mh.cpuCores > os.cpus().length - 0.6;
    if (contended) {
      expect(h.cpuCores).toBeGreaterThan(0);
    } else {
      expect(h.cpuCores).toBeGreaterThan(0.3);
      expect(h.throttledShare).toBeGreaterThan(0.5);
      expect(h.throttledMs).toBeGreaterThan(0);
    }
    expect(h.periods).toBeGreaterThanOrEqual(10);
    expect(h.memoryBytes).toBeGreaterThan(4_000_000);
    expect(h.memoryPeakBytes).toBeGreaterThanOrEqual(h.memoryBytes);
    expect(h.memoryWorkingSetBytes).toBeLessThanOrEqual(h.memoryBytes);
    // Only this test's processes are in the group: exactly 32 direct 64 KiB writes; reads also fetch binaries. The
    // counters may show them a window late on a busy machine: windows are summed until they do (bounded, 30 s).
    const blk = {
      writeBytes: h.ioWriteBytesPerSec * dtS,
      writeOps: h.ioWriteOpsPerSec * dtS,
      readBytes: h.ioReadBytesPerSec * dtS,
    };
    for (const until = Date.now() + 30_000; blk.writeBytes < 2 * MiB - 1 && Date.now() < until;) {
      await sleep(500);
      const later = await observer.read();
      const lh = later?.hosts.sink;
      if (!later || !lh) continue;
      blk.writeBytes += lh.ioWriteBytesPerSec * (later.dtMs / 1000);
      blk.writeOps += lh.ioWriteOpsPerSec * (later.dtMs / 1000);
      blk.readBytes += lh.ioReadBytesPerSec * (later.dtMs / 1000);
    }
    expect(blk.writeBytes).toBeCloseTo(2 * MiB, -2);
    expect(blk.writeOps).toBeGreaterThanOrEqual(31.9);
    expect(blk.readBytes).toBeGreaterThanOrEqual(2 * MiB - 1);
    expect(blk.readBytes).toBeLessThan(12 * MiB);
    // lo carries other tests' traffic too: lower bounds only (payload on both directions of lo).
    expect(h.netRxBytesPerSec * dtS).toBeGreaterThanOrEqual(4 * MiB);
    expect(h.netTxBytesPerSec * dtS).toBeGreaterThanOrEqual(4 * MiB);
    expect(h.netRxPacketsPerSec * dtS).toBeGreaterThanOrEqual(1);
    expect(h.netTxPacketsPerSec * dtS).toBeGreaterThanOrEqual(1);
    expect(mh.throttledShare).toBeNull();
    expect(mh.cpuCores).toBeGreaterThan(h.cpuCores * 0.9); // the root group contains the test group
    expect(mh.cpuCores).toBeLessThan(os.cpus().length + 0.2);
    expect(mh.memoryBytes).toBeGreaterThan(h.memoryBytes);
    expect(mh.netRxBytesPerSec * (m.dtMs / 1000)).toBeGreaterThanOrEqual(4 * MiB);
    console.log(
      `remote observer (v1 test cgroup, quota 0.5): ${JSON.stringify({ dtMs: Math.round(w.dtMs), ...h })}; machine cpuCores ${mh.cpuCores.toFixed(3)}${contended ? " (contended)" : ""}; direct IO ${JSON.stringify(blk)}`,
    );
  });
});

describe("remote observer: run delay of the host's tasks (real sh, real /proc/<pid>/task/<tid>/schedstat)", () => {
  it("two busy loops pinned to one CPU wait for it: the window's run delay and contention show the wait", async () => {
    // through a local shell the "container" is this machine, so every task on it counts; the two loops sharing
    // CPU 0 alone wait about half of each second each, whatever else runs, so a lower bound holds under any load
    // pure CPU (no forks: a shell loop spends its time waiting for `date` children, not runnable), bounded at 30 s
    const loops = [0, 1].map(() =>
      spawn(
        "taskset",
        ["-c", "0", process.execPath, "-e", "const end = Date.now() + 30000; while (Date.now() < end) {}"],
        { stdio: "ignore" },
      ),
    );
    for (const child of loops)
      cleanups.push(async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const gone = new Promise((r) => child.once("exit", r));
          child.kill("SIGKILL");
          await gone;
        }
      });
    const observer = createRemoteObserver([localShell("machine")], {
      cappedHosts: new Set(),
      cgroupRoot: "/sys/fs/cgroup",
    });
    await sleep(1000); // both loops started (node's start-up) before the window opens
    expect(await observer.read()).toBeNull();
    await sleep(2000);
    const w = await observer.read();
    const h = w!.hosts.machine!;
    expect(h.runDelayMs).toBeGreaterThan(0.4 * w!.dtMs);
    expect(h.contentionMs).toBeGreaterThan(0.4 * w!.dtMs); // an uncapped host is not throttled: its wait is contention
  });

  it("parseTaskSchedstatLines reads `grep -H ''` lines of /proc/<pid>/task/<tid>/schedstat (sched-stats.rst fields)", () => {
    const text =
      "/proc/1/task/1/schedstat:8000 2000 5\n/proc/7/task/9/schedstat:100 250 2\n/proc/self/task/3/schedstat:1 1 1\ngarbage\n";
    expect([...parseTaskSchedstatLines(text)]).toEqual([
      [1, 2000],
      [9, 250],
    ]);
  });
});

// cgroup-v2.rst (Documentation/admin-guide/cgroup-v2.rst): cpu.stat keys usage_usec user_usec system_usec
// nr_periods nr_throttled throttled_usec (nr_bursts burst_usec since 5.14); io.stat's documented example lines;
// memory.stat flat keys incl. inactive_file; memory.current a single number.
const V2_CPU_STAT = (usage: number, periods: number, throttled: number, throttledUs: number) =>
  `usage_usec ${usage}\nuser_usec ${Math.floor(usage * 0.7)}\nsystem_usec ${Math.ceil(usage * 0.3)}\n` +
  `nr_periods ${periods}\nnr_throttled ${throttled}\nthrottled_usec ${throttledUs}\nnr_bursts 0\nburst_usec 0\n`;
const V2_IO_STAT_DOC =
  "8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n" +
  "8:0 rbytes=90430464 wbytes=299008000 rios=8950 wios=1252 dbytes=50331648 dios=3021\n";
const V2_MEMORY_STAT = (inactiveFile: number) =>
  `anon 10485760\nfile 41943040\nkernel_stack 65536\nsock 0\nshmem 0\nfile_mapped 1048576\nfile_dirty 0\n` +
  `file_writeback 0\ninactive_anon 0\nactive_anon 10485760\ninactive_file ${inactiveFile}\nactive_file 8388608\n` +
  `unevictable 0\npgfault 1234\npgmajfault 5\n`;

describe("cgroup and /proc/net/dev parsing vectors", () => {
  it("parseCgroupUsage v2 on files in the format of the kernel's cgroup-v2.rst (cpu.stat, io.stat doc example, memory.stat)", () => {
    const u = parseCgroupUsage("v2", {
      "cpu.stat": V2_CPU_STAT(2_500_000, 300, 120, 950_000),
      "memory.current": "52428800\n",
      "memory.stat": V2_MEMORY_STAT(33_554_432),
      "io.stat": V2_IO_STAT_DOC,
      "memory.peak": undefined, // kernel < 5.19
    });
    expect(u).toEqual({
      cpuUsageNs: 2_500_000_000,
      nrPeriods: 300,
      nrThrottled: 120,
      throttledNs: 950_000_000,
      memoryBytes: 52_428_800,
      memoryPeakBytes: 0,
      memoryWorkingSetBytes: 52_428_800 - 33_554_432,
      memoryAnonBytes: 10_485_760, // memory.stat anon: the processes' own memory, no page cache
      ioReadBytes: 1459200 + 90430464,
      ioWriteBytes: 314773504 + 299008000,
      ioReadOps: 192 + 8950,
      ioWriteOps: 353 + 1252,
      unavailable: ["memoryPeakBytes"],
    });
  });

  it("parseCgroupUsage v1 on files in the format of cgroup-v1 cpuacct.rst, sched-bwc.rst cpu.stat, blkio-controller.rst", () => {
    const blk = (r: number, w: number) =>
      `254:0 Read ${r}\n254:0 Write ${w}\n254:0 Sync ${r + w}\n254:0 Async 0\n254:0 Discard 0\n254:0 Total ${r + w}\n` +
      `8:0 Read 10\n8:0 Write 20\n8:0 Sync 30\n8:0 Async 0\n8:0 Discard 0\n8:0 Total 30\nTotal ${r + w + 30}\n`;
    const u = parseCgroupUsage("v1", {
      "cpuacct.usage": "123456789\n",
      "cpu.stat": "nr_periods 40\nnr_throttled 30\nthrottled_time 2000000000\n",
      "memory.usage_in_bytes": "8388608\n",
      "memory.max_usage_in_bytes": "9437184\n",
      "memory.stat":
        "cache 4096\nrss 8192\ninactive_file 0\ntotal_rss 6291456\ntotal_inactive_file 1048576\n",
      "blkio.throttle.io_service_bytes": blk(2146304, 2097152),
      "blkio.throttle.io_serviced": blk(39, 32),
    });
    expect(u).toEqual({
      cpuUsageNs: 123456789,
      nrPeriods: 40,
      nrThrottled: 30,
      throttledNs: 2_000_000_000,
      memoryBytes: 8388608,
      memoryPeakBytes: 9437184,
      memoryWorkingSetBytes: 8388608 - 1048576,
      memoryAnonBytes: 6291456, // total_rss (the hierarchy's), not the group's own rss
      ioReadBytes: 2146304 + 10,
      ioWriteBytes: 2097152 + 20,
      ioReadOps: 39 + 10,
      ioWriteOps: 32 + 20,
      unavailable: [],
    });
    expect(parseCgroupUsage("v1", {}).unavailable).toHaveLength(11);
  });

  it("parseProcNetDev on a proc(5) /proc/net/dev sample (padded names, a number glued to the colon)", () => {
    const sample =
      "Inter-|   Receive                                                |  Transmit\n" +
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n" +
      "    lo: 2776770   11307    0    0    0     0          0         0  2776770   11307    0    0    0     0       0          0\n" +
      "  eth0: 1215645    2751    0    0    0     0          0         0  1782404    4324    0    0    0   427       0          0\n" +
      "  ppp0:1622270    5552    1    0    0     0          0         0   354130    5669    0    0    0     0       0          0\n";
    expect(parseProcNetDev(sample, "eth0")).toEqual({
      rxBytes: 1215645,
      rxPackets: 2751,
      txBytes: 1782404,
      txPackets: 4324,
    });
    expect(parseProcNetDev(sample, "lo")).toEqual({
      rxBytes: 2776770,
      rxPackets: 11307,
      txBytes: 2776770,
      txPackets: 11307,
    });
    expect(parseProcNetDev(sample, "ppp0")).toEqual({
      rxBytes: 1622270,
      rxPackets: 5552,
      txBytes: 354130,
      txPackets: 5669,
    });
    expect(parseProcNetDev(sample, "eth1")).toBeUndefined();
    expect(() => parseProcNetDev("  eth0: 12 34 x\n", "eth0")).toThrow(
      /malformed \/proc\/net\/dev line for eth0/,
    );
  });
});

/** A directory laid out like a container's cgroup2 root (cgroup-v2.rst formats); `write` rewrites its counters. */
async function fakeV2Root(): Promise<{ root: string; write: (k: number) => Promise<void> }> {
  const root = await tmpDir("ib-remote-v2-");
  await fs.writeFile(path.join(root, "cgroup.controllers"), "cpuset cpu io memory pids\n");
  const write = async (k: number) => {
    await fs.writeFile(
      path.join(root, "cpu.stat"),
      V2_CPU_STAT(1_000_000 + k * 750_000, 100 + k * 20, 10 + k * 15, 5_000 + k * 400_000),
    );
    await fs.writeFile(path.join(root, "memory.current"), `${50 * MiB + k * MiB}\n`);
    await fs.writeFile(path.join(root, "memory.stat"), V2_MEMORY_STAT(8 * MiB));
    await fs.writeFile(
      path.join(root, "io.stat"),
      `8:16 rbytes=${1459200 + k * MiB} wbytes=314773504 rios=${192 + k * 16} wios=353 dbytes=0 dios=0\n` +
        "8:0 rbytes=90430464 wbytes=299008000 rios=8950 wios=1252 dbytes=50331648 dios=3021\n",
    );
  };
  await write(0);
  return { root, write };
}

describe("remote observer: cgroup v2 detection and errors (real sh, cgroup2-shaped temp dir per cgroup-v2.rst)", () => {
  it("detects v2 by cgroup.controllers and turns two reads into rates over the real elapsed time", async () => {
    const { root, write } = await fakeV2Root();
    const obs = createRemoteObserver([localShell("sink")], {
      cappedHosts: new Set(["sink"]),
      interface: "lo",
      cgroupRoot: root,
    });
    expect(await obs.read()).toBeNull();
    await write(1);
    await sleep(200);
    const w = await obs.read();
    const h = w?.hosts.sink;
    if (!w || !h) throw new Error("no window");
    const dtS = w.dtMs / 1000;
    expect(w.dtMs).toBeGreaterThanOrEqual(150);
    expect(h.cpuCores * dtS).toBeCloseTo(0.75, 9);
    expect(h.periods).toBe(20);
    expect(h.throttledPeriods).toBe(15);
    expect(h.throttledShare).toBe(0.75);
    expect(h.throttledMs).toBe(400);
    expect(h.memoryBytes).toBe(51 * MiB);
    expect(h.memoryWorkingSetBytes).toBe(43 * MiB);
    expect(h.memoryPeakBytes).toBe(0); // no memory.peak (kernel < 5.19)
    expect(h.ioReadBytesPerSec * dtS).toBeCloseTo(MiB, 6);
    expect(h.ioReadOpsPerSec * dtS).toBeCloseTo(16, 9);
    expect(h.ioWriteBytesPerSec).toBe(0);
  });

  it("a host shaped on ingress (ingressShaped: its shaper's ifb0, infra/docker/shaper.ts): received bytes are ifb0's tx (after the tbf), not eth0's rx", async () => {
    const { root } = await fakeV2Root();
    const netdev = path.join(root, "net-dev");
    // proc(5) /proc/net/dev layout; eth0 rx counts what arrived before the ingress tbf dropped part of it
    const write = (eth0Rx: number, ifbTx: number, eth0Tx: number) =>
      fs.writeFile(
        netdev,
        "Inter-|   Receive                                                |  Transmit\n" +
          " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n" +
          `  eth0: ${eth0Rx} 100 0 0 0 0 0 0 ${eth0Tx} 100 0 0 0 0 0 0\n` +
          `  ifb0: ${ifbTx} 90 0 0 0 0 0 0 ${ifbTx} 90 0 0 0 0 0 0\n`,
      );
    // the real script, with the netdev sample in place of the host's /proc/net/dev
    const shell: ObservedShell = {
      host: "sink",
      run: async (c, args) =>
        (
          await execa(
            c,
            args.map((a) => a.replaceAll("cat /proc/net/dev", `cat ${netdev}`)),
          )
        ).stdout,
    };
    await write(0, 0, 0);
    const obs = createRemoteObserver([shell], {
      cappedHosts: new Set(),
      cgroupRoot: root,
      ingressShaped: new Set(["sink"]),
    });
    // an ifb0 that is no shaper's (the ifb module makes ifb0 and ifb1 in the root namespace): eth0's own counter
    const unshaped = createRemoteObserver([shell], { cappedHosts: new Set(), cgroupRoot: root });
    await Promise.all([obs.read(), unshaped.read()]);
    await write(1_300_000, 1_000_000, 50_000);
    const [w, u] = await Promise.all([obs.read(), unshaped.read()]);
    const h = w!.hosts.sink!;
    const dtS = w!.dtMs / 1000;
    expect(h.netRxBytesPerSec * dtS).toBeCloseTo(1_000_000, 3);
    expect(h.netTxBytesPerSec * dtS).toBeCloseTo(50_000, 3);
    expect(u!.hosts.sink!.netRxBytesPerSec * (u!.dtMs / 1000)).toBeCloseTo(1_300_000, 3);
  });

  it("a host a fault step killed (mayBeDown): a failed read carries its last reading forward (no CPU, no traffic); without the flag it is E_OBSERVER_READ", async () => {
    const { root } = await fakeV2Root();
    let dead = false;
    const killed: ObservedShell = {
      host: "collector",
      async run(command, args, opts) {
        if (dead)
          return (
            await execa("sh", [
              "-c",
              "echo 'Error response from daemon: Container ib-collector is not running' >&2; exit 1",
            ])
          ).stdout;
        return (await execa(command, args, { timeout: opts?.timeoutMs })).stdout;
      },
    };
    let down = true;
    const obs = createRemoteObserver([killed], {
      cappedHosts: new Set(),
      interface: "lo",
      cgroupRoot: root,
      mayBeDown: () => down,
    });
    expect(await obs.read()).toBeNull(); // the first reading
    dead = true;
    const w = await obs.read();
    expect(w!.hosts.collector).toMatchObject({
      cpuCores: 0,
      netRxBytesPerSec: 0,
      netTxBytesPerSec: 0,
      ioWriteBytesPerSec: 0,
    });
    down = false;
    await expect(obs.read()).rejects.toMatchObject({
      code: "E_OBSERVER_READ",
      message: expect.stringMatching(/host "collector": .*is not running/),
    });
  });

  it("a host whose command fails, times out, lacks the interface or the CPU counters → the error names that host", async () => {
    const { root } = await fakeV2Root();
    const gone: ObservedShell = {
      host: "collector",
      async run() {
        // what `docker exec` prints for a removed container
        return (
          await execa("sh", [
            "-c",
            "echo 'Error response from daemon: No such container: ib-collector' >&2; exit 1",
          ])
        ).stdout;
      },
    };
    const healthy = localShell("sink");
    const obs = createRemoteObserver([healthy, gone], {
      cappedHosts: new Set(),
      interface: "lo",
      cgroupRoot: root,
    });
    const err = await obs.read().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvisioningError);
    expect((err as ProvisioningError).code).toBe("E_OBSERVER_READ");
    expect((err as Error).message).toMatch(/host "collector": .*No such container/);
    expect((err as Error).message).not.toMatch(/host "sink"/);

    // A shell that ignores its timeout: the observer's own guard must fire. The sleep is killed afterwards.
    let sleeper: ReturnType<typeof execa> | undefined;
    cleanups.push(async () => {
      sleeper?.kill("SIGKILL");
      await sleeper?.catch(() => undefined);
    });
    const slow: ObservedShell = {
      host: "loadgen",
      async run() {
        sleeper = execa("sleep", ["5"]);
        return String((await sleeper).stdout);
      },
    };
    const t0 = Date.now();
    const timedOut = await createRemoteObserver([slow], {
      cappedHosts: new Set(),
      timeoutMs: 300,
      cgroupRoot: root,
    })
      .read()
      .catch((e: unknown) => e);
    expect((timedOut as Error).message).toMatch(/host "loadgen": reading telemetry timed out after 300 ms/);
    expect(Date.now() - t0).toBeLessThan(3000);

    const noIf = await createRemoteObserver([localShell("sink")], {
      cappedHosts: new Set(),
      interface: "ib-nosuch0",
      cgroupRoot: root,
    })
      .read()
      .catch((e: unknown) => e);
    expect((noIf as Error).message).toMatch(
      /host "sink": interface "ib-nosuch0" is not in \/proc\/net\/dev \(interfaces: .*\blo\b/,
    );

    // A file that exists but cannot be read (here: a directory) fails the script itself (exit 3).
    await fs.rm(path.join(root, "memory.stat"));
    await fs.mkdir(path.join(root, "memory.stat"));
    const unreadable = await createRemoteObserver([localShell("sink")], {
      cappedHosts: new Set(),
      interface: "lo",
      cgroupRoot: root,
    })
      .read()
      .catch((e: unknown) => e);
    expect((unreadable as Error).message).toMatch(
      /host "sink": .*exit code 3[\s\S]*memory\.stat: Is a directory/,
    );
    await fs.rmdir(path.join(root, "memory.stat"));

    await fs.writeFile(path.join(root, "cpu.stat"), "usage_usec 10\nuser_usec 5\nsystem_usec 5\n"); // cpu controller off
    const noCfs = await createRemoteObserver([localShell("sink")], {
      cappedHosts: new Set(["sink"]),
      interface: "lo",
      cgroupRoot: root,
    })
      .read()
      .catch((e: unknown) => e);
    expect((noCfs as Error).message).toMatch(
      /host "sink": cgroup v2 at .* does not provide nrPeriods, nrThrottled/,
    );
  });
});
