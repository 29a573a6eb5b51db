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

/** Block IO caps on the device that holds the host's data directory (libvirt <iotune> total_* are applied to read and write alike). */
export interface DiskLimit {
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

/** What a platform reports back for one host after applying limits. */
export interface AppliedLimits {
  requested: Record<string, unknown>;
  /** Values read back from the kernel after writing them (e.g. { cfsQuotaUs: 25000, cfsPeriodUs: 100000, tbfRateBytesPerSec: 12288000 }). */
  applied: Record<string, number | string>;
  /** false when any requested limit could not be applied (no root, no controller, tmpfs device...); see notes. */
  enforced: boolean;
  notes: string[];
  /** Deployed stacks: where each `applied` value was read back (e.g. "docker inspect ib-s-sink HostConfig.NanoCpus", "cgroup v1 /sys/fs/cgroup/cpu/cpu.cfs_quota_us in ib-s-sink"). */
  sources?: Record<string, string>;
  /** Deployed stacks: the values the deployment handed to the platform, which `applied` was compared with. */
  handed?: Record<string, number | string>;
  /** Deployed stacks: each difference between `handed` and what was read back (one sentence each); non-empty makes `enforced` false. */
  mismatches?: string[];
}
