/**
 * The inventory of what ingestbench has on this machine, for kill-safety tests: taken before a run, and again after
 * the run was SIGKILLed and `ingestbench gc` ran, the two must agree on everything of the test's runs.
 *
 * Kinds, and how each is found (the names are the platforms' own: infra/local/netns.ts, infra/local/cgroup.ts,
 * infra/local/platform.ts, harness/runner/stack-lock.ts, infra/docker/gc.ts):
 * - process: every process whose environment has `TMPDIR=<tmpDir>` (a harness started with that TMPDIR and
 *   everything it spawned inherits it: servers, generators, `ip netns exec`, setpriv), whose cgroup path holds
 *   `/ingestbench/<runId>`, whose command line names a run directory `ingestbench-<runId>`, or that runs in a
 *   namespace `ib-<runId>-*` (`ip netns pids`);
 * - cgroup: `<controller root>/ingestbench/<runId>` of every mounted controller (v1) or of the v2 root;
 * - netns: `ib-<runId>-*` (`ip netns list`); veth: root-namespace links `ib<runId>…` (`ip -j link`);
 * - mount: /proc/mounts entries whose source or mount point names `ingestbench-<runId>` or lies under tmpDir;
 * - tmp: the entries of tmpDir (run directories, cell config files, registries, locks: tsx's own cache `tsx-<uid>`
 *   is not ours and left out); registry and lock: the files of `<tmpDir>/ingestbench-runs/` and its `locks/`, the
 *   machine-wide owner markers `<ownersDir>/<runId>` (infra/local/platform.ts ownersDir), and the machine-wide stack
 *   locks whose holder is gone (harness/runner/stack-lock.ts lockDir; live holders' are other runs');
 * - port: listening TCP/UDP sockets of the root namespace (`ss -Htulpn`) held by an inventoried process or bound to
 *   the local platform's address blocks 10.213.0.0/16 and 10.214.0.0/16;
 * - with `docker`: containers, networks and volumes labelled `ingestbench.stack` (or named `ib-…`), dangling images
 *   labelled `org.ingestbench=1` or `ingestbench.stack` (what an interrupted build leaves, infra/docker/gc.ts), and
 *   the engine's build cache entries (`docker system df -v`: the API gives them no labels, so all of them).
 * Items carry the 6-hex run id (local) or the stack (docker) when their name or labels give it, so that a test
 * looks at its own runs only: other runs of other TMPDIRs and other stacks come and go on a shared machine.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { isOwnerAlive, ownersDir } from "../../infra/local/platform.ts";
import { lockDir, readLock } from "../../harness/runner/stack-lock.ts";

/** One thing ingestbench has on the machine. */
export interface InventoryItem {
  kind:
    | "process"
    | "cgroup"
    | "netns"
    | "veth"
    | "mount"
    | "tmp"
    | "registry"
    | "lock"
    | "port"
    | "container"
    | "network"
    | "volume"
    | "image"
    | "build-cache";
  /** what identifies it: a pid and command line, a path, a name */
  name: string;
  /** the run's 6-hex id when the name gives it */
  runId?: string;
  /** a docker resource's stack (label `ingestbench.stack`, else its `ib-<stack>…` name) */
  stack?: string;
}

/** Options of inventory(). */
export interface InventoryOptions {
  /** the TMPDIR of the harness processes under test (their temp dirs, registries and locks live there) */
  tmpDir: string;
  /** also list the Docker engine's resources, with this environment for the docker CLI (DOCKER_HOST) */
  docker?: NodeJS.ProcessEnv;
}

const RUN = /ingestbench[-/]([0-9a-f]{6})(?![0-9a-f])/;
const CGROUP_ROOTS = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"];

function cmd(file: string, args: string[], env?: NodeJS.ProcessEnv): string {
  const r = spawnSync(file, args, { encoding: "utf8", ...(env ? { env } : {}) });
  if (r.error) throw r.error;
  return r.stdout ?? "";
}

function readOr(file: string, fallback = ""): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return fallback;
  }
}

/** `<root>/<controller>/ingestbench/<runId>` (v1) and `<root>/ingestbench/<runId>` (v2) directories. */
function cgroups(): InventoryItem[] {
  const found = new Map<string, InventoryItem>();
  const add = (parent: string) => {
    if (!existsSync(parent)) return;
    for (const id of readdirSync(parent)) {
      const dir = path.join(parent, id);
      if (/^[0-9a-f]{6}$/.test(id) && statSync(dir).isDirectory())
        found.set(dir, { kind: "cgroup", name: dir, runId: id });
    }
  };
  for (const root of CGROUP_ROOTS) {
    if (!existsSync(root)) continue;
    add(path.join(root, "ingestbench"));
    for (const ctl of readdirSync(root)) {
      const p = path.join(root, ctl);
      try {
        if (statSync(p).isDirectory()) add(path.join(p, "ingestbench"));
      } catch {
        // a controller file, or gone
      }
    }
  }
  return [...found.values()];
}

