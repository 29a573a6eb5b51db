/**
 * The local platform as a run's site (./site.ts): provision the cell's hosts on this machine (cgroups, network
 * namespaces, tc: infra/local/platform.ts), start the sink in its host, then the collectors with the sink
 * downstream, and tear all of it down after the run.
 *
 * Events on the run's emitter: "collector" (RunningComponent, { host, downstream }) once each collector is ready,
 * with what restarting it would take (the kill-mid-run tests use it).
 *
 * Fault steps (./steps.ts StepTarget): kill, stop and cont signal every process in the host's cgroup (the component
 * and its children, e.g. PostgreSQL's backends: a frozen postmaster alone would leave its backends serving);
 * restart stops what is left of the component (SIGCONT first) and starts it again with the same config, host and
 * downstream (a collector keeps its persist file, PostgreSQL its data directory and table); exec runs `sh -c` in the
 * host's namespace and cgroup; network replaces the tc qdiscs on both ends of the host's data-plane link
 * (infra/local/netns.ts reshapeLink).
 */
import type { EventEmitter } from "node:events";
import { findCollector, findSink } from "../../plugins/registry.ts";
import type { RunningComponent } from "../../core/component.ts";
import type { AppliedLimits, StackSpec } from "../../core/limits.ts";
import {
  liftCpuLimit,
  liftIoLimits,
  listCgroupPids,
  readOomKillCount,
  restoreCpuLimit,
} from "../../infra/local/cgroup.ts";
import { reshapeLink } from "../../infra/local/netns.ts";
import { open, readdir, statfs } from "node:fs/promises";
import path from "node:path";
import { dedupeExhaustion, exhaustionIn, type Exhaustion } from "./exhaustion.ts";
import { describeDrop, describeFill, DISK_FILL_SCRIPT, dropConnectionsArgv } from "./step-scripts.ts";
import { provisionLocal } from "../../infra/local/platform.ts";
import type { LocalHost, LocalStack } from "../../core/hosts.ts";
import { interruptedError, ProvisioningError } from "../../core/errors.ts";
import { createLocalObserver } from "../observers/local.ts";
import { localGeneratorProgram } from "../generators/bundle.ts";
import type { Observer } from "../observers/types.ts";
import type { CollectorSignals, RunRecord, SinkSignals } from "../results/types.ts";
import type { CellPlan } from "./cell-plan.ts";
import type { Downstream } from "../../core/component.ts";
import type { ExecResult, StepHost, StepTarget } from "./steps.ts";
import type { SelfLoadCounts } from "./self-load.ts";
import {
  hostRoles,
  hostSignals,
  LOADGEN,
  SINK,
  sumClaims,
  type Endpoint,
  type Loadgen,
  type OomKill,
  type RunSite,
  type SiteSink,
  type SiteVersions,
} from "./site.ts";
import { checkVersions, collectorHosts } from "./versions.ts";

// the pair check (./pair-check.ts) holds the local platform's checks too: one module for every platform
export { checkRunnableLocally } from "./pair-check.ts";
import { checkRunnableLocally } from "./pair-check.ts";

/**
 * Local stacks need root: their caps are cgroups, network namespaces and tc, and the observer reads each host's
 * cgroup counters (without them a run could not say what bound it). Checked before anything is provisioned.
 * @throws ProvisioningError E_NOT_ROOT naming the user id and what to do
 */
export function checkLocalPrivileges(): void {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return;
  throw new ProvisioningError(
    "E_NOT_ROOT",
    `local stacks need root (running as uid ${uid}): their hosts are cgroups, network namespaces and tc shapers, and the observer reads the cgroups' counters; run it as root (e.g. \`sudo node bin/ingestbench.js bench ...\`). validate, stacks, compare, report and results need no root`,
  );
}

/** Options of a LocalSite. */
export interface LocalSiteOptions {
  stack: StackSpec;
  plan: CellPlan;
  /** suffix of the run id: names of namespaces and cgroups */
  runId: string;
  /** the run's run.json, recorded in the hosts' markers so that gc can mark a killed run */
  resultRecord: string;
  /** the run, for the "collector" event */
  events: EventEmitter;
}

/** How much of the end of each component log the exhaustion scan reads, bytes. */
const LOG_SCAN_BYTES = 256 * 1024;

