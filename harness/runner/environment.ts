/** The environment fingerprint recorded with every run: kernel, CPU, cores, memory, cgroup version, git commit. */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import type { Environment } from "../results/types.ts";

export function cgroupVersion(): Environment["cgroup"] {
  if (existsSync("/sys/fs/cgroup/cgroup.controllers")) return "v2";
  if (
    existsSync("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") ||
    existsSync("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us")
  )
    return "v1";
  return "none";
}

export function environment(): Environment {
  let cpuModel = os.cpus()[0]?.model ?? "unknown";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    if (line) cpuModel = line.split(":")[1]!.trim();
  } catch {
    // not Linux: os.cpus() is good enough
  }
  return {
    kernel: `${os.type()} ${os.release()}`,
    cpuModel,
    cores: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    cgroup: cgroupVersion(),
    node: process.version,
    hostname: os.hostname(),
  };
}

/** The git commit of the working tree, with "-dirty" when it has uncommitted changes; "unknown" outside git. */
export function gitCommit(cwd: string): string {
  try {
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd,
      stdio: ["ignore", "pipe", "ignore"],
    })
      .toString()
      .trim();
    return dirty ? `${head}-dirty` : head;
  } catch {
    return "unknown";
  }
}