function namespaces(): InventoryItem[] {
  return cmd("ip", ["netns", "list"])
    .split("\n")
    .map((l) => l.trim().split(" ")[0]!)
    .filter((n) => /^ib-[0-9a-f]{6}-/.test(n))
    .map((n) => ({ kind: "netns" as const, name: n, runId: n.slice(3, 9) }));
}

function veths(): InventoryItem[] {
  const links = JSON.parse(cmd("ip", ["-j", "link", "show"]) || "[]") as Array<{ ifname: string }>;
  return links
    .filter((l) => /^ib[0-9a-f]{6}/.test(l.ifname))
    .map((l) => ({ kind: "veth" as const, name: l.ifname, runId: l.ifname.slice(2, 8) }));
}

/** pid → command line of the processes that are ours (see the module doc), with the run id they give. */
function processes(tmpDir: string, netns: InventoryItem[]): Map<number, InventoryItem> {
  const found = new Map<number, InventoryItem>();
  const inNetns = new Map<number, string>();
  for (const ns of netns) {
    for (const pid of cmd("ip", ["netns", "pids", ns.name])
      .split("\n")
      .filter((l) => /^\d+$/.test(l.trim())))
      inNetns.set(Number(pid), ns.runId!);
  }
  const self = new Set([process.pid, process.ppid]);
  const marker = `TMPDIR=${tmpDir}`;
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p) || self.has(Number(p))) continue;
    const cmdline = readOr(`/proc/${p}/cmdline`).split("\0").filter(Boolean).join(" ");
    if (!cmdline) continue; // a kernel thread, or a zombie: holds nothing
    const cgroup = readOr(`/proc/${p}/cgroup`);
    const ours = readOr(`/proc/${p}/environ`).split("\0").includes(marker);
    const runId = RUN.exec(cgroup)?.[1] ?? RUN.exec(cmdline)?.[1] ?? inNetns.get(Number(p));
    if (!ours && runId === undefined) continue;
    found.set(Number(p), {
      kind: "process",
      name: `${p} ${cmdline.slice(0, 200)}`,
      ...(runId ? { runId } : {}),
    });
  }
  return found;
}

function mounts(tmpDir: string): InventoryItem[] {
  return readOr("/proc/mounts")
    .split("\n")
    .filter(Boolean)
    .flatMap((line) => {
      const [source, target] = line.split(" ");
      const runId = RUN.exec(`${source} ${target}`)?.[1];
      if (runId === undefined && !target!.startsWith(`${tmpDir}/`)) return [];
      return [{ kind: "mount" as const, name: `${source} on ${target}`, ...(runId ? { runId } : {}) }];
    });
}

function tmpEntries(tmpDir: string): InventoryItem[] {
  const out: InventoryItem[] = [];
  if (!existsSync(tmpDir)) return out;
  for (const e of readdirSync(tmpDir)) {
    // tsx's compile cache (made by every `node --import tsx`, not ingestbench's); the registry directory itself stays
    if (/^tsx-\d+$/.test(e) || e === "ingestbench-runs") continue;
    const runId = /^ingestbench-([0-9a-f]{6})$/.exec(e)?.[1];
    out.push({ kind: "tmp", name: path.join(tmpDir, e), ...(runId ? { runId } : {}) });
  }
  const reg = path.join(tmpDir, "ingestbench-runs");
  if (existsSync(reg)) {
    for (const e of readdirSync(reg)) {
      if (e === "locks" || e === "deployments") continue;
      const runId = /^([0-9a-f]{6})\.json$/.exec(e)?.[1];
      out.push({ kind: "registry", name: path.join(reg, e), ...(runId ? { runId } : {}) });
    }
    for (const sub of ["deployments", "locks"]) {
      const d = path.join(reg, sub);
      if (existsSync(d))
        for (const e of readdirSync(d))
          out.push({ kind: sub === "locks" ? "lock" : "registry", name: path.join(d, e) });
    }
  }
  // the machine-wide stack locks (harness/runner/stack-lock.ts lockDir): a live holder's lock is not left behind
  // (the other test lane's runs hold theirs), a stale one is
  if (existsSync(lockDir())) {
    for (const e of readdirSync(lockDir())) {
      const holder = readLock(path.join(lockDir(), e));
      if (!holder || !isOwnerAlive(holder)) out.push({ kind: "lock", name: path.join(lockDir(), e) });
    }
  }
  if (existsSync(ownersDir())) {
    for (const e of readdirSync(ownersDir()))
      out.push({
        kind: "registry",
        name: path.join(ownersDir(), e),
        ...(/^[0-9a-f]{6}$/.test(e) ? { runId: e } : {}),
      });
  }
  return out;
}

