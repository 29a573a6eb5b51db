/**
 * Network namespaces, veth links and tc shaping for the local platform (iproute2: ip-netns(8), ip-link(8),
 * tc-tbf(8), tc-netem(8)).
 *
 * Topology of a run `<runId>` (6 hex chars) with hosts h0..hn-1:
 * - every host gets namespace `ib-<runId>-<host>` with `lo` up;
 * - control link (unshaped) per host i: veth `ib<runId>c<i>` in the root namespace (10.213.<block>.<4i+1>/30)
 *   ↔ `ib<runId>c<i>h` in the host namespace (10.213.<block>.<4i+2>/30); the harness reaches hosts over it;
 * - data plane (shaped): with exactly two hosts one veth pair `ib<runId>d0` ↔ `ib<runId>d1` between them; with
 *   three or more, a bridge `ib<runId>br` inside namespace `ib-<runId>-net` and per host i a veth
 *   `ib<runId>d<i>` (host side) ↔ `ib<runId>d<i>p` (bridge port). Host i's data address is 10.214.<block>.<i+1>/24.
 * `<block>` (0..255) is derived from a hash of runId and moved on when 10.213.<block>.0/24 is already in use in
 * the root namespace (another run), so concurrent runs do not collide.
 *
 * Shaping a host shapes both directions of its data link: egress of its own end (upload) and egress of the
 * peer end (its download): tbf for bandwidth, netem for delay/loss, netem at the root with tbf as its child when
 * both. Values are read back with `tc -j qdisc show`.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import { gunzipSync } from "node:zlib";
import { execa } from "execa";
import { ProvisioningError } from "../../core/errors.ts";
import type { NetworkLimit } from "../../core/limits.ts";
import { readKernelFile } from "./kernel-file.ts";

/** Prefix of every namespace this module creates. */
export const NETNS_PREFIX = "ib-";

/** tbf latency parameter (max time a packet may wait in the tbf queue; sets the queue limit). */
export const TBF_LATENCY_MS = 50;
/** Minimum tbf burst, bytes. */
export const TBF_MIN_BURST_BYTES = 32 * 1024;

/**
 * tbf bucket size for a rate: max(rate/100, 32 KiB). rate/100 is 10 ms worth of tokens, which covers the
 * kernel's timer granularity (HZ=100 worst case; a smaller bucket cannot sustain the rate); 32 KiB keeps at
 * least ~20 full-size frames so slow rates are not starved. GSO super-packets larger than the bucket are
 * segmented by tbf (tc-tbf(8), "burst").
 */
export function tbfBurstFor(rateBytesPerSec: number): number {
  return Math.max(Math.ceil(rateBytesPerSec / 100), TBF_MIN_BURST_BYTES);
}

/** Namespace name of a host: `ib-<runId>-<host>`. */
export function netnsName(runId: string, host: string): string {
  return `${NETNS_PREFIX}${runId}-${host}`;
}

/** Namespace of the bridge (three or more hosts): `ib-<runId>-net`. */
export function bridgeNetnsName(runId: string): string {
  return `${NETNS_PREFIX}${runId}-net`;
}

/** Run `ip`/`tc`; throws (execa) with exit code, stderr and the command line on failure. */
async function run(cmd: string, args: string[]): Promise<string> {
  const r = await execa(cmd, args);
  return r.stdout;
}

/** Run `ip [-n netns] -batch -` with `commands` (one per line; no argument holds a space); throws (execa) on the first failure. */
async function ipBatch(netns: string | undefined, commands: string[][]): Promise<void> {
  if (commands.length === 0) return;
  await execa("ip", [...(netns !== undefined ? ["-n", netns] : []), "-batch", "-"], {
    input: commands.map((c) => c.join(" ")).join("\n") + "\n",
  });
}

/** A host's place in the topology. */
export interface NetHost {
  name: string;
  netns: string;
  /** data-plane address (what other hosts use) */
  address: string;
  /** host side of the control link (what the harness in the root namespace uses) */
  controlAddress: string;
  /** root side of the control link */
  controlRootAddress: string;
  /** control veth end in the root namespace / in the host namespace */
  controlRootInterface: string;
  controlInterface: string;
  /** data-plane interface in the host namespace; undefined for a single-host topology */
  interface?: string;
  /** the other end of the data veth, and the namespace it is in */
  peerInterface?: string;
  peerNetns?: string;
}

