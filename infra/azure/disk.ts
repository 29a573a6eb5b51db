/**
 * A host's disk caps (core/limits.ts DiskLimit) as a Premium SSD v2 data disk (sku PremiumV2_LRS): the
 * provisioned diskIOPSReadWrite and diskMBpsReadWrite ARE the cap, enforced by Azure storage.
 *
 * Premium SSD v2 rules (Microsoft Learn, "Azure managed disk types", Premium SSD v2 performance):
 * - IOPS: at least 3000 (the free baseline), at most 500 per GiB of disk size, at most 80000;
 * - throughput: at least 125 MBps, at most 0.25 MBps per provisioned IOPS, at most 1200 MBps (MBps = 10^6 B/s);
 * - reads and writes share one IOPS and one MBps budget (like libvirt's total_iops_sec / total_bytes_sec).
 * On top, the VM size caps all its data disks together (./sizes.ts); a cap above the VM's is not a cap.
 */
import type { DiskLimit } from "../../core/limits.ts";
import { VM_SIZES, type VmSizeName } from "./sizes.ts";

export const PREMIUM_V2 = {
  minIops: 3000,
  maxIops: 80000,
  iopsPerGiB: 500,
  minMBps: 125,
  maxMBps: 1200,
  mbpsPerIops: 0.25,
} as const;

/** Default data disk size, GiB: room for a benchmark's data, and 500 × 64 = 32000 IOPS of headroom. */
export const DEFAULT_DATA_DISK_GIB = 64;

/** What the data disk is provisioned with. */
export interface PremiumV2Disk {
  sizeGiB: number;
  diskIOPSReadWrite: number;
  diskMBpsReadWrite: number;
  /** why the provisioned values differ from the asked ones (rounding, no cap asked) */
  notes: string[];
}

/** One problem with a host's disk caps on a VM size: which key and what is wrong (validation reports it). */
export interface DiskCapProblem {
  key: "iops" | "bandwidth" | "readIops" | "writeIops" | "readBandwidth" | "writeBandwidth" | "dataDiskGiB";
  message: string;
}

const MB = 1_000_000;

/**
 * The problems of provisioning `disk` on `vmSize` with a `sizeGiB` Premium SSD v2 disk: read and write caps that
 * differ (Azure has one budget for both), caps below the disk's minimum, and caps above the VM size's uncached cap
 * or the disk's maximum. Empty when the caps can be provisioned as asked (MBps rounded down, see premiumV2Disk).
 */
