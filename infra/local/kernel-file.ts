/**
 * Reading the kernel's virtual files (procfs, cgroupfs, sysfs) on the measurement's hot path.
 *
 * These files are generated in memory when read and never wait for a disk, so a synchronous read blocks the event
 * loop for microseconds only, and costs the harness far less CPU than `fs/promises` readFile (an open, fstat, read and
 * close each sent through the libuv thread pool, plus a FileHandle and promises per file). Measured with
 * process.cpuUsage() on a host's cgroup usage files: an order of magnitude less CPU with readFileSync
 * (docs/measurements.md, "Figures moved from code comments").
 * The observers read a few dozen such files per sample (docs/design.md, "What the instrument costs").
 */
import { readFileSync } from "node:fs";

/**
 * The text of a procfs/cgroupfs/sysfs file, read synchronously; undefined when it does not exist (ENOENT: a cgroup
 * or task that is gone, no PSI). Not for files on a disk.
 * @throws the read's error for anything else (e.g. EACCES)
 */
export function readKernelFile(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return undefined;
    throw err;
  }
}
