/**
 * Names the resource that bound a run from what was observed during the measurement phase, scored against the
 * limits the platform applied and read back (run.json `limits.<host>.applied`, turned into HostLimits by
 * harness/results/caps.ts appliedHostLimits), never against the stack file's requests alone.
 *
 * Scores (higher = closer to binding):
 * - cpu, capped host: share of CFS periods throttled (cpu.stat nr_throttled / nr_periods). A cgroup that wants more
 *   than its quota is throttled in nearly every period; one that is not is not CPU-bound, however busy.
 * - cpu, uncapped host (no cap, or a cap at or above the machine): cores used / cores of the machine.
 * - contention (`host contention`): the share of its runnable time the host waited for a CPU while not throttled by
 *   its own cap: Σ wait / (Σ wait + Σ CPU time), wait = schedstat run delay less cpu.stat throttled time
 *   (HostWindow.contentionMs). Other load (or the stack's own other hosts) held the CPUs. On any host it is named
 *   only when the wait reached WAIT_MS_PER_SEC of wall time: a nearly idle host's few milliseconds of wait are a
 *   large share of its little runnable time, yet could have cost it at most that much of each second (a sink behind
 *   a 300 KB/s link on a busy machine: 58 ms/s, 64 % of its runnable time). Below the floor it stays among the
 *   candidates, its evidence saying so.
 * - network: observed max(rx, tx) bytes/s on the host's data-plane link / the shaped rate, in the busiest windows
 *   (90th percentile of the per-window rates): a sequential client leaves the link idle while each request
 *   commits, so the mean understates a link that runs at its cap whenever there is data to move.
 * - disk: observed IOPS or bytes/s / the throttle; with a libvirt total (DiskLimit.totalIops / totalBytesPerSec),
 *   observed reads + writes / the total.
 * - memory: largest working set (charge less inactive page cache) / limit; page cache alone is no pressure.
 * A resource binds when its score reaches its threshold (cpu 0.5, contention 0.3, others 0.85); the candidate
 * furthest above its threshold wins (except that contention never outranks a link or disk observed at its cap,
 * score ≥ AT_CAP: the throughput met that ceiling, so waiting for a CPU did not hold it back), and the verdict prints its margin (score − threshold). When the deciding
 * candidate (the winner, or with none binding the closest one) lies within ±MARGIN of its threshold, the verdict is
 * "uncertain (network 0.84 / cpu 0.19 …)": the same run on another machine may fall on the other side.
 * With none binding and none within the margin:
 * - "host contention" on the load generator, when it waited for a CPU at least WAIT_MS_PER_SEC of each second and
 *   that wait reached the contention threshold of its runnable time (within the margin: "uncertain"): other load
 *   starved the client, so it offered less than its pattern would;
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
export { bottleneckLabel } from "../results/format.ts";
import { mean, quantile } from "../stats/descriptive.ts";
import { fix, int, mib, pct } from "../../ui/format.ts";

/** Score at which each resource binds (see the file comment). */
export const THRESHOLD: Record<Resource, number> = {
  cpu: 0.5,
  contention: 0.3,
  network: 0.85,
  disk: 0.85,
  memory: 0.85,
  latency: 0,
  client: 0,
  uncertain: 0,
};
/** A deciding score within ±MARGIN of its threshold gives the verdict "uncertain" (docs/design.md, "Rules for the numbers"). */
export const MARGIN = 0.05;
/** A network or disk score at or above this is the cap itself (±5 %, the MARGIN): contention then does not win (findBottleneck). */
export const AT_CAP = 1 - MARGIN;
/** An open loop that sent less than this share of its offered rate fell behind (see the file comment). */
const FELL_BEHIND = 0.9;
/** A host's wait for a CPU, ms per second of wall time, below which its contention is not named (file comment). */
export const WAIT_MS_PER_SEC = 100;

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

