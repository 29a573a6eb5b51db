/**
 * `gc --dry-run` on the local platform (infra/local/gc.ts collectLeftovers `dryRun`), with real cgroup v1 directories,
 * files and owner markers: it lists a dead run's registry and what exists of it, the leftovers found by name, the
 * owner markers of dead owners and the record it would mark interrupted, removes and rewrites nothing, leaves a live
 * owner's run (known by its marker) out; the removal that follows removes exactly what the dry run listed.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { collectLeftovers, type GcReport } from "../../../infra/local/gc.ts";
import {
  ownersDir,
  processStartTicks,
  registryPath,
  writeOwnerMarker,
  writeRegistry,
} from "../../../infra/local/platform.ts";
import { gcSummary, type GcOutput } from "../../../harness/cli/commands/gc.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-gc-dry-"));
const savedTmp = process.env.TMPDIR;
const [dead, byName, live] = [0, 1, 2].map(() => randomBytes(3).toString("hex")) as [string, string, string];
const cg = (run: string, host: string) =>
  ["cpu", "memory"].map((c) => path.join("/sys/fs/cgroup", c, "ingestbench", run, host));
const deadLeaves = cg(dead, "sink");
const byNameLeaves = cg(byName, "loadgen");
const liveLeaves = cg(live, "sink");
// the same pid with another start time is a reused pid: its owner is gone (platform.ts isOwnerAlive)
const goneOwner = { ownerPid: process.pid, ownerStartTicks: processStartTicks(process.pid)! + 1 };

afterAll(() => {
  for (const d of [...deadLeaves, ...byNameLeaves, ...liveLeaves])
    for (const x of [d, path.dirname(d)])
      try {
        execFileSync("rmdir", [x], { stdio: "ignore" });
      } catch {
        /* removed by gc */
      }
  for (const r of [dead, byName, live]) rmSync(path.join(ownersDir(), r), { force: true });
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(tmp, { recursive: true, force: true });
});

/** The entries of a report that name one of this test's runs (the machine may hold other runs' leftovers). */
const ours = (r: GcReport) => {
  const mine = (x: string) => [dead, byName, live].some((id) => x.includes(id));
  return {
    runs: r.runs.filter(mine),
    netns: r.netns.filter(mine),
    cgroups: r.cgroups.filter(mine).sort(),
    dirs: r.dirs.filter(mine).sort(),
    mounts: r.mounts.filter(mine),
    registries: r.registries.filter(mine),
    markers: r.markers.filter(mine).sort(),
    records: r.records.filter((x) => x.startsWith(tmp)),
  };
};

