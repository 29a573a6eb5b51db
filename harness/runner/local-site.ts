/**
 * The local platform as a run's site (./site.ts): provision the cell's hosts on this machine (cgroups, network
 * namespaces, tc: infra/local/platform.ts), start the sink in its host, then the collectors with the sink
 * downstream, and tear all of it down after the run.
 *
 * Events on the run's emitter: "collector" (RunningComponent, { host, downstream }) once each collector is ready,
 * with what restarting it would take (the kill-mid-run tests use it).
 */
import type { EventEmitter } from "node:events";
import { findCollector, findSink } from "../../plugins/registry.ts";
import type { RunningComponent } from "../../core/component.ts";
import type { AppliedLimits, StackSpec } from "../../core/limits.ts";
import { liftCpuLimit } from "../../infra/local/cgroup.ts";
import { provisionLocal } from "../../infra/local/platform.ts";
import type { LocalHost, LocalStack } from "../../core/hosts.ts";
import { ConfigurationError, interruptedError, ProvisioningError } from "../../core/errors.ts";
import { createLocalObserver } from "../observers/local.ts";
import type { Observer } from "../observers/types.ts";
import type { CollectorSignals, RunRecord } from "../results/types.ts";
import type { CellPlan } from "./cell-plan.ts";
import { hostRoles, hostSignals, LOADGEN, SINK, sumClaims, type Endpoint, type Loadgen, type RunSite, type SiteSink, type SiteVersions } from "./site.ts";
import { checkVersions, collectorHosts } from "./versions.ts";

/**
 * Can this cell run on this local stack? Checked before anything is provisioned (the driver checks every planned run
 * before the first starts): a local stack; a local component (and verifier) for the sink and the collector — the
 * container-only ones (Fluentd, Fluent Bit, Vector, Elasticsearch, Loki, GridDB) run on docker and azure stacks —
 * and the hosts the cell needs.
 * @throws ConfigurationError E_PLATFORM, E_SINK, E_COLLECTOR or E_STACK_HOSTS, naming the stack file and field
 */
export function checkRunnableLocally(stack: StackSpec, plan: Pick<CellPlan, "sink" | "collector" | "scenario">): void {
  if (stack.platform !== "local") {
    throw new ConfigurationError("E_PLATFORM", `stack ${stack.name}: platform "${stack.platform}" is provisioned with Pulumi; this command runs local stacks`);
  }
  const elsewhere = (what: string, name: string): string =>
    `scenario ${plan.scenario}: ${what} "${name}" has no local component: it runs on docker and azure stacks only (stack ${stack.name} is a local stack); use a docker or azure stack, e.g. \`ingestbench bench --stack docker-4c4g <scenario>\``;
  // every sink plugin has its verifier (core/plugin.ts): a sink with a local component can be counted locally
  if (!findSink(plan.sink.name)?.local) throw new ConfigurationError("E_SINK", elsewhere("sink", plan.sink.name), { field: "sink" });
  if (plan.collector && !findCollector(plan.collector.name)?.local) {
    throw new ConfigurationError("E_COLLECTOR", elsewhere("collector", plan.collector.name), { field: "collector" });
  }
  const roles = hostRoles(Object.keys(stack.hosts), plan);
  for (const role of roles) {
    if (!stack.hosts[role]) {
      const need = roles.map((r) => `"${r}"`).join(plan.collector ? ", " : " and ");
      throw new ConfigurationError("E_STACK_HOSTS", `${stack.file}: this scenario needs hosts ${need}; the stack has ${Object.keys(stack.hosts).join(", ")}`, { field: `config.ingestbench:hosts.${role}` });
    }
  }
}

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

