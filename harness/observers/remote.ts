/**
 * Remote observer: the per-host telemetry of the local observer (harness/observers/local.ts) for hosts that run in
 * containers (docker and azure stacks), read through a shell into each container (`docker exec`, SSH).
 *
 * Inside a container, /sys/fs/cgroup shows the container's own cgroup: v1 has one directory per controller
 * (cpu/cpu.stat, cpuacct/cpuacct.usage, memory/…, blkio/…; Documentation/admin-guide/cgroup-v1/), v2 one directory
 * (cpu.stat, memory.current, io.stat; Documentation/admin-guide/cgroup-v2.rst), recognised by its
 * cgroup.controllers file. /proc/net/dev (proc(5)) lists the container's own interfaces.
 */
import { ProvisioningError } from "../../core/errors.ts";
import { CGROUP_USAGE_FILES, type CgroupUsage, parseCgroupUsage } from "../../infra/local/cgroup.ts";
import { parseProcNetDev } from "../../infra/local/netns.ts";
import { SHAPER_IFB } from "../../infra/docker/shaper.ts";
import type { CgroupPaths } from "../../core/hosts.ts";
import type { Observer } from "./types.ts";
import { parseTaskSchedstatLines } from "../../core/schedstat.ts";
import { type HostReading, harnessNow, runDelayAccumulator, windowedObserver } from "./window.ts";

/** A host the observer reads through: `run` executes a command inside the host's container and returns stdout. */
export interface ObservedShell {
  readonly host: string;
  run(command: string, args: string[], opts?: { timeoutMs?: number }): Promise<string>;
}

export interface RemoteObserverOptions {
  /** hosts with a CPU cap (throttledShare meaningful), as createLocalObserver takes */
  cappedHosts: ReadonlySet<string>;
  /** data-plane interface inside the containers, default "eth0" */
  interface?: string;
  /** per-read timeout, default 5 s */
  timeoutMs?: number;
  /**
   * Explicit cgroup directories per host name (v1: keys cpu, cpuacct, memory, blkio; v2: key unified), for hosts
   * whose cgroup is not at the container's cgroup root (and tests). Hosts not listed are read at `cgroupRoot`.
   */
  cgroupDirs?: Readonly<Record<string, CgroupPaths>>;
  /** where the container's own cgroup is mounted, default /sys/fs/cgroup */
  cgroupRoot?: string;
  /**
   * hosts whose ingress a shaper redirects through the ifb device SHAPER_IFB (infra/docker/shaper.ts; the docker
   * read-back's `ingressTbfRateBytesPerSec`): their received bytes are that device's transmit counter
   */
  ingressShaped?: ReadonlySet<string>;
  /**
   * Hosts whose container a fault step killed, stopped or restarted (harness/remote/docker-steps.ts): a read that
   * fails for one of them carries its last reading forward to now (the window shows no CPU and no traffic, which is
   * what a dead container did) instead of failing the run; any other host's failure is still E_OBSERVER_READ.
   */
  mayBeDown?: (host: string) => boolean;
}

const DEFAULT_TIMEOUT_MS = 5000;
/** Marker lines between sections of the script's output; no cgroup or procfs file has a line starting with "@@ib ". */
const MARK = "@@ib";
const NET_SECTION = "/proc/net/dev";
/** The section of every task's schedstat in the host's pid namespace (the container's own tasks under docker exec). */
const SCHEDSTAT_SECTION = "schedstat";
/** The section naming the reading shell's own pid, whose tasks are left out of the run delay. */
const SELF_SECTION = "self";

