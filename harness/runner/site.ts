/**
 * Where a run's components live, and how the harness reaches them. A run (./run.ts BenchRun) measures the same way
 * everywhere; a site supplies the hosts, components, generator launcher and telemetry:
 *
 * - the local platform (./local-site.ts): hosts are provisioned per run (cgroups, network namespaces, tc), the sink
 *   and collectors are started for the run and stopped after it;
 * - a deployed docker or azure stack (../remote/site.ts): the hosts and components are up already (Pulumi); the
 *   site checks their versions, runs generators inside the loadgen host's container and reads each container's
 *   cgroup counters.
 *
 * Call order: startSink → (the run creates the schema) → startEntries → observer, loadgen → … load … →
 * collectorClaims → endMeasurement → teardown (always, also after an error or abort).
 */
import type { AppliedLimits } from "../../core/limits.ts";
import type { EventField } from "../../core/events/types.ts";
import type { GeneratorProgram, SpawnFn } from "../generators/process.ts";
import type { ClockOffset } from "../generators/clock.ts";
import type { Observer } from "../observers/types.ts";
import type { CollectorSignals, Environment, RunRecord, SinkSignals } from "../results/types.ts";
import { collectorHosts } from "./versions.ts";
import type { SelfLoadCounts } from "./self-load.ts";
import type { StepTarget } from "./steps.ts";
import type { Exhaustion } from "./exhaustion.ts";

/** An address and TCP port. */
export interface Endpoint {
  host: string;
  port: number;
}

/** The sink as the harness reaches it: `control` for the verifier, `data` for generators writing to it directly. */
export interface SiteSink {
  /** where the verifier (in the harness process) connects */
  control: Endpoint;
  /** where a generator on the loadgen host writes when the cell has no collector */
  data: Endpoint;
  /** connection params the verifier and generators read (database, user, index, …); the run sets `table` */
  params: Record<string, string>;
}

/** How generators start on the loadgen host. */
export interface Loadgen {
  spawn: SpawnFn;
  /** the program that runs harness/generators/child.ts there (the local platform: the bundled child in the cache
   *  directory, harness/generators/bundle.ts); undefined: this machine's node + tsx */
  program?: GeneratorProgram;
  /** the scenario's replay file as the loadgen host sees it */
  replayFile?: string;
}

/** Running versions recorded in run.json (component, or `component@host` for the second and later instances). */
export type SiteVersions = Record<string, { pinned: string; running: string }>;

/** A host whose container the kernel OOM-killed in (a process of) during the run (deployed stacks: harness/remote/oom.ts). */
export interface OomKill {
  host: string;
  container: string;
  /** the memory cap it ran under, bytes, when known */
  limitBytes: number | null;
  /** the main process was killed (docker inspect State.OOMKilled) */
  oomKilled: boolean;
  /** processes the OOM killer ended in the container's cgroup during the run (null: not readable) */
  kills: number | null;
  /** the sources, e.g. "docker inspect State.OOMKilled true; cgroup v1 …/memory.oom_control oom_kill 1" */
  evidence: string;
}

/** The run's error message for OOM kills: which host, under which cap, from which sources. */
export function oomMessage(kills: readonly OomKill[]): string {
  return kills
    .map(
      (k) =>
        `host ${k.host}: the kernel OOM-killed ${k.oomKilled ? "the container's main process" : `${k.kills} process(es)`} in ${k.container} under its memory cap${k.limitBytes !== null ? ` of ${k.limitBytes} bytes` : ""} (${k.evidence})`,
    )
    .join("; ");
}