/** Listening sockets of the root namespace held by `pids` or bound to 10.213/10.214 addresses. */
function ports(procs: Map<number, InventoryItem>): InventoryItem[] {
  const out: InventoryItem[] = [];
  for (const line of cmd("ss", ["-Htulpn"]).split("\n").filter(Boolean)) {
    const cols = line.trim().split(/\s+/);
    const local = cols[4] ?? "";
    const pids = [...line.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    const owner = pids.map((p) => procs.get(p)).find(Boolean);
    if (!owner && !/^\[?(::ffff:)?10\.21[34]\./.test(local)) continue;
    out.push({
      kind: "port",
      name: `${cols[0]} ${local} ${pids.join(",")}`,
      ...(owner?.runId ? { runId: owner.runId } : {}),
    });
  }
  return out;
}

function dockerItems(env: NodeJS.ProcessEnv): InventoryItem[] {
  const out: InventoryItem[] = [];
  const lines = (...args: string[]) => cmd("docker", args, env).split("\n").filter(Boolean);
  const add = (kind: InventoryItem["kind"], name: string, labels: string) => {
    const stack = /(?:^|,)ingestbench\.stack=([^,]+)/.exec(labels)?.[1];
    if (stack === undefined && !name.startsWith("ib-")) return;
    out.push({ kind, name, ...(stack !== undefined ? { stack } : {}) });
  };
  for (const l of lines("ps", "-a", "--format", "{{.Names}}\t{{.Labels}}"))
    add("container", ...(l.split("\t") as [string, string]));
  for (const l of lines("network", "ls", "--format", "{{.Name}}\t{{.Labels}}"))
    add("network", ...(l.split("\t") as [string, string]));
  for (const l of lines("volume", "ls", "--format", "{{.Name}}\t{{.Labels}}"))
    add("volume", ...(l.split("\t") as [string, string]));
  for (const label of ["org.ingestbench=1", "ingestbench.stack"]) {
    for (const id of lines(
      "images",
      "-q",
      "--no-trunc",
      "--filter",
      "dangling=true",
      "--filter",
      `label=${label}`,
    ))
      out.push({ kind: "image", name: id });
  }
  // `docker system df -v`: "Build cache usage: …" then a table CACHE ID, CACHE TYPE, …
  const cache = cmd("docker", ["system", "df", "-v"], env).split(/^Build cache usage:.*$/m)[1] ?? "";
  for (const l of cache.split("\n").filter((x) => /^[0-9a-z]{12,}\s/.test(x) && !x.startsWith("CACHE")))
    out.push({ kind: "build-cache", name: l.split(/\s+/)[0]! });
  return [...new Map(out.map((i) => [`${i.kind} ${i.name}`, i])).values()];
}

/** Everything ingestbench has on this machine (see the module doc). Never throws for things vanishing meanwhile. */
export function inventory(opts: InventoryOptions): InventoryItem[] {
  const netns = namespaces();
  const procs = processes(opts.tmpDir, netns);
  return [
    ...procs.values(),
    ...cgroups(),
    ...netns,
    ...veths(),
    ...mounts(opts.tmpDir),
    ...tmpEntries(opts.tmpDir),
    ...ports(procs),
    ...(opts.docker ? dockerItems(opts.docker) : []),
  ];
}

/** Whose leftovers leftBehind looks at. */
export interface Owners {
  /** local run ids (6 hex) */
  runIds?: Iterable<string>;
  /** docker stacks: their containers, networks and volumes, and any `ib-<stack>…` name */
  stacks?: Iterable<string>;
}

/**
 * What `after` holds of the test's own that `before` did not: items of its run ids and stacks, and new items that
 * name no run and no stack (of tmpDir, a port on the local blocks, a dangling image, a build cache entry): all of
 * them, whether `before` had them or not, for the run ids and stacks. Empty = nothing left.
 */
export function leftBehind(
  before: InventoryItem[],
  after: InventoryItem[],
  owners: Owners | Iterable<string>,
): string[] {
  const o: Owners =
    Symbol.iterator in Object(owners) ? { runIds: owners as Iterable<string> } : (owners as Owners);
  const ids = new Set(o.runIds ?? []);
  const stacks = [...(o.stacks ?? [])];
  const had = new Set(before.map((i) => `${i.kind} ${i.name}`));
  const mine = (i: InventoryItem): boolean => {
    if (i.runId !== undefined) return ids.has(i.runId);
    if (i.stack !== undefined) return stacks.includes(i.stack);
    if (/^(container|network|volume)$/.test(i.kind))
      return (
        stacks.some((s) => i.name.startsWith(`ib-${s}`)) ||
        (!had.has(`${i.kind} ${i.name}`) && !i.name.startsWith("ib-"))
      );
    return !had.has(`${i.kind} ${i.name}`);
  };
  return after
    .filter(mine)
    .map(
      (i) =>
        `${i.kind} ${i.kind === "process" ? i.name.replace(/^\d+ /, "") : i.name}${i.runId ? ` (run ${i.runId})` : ""}${i.stack ? ` (stack ${i.stack})` : ""}`,
    );
}

/** Pids of the inventory's processes (for ending them by pid in a test's cleanup). */
export function inventoryPids(items: InventoryItem[]): number[] {
  return items.filter((i) => i.kind === "process").map((i) => Number(i.name.split(" ")[0]));
}

/** The run ids named by the registry files under `<tmpDir>/ingestbench-runs` now. */
export function registeredRuns(tmpDir: string): string[] {
  const reg = path.join(tmpDir, "ingestbench-runs");
  return existsSync(reg)
    ? readdirSync(reg)
        .map((e) => /^([0-9a-f]{6})\.json$/.exec(e)?.[1])
        .filter((x): x is string => x !== undefined)
    : [];
}
