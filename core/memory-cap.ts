/** A local host's memory cap as its cgroup holds it (the local platform's caps: infra/local/cgroup.ts). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CgroupPaths } from "./hosts.ts";

/** The memory cap of a host's cgroup, bytes (v1 memory.limit_in_bytes, v2 memory.max); null when none or unreadable. */
export function memoryCapOf(cgroup: CgroupPaths): number | null {
  const file =
    cgroup.version === "v2"
      ? cgroup.dirs.unified && join(cgroup.dirs.unified, "memory.max")
      : cgroup.dirs.memory && join(cgroup.dirs.memory, "memory.limit_in_bytes");
  if (!file) return null;
  try {
    const n = Number(readFileSync(file, "utf8").trim());
    // v2 "max" is NaN; v1 without a cap holds a page-rounded 2^63 − 1
    return Number.isFinite(n) && n < 2 ** 62 ? n : null;
  } catch {
    return null;
  }
}
