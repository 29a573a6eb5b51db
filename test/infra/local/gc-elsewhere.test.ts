/**
 * gc and runs whose registry lives under another TMPDIR (real cgroup v1 directories, real processes): a run whose
 * cgroup holds a live harness's child is left alone; once that child's parent is gone (re-parented to init, as
 * after a SIGKILLed harness) the same directories are collected. A run that starts while gc runs keeps its namespace,
 * root-side link and cgroups (real `ip netns`, veth).
 */
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { collectLeftovers } from "../../../infra/local/gc.ts";
import { ownersDir, processStartTicks, writeOwnerMarker } from "../../../infra/local/platform.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-gc-elsewhere-"));
const savedTmp = process.env.TMPDIR;
const runId = randomBytes(3).toString("hex");
const dirs = ["cpu", "memory"].map((c) => path.join("/sys/fs/cgroup", c, "ingestbench", runId, "sink"));
const pids: number[] = [];
afterAll(() => {
  for (const p of pids)
    try {
      process.kill(p, "SIGKILL");
    } catch {
      /* gone */
    }
  for (const d of dirs)
    for (const x of [d, path.dirname(d)])
      try {
        execFileSync("rmdir", [x], { stdio: "ignore" });
      } catch {
        /* removed by gc */
      }
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(tmp, { recursive: true, force: true });
});

const markerRun = randomBytes(3).toString("hex");
const markerDirs = ["cpu", "memory"].map((c) =>
  path.join("/sys/fs/cgroup", c, "ingestbench", markerRun, "sink"),
);
afterAll(() => {
  for (const d of markerDirs)
    for (const x of [d, path.dirname(d)])
      try {
        execFileSync("rmdir", [x], { stdio: "ignore" });
      } catch {
        /* removed by gc */
      }
  rmSync(path.join(ownersDir(), markerRun), { force: true });
});

const join = (pid: number) => {
  for (const d of dirs) writeFileSync(path.join(d, "cgroup.procs"), `${pid}\n`);
};

describe("gc: a run registered under another TMPDIR (real cgroups, real processes)", () => {
  it("is left alone while a live harness's child runs in its cgroup, and collected once that child is init's", async () => {
    process.env.TMPDIR = tmp; // no registry of this run here
    for (const d of dirs) mkdirSync(d, { recursive: true });
    const child = spawn("sleep", ["60"], { stdio: "ignore" }); // parent: this process, alive and outside the cgroup
    pids.push(child.pid!);
    join(child.pid!);
    const first = await collectLeftovers({ tmpRoot: tmp, graceMs: 200 });
    expect(first.live).toContain(runId);
    expect(dirs.every((d) => existsSync(d))).toBe(true);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    // an orphan: sh starts sleep in the background and exits, so sleep's parent becomes init
    const orphan = Number(execFileSync("sh", ["-c", "sleep 60 >/dev/null 2>&1 & echo $!"]).toString().trim());
    pids.push(orphan);
    join(orphan);
    const second = await collectLeftovers({ tmpRoot: tmp, graceMs: 200 });
    expect(second.live).not.toContain(runId);
    expect(dirs.some((d) => existsSync(d))).toBe(false);
  });

  it("leaves an empty cgroup of a live owner's run alone by its owner marker (before its first process), and collects it once the owner is gone", async () => {
    process.env.TMPDIR = tmp; // the run's registry is elsewhere: only the marker, which ignores TMPDIR, names its owner
    for (const d of markerDirs) mkdirSync(d, { recursive: true });
    writeOwnerMarker({
      runId: markerRun,
      ownerPid: process.pid,
      ownerStartTicks: processStartTicks(process.pid)!,
    });
    const first = await collectLeftovers({ tmpRoot: tmp, graceMs: 200 });
    expect(first.live).toContain(markerRun);
    expect(markerDirs.every((d) => existsSync(d))).toBe(true);
    expect(existsSync(path.join(ownersDir(), markerRun))).toBe(true);
    // the same pid with another start time is a reused pid, not the owner
    writeOwnerMarker({
      runId: markerRun,
      ownerPid: process.pid,
      ownerStartTicks: processStartTicks(process.pid)! + 1,
    });
    const second = await collectLeftovers({ tmpRoot: tmp, graceMs: 200 });
    expect(second.live).not.toContain(markerRun);
    expect(markerDirs.some((d) => existsSync(d))).toBe(false);
    expect(existsSync(path.join(ownersDir(), markerRun))).toBe(false);
  });

  it("removes the half-written registry and marker files (<file>.<pid>.tmp) of a writer that is gone, and leaves a live writer's", async () => {
    process.env.TMPDIR = tmp;
    const regDir = path.join(tmp, "ingestbench-runs");
    mkdirSync(regDir, { recursive: true });
    const gone = spawn("true");
    await new Promise((r) => gone.once("exit", r)); // a pid that no longer runs
    const id = randomBytes(3).toString("hex");
    const files = [
      path.join(regDir, `${id}.json.${gone.pid}.tmp`),
      path.join(ownersDir(), `${id}.${gone.pid}.tmp`),
    ];
    const mine = path.join(regDir, `${id}.json.${process.pid}.tmp`);
    for (const f of [...files, mine]) writeFileSync(f, "{");
    try {
      const r = await collectLeftovers({ tmpRoot: tmp, graceMs: 200 });
      expect(r.errors).toEqual([]);
      for (const f of files) expect(existsSync(f), f).toBe(false);
      expect(r.registries).toEqual(expect.arrayContaining(files));
      expect(existsSync(mine)).toBe(true); // this process may still rename it
    } finally {
      for (const f of [...files, mine]) rmSync(f, { force: true });
    }
  });

  it("spares a run that starts while gc runs, after the live runs were read: its namespace, root-side link and cgroup stay", async () => {
    process.env.TMPDIR = tmp;
    const id = randomBytes(3).toString("hex");
    const ns = `ib-${id}-h`;
    const link = `ib${id}c0`;
    const cg = path.join("/sys/fs/cgroup/cpu/ingestbench", id, "h");
    try {
      const r = await collectLeftovers({
        tmpRoot: tmp,
        graceMs: 200,
        // what platform.ts does when a run starts: the owner marker first, then the resources
        beforeSweep: async () => {
          writeOwnerMarker({
            runId: id,
            ownerPid: process.pid,
            ownerStartTicks: processStartTicks(process.pid)!,
          });
          execFileSync("ip", ["netns", "add", ns]);
          execFileSync("ip", ["link", "add", link, "type", "veth", "peer", "name", `${link}h`, "netns", ns]);
          mkdirSync(cg, { recursive: true });
        },
      });
      expect(r.errors).toEqual([]);
      expect(r.live).toContain(id);
      expect(r.netns).not.toContain(ns);
      expect(execFileSync("ip", ["netns", "list"]).toString()).toContain(ns);
      expect(execFileSync("ip", ["-n", ns, "link", "show", `${link}h`]).toString()).toContain(`${link}h`);
      expect(existsSync(cg)).toBe(true);
    } finally {
      try {
        execFileSync("ip", ["link", "del", link], { stdio: "ignore" });
      } catch {
        /* gone */
      }
      try {
        execFileSync("ip", ["netns", "del", ns], { stdio: "ignore" });
      } catch {
        /* gone */
      }
      for (const x of [cg, path.dirname(cg)])
        try {
          execFileSync("rmdir", [x], { stdio: "ignore" });
        } catch {
          /* gone */
        }
      rmSync(path.join(ownersDir(), id), { force: true });
    }
  });
});