/**
 * A host's `contention` candidate (score: Σ wait / (Σ wait + Σ CPU time); its evidence gives the wait in ms per
 * second of wall time), put in belowFloor when that wait is under WAIT_MS_PER_SEC; undefined when no window carries
 * a wait (older series).
 */
function contentionCandidate(host: string, ws: HostWindow[]): Candidate | undefined {
  if (!ws.some((w) => w.contentionMs !== undefined)) return undefined;
  const waitMs = sum(ws, (w) => w.contentionMs ?? 0);
  const cpuMs = sum(ws, (w) => w.cpuCores * (w.dtMs ?? 0));
  const share = waitMs + cpuMs > 0 ? waitMs / (waitMs + cpuMs) : 0;
  const wallS = sum(ws, (w) => w.dtMs ?? 0) / 1000;
  const waitMsPerSec = wallS > 0 ? waitMs / wallS : 0;
  const floor = waitMsPerSec < WAIT_MS_PER_SEC ? `; below the ${WAIT_MS_PER_SEC} ms/s floor, not named` : "";
  const candidate: Candidate = {
    resource: "contention",
    host,
    score: share,
    threshold: THRESHOLD.contention,
    evidence: `${host} waited for a CPU ${waitMsPerSec.toFixed(0)} ms/s while not throttled by its own cap (schedstat run delay less throttled time), ${pct(share)} of its runnable time${floor}`,
  };
  if (floor) belowFloor.add(candidate);
  return candidate;
}

/** Contention candidates whose wait stayed under WAIT_MS_PER_SEC: kept for the record, never ranked. */
const belowFloor = new WeakSet<Candidate>();

/**
 * One host's candidates over its measurement windows, scored as findBottleneck scores them (cpu, network, disk,
 * memory against `limits`, contention): also read by the report's resources-against-caps chart
 * (harness/report/cap-use.ts), so the chart shows the very shares the verdict weighed.
 */
export function hostCandidates(
  host: string,
  ws: HostWindow[],
  limits: HostLimits,
  machineCores: number,
): Candidate[] {
  const out: Candidate[] = [cpuCandidate(host, ws, limits, machineCores)];
  const rateCap = limits.network?.bandwidthBytesPerSec;
  if (rateCap) {
    const perWindow = ws.map((w) => Math.max(w.netRxBytesPerSec, w.netTxBytesPerSec));
    const busy = quantile(perWindow, 0.9);
    out.push({
      resource: "network",
      host,
      score: busy / rateCap,
      evidence: `${host} link carried ${formatRate(busy, "bits")} in its busiest windows (p90; mean ${formatRate(mean(perWindow), "bits")}) of a ${formatRate(rateCap, "bits")} cap`,
    });
  }
  out.push(...diskCandidates(host, ws, limits));
  if (limits.memoryBytes) {
    const workingSet = Math.max(0, ...ws.map((w) => w.memoryWorkingSetBytes));
    out.push({
      resource: "memory",
      host,
      score: workingSet / limits.memoryBytes,
      evidence: `${host} memory working set ${mib(workingSet)} of ${mib(limits.memoryBytes)}`,
    });
  }
  const contention = contentionCandidate(host, ws);
  return [
    ...out.map((c) => ({ ...c, threshold: THRESHOLD[c.resource] })),
    ...(contention ? [contention] : []),
  ];
}

/** A host's CPU: its CFS throttling under a cap, else its share of the machine's cores. */
function cpuCandidate(host: string, ws: HostWindow[], limits: HostLimits, machineCores: number): Candidate {
  const cores = mean(ws.map((w) => w.cpuCores));
  if (limits.cpu) {
    const periods = sum(ws, (w) => w.periods);
    const share = periods > 0 ? sum(ws, (w) => w.throttledPeriods) / periods : 0;
    const cap = limits.cpu.quotaUs / limits.cpu.periodUs;
    return {
      resource: "cpu",
      host,
      score: share,
      evidence: `${host} throttled in ${pct(share)} of CFS periods, ${cores.toFixed(2)} of ${cap} cores used`,
    };
  }
  return {
    resource: "cpu",
    host,
    score: cores / machineCores,
    evidence: `${host} used ${cores.toFixed(2)} of the machine's ${machineCores} cores (no cap)`,
  };
}

