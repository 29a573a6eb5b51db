/**
 * A killed run's processes that its cgroups do not hold: what a SIGKILLed harness had started and not yet moved into
 * a host's cgroup. host.spawn's shell (platform.ts) joins the host's cgroups before it execs the program, so between
 * its fork and its `echo $$ > cgroup.procs` it is outside them; a process the harness ran itself (a `cp -a` of a
 * cache entry, core/cache.ts, before it went through host.spawn) is outside them for good. Killed with their harness's
 * run, such processes go on writing into the run's directory while gc removes it (`ENOTEMPTY … rmdir
 * '…/sink/data/pg/base/5'`, test/e2e/kill-safety.test.ts), or start the program afterwards.
 *
 * A process is such a stray of the run when it is in none of the run's cgroups (those are the cgroup kill's:
 * cgroup.ts killCgroupProcesses), it started after the run's owner (its start time in clock ticks since boot, field
 * 22 of /proc/<pid>/stat, at or after the owner's) and it works in the run: its command line names one of the run's
 * directories or the run's cgroups (`/ingestbench/<runId>/`: host.spawn's shell names the cgroup.procs files it
 * joins), or its cwd, root or an open file lies under one of the run's directories; and so is every descendant of
 * such a process (started after it, whatever it names). gc (gc.ts, platform.ts
 * removeRunResources) ends them by pid before it kills the cgroups and again when a directory will not go, each pid
 * checked against its start time right before the signal (pids are reused).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { CGROUP_PARENT } from "./cgroup.ts";

/** Which run's processes to look for. */
export interface StrayQuery {
  runId: string;
  /** the run's directories (its registry's `dirs`: the run directory `ingestbench-<runId>`) */
  dirs: string[];
  /** the earliest start time of the run's processes, clock ticks since boot (the owner's start; 0: any) */
  sinceTicks: number;
}

/** A process of the run found outside its cgroups: pid, start time (ticks) and what tied it to the run. */
export interface Stray {
  pid: number;
  startTicks: number;
  why: string;
}

/** ppid and start time (clock ticks since boot) of a process, from /proc/<pid>/stat; undefined when it is gone. */
export async function procStat(pid: number): Promise<{ ppid: number; startTicks: number } | undefined> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from 3 on: the command may hold spaces
    return { ppid: Number(f[1]), startTicks: Number(f[19]) };
  } catch {
    return undefined;
  }
}

/**
 * Clock ticks since boot at wall-clock time `ms` (ms since the epoch), from the boot time in /proc/stat (`btime`,
 * whole seconds) and USER_HZ 100 (the kernel's fixed unit of /proc/<pid>/stat times); undefined when unreadable.
 * One second early, so that a process started at `ms` is never later than the result.
 */
export async function ticksAt(ms: number): Promise<number | undefined> {
  const text = await fs.readFile("/proc/stat", "utf8").catch(() => "");
  const btime = Number(/^btime (\d+)$/m.exec(text)?.[1]);
  if (!Number.isFinite(btime)) return undefined;
  return Math.max(0, Math.floor((ms / 1000 - btime - 1) * 100));
}

/** This process and its ancestors: never strays (a teardown or a gc may run inside a run's directory). */
async function selfAndAncestors(): Promise<Set<number>> {
  const out = new Set<number>();
  for (let pid = process.pid; pid > 1 && !out.has(pid);) {
    out.add(pid);
    const st = await procStat(pid);
    if (!st) break;
    pid = st.ppid;
  }
  return out;
}

const under = (p: string, dirs: string[]): boolean => dirs.some((d) => p === d || p.startsWith(`${d}/`));

/** Why process `pid` is a stray of the run (see the module doc), or undefined when it is not one. */
async function tie(pid: number, q: StrayQuery): Promise<string | undefined> {
  const proc = `/proc/${pid}`;
  const marker = `/${CGROUP_PARENT}/${q.runId}/`;
  const cgroup = await fs.readFile(`${proc}/cgroup`, "utf8").catch(() => "");
  if (cgroup.split("\n").some((l) => `${l}/`.includes(marker))) return undefined; // the cgroup kill's
  const cmdline = await fs.readFile(`${proc}/cmdline`, "utf8").catch(() => "");
  const arg = cmdline.split("\0").find((a) => a.includes(marker) || q.dirs.some((d) => a.includes(d)));
  if (arg !== undefined) return `its command line names ${arg}`;
  for (const link of ["cwd", "root"]) {
    const to = await fs.readlink(`${proc}/${link}`).catch(() => "");
    if (under(to, q.dirs)) return `its ${link} is ${to}`;
  }
  for (const fd of await fs.readdir(`${proc}/fd`).catch(() => [] as string[])) {
    const to = await fs.readlink(`${proc}/fd/${fd}`).catch(() => "");
    if (under(to, q.dirs)) return `it has ${to} open`;
  }
  return undefined;
}

/**
 * The strays of run `q.runId` (see the module doc) and their descendants (a stray's child need not name the run:
 * `sleep` under a shell), this process and its ancestors left out.
 */
export async function findStrays(q: StrayQuery): Promise<Stray[]> {
  const spared = await selfAndAncestors();
  const found = new Map<number, Stray>();
  const recent = new Map<number, { ppid: number; startTicks: number }>();
  for (const name of await fs.readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (spared.has(pid)) continue;
    const st = await procStat(pid);
    if (!st || st.startTicks < q.sinceTicks) continue;
    recent.set(pid, st);
    const why = await tie(pid, q);
    if (why !== undefined) found.set(pid, { pid, startTicks: st.startTicks, why });
  }
  // descendants: a child starts after its parent, so every one of them is in `recent`
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, st] of recent)
      if (!found.has(pid) && found.has(st.ppid)) {
        found.set(pid, { pid, startTicks: st.startTicks, why: `its parent ${st.ppid} is one` });
        grew = true;
      }
  }
  return [...found.values()];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * End the processes of run `q.runId` found outside its cgroups, by pid, with SIGKILL (the run is dead: what they
 * write is removed next), looking again until a look finds none (a stray may fork before its signal lands), at most
 * `rounds` times (default 20, 50 ms apart). Each pid is signalled only while its start time is the one found.
 * @returns the pids signalled (each once), and those that were still there after the last round
 */
export async function endStrays(
  q: StrayQuery,
  opts: { rounds?: number } = {},
): Promise<{ ended: Stray[]; left: Stray[] }> {
  const ended = new Map<number, Stray>();
  let found: Stray[] = [];
  for (let round = 0; round < (opts.rounds ?? 20); round++) {
    found = await findStrays(q);
    if (found.length === 0) return { ended: [...ended.values()], left: [] };
    for (const s of found) {
      if ((await procStat(s.pid))?.startTicks !== s.startTicks) continue; // gone, or the pid reused
      try {
        process.kill(s.pid, "SIGKILL");
        if (!ended.has(s.pid)) ended.set(s.pid, s);
      } catch (err) {
        if ((err as { code?: string }).code !== "ESRCH") throw err;
      }
    }
    await sleep(50);
  }
  return { ended: [...ended.values()], left: found };
}