export class LocalSite implements RunSite {
  limits: Record<string, AppliedLimits> = {};
  readonly versions: SiteVersions = {};
  private local: LocalStack | undefined;
  private sink: RunningComponent | undefined;
  private readonly collectors: RunningComponent[] = [];
  private readonly roles: string[];
  private readonly collectorRoles: string[];

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
    const used = { ...stack, hosts: Object.fromEntries(Object.entries(stack.hosts).filter(([h]) => this.roles.includes(h))) };
    this.local = await provisionLocal(used, { runId: this.opts.runId, resultRecord: this.opts.resultRecord });
    this.limits = this.local.limits;
    if (signal?.aborted) throw interruptedError(signal);
    const factory = findSink(plan.sink.name)!.local!;
    // the sink component makes and owns its own directories under the host's data directory
    const sink = await factory.startLocal(this.host(SINK), plan.sink.config, signal);
    this.sink = sink;
    this.versions[sink.name] = { pinned: sink.pinned, running: sink.running };
    checkVersions(sink.name, [{ host: SINK, pinned: sink.pinned, running: sink.running }], factory.matchesPin);
    return { control: sink.control, data: sink.data, params: { ...sink.params } };
  }

  async startEntries(downstream: { params: Record<string, string>; fields: CellPlan["fields"] }, signal?: AbortSignal): Promise<Endpoint[]> {
    const { plan } = this.opts;
    const sink = this.sink!;
    if (!plan.collector) return [sink.data];
    const factory = findCollector(plan.collector.name)!.local!;
    const down = { sink, params: downstream.params, fields: downstream.fields };
    for (const role of this.collectorRoles) {
      const host = this.host(role);
      const c = await factory.startLocal(host, plan.collector.config, signal, down);
      this.collectors.push(c);
      this.versions[this.collectors.length === 1 ? c.name : `${c.name}@${host.name}`] = { pinned: c.pinned, running: c.running };
      this.opts.events.emit("collector", c, { host, downstream: down });
      if (signal?.aborted) break;
    }
    checkVersions(plan.collector.name, this.collectors.map((c, i) => ({ host: this.collectorRoles[i]!, pinned: c.pinned, running: c.running })), factory.matchesPin);
    return this.collectors.map((c) => c.data);
  }

  async observer(): Promise<Observer> {
    const { stack } = this.opts;
    const observed = [LOADGEN, ...this.collectorRoles, SINK].map((h) => this.host(h));
    return createLocalObserver(observed, new Set(Object.entries(stack.hosts).filter(([, h]) => h.limits.cpu).map(([n]) => n)));
  }

  async loadgen(replayFile?: string): Promise<Loadgen> {
    const host = this.host(LOADGEN);
    return { spawn: host.spawn.bind(host), ...(replayFile !== undefined ? { replayFile } : {}) };
  }

  async collectorClaims(): Promise<RunRecord["collectorClaims"] | undefined> {
    if (!this.collectors.length || !this.collectors.every((c) => c.stats)) return undefined;
    // one read per host, summed key-wise; a host that fails keeps its error (sumClaims)
    const results = await Promise.allSettled(this.collectors.map((c) => c.stats!()));
    return sumClaims(this.collectors[0]!.name, this.collectorRoles, results);
  }

  async collectorSignals(): Promise<CollectorSignals | undefined> {
    if (!this.collectors.length || !this.collectors.every((c) => c.signals)) return undefined;
    return hostSignals(this.collectors[0]!.name, this.collectorRoles, await Promise.allSettled(this.collectors.map((c) => c.signals!())));
  }

  async endMeasurement(): Promise<Record<string, string[]>> {
    // lift the sink's CPU cap so that the ledger's full-table queries take seconds, not minutes on a quarter core;
    // memory, IO and network caps stay; nothing after this point is a measurement
    return (await liftCpuLimit(this.host(SINK).cgroup)) ? { [SINK]: ["CPU cap lifted after the drain, for the ledger queries"] } : {};
  }

  async teardown(): Promise<string[]> {
    const errors: string[] = [];
    const attempt = async (what: string, f: () => Promise<unknown>): Promise<void> => {
      try { await f(); } catch (e) { errors.push(`${what}: ${(e as Error).message}`); }
    };
    for (const c of this.collectors) await attempt(`collector ${c.name}`, () => c.stop());
    if (this.sink) await attempt("sink", () => this.sink!.stop());
    if (this.local) await attempt("teardown", () => this.local!.teardown());
    return errors;
  }
}
