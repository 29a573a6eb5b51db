/**
 * The limits a deployed container really runs under, read back after the deploy — never the values the Pulumi
 * program handed to Docker (those are the deployment's `limits.applied` in the stack outputs, core/outputs.ts,
 * computed by infra/docker/flags.ts). Three sources, each recorded per value in `sources`:
 *
 * - `docker inspect <container>`: HostConfig.NanoCpus, CpuQuota, CpuPeriod, Memory, MemorySwap,
 *   BlkioDeviceReadIOps/WriteIOps/ReadBps/WriteBps, Tmpfs (Docker Engine API, ContainerInspect, HostConfig);
 *   recorded as `docker.<Field>`;
 * - the container's own cgroup, read inside it (`sh -c` of CGROUP_SCRIPT through the host's shell): cgroup v1
 *   cpu.cfs_quota_us / cpu.cfs_period_us, memory.limit_in_bytes, memory.memsw.limit_in_bytes,
 *   blkio.throttle.{read,write}_{iops,bps}_device; cgroup v2 cpu.max, memory.max, memory.swap.max, io.max
 *   (Documentation/admin-guide/cgroup-v1/ and cgroup-v2.rst of the kernel); recorded under the names the local
 *   platform uses (cfsQuotaUs, cfsPeriodUs, memoryLimitBytes, readIops, …);
 * - `tc -j qdisc show dev eth0` and `tc -j qdisc show dev ifb0` run in the host's shaper container
 *   (`<container>-shaper`, infra/docker/host.ts; it shares the container's network namespace): the egress tbf rate
 *   (tc's JSON gives bytes/s), netem delay/loss, and the ingress tbf on the ifb device that the ingress filter
 *   redirects every inbound packet to (infra/docker/shaper.ts).
 *
 * Each value the deployment handed over is compared with both the inspect and the cgroup value (CPU as cores =
 * quota / period, since `--cpus` gives NanoCpus and a 100 ms period); a difference, a missing value, or a CPU or
 * memory cap nobody asked for makes `enforced: false` and is listed in `mismatches` and the notes. A read-back that
 * cannot run at all (no engine answers `docker inspect`) keeps the handed values, `enforced: false`, and says why.
 */
import type { AppliedLimits } from "../../core/limits.ts";
import type { HostShell } from "./shell.ts";
import { SHAPER_IFB } from "../../infra/docker/shaper.ts";

/** Shell script printing `== <file>` then the file's content, for each cgroup file that exists (v1 or v2). */
export const CGROUP_SCRIPT = [
  "r=/sys/fs/cgroup",
  'if [ -e $r/cgroup.controllers ]; then echo "== version"; echo v2; set -- $r/cpu.max $r/memory.max $r/memory.swap.max $r/io.max $r/memory.events;',
  'else echo "== version"; echo v1; c=$r/cpu; [ -e $c/cpu.cfs_quota_us ] || c=$r/cpu,cpuacct;',
  "set -- $c/cpu.cfs_quota_us $c/cpu.cfs_period_us $r/memory/memory.limit_in_bytes $r/memory/memory.memsw.limit_in_bytes $r/memory/memory.oom_control \\",
  "$r/blkio/blkio.throttle.read_iops_device $r/blkio/blkio.throttle.write_iops_device $r/blkio/blkio.throttle.read_bps_device $r/blkio/blkio.throttle.write_bps_device; fi",
  'for f in "$@"; do if [ -r "$f" ]; then echo "== $f"; cat "$f"; fi; done',
].join("\n");

/** The cgroup files CGROUP_SCRIPT printed: file path → content (trimmed); `version` → "v1" | "v2". */
export function parseCgroupFiles(stdout: string): Map<string, string> {
  const files = new Map<string, string>();
  let current: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (current !== null) files.set(current, lines.join("\n").trim());
  };
  for (const line of stdout.split("\n")) {
    if (line.startsWith("== ")) {
      flush();
      current = line.slice(3);
      lines = [];
    } else if (current !== null) lines.push(line);
  }
  flush();
  return files;
}

