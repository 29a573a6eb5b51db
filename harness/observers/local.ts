/**
 * Local-platform observer: reads each host's cgroup counters (cgroup v1 cpuacct/cpu.stat/memory/blkio, or v2
 * cpu.stat/memory.current/io.stat), its data-plane interface counters and the run delay of its tasks
 * (/proc/<tid>/schedstat field 2 summed over the cgroup's tasks), and the machine's CPU pressure
 * (/proc/pressure/cpu), steal (/proc/stat) and the harness's own CPU (process.cpuUsage(), getrusage(RUSAGE_SELF));
 * every file with a synchronous read and the interface counters through a task in the host's namespace, so that a
 * sample costs the harness well under a millisecond of CPU per host (infra/local/kernel-file.ts, NetnsInterfaceCounters);
 * two readings make a window of rates over the real elapsed time between them (window math in ./window.ts, shared
 * with the remote observer; counters parsed by core/schedstat.ts).
 */
import { readCgroupTaskWaits, readCgroupUsage } from "../../infra/local/cgroup.ts";
import { readKernelFile } from "../../infra/local/kernel-file.ts";
import { NetnsInterfaceCounters } from "../../infra/local/netns.ts";
import type { LocalHost } from "../../core/hosts.ts";
import { parsePressure, parseProcStatCpu } from "../../core/schedstat.ts";
import type { Observer } from "./types.ts";
import {
  type HostReading,
  harnessNow,
  type MachineReading,
  runDelayAccumulator,
  windowedObserver,
  ZERO_NET,
} from "./window.ts";
export { runDelayAccumulator } from "./window.ts";

/** A procfs file's text (read synchronously: infra/local/kernel-file.ts), or undefined when it cannot be read. */
function readOptional(file: string): string | undefined {
  try {
    return readKernelFile(file);
  } catch {
    return undefined; // no PSI (CONFIG_PSI off or psi=0: EOPNOTSUPP), no procfs
  }
}

/** The machine's counters now: PSI cpu "some", /proc/stat ticks, this process's CPU. */
export async function readMachine(): Promise<MachineReading> {
  const t = harnessNow();
  const psi = parsePressure(readOptional("/proc/pressure/cpu") ?? "");
  const stat = parseProcStatCpu(readOptional("/proc/stat") ?? "");
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
  // the data-plane counters through a task of the host inside its namespace, not an `ip` process per read
  const nets = new Map(
    hosts.flatMap((h) =>
      h.netns && h.interface ? [[h.name, new NetnsInterfaceCounters(h.netns, h.interface)] as const] : [],
    ),
  );
  const readHost = async (host: LocalHost): Promise<HostReading> => {
    const t = harnessNow();
    const usage = await readCgroupUsage(host.cgroup);
    const waits = await readCgroupTaskWaits(host.cgroup);
    const net = (await nets.get(host.name)?.read(waits.keys())) ?? ZERO_NET;
    const runDelayNs = delays.get(host.name)!.add(waits);
    return { t, ...usage, ...net, runDelayNs };
  };
  return windowedObserver(
    async () => {
      const readings = new Map<string, HostReading>();
      for (const host of hosts) readings.set(host.name, await readHost(host));
      return readings;
    },
    cappedHosts,
    readMachine,
  );
}
