/**
 * Observer contract: telemetry sampled per window, independent of what generators or collectors claim.
 */

/** One host over one window. Rates are per second of real elapsed time between two reads. */
export interface HostWindow {
  /** CPU used, in cores (cpu time / wall time) */
  cpuCores: number;
  /** share of CFS periods in which the host's cgroup was throttled (0..1); null when no CPU cap applies */
  throttledShare: number | null;
  /** CFS periods elapsed and throttled in this window (cpu.stat nr_periods / nr_throttled deltas) */
  periods: number;
  throttledPeriods: number;
  throttledMs: number;
  memoryBytes: number;
  memoryPeakBytes: number;
  /** charge less inactive file pages (see CgroupUsage.memoryWorkingSetBytes) */
  memoryWorkingSetBytes: number;
  /** anonymous memory, the processes' own (see CgroupUsage.memoryAnonBytes); absent where not read */
  memoryAnonBytes?: number;
  ioReadBytesPerSec: number;
  ioWriteBytesPerSec: number;
  ioReadOpsPerSec: number;
  ioWriteOpsPerSec: number;
  /** data-plane interface, bytes and packets per second, as seen from inside the host */
  netRxBytesPerSec: number;
  netTxBytesPerSec: number;
  netRxPacketsPerSec: number;
  netTxPacketsPerSec: number;
  /** this host's window length, ms (absent in older series) */
  dtMs?: number;
  /** schedstat run delay summed over the host's tasks in this window, ms (absent where the observer reads none) */
  runDelayMs?: number;
  /** run delay less the time the host's own CPU cap throttled it (cpu.stat throttled_time), ms, ≥ 0: waiting for a CPU other load held */
  contentionMs?: number;
}

/** The machine over one window: CPU pressure, steal, and the harness's own CPU (local observer). */
export interface MachineWindow {
  /** /proc/pressure/cpu "some" stall time / wall time (null without PSI) */
  psiCpuSomeShare: number | null;
  /** /proc/stat steal ticks / all ticks (null when unreadable) */
  stealShare: number | null;
  /** the harness process's CPU, cores (getrusage(RUSAGE_SELF) = /proc/self/stat utime + stime) */
  harnessCores: number;
}

export interface ObserverWindow {
  /** window end, epoch ms */
  t: number;
  /** window length in ms (real elapsed time between reads) */
  dtMs: number;
  hosts: Record<string, HostWindow>;
  /** machine-wide figures, where the observer reads them (local platform) */
  machine?: MachineWindow;
}

export interface Observer {
  /** take a reading now; returns the window since the previous reading (null on the first call) */
  read(): Promise<ObserverWindow | null>;
}