/** One value read back, and where it came from. */
type Reading = { value: number | string; source: string };
type Readings = Record<string, Reading>;

const v1Rates: [string, string][] = [
  ["blkio.throttle.read_iops_device", "readIops"],
  ["blkio.throttle.write_iops_device", "writeIops"],
  ["blkio.throttle.read_bps_device", "readBytesPerSec"],
  ["blkio.throttle.write_bps_device", "writeBytesPerSec"],
];
const v2Rates: Record<string, string> = {
  riops: "readIops",
  wiops: "writeIops",
  rbps: "readBytesPerSec",
  wbps: "writeBytesPerSec",
};
/** cgroup v1's "no limit" for memory: a page-aligned LONG_MAX (9223372036854771712); anything at or above 2^62 is none. */
const V1_MEMORY_UNLIMITED = 2 ** 62;

/**
 * The limits in a container's cgroup files (parseCgroupFiles' map), under the local platform's names
 * (cfsQuotaUs, cfsPeriodUs, memoryLimitBytes, memorySwapLimitBytes = memory + swap, readIops, writeIops,
 * readBytesPerSec, writeBytesPerSec, blkioDevice as "major:minor"). Unlimited values are left out.
 * `where` names the container in each source.
 */
export function cgroupReadings(files: Map<string, string>, where: string): Readings {
  const out: Readings = {};
  const version = files.get("version");
  const put = (key: string, value: number | string, file: string) =>
    void (out[key] = { value, source: `cgroup ${version} ${file} in ${where}` });
  const file = (suffix: string) => [...files.keys()].find((f) => f.endsWith(`/${suffix}`));
  if (version === "v1") {
    const q = file("cpu.cfs_quota_us");
    const p = file("cpu.cfs_period_us");
    if (q && p && Number(files.get(q)) > 0) {
      put("cfsQuotaUs", Number(files.get(q)), q);
      put("cfsPeriodUs", Number(files.get(p)), p);
    }
    const m = file("memory.limit_in_bytes");
    if (m && Number(files.get(m)) < V1_MEMORY_UNLIMITED) put("memoryLimitBytes", Number(files.get(m)), m);
    const s = file("memory.memsw.limit_in_bytes");
    if (s && Number(files.get(s)) < V1_MEMORY_UNLIMITED) put("memorySwapLimitBytes", Number(files.get(s)), s);
    for (const [name, key] of v1Rates) {
      const f = file(name);
      // one line per device: "254:0 3000"
      const line = f
        ? files
            .get(f)!
            .split("\n")
            .find((l) => /^\d+:\d+ \d+$/.test(l))
        : undefined;
      if (f && line) {
        const [dev, rate] = line.split(" ");
        put(key, Number(rate), f);
        put("blkioDevice", dev!, f);
      }
    }
  } else if (version === "v2") {
    const c = file("cpu.max");
    const [quota, period] = (c ? files.get(c)! : "max").split(/\s+/);
    if (c && quota !== "max") {
      put("cfsQuotaUs", Number(quota), c);
      put("cfsPeriodUs", Number(period), c);
    }
    const m = file("memory.max");
    if (m && files.get(m) !== "max") put("memoryLimitBytes", Number(files.get(m)), m);
    const s = file("memory.swap.max");
    if (m && s && files.get(m) !== "max" && files.get(s) !== "max")
      put("memorySwapLimitBytes", Number(files.get(m)) + Number(files.get(s)), `${m} + ${s}`);
    const io = file("io.max");
    // "254:0 rbps=max wbps=125829120 riops=3000 wiops=max"
    for (const line of io ? files.get(io)!.split("\n").filter(Boolean) : []) {
      const [dev, ...kv] = line.split(/\s+/);
      for (const pair of kv) {
        const [k, v] = pair.split("=");
        if (k && v && v !== "max" && v2Rates[k]) {
          put(v2Rates[k], Number(v), io!);
          put("blkioDevice", dev!, io!);
        }
      }
    }
  }
  return out;
}