export interface RunSite {
  /** applied limits per host, filled by startSink */
  readonly limits: Record<string, AppliedLimits>;
  /** versions of what runs, filled by startSink and startEntries */
  readonly versions: SiteVersions;
  /**
   * Bring up (or check) the hosts and the sink; the sink must run its pinned version.
   * @throws ProvisioningError when hosts cannot be provisioned or reached; VerificationError E_VERSION
   */
  startSink(signal?: AbortSignal): Promise<SiteSink>;
  /**
   * Once the sink's schema exists: start (or check) the collector hosts with the sink downstream, every one at its
   * pinned version and all at one version. Returns where each generator writes, in genId order: one per collector
   * host, or the sink's data endpoint when the cell has no collector.
   */
  startEntries(
    downstream: { params: Record<string, string>; fields: EventField[]; genBase?: number },
    signal?: AbortSignal,
  ): Promise<Endpoint[]>;
  /**
   * the fingerprint of where the measured components run, when it is not this machine (a deployed stack: the sink's
   * host); undefined: this machine's (harness/runner/environment.ts)
   */
  environment?(): Promise<Environment>;
  /** telemetry of every host of the cell */
  observer(): Promise<Observer>;
  /**
   * the host an application under test runs on (scenario `app.host`; ./app-host.ts): its launcher (the host's cgroup
   * and namespace) and the address the harness reaches it at. Absent: the site runs no application (deployed stacks).
   */
  appHost?(name: string): { spawn: SpawnFn; controlAddress: string };
  /** the loadgen host's process launcher (and the replay file placed there) */
  loadgen(replayFile?: string): Promise<Loadgen>;
  /** the collectors' own counts, when the collector reports them */
  collectorClaims(): Promise<RunRecord["collectorClaims"] | undefined>;
  /**
   * the collectors' own signals now, per collector host, read every sample interval (SeriesPoint.collector); absent
   * or undefined when the collector reports none. Never throws: a host whose read fails keeps its error.
   */
  collectorSignals?(): Promise<CollectorSignals | undefined>;
  /**
   * the sink's own signals now, read every sample interval (SeriesPoint.sink); absent or undefined when the sink
   * reports none. Never throws: a failed read keeps its message.
   */
  sinkSignals?(): Promise<SinkSignals | undefined>;
  /**
   * `generator: none` (CellPlan.selfLoad): the collectors' own count of the events their built-in generator made, per
   * generator index (collector host h's k-th gen is h × generatorsPerHost + k), and the events they still queue.
   * Absent: the site cannot read them (the run refuses the cell). @throws when a collector's count cannot be read
   */
  selfLoadCounts?(): Promise<SelfLoadCounts>;
  /**
   * the sink's control endpoint as the harness reaches it now, read afresh (docker: the port the restarted
   * container publishes now, harness/remote/site.ts); the run asks after a fault disturbed the sink and points its
   * verifier there (core/verifier.ts retarget). Absent: the endpoint cannot move (local: a fixed address)
   */
  sinkControl?(): Promise<Endpoint>;
  /**
   * Run `work`, which reads every stored row but is not measured (the settling of the samples after the load), with
   * the sink's CPU cap lifted, then the cap written back and read back (`why` goes into the sink's limits notes).
   * Absent: the work runs under the cap (deployed stacks). @throws ProvisioningError E_CPU_CAP_RESTORE
   */
  sinkUncapped?<T>(why: string, work: () => Promise<T>): Promise<T>;
  /** the measurement is over: e.g. lift the sink's CPU cap for the ledger queries; returns notes per host */
  endMeasurement(): Promise<Record<string, string[]>>;
  /**
   * OOM kills in the run's hosts since startSink, read after the load (and after an error); empty when none.
   * Never throws. Absent: the site cannot tell. The local platform reads each host's cgroup counter (./local-site.ts).
   */
  oomKills?(): Promise<OomKill[]>;
  /**
   * The sink host's clock against the harness (harness/generators/clock.ts measureHostClock), for delivery latency
   * where the sink's and the loadgen's clocks differ (harness/runner/delivery.ts oneClock). Never throws. Absent:
   * the sink reads the harness's kernel clock.
   */
  sinkClock?(): Promise<ClockOffset | undefined>;
  /**
   * Resource exhaustion the hosts' components logged during the run (./exhaustion.ts: ENOSPC, EADDRNOTAVAIL,
   * Fluentd's BufferOverflowError), with the df of a full data volume; read after the load, like oomKills. Never throws.
   */
  exhaustion?(): Promise<Exhaustion[]>;
  /** stop or release what the site started; returns one message per failure (never throws) */
  teardown(): Promise<string[]>;
  /**
   * The site's own split of the per-cell overhead, ms by part, as far as it got (run.json instrument.overhead.parts):
   * local (./local-site.ts): `hosts` (run directory, cgroups, namespaces, tc), `sink start` (the sink component's
   * startLocal until it answers), `stop` (collectors and sink stopped), `hosts removed` (processes, namespaces, cgroups,
   * run directory). Absent: the site does not split it.
   */
  overheadParts?(): Record<string, number>;
  /**
   * What fault steps can do here (./steps.ts), once startEntries returned; absent: the site runs no steps (the driver
   * refuses a plan with steps for it before anything is provisioned).
   */
  steps?(): StepTarget;
}