/** Single-quote a string for POSIX sh. */
function shq(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The script lines that print one hierarchy's usage files: each present file as a section, absent ones not at all. */
function sectionLines(version: "v1" | "v2", dirs: Readonly<Record<string, string>>): string[] {
  const lines = [`printf '\\n${MARK} version %s\\n' ${version}`];
  for (const { dir, file } of CGROUP_USAGE_FILES[version]) {
    const d = dirs[dir];
    if (d !== undefined) lines.push(`emit ${shq(file)} ${shq(`${d}/${file}`)}`);
  }
  return lines;
}

/** The default directories of a container's own cgroup under `root`: v1 one per controller, v2 the root itself. */
function rootDirs(version: "v1" | "v2", root: string): Record<string, string> {
  if (version === "v2") return { unified: root };
  return Object.fromEntries(CGROUP_USAGE_FILES.v1.map(({ dir }) => [dir, `${root}/${dir}`]));
}

/**
 * The sh script that prints, in one round trip, every usage file of the host's cgroup and /proc/net/dev, each after
 * a "@@ib file <name>" line, preceded by "@@ib version v1|v2". A file that exists but cannot be read fails the
 * script (exit 3); an absent one is left out (parseCgroupUsage reports it as unavailable).
 * - `target` a CgroupPaths: read exactly those directories;
 * - `target` { root, version: undefined }: detect v1/v2 by `<root>/cgroup.controllers` in the script itself;
 * - `target` { root, version }: the version found by an earlier read.
 */
export function remoteReadScript(target: CgroupPaths | { root: string; version?: "v1" | "v2" }): string {
  const lines = [
    `emit() { if [ -e "$2" ]; then printf '\\n${MARK} file %s\\n' "$1"; cat "$2" || exit 3; fi; }`,
  ];
  if ("dirs" in target) lines.push(...sectionLines(target.version, target.dirs));
  else if (target.version !== undefined)
    lines.push(...sectionLines(target.version, rootDirs(target.version, target.root)));
  else {
    lines.push(`if [ -e ${shq(`${target.root}/cgroup.controllers`)} ]; then`);
    lines.push(...sectionLines("v2", rootDirs("v2", target.root)));
    lines.push("else");
    lines.push(...sectionLines("v1", rootDirs("v1", target.root)));
    lines.push("fi");
  }
  lines.push(`printf '\\n${MARK} file %s\\n' ${NET_SECTION}`, `cat ${NET_SECTION} || exit 3`);
  // run delay of every task the host's shell sees (one grep, not a cat per task); optional: an image without grep
  // or a procfs without schedstat gives an empty section and no contention figure for that host
  lines.push(`printf '\\n${MARK} file %s\\n%s\\n' ${SELF_SECTION} "$$"`);
  lines.push(
    `printf '\\n${MARK} file %s\\n' ${SCHEDSTAT_SECTION}`,
    `grep -H '' /proc/[0-9]*/task/[0-9]*/schedstat 2>/dev/null || true`,
  );
  return lines.join("\n");
}

/** The script's output split into its version line and file sections (file name → text). */
export function parseRemoteOutput(stdout: string): { version?: "v1" | "v2"; files: Record<string, string> } {
  let version: "v1" | "v2" | undefined;
  const files: Record<string, string> = {};
  let current: string | undefined;
  for (const line of stdout.split("\n")) {
    if (line.startsWith(`${MARK} `)) {
      const [kind, ...rest] = line.slice(MARK.length + 1).split(" ");
      const value = rest.join(" ");
      if (kind === "version" && (value === "v1" || value === "v2")) version = value;
      current = kind === "file" ? value : undefined;
      if (current !== undefined) files[current] = "";
      continue;
    }
    if (current !== undefined) files[current] += `${line}\n`;
  }
  return { version, files };
}

/** Usage fields without which a window would be silently wrong (0 cores, 0 bytes), so a missing one is an error. */
function requiredFields(capped: boolean): Array<keyof CgroupUsage> {
  return capped ? ["cpuUsageNs", "memoryBytes", "nrPeriods", "nrThrottled"] : ["cpuUsageNs", "memoryBytes"];
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Observe containerised hosts through their shells. One `sh -c <script>` per host per read, all hosts in parallel
 * (see remoteReadScript): the script prints each cgroup usage file and /proc/net/dev between markers, so one round
 * trip reads everything (the whole /proc/net/dev, a few lines in a container, so that a missing interface can be
 * reported with the ones present); v1/v2 is detected on the first read (unless `cgroupDirs` names the host's
 * directories) and the later scripts read only that version's files.
 *
 * Time stamps: the harness clock (performance.timeOrigin + performance.now(), epoch ms) at the midpoint of the
 * round trip (before the command is sent, after its output is back), so `docker exec`/SSH latency splits evenly;
 * a window's rates are over the real elapsed time between two such midpoints, as in the local observer.
 *
 * Errors propagate (as the local observer: silent zeros would hide a broken measurement) as a ProvisioningError
 * E_OBSERVER_READ naming every failing host: the command failed or timed out (`timeoutMs`, default 5000 ms), the
 * output lacks the markers, the CPU or memory usage files (and for capped hosts the CFS period counters) are
 * absent, or the interface (default "eth0") is not in the host's /proc/net/dev.
 *
 * Received bytes: the interface's rx counter, or, for the `ingressShaped` hosts (their network cap shapes ingress
 * through the ifb device SHAPER_IFB, infra/docker/shaper.ts), that device's tx counter: what passed the ingress tbf (the
 * interface's own rx counts packets before the tbf drops them, and their retransmissions again).
 */
export function createRemoteObserver(shells: ObservedShell[], opts: RemoteObserverOptions): Observer {
  const names = shells.map((s) => s.host);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined)
    throw new ProvisioningError("E_OBSERVER_HOSTS", `remote observer: host "${dup}" is listed twice`);
  const ifname = opts.interface ?? "eth0";
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const root = opts.cgroupRoot ?? "/sys/fs/cgroup";
  const detected = new Map<string, "v1" | "v2">();
  const delays = new Map(names.map((n) => [n, runDelayAccumulator()]));

  async function readHost(shell: ObservedShell): Promise<HostReading> {
    const explicit = opts.cgroupDirs?.[shell.host];
    const script = remoteReadScript(explicit ?? { root, version: detected.get(shell.host) });
    const before = harnessNow();
    const stdout = await withTimeout(
      shell.run("sh", ["-c", script], { timeoutMs }),
      timeoutMs,
      "reading telemetry",
    );
    const t = (before + harnessNow()) / 2;
    const { version, files } = parseRemoteOutput(stdout);
    if (version === undefined) {
      throw new Error(
        `output has no "${MARK} version" line (not a POSIX sh?): ${JSON.stringify(stdout.slice(0, 200))}`,
      );
    }
    detected.set(shell.host, version);
    const usage = parseCgroupUsage(version, files);
    const missing = requiredFields(opts.cappedHosts.has(shell.host)).filter((f) =>
      usage.unavailable.includes(f),
    );
    if (missing.length > 0) {
      const where = explicit ? Object.values(explicit.dirs).join(", ") : root;
      throw new Error(
        `cgroup ${version} at ${where} does not provide ${missing.join(", ")} (files read: ${Object.keys(files).join(", ")})`,
      );
    }
    const netText = files[NET_SECTION] ?? "";
    const net = parseProcNetDev(netText, ifname);
    if (net === undefined) {
      const present = netText
        .split("\n")
        .filter((l) => l.includes(":"))
        .map((l) => l.slice(0, l.indexOf(":")).trim());
      throw new Error(
        `interface "${ifname}" is not in /proc/net/dev (interfaces: ${present.join(", ") || "none"})`,
      );
    }
    // an ingress shaper (infra/docker/shaper.ts) redirects what arrives on the interface to its ifb device, whose
    // tbf drops what exceeds the rate: the interface's rx counter runs before that (it counts the dropped packets and
    // TCP's retransmissions of them too), the ifb's tx counter after it, so that is what the host received
    const shaped = opts.ingressShaped?.has(shell.host) ? parseProcNetDev(netText, SHAPER_IFB) : undefined;
    if (opts.ingressShaped?.has(shell.host) && shaped === undefined) {
      throw new Error(
        `the ingress shaper's device "${SHAPER_IFB}" is not in /proc/net/dev: the host's received bytes cannot be counted after its tbf`,
      );
    }
    if (shaped !== undefined) {
      net.rxBytes = shaped.txBytes;
      net.rxPackets = shaped.txPackets;
    }
    const waits = parseTaskSchedstatLines(files[SCHEDSTAT_SECTION] ?? "");
    waits.delete(Number((files[SELF_SECTION] ?? "").trim()));
    const runDelayNs = waits.size > 0 ? delays.get(shell.host)!.add(waits) : undefined;
    return { t, ...usage, ...net, ...(runDelayNs !== undefined ? { runDelayNs } : {}) };
  }

  const last = new Map<string, HostReading>();
  return windowedObserver(async () => {
    const settled = await Promise.all(
      shells.map((s) =>
        readHost(s).then(
          (reading): { host: string; reading: HostReading } => {
            last.set(s.host, reading);
            return { host: s.host, reading };
          },
          (error: unknown): { host: string; reading: HostReading } | { host: string; error: unknown } => {
            const held = last.get(s.host);
            if (held && opts.mayBeDown?.(s.host))
              return { host: s.host, reading: { ...held, t: harnessNow() } };
            return { host: s.host, error };
          },
        ),
      ),
    );
    const failed = settled.filter((r): r is { host: string; error: unknown } => "error" in r);
    if (failed.length > 0) {
      const why = failed.map(
        (f) => `host "${f.host}": ${f.error instanceof Error ? f.error.message : String(f.error)}`,
      );
      throw new ProvisioningError(
        "E_OBSERVER_READ",
        `remote observer: reading telemetry failed for ${why.join("; ")}`,
        {
          cause: failed.length === 1 ? failed[0]?.error : new AggregateError(failed.map((f) => f.error)),
        },
      );
    }
    const readings = new Map<string, HostReading>();
    for (const r of settled) if ("reading" in r) readings.set(r.host, r.reading);
    return readings;
  }, opts.cappedHosts);
}
