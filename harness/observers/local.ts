/**
 * Local-platform observer: reads each host's cgroup counters (cgroup v1 cpuacct/cpu.stat/memory/blkio, or v2
 * cpu.stat/memory.current/io.stat) and its data-plane interface counters, and turns two readings into a window
 * of rates over the real elapsed time between them (window math in ./window.ts, shared with the remote observer).
 */
import { readCgroupUsage } from "../../infra/local/cgroup.ts";
import { readInterfaceCounters } from "../../infra/local/netns.ts";
import type { LocalHost } from "../../core/hosts.ts";
import type { Observer } from "./types.ts";
import { type HostReading, harnessNow, windowedObserver, ZERO_NET } from "./window.ts";

async function readHost(host: LocalHost): Promise<HostReading> {
  const t = harnessNow();
  const usage = await readCgroupUsage(host.cgroup);
  const net = host.netns && host.interface ? await readInterfaceCounters(host.netns, host.interface) : ZERO_NET;
  return { t, ...usage, ...net };
}

/**
 * Observe the given hosts. `cappedHosts` names hosts with a CPU cap, whose throttled share is meaningful.
 * Errors reading a host propagate: an observer that silently returns zeros would hide a broken measurement.
 */
export function createLocalObserver(hosts: LocalHost[], cappedHosts: ReadonlySet<string>): Observer {
  return windowedObserver(async () => {
    const readings = new Map<string, HostReading>();
    for (const host of hosts) readings.set(host.name, await readHost(host));
    return readings;
  }, cappedHosts);
}