/** What `docker inspect` says of a container's HostConfig, as the Engine API names the fields. */
export interface InspectedHostConfig {
  NanoCpus?: number;
  CpuQuota?: number;
  CpuPeriod?: number;
  Memory?: number;
  MemorySwap?: number;
  BlkioDeviceReadIOps?: { Path: string; Rate: number }[] | null;
  BlkioDeviceWriteIOps?: { Path: string; Rate: number }[] | null;
  BlkioDeviceReadBps?: { Path: string; Rate: number }[] | null;
  BlkioDeviceWriteBps?: { Path: string; Rate: number }[] | null;
  Tmpfs?: Record<string, string> | null;
}

/** `docker inspect` HostConfig values as readings `docker.<Field>` (zero = unset is left out; Tmpfs as `docker.Tmpfs:<path>`). */
export function inspectReadings(hc: InspectedHostConfig, container: string): Readings {
  const out: Readings = {};
  const put = (field: string, value: number | string) =>
    void (out[`docker.${field}`] = {
      value,
      source: `docker inspect ${container} HostConfig.${field.split(":")[0]}`,
    });
  for (const f of ["NanoCpus", "CpuQuota", "CpuPeriod", "Memory", "MemorySwap"] as const) {
    const v = hc[f];
    if (typeof v === "number" && v > 0) put(f, v);
  }
  for (const f of [
    "BlkioDeviceReadIOps",
    "BlkioDeviceWriteIOps",
    "BlkioDeviceReadBps",
    "BlkioDeviceWriteBps",
  ] as const) {
    const first = hc[f]?.[0];
    if (first) {
      put(f, first.Rate);
      put(`${f}Path`, first.Path);
    }
  }
  for (const [dir, options] of Object.entries(hc.Tmpfs ?? {})) put(`Tmpfs:${dir}`, options);
  return out;
}

/** The egress tbf and netem values of `tc -j qdisc show dev eth0`, and the ingress tbf rate of `tc -j qdisc show dev ifb0`. */
export function tcReadings(qdiscJson: string, ifbQdiscJson: string, where: string): Readings {
  const out: Readings = {};
  const qdiscs = JSON.parse(qdiscJson || "[]") as { kind: string; options?: Record<string, unknown> }[];
  const src = `tc -j qdisc show dev eth0 in ${where}`;
  for (const q of qdiscs) {
    const o = q.options ?? {};
    if (q.kind === "tbf" && typeof o.rate === "number") {
      out.tbfRateBytesPerSec = { value: o.rate, source: src };
      if (typeof o.burst === "number") out.tbfBurstBytes = { value: o.burst, source: src };
      if (typeof o.lat === "number") out.tbfLatencyMs = { value: o.lat / 1000, source: src };
    }
    if (q.kind === "netem") {
      const delay = (o.delay as { delay?: number } | undefined)?.delay;
      if (typeof delay === "number") out.netemDelayMs = { value: delay * 1000, source: src };
      const loss = (o.loss_random as { loss?: number } | undefined)?.loss;
      if (typeof loss === "number") out.netemLossPercent = { value: loss * 100, source: src };
    }
  }
  // inbound: the tbf on the ifb device (infra/docker/shaper.ts IFB)
  const ifb = (
    JSON.parse(ifbQdiscJson || "[]") as { kind: string; options?: Record<string, unknown> }[]
  ).find((q) => q.kind === "tbf");
  if (ifb && typeof ifb.options?.rate === "number") {
    out.ingressTbfRateBytesPerSec = {
      value: ifb.options.rate,
      source: `tc -j qdisc show dev ${SHAPER_IFB} in ${where}`,
    };
  }
  return out;
}

/** A handed value's counterparts in the readings: [reading key, label] pairs; CPU is compared as cores. */
const COUNTERPARTS: Record<string, string[]> = {
  memoryBytes: ["docker.Memory", "memoryLimitBytes"],
  memorySwapBytes: ["docker.MemorySwap", "memorySwapLimitBytes"],
  readIops: ["docker.BlkioDeviceReadIOps", "readIops"],
  writeIops: ["docker.BlkioDeviceWriteIOps", "writeIops"],
  readBytesPerSec: ["docker.BlkioDeviceReadBps", "readBytesPerSec"],
  writeBytesPerSec: ["docker.BlkioDeviceWriteBps", "writeBytesPerSec"],
  tbfRateBytesPerSec: ["tbfRateBytesPerSec"],
  ingressTbfRateBytesPerSec: ["ingressTbfRateBytesPerSec"],
  netemDelayMs: ["netemDelayMs"],
  netemLossPercent: ["netemLossPercent"],
};

