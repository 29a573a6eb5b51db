/**
 * The Azure VM sizes an azure stack may use, with the documented uncached disk caps that bound a data disk.
 *
 * Sources (Microsoft Learn, "Sizes for virtual machines in Azure"):
 * - Dsv5: "Dv5 and Dsv5-series" (learn.microsoft.com/azure/virtual-machines/dv5-dsv5-series), column
 *   "Max uncached disk throughput: IOPS/MBps" (one column for every remote disk type, Premium SSD v2 included).
 * - Ebsv5 (SCSI): "Ebdsv5 and Ebsv5 series" (learn.microsoft.com/azure/virtual-machines/ebdsv5-ebsv5-series),
 *   column "Max uncached Ultra Disk and Premium SSD V2 disk throughput: IOPS/MBps".
 * MBps there is 10^6 bytes/s ("Disk throughput is measured in ... MBps where MBps = 10^6 bytes/sec"). Burst caps
 * (up to 30 minutes) are not used: a benchmark's steady state runs at the uncached cap.
 */

/** One VM size: vCPUs, memory and the uncached cap on remote (Premium SSD v2) disks. */
export interface VmSize {
  vcpus: number;
  memoryGiB: number;
  /** max uncached disk IOPS of the VM, all data disks together */
  uncachedIops: number;
  /** max uncached disk throughput of the VM, MBps (10^6 bytes/s) */
  uncachedMBps: number;
}

/** The sizes supported by azure stacks (Premium SSD v2 capable, no local temp disk). */
export const VM_SIZES = {
  Standard_D2s_v5: { vcpus: 2, memoryGiB: 8, uncachedIops: 3750, uncachedMBps: 85 },
  Standard_D4s_v5: { vcpus: 4, memoryGiB: 16, uncachedIops: 6400, uncachedMBps: 145 },
  Standard_D8s_v5: { vcpus: 8, memoryGiB: 32, uncachedIops: 12800, uncachedMBps: 290 },
  Standard_D16s_v5: { vcpus: 16, memoryGiB: 64, uncachedIops: 25600, uncachedMBps: 600 },
  Standard_D32s_v5: { vcpus: 32, memoryGiB: 128, uncachedIops: 51200, uncachedMBps: 865 },
  Standard_E2bs_v5: { vcpus: 2, memoryGiB: 16, uncachedIops: 7370, uncachedMBps: 156 },
  Standard_E4bs_v5: { vcpus: 4, memoryGiB: 32, uncachedIops: 14740, uncachedMBps: 350 },
} as const satisfies Record<string, VmSize>;

export type VmSizeName = keyof typeof VM_SIZES;

/** The supported size names, for schema enums and messages. */
export const VM_SIZE_NAMES = Object.keys(VM_SIZES) as [VmSizeName, ...VmSizeName[]];
