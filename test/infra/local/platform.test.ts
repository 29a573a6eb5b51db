/**
 * The local platform end to end on this machine: real cgroups, namespaces, tc, processes; teardown and gc leave
 * nothing behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { execa } from "execa";
import { QUARTER_CORE_CGROUP_APPLIED } from "../../helpers/limits.ts";
import { afterEach, describe, expect, it } from "vitest";
import type { StackSpec } from "../../../core/limits.ts";
import { CGROUP_PARENT, listCgroupPids } from "../../../infra/local/cgroup.ts";
import { collectLeftovers } from "../../../infra/local/gc.ts";
import { listNetns, removeRunNetns } from "../../../infra/local/netns.ts";
import {
  provisionLocal,
  readRegistry,
  registryPath,
  removeRunResources,
  withLocalStack,
} from "../../../infra/local/platform.ts";
import type { LocalStack } from "../../../core/hosts.ts";

const isRoot = process.getuid?.() === 0;
const REPO = path.resolve(import.meta.dirname, "../../..");
const CGROUP_ROOT = "/sys/fs/cgroup";

const STACK: StackSpec = {
  name: "local-quarter-core",
  file: "stacks/Pulumi.local-quarter-core.yaml",
  platform: "local",
  expiryMs: 4 * 3600_000,
  hosts: {
    loadgen: {
      name: "loadgen",
      requested: { cpu: "1" },
      limits: { cpu: { quotaUs: 100_000, periodUs: 100_000 } },
    },
    sink: {
      name: "sink",
      requested: {
        cpu: "0.25",
        memory: "2GiB",
        disk: { iops: 3000, bandwidth: "125829120B/s" },
        network: { bandwidth: "12000KB/s" },
      },
      limits: {
        cpu: { quotaUs: 25_000, periodUs: 100_000 },
        memoryBytes: 2 * 1024 ** 3,
        disk: {
          readIops: 3000,
          writeIops: 3000,
          readBytesPerSec: 125_829_120,
          writeBytesPerSec: 125_829_120,
        },
        network: { bandwidthBytesPerSec: 12_000_000 },
      },
    },
  },
};

/** Everything a run may have left; used both to assert emptiness and to clean up after a failed test. */
async function leftovers(runId: string) {
  const netns = (await listNetns()).filter((n) => n.startsWith(`ib-${runId}-`));
  const cgroups = ["cpu", "cpuacct", "memory", "blkio", "unified"]
    .map((c) => path.join(CGROUP_ROOT, c, CGROUP_PARENT, runId))
    .filter((d) => existsSync(d));
  const dirs = [path.join(os.tmpdir(), `ingestbench-${runId}`)].filter((d) => existsSync(d));
  const registry = existsSync(registryPath(runId));
  const links = (JSON.parse((await execa("ip", ["-j", "link"])).stdout) as Array<{ ifname: string }>)
    .map((l) => l.ifname)
    .filter((n) => n.startsWith(`ib${runId}`));
  return { netns, cgroups, dirs, registry, links };
}
const NOTHING = { netns: [], cgroups: [], dirs: [], registry: false, links: [] };

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
    return state !== "Z";
  } catch {
    return false;
  }
};

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((r) => child.once("exit", () => r()));

/** Cleanup that runs whatever the test did: tear down stacks, then remove anything a run id still owns. */
const stacks: LocalStack[] = [];
const runIds: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.pid && alive(c.pid)) c.kill("SIGKILL");
  for (const s of stacks.splice(0)) await s.teardown().catch(() => undefined); // best effort; checked below
  for (const runId of runIds.splice(0)) {
    const reg = await readRegistry(registryPath(runId));
    if (reg) await removeRunResources(reg);
    await removeRunNetns(runId);
    for (const d of (await leftovers(runId)).cgroups) await fs.rmdir(d).catch(() => undefined); // best effort: leaves first would be needed if hosts remain
    await fs.rm(path.join(os.tmpdir(), `ingestbench-${runId}`), { recursive: true, force: true });
    await fs.rm(registryPath(runId), { force: true });
  }
});

async function provision(opts: Parameters<typeof provisionLocal>[1] = {}) {
  const local = await provisionLocal(STACK, opts);
  stacks.push(local);
  runIds.push(local.runId);
  return local;
}