/** Host names every stack uses for the load generator and the sink. */
export const LOADGEN = "loadgen";
export const SINK = "sink";
const COLLECTOR = "collector";

/**
 * The hosts a cell runs on, in data-flow order: loadgen, the collector host(s) when the scenario has a collector
 * (`collector`, or `collector-1`, `collector-2`, …; "collector" when the stack has none, for the error), sink.
 */
export function hostRoles(
  hostNames: readonly string[],
  plan: { collector: unknown; app?: { spec: { host: string } } },
): string[] {
  const collectors = collectorHosts(hostNames);
  const roles = plan.collector
    ? [LOADGEN, ...(collectors.length ? collectors : [COLLECTOR]), SINK]
    : [LOADGEN, SINK];
  // the application under test's host, when it is none of the others (scenario app.host)
  const app = plan.app?.spec.host;
  return app !== undefined && !roles.includes(app) ? [...roles, app] : roles;
}

/** Counts summed key-wise (a key missing from one record counts 0 there). */
export function sumCounts(records: readonly Record<string, number>[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const r of records) for (const [k, v] of Object.entries(r)) sum[k] = (sum[k] ?? 0) + v;
  return sum;
}

/**
 * The collectors' own counts as run.json keeps them (RunRecord.collectorClaims), from one read per collector host
 * (`results[i]` is `hosts[i]`'s): counts summed key-wise over the hosts that answered (one host: its counts as they
 * are; none: null); each failed host's error is kept ("collector-2: …", or the bare message when there is one host),
 * and `hosts` is listed when there are several.
 */
export function sumClaims(
  name: string,
  hosts: readonly string[],
  results: readonly PromiseSettledResult<Record<string, number>>[],
): NonNullable<RunRecord["collectorClaims"]> {
  const message = (r: PromiseRejectedResult): string =>
    r.reason instanceof Error ? r.reason.message : String(r.reason);
  const errors = results.flatMap((r, i) => (r.status === "rejected" ? [`${hosts[i]}: ${message(r)}`] : []));
  const ok = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const counts = ok.length ? sumCounts(ok) : null;
  const first = results[0];
  const error = results.length > 1 ? errors.join("; ") : first?.status === "rejected" ? message(first) : "";
  return { name, counts, ...(results.length > 1 ? { hosts: [...hosts] } : {}), ...(error ? { error } : {}) };
}

/** One collector host's signal read per host, as SeriesPoint.collector keeps them (a failed read keeps its message). */
export function hostSignals(
  name: string,
  hosts: readonly string[],
  results: readonly PromiseSettledResult<Record<string, number>>[],
): CollectorSignals {
  const out: CollectorSignals = { name, hosts: {} };
  results.forEach((r, i) => {
    if (r.status === "fulfilled") out.hosts[hosts[i]!] = r.value;
    else (out.errors ??= {})[hosts[i]!] = r.reason instanceof Error ? r.reason.message : String(r.reason);
  });
  return out;
}
