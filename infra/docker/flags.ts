/**
 * The limits model (core/limits.ts) as @pulumi/docker Container arguments: pure functions, no resources, so the
 * translation is testable on its own and shared by the azure platform's cloud-init (same flags, `docker run`).
 *
 * @pulumi/docker names (docker run flag in brackets): cpuPeriod/cpuQuota [--cpu-period/--cpu-quota] in µs;
 * memory/memorySwap [--memory/--memory-swap] in MB as the provider counts them (MiB: the provider multiplies by
 * 1024*1024); deviceReadIops/deviceWriteIops/deviceReadBps/deviceWriteBps [--device-read-iops ...] as
 * { path, rate }; tmpfs [--tmpfs] as { dir: options }.
 */
import type { AppliedLimits, HostSpec } from "../../core/limits.ts";
import { tbfBurstFor, TBF_LATENCY_MS } from "../local/netns.ts";

const MIB = 1024 ** 2;

export interface DeviceRate {
  path: string;
  rate: number;
}

/** The subset of docker.ContainerArgs that carries limits (plain values). */
export interface ContainerLimitArgs {
  cpuPeriod?: number;
  cpuQuota?: number;
  memory?: number;
  memorySwap?: number;
  deviceReadIops?: DeviceRate[];
  deviceWriteIops?: DeviceRate[];
  deviceReadBps?: DeviceRate[];
  deviceWriteBps?: DeviceRate[];
  tmpfs?: Record<string, string>;
}

export interface TranslatedLimits {
  args: ContainerLimitArgs;
  /** the network cap, when any: applied by the shaper (see shaper.ts) */
  shaping?: { rateBytesPerSec?: number; burstBytes?: number; delayMs?: number; lossPercent?: number };
  limits: AppliedLimits;
}

/**
 * Translate one host's limits.
 * @param blkioDevice the block device holding Docker's data root (`ingestbench:docker.blkioDevice`); without it,
 *        disk caps are recorded as not enforced
 * @param dataDir the component's data directory (tmpfs mount point on RAM-disk stacks)
 */
export function containerLimits(
  host: HostSpec,
  blkioDevice: string | undefined,
  dataDir: string,
): TranslatedLimits {
  const { cpu, memoryBytes, disk, network } = host.limits;
  const args: ContainerLimitArgs = {};
  const applied: Record<string, number | string> = {};
  const notes: string[] = [];
  let enforced = true;

  if (cpu) {
    args.cpuPeriod = cpu.periodUs;
    args.cpuQuota = cpu.quotaUs;
    applied.cfsPeriodUs = cpu.periodUs;
    applied.cfsQuotaUs = cpu.quotaUs;
  }
  if (memoryBytes !== undefined) {
    // the provider counts MB as MiB; round down so the cap is never looser than asked, and forbid swap
    const mib = Math.max(6, Math.floor(memoryBytes / MIB)); // Docker's minimum is 6 MiB
    args.memory = mib;
    args.memorySwap = mib;
    applied.memoryBytes = mib * MIB;
    applied.memorySwapBytes = mib * MIB;
    if (mib * MIB !== memoryBytes)
      notes.push(`memory ${memoryBytes} B rounded down to ${mib} MiB (the provider takes whole MiB)`);
  }
  if (disk) {
    if (disk.tmpfsBytes !== undefined) {
      args.tmpfs = { [dataDir]: `rw,size=${disk.tmpfsBytes},mode=1777` };
      applied.tmpfsBytes = disk.tmpfsBytes;
      applied.tmpfsPath = dataDir;
    }
    const rates: [keyof ContainerLimitArgs, number | undefined, string][] = [
      ["deviceReadIops", disk.readIops, "readIops"],
      ["deviceWriteIops", disk.writeIops, "writeIops"],
      ["deviceReadBps", disk.readBytesPerSec, "readBytesPerSec"],
      ["deviceWriteBps", disk.writeBytesPerSec, "writeBytesPerSec"],
    ];
    const asked = rates.filter(([, v]) => v !== undefined);
    if (asked.length > 0 && blkioDevice === undefined) {
      enforced = false;
      notes.push(
        `disk caps (${asked.map(([, , k]) => k).join(", ")}) not applied: docker throttles a block device and the stack names none; ` +
          'set ingestbench:docker: { blkioDevice: "/dev/vda" } (the device holding Docker\'s data root)',
      );
    } else if (blkioDevice !== undefined) {
      for (const [key, value, name] of asked) {
        (args[key] as DeviceRate[] | undefined) = [{ path: blkioDevice, rate: value! }];
        applied[name] = value!;
      }
      if (asked.length > 0) {
        applied.blkioDevice = blkioDevice;
        notes.push(
          `disk caps apply to ${blkioDevice}, the device holding Docker's data root and so the data volume; ` +
            "with cgroup v1 only direct and synchronous IO is throttled",
        );
      }
    }
  }
  let shaping: TranslatedLimits["shaping"];
  if (
    network &&
    (network.bandwidthBytesPerSec !== undefined ||
      network.delayMs !== undefined ||
      network.lossPercent !== undefined)
  ) {
    shaping = {};
    if (network.bandwidthBytesPerSec !== undefined) {
      shaping.rateBytesPerSec = network.bandwidthBytesPerSec;
      shaping.burstBytes = tbfBurstFor(network.bandwidthBytesPerSec);
      applied.tbfRateBytesPerSec = network.bandwidthBytesPerSec;
      applied.tbfBurstBytes = shaping.burstBytes;
      applied.tbfLatencyMs = TBF_LATENCY_MS;
      applied.ingressTbfRateBytesPerSec = network.bandwidthBytesPerSec;
    }
    if (network.delayMs !== undefined) {
      shaping.delayMs = network.delayMs;
      applied.netemDelayMs = network.delayMs;
    }
    if (network.lossPercent !== undefined) {
      shaping.lossPercent = network.lossPercent;
      applied.netemLossPercent = network.lossPercent;
    }
    notes.push(
      "network caps are applied by the host's shaper container (tc in the container's network namespace, eth0)",
    );
  }
  notes.push(
    "applied = the values handed to the Docker engine; the provisioner reads them back with docker inspect",
  );
  const limits: AppliedLimits = { requested: host.requested, applied, enforced, notes };
  return shaping ? { args, shaping, limits } : { args, limits };
}