/** Cores of the inspect readings (NanoCpus, else CpuQuota / CpuPeriod with Docker's default 100 ms period), or null. */
function inspectCores(r: Readings): number | null {
  if (r["docker.NanoCpus"]) return Number(r["docker.NanoCpus"].value) / 1e9;
  if (r["docker.CpuQuota"])
    return Number(r["docker.CpuQuota"].value) / Number(r["docker.CpuPeriod"]?.value ?? 100_000);
  return null;
}

const near = (a: number, b: number) => Math.abs(a - b) <= Math.abs(b) * 1e-3;

/**
 * Compare what was handed to Docker (`handed.applied`) with the readings. Returns the mismatches, one sentence
 * each; empty when every handed value is read back from each of its sources and no CPU or memory cap was added.
 */
export function limitMismatches(handed: Record<string, number | string>, read: Readings): string[] {
  const out: string[] = [];
  const show = (k: string) => (read[k] ? `${read[k]!.value} (${read[k]!.source})` : "none");
  if (handed.cfsQuotaUs !== undefined) {
    const want = Number(handed.cfsQuotaUs) / Number(handed.cfsPeriodUs ?? 100_000);
    const ic = inspectCores(read);
    if (ic === null || !near(ic, want))
      out.push(
        `CPU: asked ${want} cores (cpu-quota ${handed.cfsQuotaUs}/${handed.cfsPeriodUs}), docker inspect says ${ic ?? "no cap"}`,
      );
    const q = read.cfsQuotaUs;
    const cg = q ? Number(q.value) / Number(read.cfsPeriodUs!.value) : null;
    if (cg === null || !near(cg, want))
      out.push(
        `CPU: asked ${want} cores, the cgroup says ${cg === null ? "no cap" : `${cg} (${q!.value}/${read.cfsPeriodUs!.value}, ${q!.source})`}`,
      );
  } else if (read.cfsQuotaUs) {
    out.push(`CPU: no cap asked, but the cgroup has ${show("cfsQuotaUs")}`);
  }
  if (handed.memoryBytes === undefined && read.memoryLimitBytes)
    out.push(`memory: no cap asked, but the cgroup has ${show("memoryLimitBytes")}`);
  for (const [key, sources] of Object.entries(COUNTERPARTS)) {
    if (handed[key] === undefined) continue;
    const want = Number(handed[key]);
    for (const s of sources) {
      const got = read[s];
      if (got === undefined || !near(Number(got.value), want))
        out.push(
          `${key}: asked ${want}, read back ${show(s)}${got ? "" : ` from ${s.startsWith("docker.") ? "docker inspect" : "the kernel"}`}`,
        );
    }
  }
  if (handed.tmpfsBytes !== undefined && handed.tmpfsPath !== undefined) {
    const got = read[`docker.Tmpfs:${handed.tmpfsPath}`];
    if (!got || !String(got.value).split(",").includes(`size=${handed.tmpfsBytes}`))
      out.push(
        `tmpfs: asked size=${handed.tmpfsBytes} on ${handed.tmpfsPath}, docker inspect says ${got ? got.value : "no tmpfs there"}`,
      );
  }
  return out;
}

/** The note on docker's handed values that this read-back supersedes (infra/docker/flags.ts). */
const HANDED_NOTE = /^applied = the values handed to /;

/**
 * Build the AppliedLimits of a host from the handed limits and the readings: `applied` = the readings' values,
 * `sources` = where each came from, `handed` = what the deployment gave Docker, `enforced` false (with the
 * mismatches in `mismatches` and the notes) when they differ.
 */
