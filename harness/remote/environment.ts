/**
 * The environment fingerprint of a deployed host (results/types.ts Environment), read inside its container: what a
 * comparison across hardware sizes must see is the VM or container the sink ran on, not the machine the harness
 * runs on. One `sh -c` reads `uname -sr`, the first "model name" of /proc/cpuinfo, `nproc` (the CPUs the container
 * may use), MemTotal of /proc/meminfo, the cgroup version (cgroup.controllers at the cgroup root: v2) and the
 * hostname; `node` is the loadgen container's `node --version`, the generators' runtime.
 */
import { ProvisioningError } from "../../core/errors.ts";
import type { Environment } from "../results/types.ts";
import type { HostShell } from "./shell.ts";

const SCRIPT = [
  "uname -sr",
  "grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- || echo",
  "nproc",
  "grep -m1 '^MemTotal:' /proc/meminfo",
  "if [ -e /sys/fs/cgroup/cgroup.controllers ]; then echo v2; elif [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] || [ -e /sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us ]; then echo v1; else echo none; fi",
  "cat /proc/sys/kernel/hostname",
].join("; ");

/**
 * Parse the script's six lines. `uname -sr` gives "Linux 6.8.0-1015-azure", as os.type() + os.release() do locally.
 * @throws ProvisioningError E_REMOTE_ENV naming the host when a line is missing or malformed
 */
export function parseEnvironment(host: string, stdout: string, node: string): Environment {
  const [kernel, model, nproc, mem, cgroup, hostname] = stdout.split("\n").map((l) => l.trim());
  const memKiB = /^MemTotal:\s+(\d+)\s+kB$/.exec(mem ?? "")?.[1];
  const cores = Number(nproc);
  if (
    !kernel ||
    !Number.isInteger(cores) ||
    cores < 1 ||
    memKiB === undefined ||
    !(cgroup === "v1" || cgroup === "v2" || cgroup === "none") ||
    !hostname
  ) {
    throw new ProvisioningError(
      "E_REMOTE_ENV",
      `host ${host}: cannot read its environment (uname, /proc/cpuinfo, nproc, /proc/meminfo, cgroup, hostname); got:\n${stdout.slice(0, 500)}`,
    );
  }
  return {
    kernel,
    cpuModel: model || "unknown",
    cores,
    memoryBytes: Number(memKiB) * 1024,
    cgroup,
    node,
    hostname,
  };
}

/** The environment of the host behind `shell`, with the loadgen's node version. @throws ProvisioningError */
export async function probeEnvironment(shell: HostShell, loadgen: HostShell): Promise<Environment> {
  const node = (await loadgen.run("node", ["--version"])).trim();
  return parseEnvironment(shell.host, await shell.run("sh", ["-c", SCRIPT]), node);
}