/** A created topology. `netns` lists every namespace it made (hosts and bridge). */
export interface NetworkTopology {
  runId: string;
  block: number;
  mode: "single" | "pair" | "bridge";
  bridgeNetns?: string;
  netns: string[];
  hosts: Record<string, NetHost>;
}

/** Shaping read back for one host. Keys: tbfRateBytesPerSec, tbfBurstBytes, netemDelayMs, netemLossPercent for
 *  its egress (own end), the same prefixed `ingress` for the peer end, plus dataInterface / dataPeerInterface. */
export interface ShapingResult {
  applied: Record<string, number | string>;
  enforced: boolean;
  notes: string[];
}

/** Qdisc parameters read back from `tc -j qdisc show dev IF`. */
export interface QdiscReadback {
  tbfRateBytesPerSec?: number;
  tbfBurstBytes?: number;
  netemDelayMs?: number;
  netemLossPercent?: number;
  kinds: string[];
}

/** Names of existing network namespaces (`ip -j netns list`). */
export async function listNetns(): Promise<string[]> {
  const out = await run("ip", ["-j", "netns", "list"]);
  if (out.trim() === "") return [];
  const list = JSON.parse(out) as Array<{ name: string }>;
  return list.map((n) => n.name);
}

/** FNV-1a of a string, 32 bit. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * Pick the /24 block for a run: start at hash(runId) mod 256 and move on while any address in the root namespace
 * (`ip -j addr`) already lies in 10.213.<block>.0/24 or 10.214.<block>.0/24. Throws when all 256 are taken.
 */
export async function pickAddressBlock(runId: string): Promise<number> {
  const out = await run("ip", ["-j", "addr"]);
  const used = new Set<string>();
  for (const link of JSON.parse(out) as Array<{ addr_info?: Array<{ family: string; local: string }> }>) {
    for (const a of link.addr_info ?? []) if (a.family === "inet") used.add(a.local);
  }
  const taken = (b: number) =>
    [...used].some((a) => a.startsWith(`10.213.${b}.`) || a.startsWith(`10.214.${b}.`));
  const start = fnv1a(runId) % 256;
  for (let i = 0; i < 256; i++) {
    const b = (start + i) % 256;
    if (!taken(b)) return b;
  }
  throw new ProvisioningError("E_NETNS_ADDR", "all 256 address blocks 10.213.0-255.0/24 are in use");
}

/**
 * Create namespaces, control links and the data plane for `hosts` (order = index i). `onNetns` is awaited with
 * each namespace name BEFORE it is created (for the run registry). Throws ProvisioningError (with the failing
 * command as cause) and leaves cleanup to the caller (removeRunNetns).
 */