describe("local platform (real)", () => {
  it("provisions loadgen + sink, spawns inside the sink's cgroup and namespace, and tears down to nothing", async () => {
    const local = await provision({ dataOwner: "postgres" });
    const { runId } = local;
    expect(runId).toMatch(/^[0-9a-f]{6}$/);
    const sink = local.hosts.sink!;
    const loadgen = local.hosts.loadgen!;
    expect(sink.netns).toBe(`ib-${runId}-sink`);
    expect(sink.address).not.toBe(loadgen.address);
    expect(sink.blockDevice).toMatch(/^\d+:\d+$/);
    expect(sink.dataDir).toBe(path.join(os.tmpdir(), `ingestbench-${runId}`, "sink", "data"));
    const st = await fs.stat(sink.dataDir);
    expect(st.mode & 0o777).toBe(0o755);
    expect(st.uid).toBe(Number((await execa("id", ["-u", "postgres"])).stdout));

    const lim = local.limits.sink!;
    // cgroup v1 does not throttle buffered writes: the disk write caps are applied and read back, but partial
    expect(lim.enforced).toBe("partial");
    expect(lim.partial).toEqual([
      expect.stringMatching(/^disk write caps: .*buffered writes .* NOT throttled/),
    ]);
    expect(lim.requested).toEqual(STACK.hosts.sink!.requested);
    expect(lim.applied).toMatchObject({
      ...QUARTER_CORE_CGROUP_APPLIED,
      tbfRateBytesPerSec: 12_000_000,
      ingressTbfRateBytesPerSec: 12_000_000,
    });
    expect(local.limits.loadgen).toMatchObject({
      enforced: true,
      applied: { cfsQuotaUs: 100_000, cfsPeriodUs: 100_000 },
    });

    const reg = await readRegistry(registryPath(runId));
    expect(reg).toMatchObject({ runId, ownerPid: process.pid });
    expect(reg!.netns.sort()).toEqual([`ib-${runId}-loadgen`, `ib-${runId}-sink`]);

    // sleep 1000 in the sink
    const sleeper = sink.spawn("sleep", ["1000"]);
    children.push(sleeper);
    const pid = sleeper.pid!;
    // the spawn joins the cgroups first, then `ip netns exec` enters the namespace and execs sleep: wait for sleep
    // itself (under load the namespace is entered a while after the cgroups are joined)
    const argv0 = (): string => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]!;
      } catch {
        return "";
      }
    };
    for (
      let i = 0;
      i < 250 && (argv0() !== "sleep" || !(await listCgroupPids(sink.cgroup)).includes(pid));
      i++
    )
      await new Promise((r) => setTimeout(r, 20));
    for (const file of Object.values(sink.cgroup.dirs)) {
      expect(readFileSync(path.join(file, "cgroup.procs"), "utf8").split("\n")).toContain(String(pid));
    }
    const procCgroup = readFileSync(`/proc/${pid}/cgroup`, "utf8");
    for (const c of ["cpu", "cpuacct", "memory", "blkio"]) {
      expect(procCgroup).toMatch(new RegExp(`^\\d+:${c}:/${CGROUP_PARENT}/${runId}/sink$`, "m"));
    }
    expect((await execa("ip", ["netns", "identify", String(pid)])).stdout.trim()).toBe(`ib-${runId}-sink`);
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]).toBe("sleep");

    // as another user, with env, over the shaped data plane: loadgen → sink
    const server = sink.spawn(
      "node",
      [
        "-e",
        `require("net").createServer((s)=>{s.on("data",(d)=>process.stdout.write(d));s.on("end",()=>process.exit(0));}).listen(5432,"0.0.0.0",()=>console.log("uid="+process.getuid()+" "+process.env.IB_TEST))`,
      ],
      { user: "postgres", env: { IB_TEST: "hello" } },
    );
    children.push(server);
    let out = "";
    server.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 200 && !out.includes("uid="); i++) await new Promise((r) => setTimeout(r, 25));
    expect(out).toContain(`uid=${(await execa("id", ["-u", "postgres"])).stdout} hello`);
    const client = loadgen.spawn("node", [
      "-e",
      `const s=require("net").connect(5432,"${sink.address}",()=>s.end("ping"));`,
    ]);
    children.push(client);
    await exited(client);
    expect(client.exitCode).toBe(0);
    await exited(server);
    expect(out).toContain("ping");

    // the harness reaches the sink over the control link
    const ctl = sink.spawn("node", [
      "-e",
      `require("net").createServer((s)=>s.end("pong")).listen(7000,"0.0.0.0",()=>console.log("up"))`,
    ]);
    children.push(ctl);
    await new Promise<void>((r) => ctl.stdout!.once("data", () => r()));
    const pong = await execa("node", [
      "-e",
      `const s=require("net").connect(7000,"${sink.controlAddress}");s.on("data",(d)=>{console.log(String(d));s.destroy()})`,
    ]);
    expect(pong.stdout.trim()).toBe("pong");

    await local.teardown();
    await exited(sleeper);
    expect(alive(pid)).toBe(false);
    expect(await leftovers(runId)).toEqual(NOTHING);
    await local.teardown(); // idempotent
    expect(() => sink.spawn("sleep", ["1"])).toThrow(/torn down/);
  });

  it("withLocalStack tears down after an error thrown inside", async () => {
    let runId = "";
    let pid = 0;
    const boom = new Error("boom inside the run");
    await expect(
      withLocalStack(STACK, async (local) => {
        runId = local.runId;
        runIds.push(runId);
        const child = local.hosts.sink!.spawn("sleep", ["1000"]);
        children.push(child);
        pid = child.pid!;
        expect(existsSync(registryPath(runId))).toBe(true);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(runId).not.toBe("");
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid)).toBe(false);
    expect(await leftovers(runId)).toEqual(NOTHING);
  });

  it("a tmpfs data dir is mounted, sized, and unmounted at teardown", async () => {
    const stack: StackSpec = {
      ...STACK,
      hosts: {
        sink: {
          name: "sink",
          requested: { disk: { tmpfs: "64MiB" } },
          limits: { disk: { tmpfsBytes: 64 * 1024 ** 2 } },
        },
      },
    };
    const local = await provisionLocal(stack, {
      runId: (Date.now() & 0xffffff).toString(16).padStart(6, "0"),
    });
    stacks.push(local);
    runIds.push(local.runId);
    const sink = local.hosts.sink!;
    expect(local.limits.sink).toMatchObject({ enforced: true, applied: { tmpfsBytes: 64 * 1024 ** 2 } });
    expect(sink.blockDevice).toBeUndefined();
    expect(readFileSync("/proc/self/mountinfo", "utf8")).toContain(` ${sink.dataDir} `);
    await local.teardown();
    expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(` ${sink.dataDir} `);
    expect(await leftovers(local.runId)).toEqual(NOTHING);
  });

  it("gc removes the leftovers of a run whose owner was SIGKILLed", async () => {
    // A real stack provisioned by a child process that is then killed without any chance to clean up; its result
    // record still says "running", as a killed bench's run.json does.
    const record = path.join(mkdtempSync(path.join(os.tmpdir(), "ibtest-gc-")), "run.json");
    writeFileSync(
      record,
      JSON.stringify({
        status: "running",
        runId: "x",
        finishedAt: null,
        error: null,
        summary: { rowsPerSecond: 5 },
      }),
    );
    const script = `
      const { provisionLocal } = await import(${JSON.stringify(path.join(REPO, "infra/local/platform.ts"))});
      const stack = JSON.parse(process.argv[1]);
      const local = await provisionLocal(stack, { resultRecord: ${JSON.stringify(record)} });
      const child = local.hosts.sink.spawn("sleep", ["1000"], { stdio: ["ignore", "ignore", "ignore"] });
      // until its shell has exec'd sleep: a shell whose harness is gone does not start it (platform.ts SPAWN_SCRIPT)
      const { readFileSync } = await import("node:fs");
      for (let i = 0; i < 500 && !readFileSync("/proc/" + child.pid + "/cmdline", "utf8").startsWith("sleep"); i++)
        await new Promise((r) => setTimeout(r, 10));
      console.log(JSON.stringify({ runId: local.runId, pid: process.pid, sleepPid: child.pid }));
      setTimeout(() => process.exit(3), 60000);
    `;
    const owner = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script, JSON.stringify(STACK)],
      {
        cwd: REPO,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    children.push(owner);
    const line = await new Promise<string>((resolve, reject) => {
      let buf = "";
      owner.stdout!.on("data", (d: Buffer) => {
        buf += d.toString();
        if (buf.includes("\n")) resolve(buf.split("\n")[0]!);
      });
      owner.once("exit", (code) => reject(new Error(`owner exited early with ${code}`)));
    });
    const { runId, pid, sleepPid } = JSON.parse(line) as { runId: string; pid: number; sleepPid: number };
    runIds.push(runId);
    expect(pid).toBe(owner.pid);
    owner.kill("SIGKILL");
    await exited(owner);

    const reg = await readRegistry(registryPath(runId));
    expect(reg?.ownerPid).toBe(pid); // a dead owner
    const before = await leftovers(runId);
    expect(before.netns).toHaveLength(2);
    expect(before.cgroups.length).toBeGreaterThan(0);
    expect(before.dirs).toHaveLength(1);
    expect(alive(sleepPid)).toBe(true);

    const report = await collectLeftovers();
    expect(report.errors).toEqual([]);
    expect(report.runs).toContain(runId);
    expect(report.live).not.toContain(runId);
    expect(report.netns).toEqual(expect.arrayContaining(before.netns));
    expect(report.dirs).toContain(before.dirs[0]);
    for (let i = 0; i < 100 && alive(sleepPid); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(sleepPid)).toBe(false);
    expect(await leftovers(runId)).toEqual(NOTHING);
    // the dead run's record no longer claims to be running; what it measured is kept
    expect(report.records).toEqual([record]);
    const marked = JSON.parse(readFileSync(record, "utf8")) as {
      status: string;
      error: { code: string; message: string };
      summary: unknown;
      finishedAt: string;
    };
    expect(marked).toMatchObject({
      status: "interrupted",
      error: { code: "E_KILLED" },
      summary: { rowsPerSecond: 5 },
    });
    expect(marked.error.message).toContain(`pid ${pid}`);
    rmSync(path.dirname(record), { recursive: true, force: true });

    // idempotent, and a live run is never touched
    const live = await provision();
    const again = await collectLeftovers();
    expect(again.runs).not.toContain(runId);
    expect(again.live).toContain(live.runId);
    expect((await leftovers(live.runId)).netns).toHaveLength(2);
    await live.teardown();
  });
});

