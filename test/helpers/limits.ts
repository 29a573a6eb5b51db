/** What the kernel reports back for 004's sink caps (0.25 core, 2 GiB, 3000 IOPS and 125829120 B/s on the data disk). */
export const QUARTER_CORE_CGROUP_APPLIED = {
  cfsQuotaUs: 25_000,
  cfsPeriodUs: 100_000,
  memoryLimitBytes: 2_147_483_648,
  readIops: 3000,
  writeIops: 3000,
  readBps: 125_829_120,
  writeBps: 125_829_120,
} as const;
