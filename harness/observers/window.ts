/**
 * The math every observer shares: two timed readings of a host's cumulative counters → one HostWindow of rates
 * over the real elapsed time between them, and a set of per-host readings → one ObserverWindow.
 */
import type { CgroupUsage } from "../../infra/local/cgroup.ts";
import type { InterfaceCounters } from "../../infra/local/netns.ts";
import type { HostWindow, MachineWindow, ObserverWindow } from "./types.ts";

/**
 * One host's cumulative counters (cgroup + data-plane interface) at time t (epoch ms, harness clock); `runDelayNs`,
 * where read, is the run delay of the host's tasks accumulated by the observer (monotonic across task exits).
 */
export type HostReading = CgroupUsage & InterfaceCounters & { t: number; runDelayNs?: number };

/** Machine-wide cumulative counters at time t: PSI cpu "some" total µs, /proc/stat ticks, the harness's CPU µs. */
export interface MachineReading {
  t: number;
  psiSomeUs?: number;
  totalTicks?: number;
  stealTicks?: number;
  harnessCpuUs: number;
}

/** The machine window between two readings (shares of wall time or of all CPU time; null when not read). */
export function machineWindow(now: MachineReading, before: MachineReading): MachineWindow {
  const dtUs = (now.t - before.t) * 1000;
  const ticks =
    now.totalTicks !== undefined && before.totalTicks !== undefined
      ? now.totalTicks - before.totalTicks
      : undefined;
  return {
    psiCpuSomeShare:
      now.psiSomeUs !== undefined && before.psiSomeUs !== undefined && dtUs > 0
        ? Math.max(0, now.psiSomeUs - before.psiSomeUs) / dtUs
        : null,
    stealShare:
      ticks !== undefined && ticks > 0
        ? Math.max(0, (now.stealTicks ?? 0) - (before.stealTicks ?? 0)) / ticks
        : null,
    harnessCores: dtUs > 0 ? Math.max(0, now.harnessCpuUs - before.harnessCpuUs) / dtUs : 0,
  };
}

/** Interface counters of a host without a data-plane interface to read. */
export const ZERO_NET: InterfaceCounters = { rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0 };

/** The harness clock: epoch milliseconds, monotonic within the process (performance.timeOrigin + performance.now()). */
export const harnessNow = (): number => performance.timeOrigin + performance.now();

/**
 * A host's run delay as a monotonic counter: per task, the growth since the previous read (a task new since then
 * counts its whole run delay, which it accrued after the previous read or at its start); tasks that exit keep what
 * they added. `read` returns the total accumulated so far, ns.
 */
export function runDelayAccumulator(): { add(waits: ReadonlyMap<number, number>): number } {
  let last = new Map<number, number>();
  let total = 0;
  return {
    add(waits) {
      for (const [tid, ns] of waits) total += Math.max(0, ns - (last.get(tid) ?? 0));
      last = new Map(waits);
      return total;
    },
  };
}

/** Rate per second of a cumulative counter between two readings; counters that went backwards (reset) count as 0. */
function rate(now: number, before: number, dtS: number): number {
  return dtS > 0 && now >= before ? (now - before) / dtS : 0;
}

/**
 * One host's window between two readings. `capped`: the host has a CPU cap, so throttledShare (nr_throttled /
 * nr_periods delta, sched-bwc.rst) is meaningful; otherwise it is null. Memory figures are the latest reading's.
 */
export function hostWindow(now: HostReading, before: HostReading, capped: boolean): HostWindow {
  const dtS = (now.t - before.t) / 1000;
  const periods = Math.max(0, now.nrPeriods - before.nrPeriods);
  const throttledPeriods = Math.max(0, now.nrThrottled - before.nrThrottled);
  const throttledMs = Math.max(0, now.throttledNs - before.throttledNs) / 1e6;
  const runDelayMs =
    now.runDelayNs !== undefined && before.runDelayNs !== undefined
      ? Math.max(0, now.runDelayNs - before.runDelayNs) / 1e6
      : undefined;
  return {
    cpuCores: rate(now.cpuUsageNs, before.cpuUsageNs, dtS) / 1e9,
    throttledShare: capped ? (periods > 0 ? throttledPeriods / periods : 0) : null,
    periods,
    throttledPeriods,
    throttledMs,
    memoryBytes: now.memoryBytes,
    memoryPeakBytes: now.memoryPeakBytes,
    memoryWorkingSetBytes: now.memoryWorkingSetBytes,
    ...(now.memoryAnonBytes !== undefined ? { memoryAnonBytes: now.memoryAnonBytes } : {}),
    ioReadBytesPerSec: rate(now.ioReadBytes, before.ioReadBytes, dtS),
    ioWriteBytesPerSec: rate(now.ioWriteBytes, before.ioWriteBytes, dtS),
    ioReadOpsPerSec: rate(now.ioReadOps, before.ioReadOps, dtS),
    ioWriteOpsPerSec: rate(now.ioWriteOps, before.ioWriteOps, dtS),
    netRxBytesPerSec: rate(now.rxBytes, before.rxBytes, dtS),
    netTxBytesPerSec: rate(now.txBytes, before.txBytes, dtS),
    netRxPacketsPerSec: rate(now.rxPackets, before.rxPackets, dtS),
    netTxPacketsPerSec: rate(now.txPackets, before.txPackets, dtS),
    dtMs: now.t - before.t,
    ...(runDelayMs !== undefined ? { runDelayMs, contentionMs: Math.max(0, runDelayMs - throttledMs) } : {}),
  };
}

/**
 * The window between two sets of readings (host name → reading). Hosts absent from `before` are skipped.
 * `t` is the latest reading time, `dtMs` the longest host interval (hosts are read at slightly different times).
 */
export function observerWindow(
  readings: ReadonlyMap<string, HostReading>,
  before: ReadonlyMap<string, HostReading>,
  cappedHosts: ReadonlySet<string>,
): ObserverWindow {
  const hosts: Record<string, HostWindow> = {};
  let t = 0;
  let dtMs = 0;
  for (const [name, now] of readings) {
    const prev = before.get(name);
    if (!prev) continue;
    hosts[name] = hostWindow(now, prev, cappedHosts.has(name));
    t = Math.max(t, now.t);
    dtMs = Math.max(dtMs, now.t - prev.t);
  }
  return { t, dtMs, hosts };
}

/**
 * An Observer over any per-host reader: `readAll` returns every host's reading now; read() returns the window
 * since the previous call (null on the first).
 */
export function windowedObserver(
  readAll: () => Promise<Map<string, HostReading>>,
  cappedHosts: ReadonlySet<string>,
  readMachine?: () => Promise<MachineReading>,
): { read(): Promise<ObserverWindow | null> } {
  let previous: Map<string, HostReading> | null = null;
  let previousMachine: MachineReading | undefined;
  return {
    async read(): Promise<ObserverWindow | null> {
      const readings = await readAll();
      const machine = readMachine ? await readMachine() : undefined;
      const before = previous;
      const beforeMachine = previousMachine;
      previous = readings;
      previousMachine = machine;
      if (!before) return null;
      const w = observerWindow(readings, before, cappedHosts);
      return machine && beforeMachine ? { ...w, machine: machineWindow(machine, beforeMachine) } : w;
    },
  };
}