describe("gc --dry-run on the local platform (real cgroups, files, owner markers)", () => {
  it("lists what gc would remove, removes nothing, and the removal after it removes exactly that", async () => {
    process.env.TMPDIR = tmp;
    for (const d of [...deadLeaves, ...byNameLeaves, ...liveLeaves]) mkdirSync(d, { recursive: true });
    const runDir = path.join(tmp, `ingestbench-${dead}`);
    const oldDir = path.join(tmp, `ingestbench-${byName}`);
    const configDir = path.join(tmp, "ib-pulumi-config-999999999-abc123");
    for (const d of [runDir, oldDir, configDir]) mkdirSync(d, { recursive: true });
    const fiveHoursAgo = (Date.now() - 5 * 3600_000) / 1000;
    utimesSync(oldDir, fiveHoursAgo, fiveHoursAgo);
    const record = path.join(tmp, "results", "run.json");
    mkdirSync(path.dirname(record), { recursive: true });
    writeFileSync(record, JSON.stringify({ status: "running" }));
    writeRegistry({
      runId: dead,
      ...goneOwner,
      createdAt: new Date().toISOString(),
      cgroupVersion: "v1",
      netns: [`ib-${dead}-sink`],
      cgroups: deadLeaves,
      dirs: [runDir],
      mounts: [path.join(runDir, "sink")],
      resultRecord: record,
    });
    writeOwnerMarker({ runId: dead, ...goneOwner });
    writeOwnerMarker({ runId: byName, ...goneOwner });
    writeOwnerMarker({
      runId: live,
      ownerPid: process.pid,
      ownerStartTicks: processStartTicks(process.pid)!,
    });
    // a process of the dead run, orphaned (its parent, the shell, is gone: init adopts it, as after a SIGKILLed
    // harness), in its cgroups: listed, and ended with them
    const orphan = Number(
      execFileSync("sh", ["-c", "sleep 300 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" }).trim(),
    );
    for (const d of deadLeaves) writeFileSync(path.join(d, "cgroup.procs"), String(orphan));

    const dry = await collectLeftovers({ tmpRoot: tmp, graceMs: 200, dryRun: true });
    expect(dry.processes).toContain(orphan);
    expect(() => process.kill(orphan, 0)).not.toThrow(); // listed, not ended
    expect(dry.dryRun).toBe(true);
    expect(dry.errors).toEqual([]);
    expect(dry.live).toContain(live);
    const listed = ours(dry);
    expect(listed).toEqual({
      runs: [dead],
      netns: [], // the registry's namespace does not exist: not listed
      cgroups: [
        ...deadLeaves,
        ...deadLeaves.map(path.dirname),
        ...byNameLeaves,
        ...byNameLeaves.map(path.dirname),
      ].sort(),
      dirs: [runDir, oldDir].sort(),
      mounts: [], // nothing is mounted there
      registries: [registryPath(dead)],
      markers: [path.join(ownersDir(), byName)], // the dead registry's own marker goes with the registry
      records: [record],
    });
    expect(dry.dirs).toContain(configDir);
    // nothing removed or rewritten
    for (const p of [
      ...deadLeaves,
      ...byNameLeaves,
      ...liveLeaves,
      runDir,
      oldDir,
      configDir,
      registryPath(dead),
      ...[dead, byName, live].map((r) => path.join(ownersDir(), r)),
    ])
      expect(existsSync(p), p).toBe(true);
    expect(JSON.parse(readFileSync(record, "utf8"))).toEqual({ status: "running" });

    const text = gcSummary({
      ...dry,
      errors: [],
      deployments: { dryRun: true, collected: [], expired: [], live: [], errors: [] },
      locks: { dryRun: true, removed: [], live: [] },
      pulumi: { dryRun: true, stacks: [], destroyed: [], errors: [] },
    } as unknown as GcOutput);
    expect(text).toMatch(/^local leftovers: --dry-run: would remove \d+ run\(s\), .*\(nothing removed\)$/m);
    expect(text).toContain(`  registry file(s): ${registryPath(dead)}`);
    expect(text).toMatch(
      new RegExp(`^ {2}cgroup\\(s\\): .*/sys/fs/cgroup/cpu/ingestbench/${byName}/loadgen`, "m"),
    );
    expect(text).toContain(`  would mark interrupted: ${record}`);
    expect(text).toMatch(
      new RegExp(`^ {2}processes that would be ended with their cgroups: pid .*\\b${orphan}\\b`, "m"),
    );

    // the same call without dryRun removes exactly what was listed
    const real = await collectLeftovers({ tmpRoot: tmp, graceMs: 200 });
    expect(real.errors).toEqual([]);
    expect(real.processes).toContain(orphan);
    // ended: gone, or a zombie until its adoptive parent reaps it
    expect(
      existsSync(`/proc/${orphan}`)
        ? readFileSync(`/proc/${orphan}/stat`, "utf8").split(") ")[1]![0]
        : "gone",
    ).toMatch(/^(gone|Z|X)$/);
    expect(ours(real)).toEqual(listed);
    expect([dead, byName].some((r) => existsSync(path.join(ownersDir(), r)))).toBe(false);
    expect(real.dirs).toContain(configDir);
    expect(liveLeaves.every((d) => existsSync(d))).toBe(true);
    expect([...deadLeaves, ...byNameLeaves, runDir, oldDir, configDir].some((p) => existsSync(p))).toBe(
      false,
    );
  });
});
