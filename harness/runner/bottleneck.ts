/**
 * Names the resource that bound a run from what was observed during the measurement phase.
 *
 * Scores (higher = closer to binding):
 * - cpu, capped host: share of CFS periods throttled (cpu.stat nr_throttled / nr_periods). A cgroup that wants more
 *   than its quota is throttled in nearly every period; one that is not is not CPU-bound, however busy.
 * - cpu, uncapped host: cores used / cores of the machine.
 * - network: observed max(rx, tx) bytes/s on the host's data-plane link / the shaped rate, in the busiest windows
 *   (90th percentile of the per-window rates): a sequential client leaves the link idle while each request
 *   commits, so the mean understates a link that runs at its cap whenever there is data to move.
 * - disk: observed IOPS or bytes/s / the throttle.
 * - memory: largest working set (charge less inactive page cache) / limit; page cache alone is no pressure.
 * A resource binds when its score reaches its threshold (cpu 0.5, others 0.85); the highest such score wins.
 * With none binding:
 * - "latency", when an open-loop (fixed-rate) generator sent less than 90 % of what it offered: the first hop
 *   downstream took less than it was offered while no capped resource was saturated, so round trips bind (one
 *   transaction at a time per connection or worker, commit waits); the host named is that first hop;
 * - else "client": the load pattern bound the run (e.g. one sequential connection of a closed loop), with the
 *   loadgen's own throttling as evidence.
 */
import type { HostLimits } from "../../core/limits.ts";
import { formatRate } from "../../core/units.ts";
import type { HostWindow } from "../observers/types.ts";
import type { Bottleneck, Resource } from "../results/types.ts";
import { mean, quantile } from "../stats/descriptive.ts";

const THRESHOLD: Record<Resource, number> = { cpu: 0.5, network: 0.85, disk: 0.85, memory: 0.85, latency: 0, client: 0 };
/** An open loop that sent less than this share of its offered rate fell behind (see the file comment). */
const FELL_BEHIND = 0.9;

/** An open-loop generator's offered and achieved send rates over the measurement phase, events/s (all generators). */
export interface OfferedLoad {
  offeredPerSec: number;
  sentPerSec: number;
}

type Candidate = Bottleneck["candidates"][number];

function sum(ws: HostWindow[], f: (w: HostWindow) => number): number {
  let s = 0;
  for (const w of ws) s += f(w);
  return s;
}

function hostCandidates(host: string, ws: HostWindow[], limits: HostLimits, machineCores: number): Candidate[] {
  const out: Candidate[] = [];
  const cores = mean(ws.map((w) => w.cpuCores));
  if (limits.cpu) {
    const periods = sum(ws, (w) => w.periods);
    const share = periods > 0 ? sum(ws, (w) => w.throttledPeriods) / periods : 0;
    const cap = limits.cpu.quotaUs / limits.cpu.periodUs;
    out.push({ resource: "cpu", host, score: share,
      evidence: `${host} throttled in ${(share * 100).toFixed(0)} % of CFS periods, ${cores.toFixed(2)} of ${cap} cores used` });
  } else {
    const score = cores / machineCores;
    out.push({ resource: "cpu", host, score,
      evidence: `${host} used ${cores.toFixed(2)} of the machine's ${machineCores} cores (no cap)` });
  }
  const rateCap = limits.network?.bandwidthBytesPerSec;
  if (rateCap) {
    const perWindow = ws.map((w) => Math.max(w.netRxBytesPerSec, w.netTxBytesPerSec));
    const busy = quantile(perWindow, 0.9);
    out.push({ resource: "network", host, score: busy / rateCap,
      evidence: `${host} link carried ${formatRate(busy, "bits")} in its busiest windows (p90; mean ${formatRate(mean(perWindow), "bits")}) of a ${formatRate(rateCap, "bits")} cap` });
  }
  const disk = limits.disk;
  if (disk) {
    const checks: Array<[number | undefined, number, string]> = [
      [disk.writeIops, mean(ws.map((w) => w.ioWriteOpsPerSec)), "write IOPS"],
      [disk.readIops, mean(ws.map((w) => w.ioReadOpsPerSec)), "read IOPS"],
      [disk.writeBytesPerSec, mean(ws.map((w) => w.ioWriteBytesPerSec)), "write bytes/s"],
      [disk.readBytesPerSec, mean(ws.map((w) => w.ioReadBytesPerSec)), "read bytes/s"],
    ];
    for (const [cap, observed, what] of checks) {
      if (!cap) continue;
      out.push({ resource: "disk", host, score: observed / cap,
        evidence: `${host} disk ${what} ${observed.toFixed(0)} of a ${cap} cap` });
    }
  }
  if (limits.memoryBytes) {
    const workingSet = Math.max(0, ...ws.map((w) => w.memoryWorkingSetBytes));
    out.push({ resource: "memory", host, score: workingSet / limits.memoryBytes,
      evidence: `${host} memory working set ${(workingSet / 2 ** 20).toFixed(0)} MiB of ${(limits.memoryBytes / 2 ** 20).toFixed(0)} MiB` });
  }
  return out;
}

/**
 * @param windows per host, the observer windows of the measurement phase
 * @param limits per host, the stack's limits
 * @param sinkHosts hosts whose resources can bind the pipeline (every host but the load generator)
 * @param clientHost the load generator's host name
 */
export function findBottleneck(
  windows: Record<string, HostWindow[]>,
  limits: Record<string, HostLimits>,
  sinkHosts: string[],
  clientHost: string,
  machineCores: number,
  offered?: OfferedLoad,
): Bottleneck {
  const candidates: Candidate[] = [];
  for (const host of sinkHosts) {
    const ws = windows[host] ?? [];
    if (ws.length > 0) candidates.push(...hostCandidates(host, ws, limits[host] ?? {}, machineCores));
  }
  const binding = candidates
    .filter((c) => c.score >= THRESHOLD[c.resource])
    .sort((a, b) => b.score - a.score)[0];
  if (binding) return { ...binding, candidates };
  const client = hostCandidates(clientHost, windows[clientHost] ?? [], limits[clientHost] ?? {}, machineCores)
    .find((c) => c.resource === "cpu");
  const closest = [...candidates].sort((a, b) => b.score - a.score)[0];
  const noneSaturated = `no collector or sink resource reached its threshold (closest: ${closest?.evidence ?? "none observed"})`;
  if (offered && offered.offeredPerSec > 0 && offered.sentPerSec < FELL_BEHIND * offered.offeredPerSec) {
    const firstHop = sinkHosts[0] ?? clientHost;
    const share = offered.sentPerSec / offered.offeredPerSec;
    const evidence = `the generator sent ${Math.round(offered.sentPerSec).toLocaleString("en-US")} of the ${Math.round(offered.offeredPerSec).toLocaleString("en-US")} events/s it offered (${(share * 100).toFixed(0)} %): ${firstHop} pushed back while ${noneSaturated}, so round trips bind (e.g. one transaction at a time per connection or worker)`;
    return { resource: "latency", host: firstHop, score: 1 - share, evidence, candidates };
  }
  const evidence = `${noneSaturated}; ${client?.evidence ?? "no loadgen readings"}`;
  return { resource: "client", host: clientHost, score: client?.score ?? 0, evidence, candidates };
}