/** A host's disk against each cap it has: per direction, or reads + writes against a libvirt total. */
function diskCandidates(host: string, ws: HostWindow[], limits: HostLimits): Candidate[] {
  const out: Candidate[] = [];
  const disk = limits.disk;
  if (disk) {
    const all: Array<[number | undefined, number, string]> = [
      [disk.writeIops, mean(ws.map((w) => w.ioWriteOpsPerSec)), "write IOPS"],
      [disk.readIops, mean(ws.map((w) => w.ioReadOpsPerSec)), "read IOPS"],
      [disk.writeBytesPerSec, mean(ws.map((w) => w.ioWriteBytesPerSec)), "write bytes/s"],
      [disk.readBytesPerSec, mean(ws.map((w) => w.ioReadBytesPerSec)), "read bytes/s"],
    ];
    // with a libvirt total, reads + writes are scored against it (below), not each direction on its own
    const checks = all.filter(
      ([, , what]) => !(what.endsWith("IOPS") ? disk.totalIops : disk.totalBytesPerSec),
    );
    for (const [cap, observed, what] of checks) {
      if (!cap) continue;
      out.push({
        resource: "disk",
        host,
        score: observed / cap,
        evidence: `${host} disk ${what} ${observed.toFixed(0)} of a ${cap} cap`,
      });
    }
  }
  if (disk?.totalIops) {
    const observed = mean(ws.map((w) => w.ioReadOpsPerSec + w.ioWriteOpsPerSec));
    out.push({
      resource: "disk",
      host,
      score: observed / disk.totalIops,
      evidence: `${host} disk read + write IOPS ${observed.toFixed(0)} of a ${disk.totalIops} total (libvirt total_iops_sec)`,
    });
  }
  if (disk?.totalBytesPerSec) {
    const observed = mean(ws.map((w) => w.ioReadBytesPerSec + w.ioWriteBytesPerSec));
    out.push({
      resource: "disk",
      host,
      score: observed / disk.totalBytesPerSec,
      evidence: `${host} disk read + write ${formatRate(observed, "bytes")} of a ${formatRate(disk.totalBytesPerSec, "bytes")} total (libvirt total_bytes_sec)`,
    });
  }
  return out;
}

/** score − threshold of a candidate. */
const marginOf = (c: Candidate): number => c.score - THRESHOLD[c.resource];
/**
 * A candidate as the uncertain verdict lists it: "network 0.84", "host contention 0.33", and a capped CPU's score by
 * what it is, "cpu throttled 0.08" (the share of CFS periods throttled, not the share of the cap used: cpuCandidate).
 */
