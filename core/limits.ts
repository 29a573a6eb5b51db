/**
 * The limits model: what a stack asks of a host, in canonical units, independent of platform.
 * Parsed from the stack file's unit strings by core/units.ts; applied by each platform
 * (local: cgroups + tc; docker: container flags; azure: VM size + disk + tc).
 */

/** CPU cap as a CFS quota over a period, both in microseconds (cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max). cores = quotaUs / periodUs. */
export interface CpuLimit {
  quotaUs: number;
  periodUs: number;
}

/**
 * Block IO caps on the device that holds the host's data directory. libvirt's `<iotune>` `total_iops_sec` /
 * `total_bytes_sec` (the stack file's `iops` / `bandwidth`) are ONE budget for reads and writes together; cgroups
 * throttle each direction on its own, so the platforms write the total to both directions (reads + writes may then
 * reach twice the total) and keep the total in `totalIops` / `totalBytesPerSec`, against which the bottleneck scores
 * observed reads + writes (docs/design.md, "Rules for the numbers").
 */
export interface DiskLimit {
  /** libvirt total_iops_sec: reads + writes per second, one budget (set when the stack gives `iops`) */
  totalIops?: number;
  /** libvirt total_bytes_sec: bytes read + written per second, one budget (set when the stack gives `bandwidth`) */
  totalBytesPerSec?: number;
  readIops?: number;
  writeIops?: number;
  readBytesPerSec?: number;
  writeBytesPerSec?: number;
  /** Put the data directory on a tmpfs of this many bytes (a RAM disk); IO caps then do not apply. */
  tmpfsBytes?: number;
}

/** Network shaping on the host's data-plane interface, both directions. */
export interface NetworkLimit {
  /** bytes per second */
  bandwidthBytesPerSec?: number;
  delayMs?: number;
  lossPercent?: number;
}

export interface HostLimits {
  cpu?: CpuLimit;
  memoryBytes?: number;
  disk?: DiskLimit;
  network?: NetworkLimit;
}

/** One host of a stack: its role name, the limits as the user wrote them (for the record) and parsed. */
export interface HostSpec {
  name: string;
  /** The stack file's own values, verbatim (e.g. { cpu: "0.25", memory: "2GiB" }). */
  requested: Record<string, unknown>;
  limits: HostLimits;
  /**
   * what the host costs per hour (the host's `pricePerHour`, else an azure host's VM size in infra/azure/prices.yaml);
   * absent when none is known (then `noPrice` says why, when there is more to say than "none set")
   */
  price?: HostPrice;
  /** why the host has no price (e.g. its VM size's entry in infra/azure/prices.yaml is null, with the table's note) */
  noPrice?: string;
}

/** A host's price: US dollars per hour of wall time, where the figure comes from and the date it was taken. */
export interface HostPrice {
  usdPerHour: number;
  /** where the figure comes from (the stack file's field, or the price table and its source URL) */
  source: string;
  /** the date the source states for the figure (YYYY-MM-DD), or "not given" */
  date: string;
}

/** The host's `programs` map (core/program.ts) as the stack file gives it; {} when it sets none. */
export function hostPrograms(host: HostSpec | undefined): Record<string, string> {
  const p = host?.requested.programs;
  return p && typeof p === "object" ? { ...(p as Record<string, string>) } : {};
}

export type Platform = "local" | "docker" | "azure";

/** A validated stack file (stacks/Pulumi.<name>.yaml). */
export interface StackSpec {
  /** stack name, from the file name Pulumi.<name>.yaml */
  name: string;
  file: string;
  platform: Platform;
  hosts: Record<string, HostSpec>;
  /** milliseconds after which leftovers may be collected */
  expiryMs: number;
}

/**
 * How far a host's limits hold: true (every requested limit applied and in force), "partial" (applied, but the
 * kernel does not hold one of them in every case — cgroup v1 blkio does not throttle buffered writes, which kernel
 * writeback flushes outside the group; the reasons are in `partial`), false (a requested limit could not be applied).
 * "partial" is truthy on purpose: the caps that were written are read back and count; what does not hold is said.
 */
export type Enforcement = boolean | "partial";

/** What a platform reports back for one host after applying limits. */
export interface AppliedLimits {
  requested: Record<string, unknown>;
  /** Values read back from the kernel after writing them (e.g. { cfsQuotaUs: 25000, cfsPeriodUs: 100000, tbfRateBytesPerSec: 12288000 }). */
  applied: Record<string, number | string>;
  /** false when any requested limit could not be applied (no root, no controller, tmpfs device...); "partial" when one does not hold in every case (see `partial`); see notes. */
  enforced: Enforcement;
  /** with enforced "partial": why, one sentence per limit that does not fully hold */
  partial?: string[];
  /**
   * caps at or above the machine the hosts share, which are not caps: e.g. ["cpu: 2 cores asked of a 2-core
   * machine"]; recorded "uncapped (≥ machine)", never used to normalise (harness/results/caps.ts)
   */
  uncapped?: string[];
  notes: string[];
  /** Deployed stacks: where each `applied` value was read back (e.g. "docker inspect ib-s-sink HostConfig.NanoCpus", "cgroup v1 /sys/fs/cgroup/cpu/cpu.cfs_quota_us in ib-s-sink"). */
  sources?: Record<string, string>;
  /** Deployed stacks: the values the deployment handed to the platform, which `applied` was compared with. */
  handed?: Record<string, number | string>;
  /** Deployed stacks: each difference between `handed` and what was read back (one sentence each); non-empty makes `enforced` false. */
  mismatches?: string[];
}