export async function createTopology(
  runId: string,
  hosts: string[],
  opts: { onNetns?: (name: string) => void | Promise<void> } = {},
): Promise<NetworkTopology> {
  if (!/^[0-9a-f]{6}$/.test(runId))
    throw new ProvisioningError("E_NETNS_NAME", `runId must be 6 hex chars, got "${runId}"`);
  if (hosts.length === 0 || hosts.length > 60)
    throw new ProvisioningError("E_NETNS_HOSTS", `1..60 hosts supported, got ${hosts.length}`);
  for (const h of hosts) {
    if (!/^[A-Za-z0-9_.-]+$/.test(h) || h === "net") {
      throw new ProvisioningError(
        "E_NETNS_NAME",
        `host name "${h}" cannot be used for a namespace (reserved or invalid)`,
      );
    }
  }
  const block = await pickAddressBlock(runId);
  const mode: NetworkTopology["mode"] =
    hosts.length === 1 ? "single" : hosts.length === 2 ? "pair" : "bridge";
  const topo: NetworkTopology = { runId, block, mode, netns: [], hosts: {} };
  // Two rounds of `ip -batch` (ip(8) -batch: one command per line, stops at the first that fails): the root
  // namespace's commands (namespaces, veth pairs, root-side addresses), then each namespace's own, side by side:
  // 1 + n processes instead of ~10 per host
  const root: string[][] = [];
  const inside = new Map<string, string[][]>();
  const within = (ns: string, ...cmd: string[]): void =>
    void (inside.get(ns) ?? inside.set(ns, []).get(ns)!).push(cmd);
  const addNs = async (name: string) => {
    await opts.onNetns?.(name);
    root.push(["netns", "add", name]);
    within(name, "link", "set", "lo", "up");
  };
  try {
    for (const [i, name] of hosts.entries()) {
      const ns = netnsName(runId, name);
      await addNs(ns);
      const rootIf = `ib${runId}c${i}`;
      const hostIf = `ib${runId}c${i}h`;
      const rootAddr = `10.213.${block}.${4 * i + 1}`;
      const hostAddr = `10.213.${block}.${4 * i + 2}`;
      root.push(
        ["link", "add", rootIf, "type", "veth", "peer", "name", hostIf, "netns", ns],
        ["addr", "add", `${rootAddr}/30`, "dev", rootIf],
        ["link", "set", rootIf, "up"],
      );
      within(ns, "addr", "add", `${hostAddr}/30`, "dev", hostIf);
      within(ns, "link", "set", hostIf, "up");
      topo.hosts[name] = {
        name,
        netns: ns,
        address: hostAddr,
        controlAddress: hostAddr,
        controlRootAddress: rootAddr,
        controlRootInterface: rootIf,
        controlInterface: hostIf,
      };
    }
    if (mode === "pair") {
      const [a, b] = hosts as [string, string];
      const ha = topo.hosts[a]!;
      const hb = topo.hosts[b]!;
      const ifa = `ib${runId}d0`;
      const ifb = `ib${runId}d1`;
      root.push([
        "link",
        "add",
        ifa,
        "netns",
        ha.netns,
        "type",
        "veth",
        "peer",
        "name",
        ifb,
        "netns",
        hb.netns,
      ]);
      Object.assign(ha, {
        interface: ifa,
        peerInterface: ifb,
        peerNetns: hb.netns,
        address: `10.214.${block}.1`,
      });
      Object.assign(hb, {
        interface: ifb,
        peerInterface: ifa,
        peerNetns: ha.netns,
        address: `10.214.${block}.2`,
      });
    } else if (mode === "bridge") {
      const net = bridgeNetnsName(runId);
      await addNs(net);
      topo.bridgeNetns = net;
      const br = `ib${runId}br`;
      within(net, "link", "add", br, "type", "bridge");
      within(net, "link", "set", br, "up");
      for (const [i, name] of hosts.entries()) {
        const h = topo.hosts[name]!;
        const hostIf = `ib${runId}d${i}`;
        const portIf = `ib${runId}d${i}p`;
        root.push([
          "link",
          "add",
          hostIf,
          "netns",
          h.netns,
          "type",
          "veth",
          "peer",
          "name",
          portIf,
          "netns",
          net,
        ]);
        within(net, "link", "set", portIf, "master", br);
        within(net, "link", "set", portIf, "up");
        Object.assign(h, {
          interface: hostIf,
          peerInterface: portIf,
          peerNetns: net,
          address: `10.214.${block}.${i + 1}`,
        });
      }
    }
    for (const h of Object.values(topo.hosts)) {
      if (h.interface === undefined) continue;
      within(h.netns, "addr", "add", `${h.address}/24`, "dev", h.interface);
      within(h.netns, "link", "set", h.interface, "up");
    }
    await ipBatch(undefined, root);
    topo.netns.push(...inside.keys());
    await Promise.all([...inside].map(([ns, cmds]) => ipBatch(ns, cmds)));
  } catch (err) {
    throw new ProvisioningError(
      "E_NETNS_CREATE",
      `creating the network of run ${runId} failed: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return topo;
}

/** Parse a tc rate string as older iproute2 prints it ("96Mbit", "12000Kbps", "1500bit"; SI multipliers) to bytes/s. */
export function parseTcRate(text: string): number | undefined {
  const m = /^([\d.]+)\s*([KMGT]?)(i?)(bit|bps)$/i.exec(text.trim());
  if (!m) return undefined;
  const [, num, prefix = "", iec, unit = ""] = m;
  const base = iec ? 1024 : 1000;
  const mult = { "": 1, K: base, M: base ** 2, G: base ** 3, T: base ** 4 }[prefix.toUpperCase()] ?? 1;
  const value = Number(num) * mult;
  return unit.toLowerCase() === "bit" ? value / 8 : value;
}

/**
 * Read tbf and netem parameters of `ifname` inside `netns` (`tc -n NS -j qdisc show dev IF`).
 * iproute2 6.1 prints tbf `rate` as a number in bytes/s and `burst` in bytes (older versions: a string such as
 * "96Mbit", parsed too); netem `delay.delay` in seconds and `loss-random.loss` as a fraction.
 */
export async function readQdiscs(netns: string | undefined, ifname: string): Promise<QdiscReadback> {
  const args = [...(netns ? ["-n", netns] : []), "-j", "qdisc", "show", "dev", ifname];
  const list = JSON.parse(await run("tc", args)) as Array<{
    kind: string;
    options?: Record<string, unknown>;
  }>;
  const out: QdiscReadback = { kinds: list.map((q) => q.kind) };
  for (const q of list) {
    const o = q.options ?? {};
    if (q.kind === "tbf") {
      const rate = o.rate;
      out.tbfRateBytesPerSec =
        typeof rate === "number" ? rate : typeof rate === "string" ? parseTcRate(rate) : undefined;
      const burst = o.burst;
      out.tbfBurstBytes =
        typeof burst === "number"
          ? burst
          : typeof burst === "string"
            ? Number.parseInt(burst, 10)
            : undefined;
    } else if (q.kind === "netem") {
      const delay = o.delay as { delay?: number } | undefined;
      if (delay?.delay !== undefined) out.netemDelayMs = Math.round(delay.delay * 1e6) / 1e3;
      const loss = o["loss-random"] as { loss?: number } | undefined;
      if (loss?.loss !== undefined) out.netemLossPercent = Math.round(loss.loss * 1e8) / 1e6;
    }
  }
  return out;
}

/** Effective shaping of one direction of a link. */
interface DirectionShape {
  rate?: number;
  delayMs?: number;
  lossPercent?: number;
}

function combine(a: NetworkLimit | undefined, b: NetworkLimit | undefined): DirectionShape {
  const rates = [a?.bandwidthBytesPerSec, b?.bandwidthBytesPerSec].filter(
    (v): v is number => v !== undefined,
  );
  const delays = [a?.delayMs, b?.delayMs].filter((v): v is number => v !== undefined);
  const losses = [a?.lossPercent, b?.lossPercent].filter((v): v is number => v !== undefined);
  return {
    rate: rates.length ? Math.min(...rates) : undefined,
    delayMs: delays.length ? delays.reduce((x, y) => x + y, 0) : undefined,
    lossPercent: losses.length ? 100 * (1 - losses.reduce((keep, l) => keep * (1 - l / 100), 1)) : undefined,
  };
}

const isEmpty = (s: DirectionShape) =>
  s.rate === undefined && s.delayMs === undefined && s.lossPercent === undefined;

/** Install qdiscs for one interface end; returns notes for parts that the kernel refused (e.g. netem missing). */
async function shapeInterface(netns: string, ifname: string, s: DirectionShape): Promise<string[]> {
  const notes: string[] = [];
  const tc = ["-n", netns, "qdisc"];
  const tbfArgs = (rate: number) => [
    "tbf",
    "rate",
    `${Math.round(rate)}bps`,
    "burst",
    String(tbfBurstFor(rate)),
    "latency",
    `${TBF_LATENCY_MS}ms`,
  ];
  const netemArgs: string[] = [];
  if (s.delayMs !== undefined) netemArgs.push("delay", `${s.delayMs}ms`);
  if (s.lossPercent !== undefined) netemArgs.push("loss", "random", `${s.lossPercent}%`);
  let netemInstalled = false;
  if (netemArgs.length > 0) {
    try {
      await run("tc", [...tc, "replace", "dev", ifname, "root", "handle", "1:", "netem", ...netemArgs]);
      netemInstalled = true;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr ?? String(err);
      if (!/unknown|not supported|No such file/i.test(stderr)) throw err;
      notes.push(
        `netem is not available in this kernel (CONFIG_NET_SCH_NETEM): delay/loss on ${ifname} NOT applied (${stderr.trim()})`,
      );
    }
  }
  if (s.rate !== undefined) {
    const parent = netemInstalled ? ["parent", "1:1", "handle", "10:"] : ["root", "handle", "1:"];
    await run("tc", [...tc, "replace", "dev", ifname, ...parent, ...tbfArgs(s.rate)]);
  }
  return notes;
}

/**
 * Whether this kernel has netem (tc-netem(8), CONFIG_NET_SCH_NETEM), from /proc/config.gz when the kernel exposes it
 * ("=y", or "=m" with the module loaded or present under /lib/modules): `available` null when it cannot tell.
 * Used to refuse delay and loss steps before anything is provisioned.
 */
export function netemAvailable(): { available: boolean | null; reason: string } {
  let config: string;
  try {
    config = gunzipSync(readFileSync("/proc/config.gz")).toString("utf8");
  } catch {
    return { available: null, reason: "/proc/config.gz is not readable" };
  }
  const m = /^CONFIG_NET_SCH_NETEM=([ym])$/m.exec(config);
  if (!m)
    return { available: false, reason: "CONFIG_NET_SCH_NETEM is not set in this kernel (/proc/config.gz)" };
  if (m[1] === "y") return { available: true, reason: "CONFIG_NET_SCH_NETEM=y" };
  const release = os.release();
  for (const f of ["/sys/module/sch_netem", `/lib/modules/${release}/kernel/net/sched`]) {
    if (existsSync(f)) return { available: true, reason: `CONFIG_NET_SCH_NETEM=m (${f})` };
  }
  return {
    available: false,
    reason: `CONFIG_NET_SCH_NETEM=m but the module is neither loaded nor under /lib/modules/${release}`,
  };
}

/**
 * Change the shaping of a running link's ends (a fault step, harness/runner/steps.ts): each end keeps what it had
 * (read back with readQdiscs) unless `change` gives a new bandwidth (bytes/s), delay (ms) or loss (percent); the
 * qdiscs are replaced in place (tbf at the root, or netem at the root with tbf as its child) and read back.
 * @throws ProvisioningError E_TC when tc fails, or when netem is needed and the kernel has none
 */
export async function reshapeLink(
  ends: ReadonlyArray<{ netns: string; ifname: string }>,
  change: { bandwidthBytesPerSec?: number; delayMs?: number; lossPercent?: number },
): Promise<QdiscReadback[]> {
  const back: QdiscReadback[] = [];
  try {
    for (const e of ends) {
      const now = await readQdiscs(e.netns, e.ifname);
      const shape: DirectionShape = {
        rate: change.bandwidthBytesPerSec ?? now.tbfRateBytesPerSec,
        delayMs: change.delayMs ?? now.netemDelayMs,
        lossPercent: change.lossPercent ?? now.netemLossPercent,
      };
      const notes = await shapeInterface(e.netns, e.ifname, shape);
      if (notes.length > 0) throw new Error(notes.join("; "));
      back.push(await readQdiscs(e.netns, e.ifname));
    }
  } catch (err) {
    if (err instanceof ProvisioningError) throw err;
    throw new ProvisioningError(
      "E_TC",
      `changing the link of ${ends.map((e) => `${e.netns}/${e.ifname}`).join(", ")} failed: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return back;
}

/**
 * Shape the data links for the given limits and read every qdisc back.
 * Bridge topology: host i's egress = its own veth end, its ingress = the bridge-port end, each shaped with host
 * i's limits only. Pair topology: the two hosts share one link, so each direction gets the combination of both
 * hosts' limits (smaller rate, summed delay, combined loss). Returns one ShapingResult per host that asked for
 * network limits (enforced false with notes when not possible, e.g. netem missing or single-host topology).
 * Throws ProvisioningError when tc fails otherwise.
 */
export async function applyShaping(
  topo: NetworkTopology,
  limits: Record<string, NetworkLimit | undefined>,
): Promise<Record<string, ShapingResult>> {
  const wants = (l: NetworkLimit | undefined) =>
    l !== undefined &&
    (l.bandwidthBytesPerSec !== undefined || l.delayMs !== undefined || l.lossPercent !== undefined);
  const results: Record<string, ShapingResult> = {};
  const notesByIf = new Map<string, string[]>();
  // Plan the shape of every interface end (key "netns/ifname").
  const plan = new Map<string, { netns: string; ifname: string; shape: DirectionShape }>();
  for (const h of Object.values(topo.hosts)) {
    if (!h.interface || !h.peerInterface || !h.peerNetns) continue;
    const own = limits[h.name];
    const peerHost = Object.values(topo.hosts).find((x) => x.netns === h.peerNetns);
    const egress =
      topo.mode === "pair"
        ? combine(own, peerHost ? limits[peerHost.name] : undefined)
        : combine(own, undefined);
    if (!isEmpty(egress))
      plan.set(`${h.netns}/${h.interface}`, { netns: h.netns, ifname: h.interface, shape: egress });
    if (topo.mode === "bridge" && !isEmpty(egress)) {
      plan.set(`${h.peerNetns}/${h.peerInterface}`, {
        netns: h.peerNetns,
        ifname: h.peerInterface,
        shape: egress,
      });
    }
  }
  try {
    // each interface end on its own, side by side
    const notes = await Promise.all(
      [...plan].map(async ([key, p]) => [key, await shapeInterface(p.netns, p.ifname, p.shape)] as const),
    );
    for (const [key, n] of notes) notesByIf.set(key, n);
  } catch (err) {
    throw new ProvisioningError(
      "E_TC",
      `shaping the data plane of run ${topo.runId} failed: ${(err as Error).message}`,
      { cause: err },
    );
  }
  for (const h of Object.values(topo.hosts)) {
    const own = limits[h.name];
    if (!wants(own)) continue;
    const res: ShapingResult = { applied: {}, enforced: true, notes: [] };
    results[h.name] = res;
    if (!h.interface || !h.peerInterface || !h.peerNetns) {
      res.enforced = false;
      res.notes.push("network limits NOT applied: a single-host stack has no data-plane link to shape");
      continue;
    }
    res.applied.dataInterface = h.interface;
    res.applied.dataPeerInterface = h.peerInterface;
    const ends: Array<[string, string, string]> = [
      ["", h.netns, h.interface],
      ["ingress", h.peerNetns, h.peerInterface],
    ];
    for (const [prefix, ns, ifname] of ends) {
      const back = await readQdiscs(ns, ifname);
      const key = (k: string) => (prefix ? `${prefix}${k[0]!.toUpperCase()}${k.slice(1)}` : k);
      for (const k of ["tbfRateBytesPerSec", "tbfBurstBytes", "netemDelayMs", "netemLossPercent"] as const) {
        const v = back[k];
        if (v !== undefined) res.applied[key(k)] = v;
      }
      res.notes.push(...(notesByIf.get(`${ns}/${ifname}`) ?? []));
      const expected = plan.get(`${ns}/${ifname}`)?.shape ?? {};
      const missing: string[] = [];
      if (own?.bandwidthBytesPerSec !== undefined && back.tbfRateBytesPerSec === undefined)
        missing.push("bandwidth");
      if (own?.delayMs !== undefined && back.netemDelayMs === undefined) missing.push("delay");
      if (own?.lossPercent !== undefined && back.netemLossPercent === undefined) missing.push("loss");
      if (missing.length > 0) {
        res.enforced = false;
        res.notes.push(
          `${missing.join(", ")} NOT in force on ${ifname} (${prefix || "egress"}); qdiscs there: ${back.kinds.join(", ")}`,
        );
      }
      if (
        expected.rate !== undefined &&
        back.tbfRateBytesPerSec !== undefined &&
        back.tbfRateBytesPerSec !== Math.round(expected.rate)
      ) {
        res.notes.push(
          `tbf rate on ${ifname}: requested ${Math.round(expected.rate)} B/s, kernel reports ${back.tbfRateBytesPerSec} B/s`,
        );
      }
    }
    if (topo.mode === "pair") {
      res.notes.push(
        "two-host data link: both directions carry the combination of both hosts' network limits",
      );
    }
  }
  return results;
}

/** Byte and packet counters of an interface (`ip [-n NS] -s -j link show dev IF`, stats64). */
export interface InterfaceCounters {
  rxBytes: number;
  txBytes: number;
  rxPackets: number;
  txPackets: number;
}

/**
 * Counters of `ifname` from the text of /proc/net/dev (proc(5), "/proc/net/dev": two header lines, then one line
 * per interface: "name: rx bytes packets errs drop fifo frame compressed multicast tx bytes packets errs drop fifo
 * colls carrier compressed"; the name may be padded and, on old kernels, glued to the first number). Pure; returns
 * undefined when the interface is not listed, and throws ProvisioningError on a malformed line for it.
 */
export function parseProcNetDev(text: string, ifname: string): InterfaceCounters | undefined {
  for (const line of text.split("\n")) {
    const colon = line.indexOf(":");
    if (colon < 0 || line.slice(0, colon).trim() !== ifname) continue;
    const f = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    if (f.length < 16 || f.some((v) => !Number.isFinite(v))) {
      throw new ProvisioningError(
        "E_NETDEV_PARSE",
        `malformed /proc/net/dev line for ${ifname}: "${line.trim()}"`,
      );
    }
    return { rxBytes: f[0] ?? 0, rxPackets: f[1] ?? 0, txBytes: f[8] ?? 0, txPackets: f[9] ?? 0 };
  }
  return undefined;
}

/** Read counters of `ifname` in namespace `netns` (root namespace when undefined). Throws when it does not exist. */
export async function readInterfaceCounters(
  netns: string | undefined,
  ifname: string,
): Promise<InterfaceCounters> {
  const args = [...(netns ? ["-n", netns] : []), "-s", "-j", "link", "show", "dev", ifname];
  const [link] = JSON.parse(await run("ip", args)) as Array<{
    stats64?: { rx: { bytes: number; packets: number }; tx: { bytes: number; packets: number } };
  }>;
  const s = link?.stats64;
  if (!s)
    throw new ProvisioningError(
      "E_NETNS_COUNTERS",
      `no stats64 for ${ifname} in ${netns ?? "root namespace"}`,
    );
  return { rxBytes: s.rx.bytes, txBytes: s.tx.bytes, rxPackets: s.rx.packets, txPackets: s.tx.packets };
}

/** Where iproute2 keeps a named namespace (ip-netns(8): a bind mount of its nsfs file under /var/run/netns). */
export const NETNS_RUN_DIR = "/var/run/netns";

/**
 * Counters of one interface in one named namespace, read the cheap way on every observer sample. Spawning `ip` (what
 * readInterfaceCounters does) costs the harness a fork, an exec and a JSON parse per
 * read, a visible share of a core at two hosts a second (docs/measurements.md, "Figures moved from code comments").
 * Instead this reads /proc/<tid>/net/dev of a task that lives in the
 * namespace: procfs shows a task's `net/` for the namespace that task is in (proc(5), "/proc/[pid]/net"), and
 * /proc/net/dev prints the same dev_get_stats() counters as `ip -s link`'s stats64 (parseProcNetDev). The task is one
 * of `candidates` (the host's cgroup tasks, which the observer lists anyway) whose /proc/<tid>/ns/net is the
 * namespace's nsfs file (same device and inode as NETNS_RUN_DIR/<netns>), checked before and after the read so that
 * an exited task or a reused tid is never read as the namespace's; the task found is tried first next time. With no
 * such task (a host with no process yet) it falls back to readInterfaceCounters.
 */
export class NetnsInterfaceCounters {
  private tid: number | null = null;

  constructor(
    readonly netns: string,
    readonly ifname: string,
    private readonly fallback: () => Promise<InterfaceCounters> = () => readInterfaceCounters(netns, ifname),
  ) {}

  /**
   * The counters now, through one of `candidates` (tids) in the namespace, else through `ip`.
   * @throws ProvisioningError E_NETNS_COUNTERS / E_NETDEV_PARSE as readInterfaceCounters and parseProcNetDev do
   */
  async read(candidates: Iterable<number>): Promise<InterfaceCounters> {
    const ns = nsId(`${NETNS_RUN_DIR}/${this.netns}`);
    if (ns !== null) {
      if (this.tid !== null) {
        const c = this.through(this.tid, ns);
        if (c) return c;
        this.tid = null;
      }
      for (const tid of candidates) {
        const c = this.through(tid, ns);
        if (c) {
          this.tid = tid;
          return c;
        }
      }
    }
    return this.fallback();
  }

  /** The counters through task `tid` when it is in namespace `ns` before and after the read, else undefined. */
  private through(tid: number, ns: string): InterfaceCounters | undefined {
    if (nsId(`/proc/${tid}/ns/net`) !== ns) return undefined;
    let text: string | undefined;
    try {
      text = readKernelFile(`/proc/${tid}/net/dev`);
    } catch {
      return undefined; // the task is exiting (ESRCH, EACCES)
    }
    if (text === undefined || nsId(`/proc/${tid}/ns/net`) !== ns) return undefined;
    return parseProcNetDev(text, this.ifname);
  }
}

/** "dev:ino" of a namespace file (an nsfs bind mount or /proc/<tid>/ns/net, followed), or null when it is gone. */
function nsId(file: string): string | null {
  try {
    const st = statSync(file);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/** Pids of processes in a namespace (`ip netns pids`); [] when the namespace does not exist. */
export async function netnsPids(name: string): Promise<number[]> {
  const r = await execa("ip", ["netns", "pids", name], { reject: false }); // fails for a namespace that does not exist (or vanished)
  if (r.exitCode !== 0) return [];
  return r.stdout
    .split(/\s+/)
    .filter((t) => /^\d+$/.test(t))
    .map(Number)
    .filter((p) => p !== process.pid);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch (err) {
      if ((err as { code?: string }).code !== "ESRCH") throw err;
    }
  }
}

/**
 * Delete a namespace: kill the processes still inside (SIGTERM, up to `graceMs` (3000), then SIGKILL), then
 * `ip netns del` (its veth ends, and their peers, go with it). Idempotent: returns false when it did not exist.
 */
export async function removeNetns(name: string, opts: { graceMs?: number } = {}): Promise<boolean> {
  if (!(await listNetns()).includes(name)) return false;
  const graceMs = opts.graceMs ?? 3000;
  let pids = await netnsPids(name);
  if (pids.length > 0) {
    signalAll(pids, "SIGTERM");
    const start = Date.now();
    while (pids.length > 0 && Date.now() - start < graceMs) {
      await sleep(50);
      pids = await netnsPids(name);
    }
    for (let i = 0; i < 100 && pids.length > 0; i++) {
      signalAll(pids, "SIGKILL");
      await sleep(50);
      pids = await netnsPids(name);
    }
    if (pids.length > 0)
      throw new ProvisioningError(
        "E_NETNS_KILL",
        `processes ${pids.join(", ")} survived SIGKILL in netns ${name}`,
      );
  }
  try {
    await run("ip", ["netns", "del", name]);
    return true;
  } catch (err) {
    if (!(await listNetns()).includes(name)) return false; // removed meanwhile (another teardown, gc)
    throw err;
  }
}

/**
 * Delete the root-namespace ends of a run's control links (`ib<runId>c<i>`; all runs' when runId is undefined,
 * then `keep` run ids are spared). Deleting a veth end deletes its peer at once, whereas a deleted namespace's
 * interfaces are destroyed asynchronously by the kernel, so this makes removal immediate. `keep` is asked after
 * the links are listed. Idempotent; returns the interfaces removed.
 */
export async function removeRootLinks(
  runId?: string,
  keep: (runId: string) => boolean | Promise<boolean> = () => false,
): Promise<string[]> {
  const links = JSON.parse(await run("ip", ["-j", "link", "show"])) as Array<{ ifname: string }>;
  const re = new RegExp(`^ib(${runId ?? "[0-9a-f]{6}"})c\\d+$`);
  const removed: string[] = [];
  for (const { ifname } of links) {
    const id = re.exec(ifname)?.[1];
    if (id === undefined || (await keep(id))) continue;
    const r = await execa("ip", ["link", "del", ifname], { reject: false }); // may vanish with its namespace meanwhile: "Cannot find device" or "RTNETLINK answers: No such device"
    if (r.exitCode === 0) removed.push(ifname);
    else if (!/Cannot find device|No such device/.test(r.stderr))
      throw new ProvisioningError("E_NETNS_LINK", `ip link del ${ifname}: ${r.stderr}`);
  }
  return removed;
}

/** Remove every namespace of a run (`ib-<runId>-*`) and its root-side links. Idempotent; returns the namespaces removed. */
export async function removeRunNetns(runId: string, opts: { graceMs?: number } = {}): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await listNetns()) {
    if (name.startsWith(`${NETNS_PREFIX}${runId}-`) && (await removeNetns(name, opts))) removed.push(name);
  }
  await removeRootLinks(runId);
  return removed;
}