/** The last `bytes` of a file, as UTF-8. */
async function readTail(file: string, bytes: number): Promise<string> {
  const fh = await open(file, "r");
  try {
    const { size } = await fh.stat();
    const start = Math.max(0, size - bytes);
    const buf = Buffer.alloc(size - start);
    await fh.read(buf, 0, buf.length, start);
    return buf.toString("utf8");
  } finally {
    await fh.close();
  }
}

export class LocalSite implements RunSite {
  limits: Record<string, AppliedLimits> = {};
  readonly versions: SiteVersions = {};
  private local: LocalStack | undefined;
  private sink: RunningComponent | undefined;
  private readonly collectors: RunningComponent[] = [];
  private readonly roles: string[];
  private readonly collectorRoles: string[];
  private downstream: Downstream | undefined;
  /** hosts whose processes a step stopped (SIGSTOP) and no step continued yet */
  private readonly stopped = new Set<string>();
  /** the split of the per-cell overhead so far, ms (RunSite.overheadParts) */
  private readonly parts: Record<string, number> = {};
  /** time `f` into parts[`part`] (added up: a part may run more than once) */
  private async timed<T>(part: string, f: () => Promise<T>): Promise<T> {
    const t = performance.now();
    try {
      return await f();
    } finally {
      this.parts[part] = (this.parts[part] ?? 0) + performance.now() - t;
    }
  }

  /** @throws ConfigurationError as checkRunnableLocally */
  constructor(private readonly opts: LocalSiteOptions) {
    checkRunnableLocally(opts.stack, opts.plan);
    this.roles = hostRoles(Object.keys(opts.stack.hosts), opts.plan);
    this.collectorRoles = opts.plan.collector ? collectorHosts(Object.keys(opts.stack.hosts)) : [];
  }

  private host(name: string): LocalHost {
    return this.local!.hosts[name]!;
  }

  async startSink(signal?: AbortSignal): Promise<SiteSink> {
    const { stack, plan } = this.opts;
    // only the hosts this scenario uses: a stack's collector host stays down for a scenario without a collector
    const used = {
      ...stack,
      hosts: Object.fromEntries(Object.entries(stack.hosts).filter(([h]) => this.roles.includes(h))),
    };
    this.local = await this.timed("hosts", () =>
      provisionLocal(used, { runId: this.opts.runId, resultRecord: this.opts.resultRecord }),
    );
    this.limits = this.local.limits;
    if (signal?.aborted) throw interruptedError(signal);
    const factory = findSink(plan.sink.name)!.local!;
    // the sink component makes and owns its own directories under the host's data directory; it starts without its
    // CPU cap (uncapped)
    const sink = await this.timed("sink start", () =>
      this.uncapped(SINK, "its component started", () =>
        factory.startLocal(this.host(SINK), plan.sink.config, signal),
      ),
    );
    this.sink = sink;
    this.versions[sink.name] = { pinned: sink.pinned, running: sink.running };
    checkVersions(
      sink.name,
      [{ host: SINK, pinned: sink.pinned, running: sink.running }],
      factory.matchesPin,
    );
    return { control: sink.control, data: sink.data, params: { ...sink.params } };
  }

  /**
   * Run `work` with host `role`'s CPU cap lifted (infra/local/cgroup.ts liftCpuLimit), then write the cap back and
   * read it back before anything else runs in the host: the quota read back at provisioning must be in place again,
   * noted in `limits.<role>.notes` as lifted while `why`. Memory, IO and network caps stay throughout. For work that
   * is never measured: a component's start (initdb alone takes seconds of CPU, and many
   * times that under a 0.1-core cap: docs/measurements.md, "Figures moved from code comments") and the settling of
   * the samples after
   * the load (sinkUncapped). When `work` throws, the cap stays lifted: the run ends and its teardown removes the
   * cgroup.
   * @throws ProvisioningError E_CPU_CAP_RESTORE when the kernel does not hold the cap again afterwards
   */
  private async uncapped<T>(role: string, why: string, work: () => Promise<T>): Promise<T> {
    const host = this.host(role);
    const applied = this.limits[role]?.applied ?? {};
    const quota = typeof applied.cfsQuotaUs === "number" ? applied.cfsQuotaUs : -1;
    const period = typeof applied.cfsPeriodUs === "number" ? applied.cfsPeriodUs : 100_000;
    const lifted = quota > 0 && (await liftCpuLimit(host.cgroup));
    const done = await work();
    if (lifted) {
      const back = await restoreCpuLimit(host.cgroup, quota, period);
      if (back !== quota) {
        throw new ProvisioningError(
          "E_CPU_CAP_RESTORE",
          `host ${role}: its CPU cap (cfs quota ${quota} µs per ${period} µs) was lifted while ${why} and could not be written back: the kernel holds ${back ?? "nothing"}`,
        );
      }
      const note = `CPU cap lifted while ${why} (never measured), then written back and read back: ${quota}/${period} µs`;
      if (!this.limits[role]!.notes.includes(note)) this.limits[role]!.notes.push(note); // once, however often (the completion wait's checks)
    }
    return done;
  }

