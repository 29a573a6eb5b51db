/** Finds what a run left on this machine: network namespaces, cgroup directories, processes and temp dirs. */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Everything carrying the run's short id (the last 6 hex chars of its run id). Empty list = clean. */
export function leftovers(shortId: string): string[] {
  const found: string[] = [];
  const netns = execFileSync("ip", ["netns", "list"]).toString();
  for (const line of netns.split("\n")) if (line.includes(shortId)) found.push(`netns ${line.trim()}`);
  for (const root of ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
    if (!existsSync(root)) continue;
    for (const ctl of readdirSync(root)) {
      const dir = path.join(root, ctl, "ingestbench", shortId);
      if (existsSync(dir)) found.push(`cgroup ${dir}`);
    }
    const v2 = path.join(root, "ingestbench", shortId);
    if (existsSync(v2)) found.push(`cgroup ${v2}`);
  }
  const ps = execFileSync("ps", ["-eo", "pid,args"]).toString();
  for (const line of ps.split("\n"))
    if (line.includes(`ingestbench-${shortId}`)) found.push(`process ${line.trim()}`);
  for (const entry of readdirSync(os.tmpdir())) if (entry.includes(shortId)) found.push(`tmp ${entry}`);
  const registry = path.join(os.tmpdir(), "ingestbench-runs", `${shortId}.json`);
  if (existsSync(registry)) found.push(`registry ${registry}`);
  return found;
}