const scored = (c: Candidate): string => {
  const name = c.resource === "contention" ? "host contention" : c.resource;
  const what = c.resource === "cpu" && c.evidence.includes(" throttled in ") ? " throttled" : "";
  return `${name}${what} ${fix(c.score, 2)}`;
};
const signed = (x: number): string => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(2)}`;

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
  // a link or disk running at its cap is a ceiling the throughput met: waiting for a CPU (contention, a share of the
  // runnable time, not a ceiling) cannot then be what held it back, so it does not outrank that cap
  const atCap = candidates.some(
    (c) => (c.resource === "network" || c.resource === "disk") && c.score >= AT_CAP,
  );
  const ranked = candidates
    .filter((c) => !belowFloor.has(c) && !(atCap && c.resource === "contention"))
    .sort((a, b) => marginOf(b) - marginOf(a));
  const top = ranked[0];
  if (top && Math.abs(marginOf(top)) <= MARGIN) {
    const list = ranked.slice(0, 3).map(scored).join(" / ");
    const more = ranked.length > 3 ? " …" : "";
    const evidence = `uncertain (${list}${more}): ${top.host} ${top.resource} ${fix(top.score, 2)} is within ±${MARGIN} of its ${THRESHOLD[top.resource]} threshold (margin ${signed(marginOf(top))}); ${top.evidence}`;
    return {
      resource: "uncertain",
      host: top.host,
      score: top.score,
      evidence,
      margin: marginOf(top),
      threshold: THRESHOLD[top.resource],
      candidates,
    };
  }
  if (top && marginOf(top) > 0) {
    return {
      ...top,
      evidence: `${top.evidence}; margin ${signed(marginOf(top))} over its ${THRESHOLD[top.resource]} threshold`,
      margin: marginOf(top),
      threshold: THRESHOLD[top.resource],
      candidates,
    };
  }
  const closestMargin = top ? { margin: marginOf(top), threshold: THRESHOLD[top.resource] } : {};
  const clientWs = windows[clientHost] ?? [];
  const client = hostCandidates(clientHost, clientWs, limits[clientHost] ?? {}, machineCores).find(
    (c) => c.resource === "cpu",
  );
  const noneSaturated = `no collector or sink resource reached its threshold (closest: ${top ? `${top.evidence}, margin ${signed(marginOf(top))} to its ${THRESHOLD[top.resource]} threshold` : "none observed"})`;
  // a client starved of CPUs by other load offered less than its pattern would: that, not the pattern, bound the run
  const starved = clientContention(clientHost, clientWs, candidates, top, noneSaturated);
  if (starved) return starved;
  if (offered && offered.offeredPerSec > 0 && offered.sentPerSec < FELL_BEHIND * offered.offeredPerSec) {
    const firstHop = sinkHosts[0] ?? clientHost;
    const share = offered.sentPerSec / offered.offeredPerSec;
    const evidence = `the generator sent ${int(offered.sentPerSec)} of the ${int(offered.offeredPerSec)} events/s it offered (${pct(share)}): ${firstHop} pushed back while ${noneSaturated}, so round trips bind (e.g. one transaction at a time per connection or worker)`;
    return { resource: "latency", host: firstHop, score: 1 - share, evidence, ...closestMargin, candidates };
  }
  const evidence = `${noneSaturated}; ${client?.evidence ?? "no loadgen readings"}`;
  return {
    resource: "client",
    host: clientHost,
    score: client?.score ?? 0,
    evidence,
    ...closestMargin,
    candidates,
  };
}

/**
 * The client's contention as the bottleneck (or an uncertain one) when it is within MARGIN of its threshold or over
 * it, added to `candidates`; null otherwise. `top`: the best sink-side candidate; `noneSaturated`: why none bound.
 */
function clientContention(
  clientHost: string,
  clientWs: HostWindow[],
  candidates: Candidate[],
  top: Candidate | undefined,
  noneSaturated: string,
): Bottleneck | null {
  const c = contentionCandidate(clientHost, clientWs);
  if (!c) return null;
  candidates.push(c);
  const m = marginOf(c);
  if (belowFloor.has(c) || m < -MARGIN) return null;
  const why = `${c.evidence}; ${noneSaturated}`;
  if (m <= MARGIN) {
    const evidence = `uncertain (${[c, ...(top ? [top] : [])].map(scored).join(" / ")}): ${clientHost} contention ${fix(c.score, 2)} is within ±${MARGIN} of its ${THRESHOLD.contention} threshold (margin ${signed(m)}); ${why}`;
    return {
      resource: "uncertain",
      host: clientHost,
      score: c.score,
      evidence,
      margin: m,
      threshold: THRESHOLD.contention,
      candidates,
    };
  }
  return {
    ...c,
    evidence: `${why}; margin ${signed(m)} over its ${THRESHOLD.contention} threshold`,
    margin: m,
    threshold: THRESHOLD.contention,
    candidates,
  };
}
