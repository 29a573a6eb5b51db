/**
 * Local-platform observer: reads each host's cgroup counters (cgroup v1 cpuacct/cpu.stat/memory/blkio, or v2
 * cpu.stat/memory.current/io.stat) and its data-plane interface counters, and turns two readings into a window
 * of rates over the real elapsed time between them.
 */
import { type CgroupUsage, readCgroupUsage } from "../../infra/local/cgroup.ts";
import { type InterfaceCounters, readInterfaceCounters } from "../../infra/local/netns.ts";
import type { LocalHost } from "../../infra/local/types.ts";
import type { HostWindow, Observer, ObserverWindow } from "./types.ts";

/** One host's cumulative counters at time t (epoch ms). */
type Reading = CgroupUsage & InterfaceCounters & { t: number };

const ZERO_NET: InterfaceCounters = { rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0 };

async function readHost(host: LocalHost): Promise<Reading> {
  const t = performance.timeOrigin + performance.now();
  const usage = await readCgroupUsage(host.cgroup);
  const net = host.netns && host.interface ? await readInterfaceCounters(host.netns, host.interface) : ZERO_NET;
  return { t, ...usage, ...net };
}

/** Rate of a cumulative counter between two readings; counters that went backwards (reset) count as 0. */
function rate(now: number, before: number, dtS: number): number {
  return dtS > 0 && now >= before ? (now - before) / dtS : 0;
}

function window(now: Reading, before: Reading, capped: boolean): HostWindow {
  const dtS = (now.t - before.t) / 1000;
  const periods = Math.max(0, now.nrPeriods - before.nrPeriods);
  const throttledPeriods = Math.max(0, now.nrThrottled - before.nrThrottled);
  return {
    cpuCores: rate(now.cpuUsageNs, before.cpuUsageNs, dtS) / 1e9,
    throttledShare: capped ? (periods > 0 ? throttledPeriods / periods : 0) : null,
    periods,
    throttledPeriods,
    throttledMs: Math.max(0, now.throttledNs - before.throttledNs) / 1e6,
    memoryBytes: now.memoryBytes,
    memoryPeakBytes: now.memoryPeakBytes,
    memoryWorkingSetBytes: now.memoryWorkingSetBytes,
    ioReadBytesPerSec: rate(now.ioReadBytes, before.ioReadBytes, dtS),
    ioWriteBytesPerSec: rate(now.ioWriteBytes, before.ioWriteBytes, dtS),
    ioReadOpsPerSec: rate(now.ioReadOps, before.ioReadOps, dtS),
    ioWriteOpsPerSec: rate(now.ioWriteOps, before.ioWriteOps, dtS),
    netRxBytesPerSec: rate(now.rxBytes, before.rxBytes, dtS),
    netTxBytesPerSec: rate(now.txBytes, before.txBytes, dtS),
    netRxPacketsPerSec: rate(now.rxPackets, before.rxPackets, dtS),
    netTxPacketsPerSec: rate(now.txPackets, before.txPackets, dtS),
  };
}

/**
 * Observe the given hosts. `cappedHosts` names hosts with a CPU cap, whose throttled share is meaningful.
 * Errors reading a host propagate: an observer that silently returns zeros would hide a broken measurement.
 */
export function createLocalObserver(hosts: LocalHost[], cappedHosts: ReadonlySet<string>): Observer {
  let previous: Map<string, Reading> | null = null;
  return {
    async read(): Promise<ObserverWindow | null> {
      const readings = new Map<string, Reading>();
      for (const host of hosts) readings.set(host.name, await readHost(host));
      const before = previous;
      previous = readings;
      if (!before) return null;
      const out: Record<string, HostWindow> = {};
      let t = 0;
      let dtMs = 0;
      for (const [name, now] of readings) {
        const prev = before.get(name);
        if (!prev) continue;
        out[name] = window(now, prev, cappedHosts.has(name));
        t = Math.max(t, now.t);
        dtMs = Math.max(dtMs, now.t - prev.t);
      }
      return { t, dtMs, hosts: out };
    },
  };
}