/** Combine two enforcement states: false wins, then "partial", then true. */
export function combineEnforcement(a: Enforcement, b: Enforcement): Enforcement {
  if (a === false || b === false) return false;
  return a === "partial" || b === "partial" ? "partial" : true;
}

/** The machine the hosts of a stack share (local and docker platforms): logical CPUs and memory in bytes. */
export interface MachineSize {
  cores: number;
  memoryBytes: number;
}

/**
 * Whether the caps of hosts that run at the same time fit the machine they share. A cap at or above the machine is
 * not a cap (`uncapped`, "uncapped (≥ machine)"), but such a host can use the whole machine, so it counts as the
 * machine in the sums. Hosts without a cap are left out of the sums (they ask for nothing).
 */
export interface CapsFit {
  machine: MachineSize;
  /** sum over the hosts of min(cpu cap, machine cores), cores */
  cpuCores: number;
  /** sum over the hosts of min(memory cap, machine memory), bytes */
  memoryBytes: number;
  /** sum of the CPU caps as the stack asks them (not clamped at the machine), cores */
  cpuCoresAsked?: number;
  /** sum of the memory caps as asked, bytes */
  memoryBytesAsked?: number;
  /** true when either sum exceeds the machine */
  oversubscribed: boolean;
  /**
   * one sentence per sum that exceeds the machine (empty when it fits): what was asked, per host, and what the
   * machine has; when a cap exceeds the machine, also what the hosts can use at most (each the machine)
   */
  reasons: string[];
  /** per host, its caps at or above the machine ("cpu: 2 cores asked of a 2-core machine") */
  uncapped: Record<string, string[]>;
}

const GiB = 2 ** 30;
const gib = (b: number): string => `${+(b / GiB).toFixed(2)} GiB`;

/**
 * Sum the CPU and memory caps of `hosts` (the hosts that run at the same time) against `machine`.
 * Pure; the rule is docs/decisions/0008-oversubscribed-stacks-are-flagged.md.
 */
export function capsFit(hosts: readonly HostSpec[], machine: MachineSize): CapsFit {
  let cpuCores = 0;
  let memoryBytes = 0;
  const cpuAsked: Array<[string, number]> = [];
  const memAsked: Array<[string, number]> = [];
  const uncapped: Record<string, string[]> = {};
  for (const h of hosts) {
    const cpu = h.limits.cpu;
    if (cpu) {
      const cores = cpu.quotaUs / cpu.periodUs;
      if (cores >= machine.cores)
        (uncapped[h.name] ??= []).push(
          `cpu: ${+cores.toFixed(3)} cores asked of a ${machine.cores}-core machine`,
        );
      cpuCores += Math.min(cores, machine.cores);
      cpuAsked.push([h.name, cores]);
    }
    const mem = h.limits.memoryBytes;
    if (mem !== undefined) {
      if (mem >= machine.memoryBytes)
        (uncapped[h.name] ??= []).push(`memory: ${gib(mem)} asked of a ${gib(machine.memoryBytes)} machine`);
      memoryBytes += Math.min(mem, machine.memoryBytes);
      memAsked.push([h.name, mem]);
    }
  }
  const reasons: string[] = [];
  const cores = (n: number): string => String(+n.toFixed(3));
  const cpuCoresAsked = cpuAsked.reduce((a, [, c]) => a + c, 0);
  const memoryBytesAsked = memAsked.reduce((a, [, m]) => a + m, 0);
  if (cpuCores > machine.cores + 1e-9) {
    const usable =
      cpuCoresAsked > cpuCores + 1e-9
        ? `; each host can use at most the machine's ${machine.cores}, so they compete for up to ${cores(cpuCores)}`
        : "";
    reasons.push(
      `CPU caps of ${cpuAsked.map(([n]) => n).join(" + ")} add up to ${cores(cpuCoresAsked)} cores on a ${machine.cores}-core machine (asked: ${cpuAsked.map(([n, c]) => `${n} ${cores(c)}`).join(", ")}${usable})`,
    );
  }
  if (memoryBytes > machine.memoryBytes) {
    const usable =
      memoryBytesAsked > memoryBytes
        ? `; each host can use at most the machine's ${gib(machine.memoryBytes)}, so they compete for up to ${gib(memoryBytes)}`
        : "";
    reasons.push(
      `memory caps of ${memAsked.map(([n]) => n).join(" + ")} add up to ${gib(memoryBytesAsked)} on a ${gib(machine.memoryBytes)} machine (asked: ${memAsked.map(([n, m]) => `${n} ${gib(m)}`).join(", ")}${usable})`,
    );
  }
  return {
    machine,
    cpuCores,
    memoryBytes,
    cpuCoresAsked,
    memoryBytesAsked,
    oversubscribed: reasons.length > 0,
    reasons,
    uncapped,
  };
}
