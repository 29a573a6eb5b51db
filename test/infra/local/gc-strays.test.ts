/**
 * gc and the processes of a killed run that its cgroups do not hold (infra/local/strays.ts), with real cgroups,
 * namespaces and processes: a harness SIGKILLed while a copy of its own still wrote into the sink's data directory
 * (the `cp -a` of core/cache.ts before it ran on the host) and while host.spawn's shell (with a child) had not joined
 * the cgroups yet. gc must end them by pid and then remove the directory (test/e2e/kill-safety.test.ts met
 * `ENOTEMPTY … rmdir '…/sink/data/pg/base/5'`), and leave alone a process of another run and one that started before
 * the run's owner.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { StackSpec } from "../../../core/limits.ts";
import { collectLeftovers } from "../../../infra/local/gc.ts";
import {
  readRegistry,
  registryPath,
  removeRunResources,
  SPAWN_SCRIPT,
  spawnArgs,
} from "../../../infra/local/platform.ts";

const REPO = path.resolve(import.meta.dirname, "../../..");
const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-gc-strays-"));
const savedTmp = process.env.TMPDIR;
const runId = randomBytes(3).toString("hex");
const pids: number[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const p of pids)
    try {
      process.kill(p, "SIGKILL");
    } catch {
      /* gone */
    }
  process.env.TMPDIR = tmp;
  const reg = await readRegistry(registryPath(runId));
  if (reg) await removeRunResources(reg, { strays: true });
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(tmp, { recursive: true, force: true });
});

const STACK: StackSpec = {
  name: "strays",
  file: "stacks/Pulumi.strays.yaml",
  platform: "local",
  expiryMs: 4 * 3600_000,
  hosts: {
    sink: {
      name: "sink",
      requested: { cpu: "1" },
      limits: { cpu: { quotaUs: 100_000, periodUs: 100_000 } },
    },
  },
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
};

/** A `sleep 60` whose command line names `arg` (sh's $0), parented to this process. */
function sleeper(arg: string): number {
  const c = spawn("sh", ["-c", "exec sleep 60", arg], { stdio: "ignore" });
  children.push(c);
  return c.pid!;
}

describe("gc: a killed run's processes outside its cgroups (real cgroups, namespaces, processes)", () => {
  it("ends them by pid, a copy still writing into the data directory and a spawn shell that had not joined its cgroups, then removes the directory; another run's process and one older than the owner stay", async () => {
    const runDir = path.join(tmp, `ingestbench-${runId}`);
    const older = sleeper(path.join(runDir, "sink")); // started before the owner: not the run's
    await new Promise((r) => setTimeout(r, 50)); // a few clock ticks (10 ms) apart
    // The owner: provisions, then starts (as a harness does with execFile) a writer in the sink's data directory
    // that re-creates what a removal takes away, and a shell like host.spawn's before its first `echo $$`; then it
    // is SIGKILLed.
    const writer =
      "mkdir -p pg/base/5; i=0; while [ $i -lt 2000000 ]; do d=pg/base/5/d$((i % 40)); [ -d $d ] || mkdir $d; : > $d/f$((i % 50)); i=$((i+1)); done";
    const script = `
      const { spawn } = await import("node:child_process");
      const { provisionLocal } = await import(${JSON.stringify(path.join(REPO, "infra/local/platform.ts"))});
      const local = await provisionLocal(JSON.parse(process.argv[1]), { runId: ${JSON.stringify(runId)} });
      const host = local.hosts.sink;
      const w = spawn("sh", ["-c", ${JSON.stringify(writer)}], { cwd: host.dataDir, stdio: "ignore", detached: true });
      const procs = Object.values(host.cgroup.dirs).map((d) => d + "/cgroup.procs");
      const s = spawn("sh", ["-c", "sleep 59.125; :", "ingestbench-spawn", ...procs], { stdio: "ignore", detached: true });
      console.log(JSON.stringify({ writer: w.pid, shell: s.pid, dataDir: host.dataDir }));
      setTimeout(() => process.exit(3), 60000);
    `;
    const owner = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script, JSON.stringify(STACK)],
      { cwd: REPO, env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "inherit"] },
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
    const started = JSON.parse(line) as { writer: number; shell: number; dataDir: string };
    pids.push(started.writer, started.shell);
    const other = sleeper(path.join(tmp, "ingestbench-000000", "sink")); // another run's
    // the writer has filled the directory it keeps re-creating
    for (let i = 0; i < 200 && !existsSync(path.join(started.dataDir, "pg/base/5/d39/f49")); i++)
      await new Promise((r) => setTimeout(r, 25));
    owner.kill("SIGKILL");
    await new Promise((r) => owner.once("exit", r));

    process.env.TMPDIR = tmp;
    try {
      const dry = await collectLeftovers({ tmpRoot: tmp, graceMs: 200, dryRun: true });
      expect(dry.processes).toEqual(expect.arrayContaining([started.writer, started.shell]));
      expect(alive(started.writer) && alive(started.shell)).toBe(true); // a dry run ends nothing

      const report = await collectLeftovers({ tmpRoot: tmp, graceMs: 200 });
      expect(report.errors).toEqual([]);
      expect(report.runs).toEqual([runId]);
      expect(report.processes).toEqual(expect.arrayContaining([started.writer, started.shell]));
      expect(report.processes).not.toContain(older);
      expect(report.processes).not.toContain(other);
      for (let i = 0; i < 100 && (alive(started.writer) || alive(started.shell)); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(alive(started.writer), "the writer").toBe(false);
      expect(alive(started.shell), "the spawn shell").toBe(false);
      // the shell's child (sleep 59.125), which names nothing of the run, went with it
      const sleeps = readdirSync("/proc")
        .filter((d) => /^\d+$/.test(d))
        .filter((d) => {
          try {
            return readFileSync(`/proc/${d}/cmdline`, "utf8") === "sleep\x0059.125\x00";
          } catch {
            return false;
          }
        });
      expect(sleeps, "the spawn shell's child").toEqual([]);
      expect(existsSync(runDir)).toBe(false);
      expect(existsSync(registryPath(runId))).toBe(false);
      expect(alive(older) && alive(other)).toBe(true);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
  }, 60_000);

  it("host.spawn's shell (real sh) starts the command only while the harness that spawned it is its parent", () => {
    const run = (owner: number) =>
      spawnSync(
        "/bin/sh",
        ["-c", SPAWN_SCRIPT, "ingestbench-spawn", ...spawnArgs(owner, [], ["echo", "a b"])],
        {
          encoding: "utf8",
        },
      );
    const mine = run(process.pid);
    expect([mine.status, mine.stdout]).toEqual([0, "a b\n"]);
    // a harness killed between the fork and the joins: the shell is init's (or another reaper's), not the owner's
    const orphan = run(1);
    expect([orphan.status, orphan.stdout]).toEqual([125, ""]);
    expect(orphan.stderr).toContain("the harness (pid 1) that spawned this is gone; not starting echo");
  });
});