export function readBackResult(handed: AppliedLimits, read: Readings): AppliedLimits {
  const mismatches = limitMismatches(handed.applied, read);
  const applied: Record<string, number | string> = {};
  const sources: Record<string, string> = {};
  for (const [k, r] of Object.entries(read)) {
    applied[k] = r.value;
    sources[k] = r.source;
  }
  // what needs no read-back (where the data directory is, the device named by the stack) stays as handed
  for (const k of ["tmpfsPath", "tmpfsBytes", "vmSize", "diskIOPSReadWrite", "diskMBpsReadWrite"]) {
    if (handed.applied[k] !== undefined && applied[k] === undefined) {
      applied[k] = handed.applied[k]!;
      sources[k] = k.startsWith("tmpfs")
        ? `handed to Docker; checked against docker inspect HostConfig.Tmpfs`
        : "handed to the platform (not readable inside the container)";
    }
  }
  const notes = handed.notes.filter((n) => !HANDED_NOTE.test(n));
  notes.push(
    "applied = read back after the deploy: docker inspect (docker.*), the container's own cgroup files and tc in its shaper (see sources)",
  );
  for (const m of mismatches) notes.push(`NOT enforced as asked: ${m}`);
  return {
    requested: handed.requested,
    applied,
    enforced: handed.enforced && mismatches.length === 0,
    notes,
    sources,
    handed: handed.applied,
    mismatches,
  };
}

/** Options of readBackLimits. */
export interface ReadBackOptions {
  /** the container running tc for this host (infra/docker/host.ts: `<container>-shaper`); read when network caps were handed */
  shaper?: string;
}

const NETWORK_KEYS = ["tbfRateBytesPerSec", "ingressTbfRateBytesPerSec", "netemDelayMs", "netemLossPercent"];

/**
 * Read back the limits of the container behind `shell` and compare them with `handed` (the stack outputs'
 * `hosts.<h>.limits`). Never throws: a source that cannot be read is a mismatch named in the result, and when
 * `docker inspect` itself fails the handed values are kept with `enforced: false` and the reason.
 */
export async function readBackLimits(
  shell: HostShell,
  handed: AppliedLimits,
  opts: ReadBackOptions = {},
): Promise<AppliedLimits> {
  const first = (e: unknown) => (e as Error).message.split("\n").slice(0, 2).join(" ");
  let hc: InspectedHostConfig;
  try {
    const [info] = JSON.parse(await shell.engine(["inspect", "--type", "container", shell.container])) as {
      HostConfig: InspectedHostConfig;
    }[];
    hc = info!.HostConfig;
  } catch (err) {
    return {
      ...structuredClone(handed),
      enforced: false,
      notes: [
        ...handed.notes,
        `limits NOT read back (docker inspect ${shell.container} failed: ${first(err)}): applied are the values handed to Docker, unverified`,
      ],
    };
  }
  const read: Readings = inspectReadings(hc, shell.container);
  const unread: string[] = [];
  try {
    Object.assign(
      read,
      cgroupReadings(parseCgroupFiles(await shell.run("sh", ["-c", CGROUP_SCRIPT])), shell.container),
    );
  } catch (err) {
    unread.push(`cgroup files not read inside ${shell.container}: ${first(err)}`);
  }
  if (opts.shaper && NETWORK_KEYS.some((k) => handed.applied[k] !== undefined)) {
    try {
      const qd = await shell.engine(["exec", opts.shaper, "tc", "-j", "qdisc", "show", "dev", "eth0"]);
      const inbound = handed.applied.ingressTbfRateBytesPerSec !== undefined;
      const ifb = inbound
        ? await shell.engine(["exec", opts.shaper, "tc", "-j", "qdisc", "show", "dev", SHAPER_IFB])
        : "[]";
      Object.assign(read, tcReadings(qd, ifb, opts.shaper));
    } catch (err) {
      unread.push(`tc not read in shaper ${opts.shaper}: ${first(err)}`);
    }
  }
  const result = readBackResult(handed, read);
  if (unread.length) {
    result.notes.push(...unread);
    result.enforced = false;
  }
  return result;
}