describe("local platform without root", () => {
  it("still provisions, unconstrained, on 127.0.0.1 and says limits NOT enforced", async () => {
    // Run provisioning as "nobody" in a child process (when we are root), or directly when we are not.
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "ib-nonroot-"));
    try {
      await fs.chmod(tmp, 0o777);
      const script = `
        const { provisionLocal } = await import(${JSON.stringify(path.join(REPO, "infra/local/platform.ts"))});
        const local = await provisionLocal(JSON.parse(process.argv[1]), {});
        const h = local.hosts.sink;
        const child = h.spawn("sh", ["-c", "echo $$"]);
        let out = ""; child.stdout.on("data", (d) => (out += d));
        await new Promise((r) => child.once("exit", r));
        const result = { runId: local.runId, address: h.address, controlAddress: h.controlAddress, netns: h.netns ?? null,
          dirs: h.cgroup.dirs, limits: local.limits.sink, echoed: out.trim().length > 0 };
        await local.teardown();
        console.log(JSON.stringify(result));
      `;
      const prefix = isRoot ? ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] : [];
      const r = await execa(
        prefix[0] ?? process.execPath,
        [
          ...prefix.slice(1),
          ...(isRoot ? [process.execPath] : []),
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          script,
          JSON.stringify(STACK),
        ],
        {
          cwd: REPO,
          env: { TMPDIR: tmp },
          timeout: 60_000,
        },
      );
      const res = JSON.parse(r.stdout.trim().split("\n").pop()!) as {
        runId: string;
        address: string;
        controlAddress: string;
        netns: string | null;
        dirs: Record<string, string>;
        limits: { enforced: boolean; notes: string[] };
        echoed: boolean;
      };
      expect(res).toMatchObject({
        address: "127.0.0.1",
        controlAddress: "127.0.0.1",
        netns: null,
        dirs: {},
        echoed: true,
      });
      expect(res.limits.enforced).toBe(false);
      expect(res.limits.notes.join("\n")).toMatch(/not running as root/);
      expect(r.stderr).toMatch(/limits NOT enforced: sink: .*not running as root/);
      expect(existsSync(path.join(tmp, `ingestbench-${res.runId}`))).toBe(false);
      expect(existsSync(path.join(tmp, "ingestbench-runs", `${res.runId}.json`))).toBe(false);
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  });
});