  sinkUncapped<T>(why: string, work: () => Promise<T>): Promise<T> {
    return this.uncapped(SINK, why, work);
  }

  async startEntries(
    downstream: { params: Record<string, string>; fields: CellPlan["fields"]; genBase?: number },
    signal?: AbortSignal,
  ): Promise<Endpoint[]> {
    const { plan } = this.opts;
    const sink = this.sink!;
    if (!plan.collector) return [sink.data];
    const factory = findCollector(plan.collector.name)!.local!;
    const down = { sink, params: downstream.params, fields: downstream.fields };
    this.downstream = down;
    const perHost = plan.selfLoad?.generatorsPerHost ?? 0;
    for (const role of this.collectorRoles) {
      const host = this.host(role);
      // generator: none: collector host h's own load stamps gens genBase + h × perHost … (core/ledger.ts "Run identity")
      const mine =
        downstream.genBase !== undefined
          ? { ...down, genBase: downstream.genBase + this.collectors.length * perHost }
          : down;
      const c = await factory.startLocal(host, plan.collector.config, signal, mine);
      this.collectors.push(c);
      this.versions[this.collectors.length === 1 ? c.name : `${c.name}@${host.name}`] = {
        pinned: c.pinned,
        running: c.running,
      };
      this.opts.events.emit("collector", c, { host, downstream: mine });
      if (signal?.aborted) break;
    }
    checkVersions(
      plan.collector.name,
      this.collectors.map((c, i) => ({
        host: this.collectorRoles[i]!,
        pinned: c.pinned,
        running: c.running,
      })),
      factory.matchesPin,
    );
    return this.collectors.map((c) => c.data);
  }

  async observer(): Promise<Observer> {
    const { stack } = this.opts;
    const app = this.opts.plan.app?.spec.host;
    const observed = [
      LOADGEN,
      ...this.collectorRoles,
      SINK,
      ...(app !== undefined && ![LOADGEN, ...this.collectorRoles, SINK].includes(app) ? [app] : []),
    ].map((h) => this.host(h));
    return createLocalObserver(
      observed,
      new Set(
        Object.entries(stack.hosts)
          .filter(([, h]) => h.limits.cpu)
          .map(([n]) => n),
      ),
    );
  }

  appHost(name: string): { spawn: LocalHost["spawn"]; controlAddress: string } {
    const host = this.host(name);
    return { spawn: host.spawn.bind(host), controlAddress: host.controlAddress };
  }

  async loadgen(replayFile?: string): Promise<Loadgen> {
    const host = this.host(LOADGEN);
    // the bundled child from the cache directory (starts in a fifth of tsx's time); without it, child.ts through tsx
    const program = await localGeneratorProgram();
    return {
      spawn: host.spawn.bind(host),
      ...(program ? { program } : {}),
      ...(replayFile !== undefined ? { replayFile } : {}),
    };
  }

  async collectorClaims(): Promise<RunRecord["collectorClaims"] | undefined> {
    if (!this.collectors.length || !this.collectors.every((c) => c.stats)) return undefined;
    // one read per host, summed key-wise; a host that fails keeps its error (sumClaims)
    const results = await Promise.allSettled(this.collectors.map((c) => c.stats!()));
    return sumClaims(this.collectors[0]!.name, this.collectorRoles, results);
  }

