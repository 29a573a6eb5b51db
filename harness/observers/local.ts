/**
 * Local-platform observer: reads each host's cgroup counters (cgroup v1 cpuacct/cpu.stat/memory/blkio, or v2
 * cpu.stat/memory.current/io.stat), its data-plane interface counters and the run delay of its tasks
 * (/proc/<tid>/schedstat field 2 summed over the cgroup's tasks), and the machine's CPU pressure
 * (/proc/pressure/cpu), steal (/proc/stat) and the harness's own CPU (process.cpuUsage(), getrusage(RUSAGE_SELF));
 * two readings make a window of rates over the real elapsed time between them (window math in ./window.ts, shared
 * with the remote observer; counters parsed by core/schedstat.ts).
 */
import fs from "node:fs/promises";
import { readCgroupTaskWaits, readCgroupUsage } from "../../infra/local/cgroup.ts";
import { readInterfaceCounters } from "../../infra/local/netns.ts";
import type { LocalHost } from "../../core/hosts.ts";
import { parsePressure, parseProcStatCpu } from "../../core/schedstat.ts";
import type { Observer } from "./types.ts";
import { type HostReading, harnessNow, type MachineReading, runDelayAccumulator, windowedObserver, ZERO_NET } from "./window.ts";
export { runDelayAccumulator } from "./window.ts";

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch {
    return undefined; // no PSI (CONFIG_PSI off or psi=0), no procfs
  }
}

/** The machine's counters now: PSI cpu "some", /proc/stat ticks, this process's CPU. */
export async function readMachine(): Promise<MachineReading> {
  const t = harnessNow();
  const psi = parsePressure((await readOptional("/proc/pressure/cpu")) ?? "");
  const stat = parseProcStatCpu((await readOptional("/proc/stat")) ?? "");
  const cpu = process.cpuUsage();
  return {
    t,
    ...(psi ? { psiSomeUs: psi.someUs } : {}),
    ...(stat ? { totalTicks: stat.totalTicks, stealTicks: stat.stealTicks } : {}),
    harnessCpuUs: cpu.user + cpu.system,
  };
}

/**
 * Observe the given hosts. `cappedHosts` names hosts with a CPU cap, whose throttled share is meaningful.
 * Errors reading a host propagate: an observer that silently returns zeros would hide a broken measurement.
 */
export function createLocalObserver(hosts: LocalHost[], cappedHosts: ReadonlySet<string>): Observer {
  const delays = new Map(hosts.map((h) => [h.name, runDelayAccumulator()]));
  const readHost = async (host: LocalHost): Promise<HostReading> => {
    const t = harnessNow();
    const usage = await readCgroupUsage(host.cgroup);
    const net = host.netns && host.interface ? await readInterfaceCounters(host.netns, host.interface) : ZERO_NET;
    const runDelayNs = delays.get(host.name)!.add(await readCgroupTaskWaits(host.cgroup));
    return { t, ...usage, ...net, runDelayNs };
  };
  return windowedObserver(async () => {
    const readings = new Map<string, HostReading>();
    for (const host of hosts) readings.set(host.name, await readHost(host));
    return readings;
  }, cappedHosts, readMachine);
}
