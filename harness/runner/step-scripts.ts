/**
 * The shell side of the `disk-full` and `drop-connections` steps (harness/scenario/steps.ts), shared by the local
 * platform (./local-site.ts: run in the host's namespace and cgroup) and the docker platform
 * (harness/remote/docker-steps.ts: `docker exec` in the host's container, or a NET_ADMIN helper in its network
 * namespace), so both fill a volume and drop connections the same way and report the same lines.
 *
 * disk-full: `df -Pk` (POSIX output: 1024-byte blocks total, used, available) of the data directory; the share of
 * the filesystem to reach is `level` % of its blocks; a fill file `.ingestbench-disk-full` in the directory grows by
 * what is missing (`head -c`), or, when that is all that is left, by zeros until the kernel answers ENOSPC. It prints
 * the df line before and after. The file stays until the volume goes (a tmpfs with its host; an `exec` step may
 * remove it earlier: `rm <dataDir>/.ingestbench-disk-full`).
 *
 * drop-connections: `ss -K` (ss(8): "Attempts to forcibly close sockets", through the kernel's SOCK_DESTROY, which
 * needs CONFIG_INET_DIAG_DESTROY) of the established TCP sockets whose remote end is the peer's address, run in the
 * host's network namespace; ss prints each socket it closed.
 */
import { existsSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import os from "node:os";

/** The fill file's name inside the data directory. */
export const DISK_FILL_FILE = ".ingestbench-disk-full";

/** POSIX sh: `sh -c DISK_FILL_SCRIPT sh <dir> <level percent>` (see the file comment). */
export const DISK_FILL_SCRIPT = [
  "set -eu",
  `d="$1"; level="$2"; f="$d/${DISK_FILL_FILE}"`,
  `line() { df -Pk "$d" | tail -n 1; }`,
  `before=$(line); echo "before: $before"`,
  "set -- $before",
  "total=$2; used=$3; avail=$4",
  "target=$(( (total * level + 99) / 100 ))",
  "need=$(( target - used ))",
  `if [ "$need" -gt 0 ]; then`,
  `  if [ "$need" -ge "$avail" ]; then cat /dev/zero >> "$f" 2>/dev/null || true`,
  `  else head -c $(( need * 1024 )) /dev/zero >> "$f"; fi`,
  "fi",
  `echo "after: $(line)"`,
].join("\n");

/** One `df -Pk` line: filesystem, 1024-byte blocks total, used, available, mount point. */
export interface DfLine {
  filesystem: string;
  totalKiB: number;
  usedKiB: number;
  availKiB: number;
  mount: string;
}

/** Parse a `df -Pk` data line (or a line prefixed "before: "/"after: "); null when it is not one. */
export function parseDfLine(line: string): DfLine | null {
  const f = line
    .replace(/^(before|after):\s*/, "")
    .trim()
    .split(/\s+/);
  if (f.length < 6 || ![f[1], f[2], f[3]].every((x) => /^\d+$/.test(x!))) return null;
  return {
    filesystem: f[0]!,
    totalKiB: Number(f[1]),
    usedKiB: Number(f[2]),
    availKiB: Number(f[3]),
    mount: f.slice(5).join(" "),
  };
}

/** The timeline's line for a fill: the df line after it, e.g. "data volume /…/data: 65536 of 65536 KiB used (100 %), 0 KiB free". */
export function describeFill(output: string): string {
  const after = output.split("\n").find((l) => l.startsWith("after:"));
  const d = after ? parseDfLine(after) : null;
  if (!d) return output.trim();
  const pct = d.totalKiB > 0 ? Math.round((d.usedKiB / d.totalKiB) * 100) : 0;
  return `data volume ${d.mount}: ${d.usedKiB} of ${d.totalKiB} KiB used (${pct} %), ${d.availKiB} KiB free (${d.filesystem})`;
}

/** `ss -K` argv closing the established TCP sockets to `peer` (an IPv4 address), run in the host's network namespace. */
export function dropConnectionsArgv(peer: string): string[] {
  return ["ss", "-K", "-t", "-n", "state", "established", "dst", peer];
}

/** The timeline's line for `ss -K` output: how many sockets it closed, and which. */
export function describeDrop(host: string, peer: string, peerAddress: string, output: string): string {
  const sockets = output
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^(Recv-Q|State|Netid)\b/.test(l));
  return `closed ${sockets.length} TCP connection(s) of ${host} to ${peer} (${peerAddress})${sockets.length ? `: ${sockets.map((l) => l.split(/\s+/).slice(-2).join(" → ")).join("; ")}` : ""}`;
}

/**
 * Whether this kernel can destroy sockets (ss -K needs CONFIG_INET_DIAG_DESTROY), from /proc/config.gz or
 * /boot/config-<release>; `available: null` when neither is readable (then a step records the kernel's own answer).
 */
export function socketDestroyAvailable(): { available: boolean | null; reason: string } {
  const read = (): { text: string; from: string } | null => {
    try {
      if (existsSync("/proc/config.gz"))
        return {
          text: gunzipSync(readFileSync("/proc/config.gz")).toString("utf8"),
          from: "/proc/config.gz",
        };
      const boot = `/boot/config-${os.release()}`;
      if (existsSync(boot)) return { text: readFileSync(boot, "utf8"), from: boot };
    } catch {
      // unreadable: unknown
    }
    return null;
  };
  const cfg = read();
  if (!cfg) return { available: null, reason: "no kernel config readable (/proc/config.gz, /boot/config-*)" };
  if (/^CONFIG_INET_DIAG_DESTROY=y$/m.test(cfg.text))
    return { available: true, reason: `CONFIG_INET_DIAG_DESTROY=y in ${cfg.from}` };
  return { available: false, reason: `CONFIG_INET_DIAG_DESTROY is not set in ${cfg.from}` };
}

/**
 * The peers a `drop-connections` step closes `host`'s connections to: `peer` when given, else the next hosts in data
 * flow (`roles` in hostRoles order: loadgen, collector(s), sink): the collector(s) or the sink for the loadgen, the
 * sink for a collector, and the collector(s) (or the loadgen, without one) for the sink.
 */
export function dropPeers(roles: readonly string[], host: string, peer: string | null): string[] {
  if (peer) return [peer];
  const collectors = roles.filter((r) => r.startsWith("collector"));
  if (host === "sink") return collectors.length ? collectors : ["loadgen"];
  if (host === "loadgen") return collectors.length ? collectors : ["sink"];
  return ["sink"];
}