  async collectorSignals(): Promise<CollectorSignals | undefined> {
    if (!this.collectors.length || !this.collectors.every((c) => c.signals)) return undefined;
    return hostSignals(
      this.collectors[0]!.name,
      this.collectorRoles,
      await Promise.allSettled(this.collectors.map((c) => c.signals!())),
    );
  }

  async sinkSignals(): Promise<SinkSignals | undefined> {
    const sink = this.sink;
    if (!sink?.signals) return undefined;
    try {
      return { name: sink.name, values: await sink.signals() };
    } catch (err) {
      return { name: sink.name, error: err instanceof Error ? err.message : String(err) };
    }
  }

  async selfLoadCounts(): Promise<SelfLoadCounts> {
    const { plan } = this.opts;
    const load = findCollector(plan.collector!.name)!.selfLoad!;
    const perHost = plan.selfLoad!.generatorsPerHost;
    const made: number[] = [];
    let queued = 0;
    for (const c of this.collectors) {
      if (!c.stats)
        throw new ProvisioningError(
          "E_CLAIMS",
          `collector ${c.name} keeps no counters: the events its built-in generator made cannot be counted`,
        );
      const counts = await c.stats();
      queued += counts.queued ?? 0;
      for (let k = 0; k < perHost; k++) {
        const key = load.counterKey(k, plan.collector!.config);
        const n = counts[key];
        if (n === undefined)
          throw new ProvisioningError(
            "E_CLAIMS",
            `collector ${c.name} reports no "${key}" count (${load.counter})`,
          );
        made.push(n);
      }
    }
    return { made, queued };
  }

  async endMeasurement(): Promise<Record<string, string[]>> {
    // lift the sink's CPU and disk IO caps so that the ledger's full-table reads take seconds, not minutes on a
    // quarter core or a 3000-IOPS disk; memory and network caps stay; nothing after this point is a measurement
    const host = this.host(SINK);
    const notes: string[] = [];
    if (await liftCpuLimit(host.cgroup)) notes.push("CPU cap lifted after the drain, for the ledger queries");
    const device = this.limits[SINK]?.applied.blockDevice;
    if (typeof device === "string" && (await liftIoLimits(host.cgroup, device)))
      notes.push(`disk IO caps on ${device} lifted after the drain, for the ledger queries`);
    return notes.length ? { [SINK]: notes } : {};
  }

  /**
   * OOM kills in the run's hosts: each host's cgroup is made for this run, so its oom_kill counter
   * (infra/local/cgroup.ts readOomKillCount) counts this run's kills only. Never throws.
   */
  async oomKills(): Promise<OomKill[]> {
    if (!this.local) return [];
    const kills: OomKill[] = [];
    for (const role of this.roles) {
      const h = this.local.hosts[role];
      if (!h) continue;
      const c = await readOomKillCount(h.cgroup).catch(() => null);
      if (!c || c.count === 0) continue;
      const limit = this.limits[role]?.applied.memoryLimitBytes;
      kills.push({
        host: role,
        container: `cgroup ${h.cgroup.dirs.memory ?? h.cgroup.dirs.unified}`,
        limitBytes: typeof limit === "number" ? limit : null,
        oomKilled: false,
        kills: c.count,
        evidence: `cgroup ${h.cgroup.version} ${c.file} oom_kill ${c.count}`,
      });
    }
    return kills;
  }

  /**
   * Exhaustion in the run's hosts (./exhaustion.ts): the component logs in each host's data directory (`*.log`, their
   * last LOG_SCAN_BYTES), and the data volume's statfs: a volume with less than 1 % (or 1 MiB) free is named full,
   * and its figures are the evidence of an ENOSPC line. Never throws.
   */
  async exhaustion(): Promise<Exhaustion[]> {
    if (!this.local) return [];
    const out: Exhaustion[] = [];
    for (const role of this.roles) {
      const h = this.local.hosts[role];
      if (!h || role === LOADGEN) continue;
      const sources: Array<{ source: string; text: string }> = [];
      for (const f of (await readdir(h.dataDir).catch(() => [] as string[])).filter((n) =>
        n.endsWith(".log"),
      )) {
        const text = await readTail(path.join(h.dataDir, f), LOG_SCAN_BYTES).catch(() => "");
        if (text) sources.push({ source: f, text });
      }
      const found = exhaustionIn(role, sources);
      const st = await statfs(h.dataDir).catch(() => null);
      if (st) {
        const kib = (blocks: number) => Math.floor((blocks * st.bsize) / 1024);
        const [total, avail] = [kib(st.blocks), kib(st.bavail)];
        const df = `df of ${h.dataDir}: ${total - kib(st.bfree)} of ${total} KiB used, ${avail} KiB free`;
        if (total > 0 && (avail < total / 100 || avail < 1024))
          found.push({ kind: "disk-full", host: role, source: "statfs of the data volume", line: df });
        for (const e of found) if (e.kind === "disk-full") e.evidence ??= df;
      }
      out.push(...found);
    }
    return dedupeExhaustion(out);
  }