export function diskCapProblems(
  disk: DiskLimit | undefined,
  vmSize: VmSizeName,
  sizeGiB = DEFAULT_DATA_DISK_GIB,
): DiskCapProblem[] {
  if (!disk || disk.tmpfsBytes !== undefined) return [];
  const vm = VM_SIZES[vmSize];
  const out: DiskCapProblem[] = [];
  if (disk.readIops !== disk.writeIops) {
    out.push({
      key: "readIops",
      message: `readIops ${disk.readIops ?? "none"} and writeIops ${disk.writeIops ?? "none"} differ: a Premium SSD v2 disk has one IOPS budget for reads and writes (diskIOPSReadWrite); give iops`,
    });
  }
  if (disk.readBytesPerSec !== disk.writeBytesPerSec) {
    out.push({
      key: "readBandwidth",
      message: `readBandwidth and writeBandwidth differ: a Premium SSD v2 disk has one throughput budget for reads and writes (diskMBpsReadWrite); give bandwidth`,
    });
  }
  const iops = disk.readIops ?? disk.writeIops;
  const bps = disk.readBytesPerSec ?? disk.writeBytesPerSec;
  if (iops !== undefined) {
    if (iops > vm.uncachedIops) {
      out.push({
        key: "iops",
        message: `${iops} IOPS is above ${vmSize}'s uncached disk cap of ${vm.uncachedIops} IOPS (infra/azure/sizes.ts): the VM would be the limit, not the disk; pick a larger size or a lower cap`,
      });
    }
    if (iops < PREMIUM_V2.minIops)
      out.push({
        key: "iops",
        message: `${iops} IOPS is below Premium SSD v2's minimum of ${PREMIUM_V2.minIops} IOPS`,
      });
    const maxForSize = Math.min(PREMIUM_V2.maxIops, PREMIUM_V2.iopsPerGiB * sizeGiB);
    if (iops > maxForSize)
      out.push({
        key: "iops",
        message: `${iops} IOPS is above what a ${sizeGiB} GiB Premium SSD v2 disk can have (${maxForSize}); raise dataDiskGiB`,
      });
  }
  if (bps !== undefined) {
    const mbps = bps / MB;
    if (mbps > vm.uncachedMBps) {
      out.push({
        key: "bandwidth",
        message: `${bps} B/s (${round2(mbps)} MBps) is above ${vmSize}'s uncached disk cap of ${vm.uncachedMBps} MBps (${vm.uncachedMBps * MB} B/s, infra/azure/sizes.ts): the VM would be the limit, not the disk; pick a larger size or a lower cap`,
      });
    }
    if (Math.floor(mbps) < PREMIUM_V2.minMBps)
      out.push({
        key: "bandwidth",
        message: `${bps} B/s is below Premium SSD v2's minimum of ${PREMIUM_V2.minMBps} MBps (${PREMIUM_V2.minMBps * MB} B/s)`,
      });
    const maxForIops = Math.min(
      PREMIUM_V2.maxMBps,
      PREMIUM_V2.mbpsPerIops * Math.max(iops ?? vm.uncachedIops, PREMIUM_V2.minIops),
    );
    if (Math.floor(mbps) > maxForIops)
      out.push({
        key: "bandwidth",
        message: `${round2(mbps)} MBps is above what Premium SSD v2 allows with ${iops ?? vm.uncachedIops} IOPS (${PREMIUM_V2.mbpsPerIops} MBps per IOPS: ${maxForIops} MBps)`,
      });
  }
  return out;
}

/**
 * The data disk for a host: its caps when it has some (MBps rounded down to whole MBps, so the cap is never looser
 * than asked), else the VM size's uncached caps (so the VM is the limit, as without a cap). Call after
 * diskCapProblems found nothing.
 */
export function premiumV2Disk(
  disk: DiskLimit | undefined,
  vmSize: VmSizeName,
  sizeGiB = DEFAULT_DATA_DISK_GIB,
): PremiumV2Disk {
  const vm = VM_SIZES[vmSize];
  const notes: string[] = [];
  const asked = disk && disk.tmpfsBytes === undefined ? disk : undefined;
  const iops = asked?.readIops ?? asked?.writeIops;
  const bps = asked?.readBytesPerSec ?? asked?.writeBytesPerSec;
  let diskIOPSReadWrite: number;
  if (iops !== undefined) {
    diskIOPSReadWrite = iops;
  } else {
    diskIOPSReadWrite = Math.max(
      PREMIUM_V2.minIops,
      Math.min(vm.uncachedIops, PREMIUM_V2.iopsPerGiB * sizeGiB, PREMIUM_V2.maxIops),
    );
    notes.push(
      `no IOPS cap asked: the disk is provisioned with ${vmSize}'s uncached cap (${diskIOPSReadWrite} IOPS), so the VM is the limit`,
    );
  }
  let diskMBpsReadWrite: number;
  if (bps !== undefined) {
    diskMBpsReadWrite = Math.floor(bps / MB);
    if (diskMBpsReadWrite * MB !== bps)
      notes.push(
        `bandwidth ${bps} B/s rounded down to ${diskMBpsReadWrite} MBps (Azure takes whole MBps of 10^6 B/s)`,
      );
  } else {
    diskMBpsReadWrite = Math.max(
      PREMIUM_V2.minMBps,
      Math.min(vm.uncachedMBps, PREMIUM_V2.maxMBps, PREMIUM_V2.mbpsPerIops * diskIOPSReadWrite),
    );
    notes.push(
      `no bandwidth cap asked: the disk is provisioned with ${diskMBpsReadWrite} MBps (${vmSize}'s uncached cap is ${vm.uncachedMBps} MBps)`,
    );
  }
  return { sizeGiB, diskIOPSReadWrite, diskMBpsReadWrite, notes };
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
