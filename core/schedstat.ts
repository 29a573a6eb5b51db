/**
 * Parsing of the kernel's CPU-wait counters, for the contention observation (docs/design.md, "Contention"):
 * - /proc/<pid>/schedstat (Documentation/scheduler/sched-stats.rst): "<time on cpu ns> <time waiting on a runqueue
 *   ns> <timeslices>"; field 2 is the task's run delay, the time it was runnable but not running.
 * - /proc/pressure/cpu and cgroup v2 cpu.pressure (Documentation/accounting/psi.rst): lines
 *   "some avg10=… avg60=… avg300=… total=<µs>" (and "full …" on newer kernels); total is cumulative µs.
 * - /proc/stat (Documentation/filesystems/proc.rst, "1.7 Miscellaneous kernel statistics"): the first "cpu" line,
 *   user nice system idle iowait irq softirq steal guest guest_nice, in USER_HZ ticks; guest time is already in user.
 * Pure; each parser returns undefined for text it cannot read.
 */

/** One task's /proc/<pid>/schedstat. */
export interface TaskSchedstat {
  /** time spent on a CPU, ns */
  runNs: number;
  /** time spent runnable on a runqueue, waiting for a CPU, ns (run delay) */
  waitNs: number;
  /** number of timeslices run */
  timeslices: number;
}

/** Parse /proc/<pid>/schedstat ("123 456 7"); undefined when it is not three numbers. */
export function parseSchedstat(text: string): TaskSchedstat | undefined {
  const parts = text.trim().split(/\s+/).map(Number);
  if (parts.length < 3 || parts.slice(0, 3).some((n) => !Number.isFinite(n))) return undefined;
  return { runNs: parts[0]!, waitNs: parts[1]!, timeslices: parts[2]! };
}

/**
 * Run delay per task from the output of `grep -H ''` over every /proc/<pid>/task/<tid>/schedstat: lines
 * "/proc/<pid>/task/<tid>/schedstat:<run ns> <wait ns> <slices>". Returns tid → wait ns; lines of another shape
 * (a task that exited between the glob and the read prints nothing) are skipped.
 */
export function parseTaskSchedstatLines(text: string): Map<number, number> {
  const waits = new Map<number, number>();
  for (const line of text.split("\n")) {
    const m = /^\/proc\/\d+\/task\/(\d+)\/schedstat:(.*)$/.exec(line.trim());
    const s = m ? parseSchedstat(m[2]!) : undefined;
    if (m && s) waits.set(Number(m[1]), s.waitNs);
  }
  return waits;
}

/** PSI "some" (and "full" when present) cumulative stall totals, µs. */
export interface PressureTotals {
  someUs: number;
  fullUs?: number;
}

/** Parse a PSI file (/proc/pressure/cpu, cpu.pressure); undefined without a "some … total=" line. */
export function parsePressure(text: string): PressureTotals | undefined {
  let someUs: number | undefined;
  let fullUs: number | undefined;
  for (const line of text.split("\n")) {
    const m = /^(some|full)\s.*\btotal=(\d+)/.exec(line.trim());
    if (!m) continue;
    if (m[1] === "some") someUs = Number(m[2]);
    else fullUs = Number(m[2]);
  }
  if (someUs === undefined) return undefined;
  return fullUs === undefined ? { someUs } : { someUs, fullUs };
}

/** All-CPU time from /proc/stat, ticks: the total (guest excluded, it is counted in user) and its steal part. */
export interface CpuTicks {
  totalTicks: number;
  stealTicks: number;
}

/** Parse the aggregate "cpu " line of /proc/stat; undefined when absent. */
export function parseProcStatCpu(text: string): CpuTicks | undefined {
  const line = text.split("\n").find((l) => /^cpu\s/.test(l));
  if (!line) return undefined;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  if (v.length < 4 || v.some((n) => !Number.isFinite(n))) return undefined;
  const totalTicks = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return { totalTicks, stealTicks: v[7] ?? 0 };
}