  steps(): StepTarget {
    return {
      hosts: () => Object.fromEntries(this.roles.map((r) => [r, this.stepHost(r)])),
      signal: async (role, action) => {
        const sig = action === "kill" ? "SIGKILL" : action === "stop" ? "SIGSTOP" : "SIGCONT";
        const pids = await this.componentPids(role);
        if (pids.length === 0) throw new Error(`host ${role} runs no process to ${action}`);
        const hit: number[] = [];
        for (const pid of pids) {
          try {
            process.kill(pid, sig);
            hit.push(pid);
          } catch (e) {
            if ((e as { code?: string }).code !== "ESRCH") throw e;
          }
        }
        if (action === "stop") this.stopped.add(role);
        else this.stopped.delete(role);
        return `${sig} to ${hit.length} process(es) of ${this.componentOf(role)?.name ?? role} on ${role}: ${hit.join(", ")}`;
      },
      restart: (role, signal) => this.restart(role, signal),
      exec: (role, command, signal) => this.exec(role, command, signal),
      network: async (role, change) => {
        const h = this.host(role);
        if (!h.netns || !h.interface || !h.peerNetns || !h.peerInterface)
          throw new Error(`host ${role} has no data-plane link to change (no network namespaces)`);
        const back = await reshapeLink(
          [
            { netns: h.netns, ifname: h.interface },
            { netns: h.peerNetns, ifname: h.peerInterface },
          ],
          change,
        );
        const show = (b: (typeof back)[number], name: string): string =>
          `${name}: ${b.kinds.join("+") || "none"}${b.tbfRateBytesPerSec !== undefined ? ` rate ${b.tbfRateBytesPerSec} B/s` : ""}${b.netemDelayMs !== undefined ? ` delay ${b.netemDelayMs} ms` : ""}${b.netemLossPercent !== undefined ? ` loss ${b.netemLossPercent} %` : ""}`;
        return `tc on ${role}'s link: ${show(back[0]!, h.interface)}; ${show(back[1]!, h.peerInterface)}`;
      },
      diskFull: async (role, level, signal) => {
        const dir = this.host(role).dataDir;
        const r = await this.run(role, "sh", ["-c", DISK_FILL_SCRIPT, "sh", dir, String(level)], signal);
        if (r.exitCode !== 0)
          throw new Error(
            `filling ${dir} on ${role} failed (exit ${r.exitCode}): ${(r.stderr || r.stdout).trim()}`,
          );
        return describeFill(r.stdout);
      },
      dropConnections: async (role, peers, signal) => {
        const lines: string[] = [];
        for (const peer of peers) {
          const address = this.host(peer).address;
          const [cmd, ...args] = dropConnectionsArgv(address);
          const r = await this.run(role, cmd!, args, signal);
          if (r.exitCode !== 0)
            throw new Error(`ss -K on ${role} failed (exit ${r.exitCode}): ${(r.stderr || r.stdout).trim()}`);
          lines.push(describeDrop(role, peer, address, r.stdout));
        }
        return lines.join("\n");
      },
      release: async () => {
        for (const role of [...this.stopped]) {
          for (const pid of await this.componentPids(role).catch(() => [])) {
            try {
              process.kill(pid, "SIGCONT");
            } catch {
              /* gone */
            }
          }
          this.stopped.delete(role);
        }
      },
    };
  }

  /** The component running on `role` now (a collector host's collector, the sink), if any. */
  private componentOf(role: string): RunningComponent | undefined {
    if (role === SINK) return this.sink;
    const i = this.collectorRoles.indexOf(role);
    return i >= 0 ? this.collectors[i] : undefined;
  }

