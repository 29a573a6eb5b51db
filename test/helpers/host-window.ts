import type { HostWindow } from "../../harness/observers/types.ts";

/** A HostWindow with every rate 0 and `over` on top (one second long unless given). */
export function hostWindow(over: Partial<HostWindow>): HostWindow {
  return {
    cpuCores: 0,
    throttledShare: null,
    periods: 0,
    throttledPeriods: 0,
    throttledMs: 0,
    memoryBytes: 0,
    memoryPeakBytes: 0,
    memoryWorkingSetBytes: 0,
    ioReadBytesPerSec: 0,
    ioWriteBytesPerSec: 0,
    ioReadOpsPerSec: 0,
    ioWriteOpsPerSec: 0,
    netRxBytesPerSec: 0,
    netTxBytesPerSec: 0,
    netRxPacketsPerSec: 0,
    netTxPacketsPerSec: 0,
    dtMs: 1000,
    ...over,
  };
}