  /** Every process in the host's cgroup, else the component's main pid (no cgroup). */
  private async componentPids(role: string): Promise<number[]> {
    const pids = await listCgroupPids(this.host(role).cgroup);
    if (pids.length > 0) return pids;
    const pid = this.componentOf(role)?.pid;
    return pid !== undefined ? [pid] : [];
  }

  private stepHost(role: string): StepHost {
    const h = this.host(role);
    return {
      name: role,
      address: h.address,
      controlAddress: h.controlAddress,
      ...(h.netns !== undefined ? { netns: h.netns } : {}),
      cgroup: { ...h.cgroup.dirs },
      pid: this.componentOf(role)?.pid ?? null,
      dataDir: h.dataDir,
      pids: () => listCgroupPids(h.cgroup),
    };
  }

  /** Stop what is left of the component on `role` (thawed first) and start it again as startSink/startEntries did. */
  private async restart(role: string, signal: AbortSignal): Promise<string> {
    const { plan } = this.opts;
    const old = this.componentOf(role);
    if (!old) throw new Error(`host ${role} runs no component to restart`);
    for (const pid of await this.componentPids(role)) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        /* gone */
      }
    }
    this.stopped.delete(role);
    const t = performance.now();
    await old.stop();
    if (role === SINK) {
      const next = await findSink(plan.sink.name)!.local!.startLocal(
        this.host(SINK),
        plan.sink.config,
        signal,
      );
      this.sink = next;
      if (this.downstream) this.downstream.sink = next;
      return `restarted ${next.name} on ${role} ${next.pid !== undefined ? `(pid ${next.pid}) ` : ""}in ${((performance.now() - t) / 1000).toFixed(2)} s`;
    }
    const i = this.collectorRoles.indexOf(role);
    const next = await findCollector(plan.collector!.name)!.local!.startLocal(
      this.host(role),
      plan.collector!.config,
      signal,
      this.downstream,
    );
    this.collectors[i] = next;
    return `restarted ${next.name} on ${role} ${next.pid !== undefined ? `(pid ${next.pid}) ` : ""}in ${((performance.now() - t) / 1000).toFixed(2)} s`;
  }

  /** `sh -c command` in the host's namespace and cgroup; the child is killed (by its pid) when `signal` aborts. */
  private exec(role: string, command: string, signal: AbortSignal): Promise<ExecResult> {
    return this.run(role, "sh", ["-c", command], signal);
  }

  /** `command args…` in the host's namespace and cgroup; the child is killed (by its pid) when `signal` aborts. */
  private run(role: string, command: string, args: string[], signal: AbortSignal): Promise<ExecResult> {
    const child = this.host(role).spawn(command, args);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (b: Buffer) => {
      if (stdout.length < 65536) stdout += b.toString("utf8");
    });
    child.stderr?.on("data", (b: Buffer) => {
      if (stderr.length < 65536) stderr += b.toString("utf8");
    });
    const onAbort = (): void => {
      if (child.pid !== undefined && child.exitCode === null) child.kill("SIGKILL");
    };
    signal.addEventListener("abort", onAbort, { once: true });
    return new Promise((resolve, reject) => {
      child.once("error", (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      });
      child.once("close", (code) => {
        signal.removeEventListener("abort", onAbort);
        resolve({ exitCode: code, stdout, stderr });
      });
    });
  }

  async teardown(): Promise<string[]> {
    const errors: string[] = [];
    const attempt = async (what: string, f: () => Promise<unknown>): Promise<void> => {
      try {
        await f();
      } catch (e) {
        errors.push(`${what}: ${(e as Error).message}`);
      }
    };
    await this.timed("stop", async () => {
      for (const c of this.collectors) await attempt(`collector ${c.name}`, () => c.stop());
      // the run directory goes next: the sink need not save its data (the ledger was read before the teardown)
      if (this.sink) await attempt("sink", () => this.sink!.discard?.() ?? this.sink!.stop());
    });
    if (this.local)
      await this.timed("hosts removed", () => attempt("teardown", () => this.local!.teardown()));
    return errors;
  }

  overheadParts(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.parts).map(([k, v]) => [k, Math.round(v)]));
  }
}
