/**
 * A deployed docker or azure stack as a run's site (harness/runner/site.ts). Pulumi has deployed the cell's
 * components already (harness/provision/deployed.ts re-deploys when a cell needs others); the site reads the stack
 * outputs (core/outputs.ts) and:
 *
 * - checks each component's running version inside its container against the pin in the outputs (and the
 *   scenario's own `version`, when its block has one): the sink, then every collector host, all at one version;
 * - waits until the sink's (and each collector's) data port listens inside its container (./ready.ts): a
 *   container is up once its process started, not once its server serves;
 * - gives the verifier the sink's endpoint as this machine reaches it (`fromHarness`: a port published on
 *   127.0.0.1 on docker, the VM's address on azure);
 * - runs the generators inside the loadgen host's container: the bundled generator (harness/remote/bundle.ts)
 *   through `docker exec` or SSH (harness/remote/shell.ts), writing to the collectors' (or the sink's) addresses on
 *   the stack network, as a generator on that host would;
 * - reads each container's cgroup and interface counters (harness/observers/remote.ts);
 * - reads back the limits each container runs under (./readback.ts: docker inspect, the container's own cgroup
 *   files, tc in its shaper), compared with what the deployment handed over (outputs `hosts.<h>.limits`), and
 *   after the load reports OOM kills under the memory cap (./oom.ts); as the run's environment it records the sink
 *   host's kernel, CPU, cores and memory (what a comparison across hardware sizes must see), not this machine's.
 *
 * The collectors' own counts (`collectorClaims`) are read from each collector host's metrics endpoint at its
 * published port, or inside syslog-ng's container (the collector plugin's `claims`, core/claims.ts; ./claims.ts). After the drain the sink's CPU cap is lifted for the
 * ledger queries (`docker update`), as on the local platform.
 */
import { access, constants } from "node:fs/promises";
import path from "node:path";
import type { ComponentEndpoints, StackOutputs } from "../../core/outputs.ts";
import { sinkParams } from "../../infra/docker/pipeline.ts";
import type { AppliedLimits, StackSpec } from "../../core/limits.ts";
import {
  ConfigurationError,
  IngestbenchError,
  ProvisioningError,
  VerificationError,
} from "../../core/errors.ts";
import { harnessAddress } from "../../core/outputs.ts";
import { measureHostClock, type ClockOffset } from "../generators/clock.ts";
import { createRemoteObserver } from "../observers/remote.ts";
import { oneClock } from "../runner/delivery.ts";
import type { Observer } from "../observers/types.ts";
import type { CollectorSignals, Environment, RunRecord } from "../results/types.ts";
import type { CellPlan } from "../runner/cell-plan.ts";
import {
  hostRoles,
  hostSignals,
  LOADGEN,
  SINK,
  sumClaims,
  type Endpoint,
  type Loadgen,
  type RunSite,
  type SiteSink,
  type SiteVersions,
} from "../runner/site.ts";
import { checkVersions, collectorHosts } from "../runner/versions.ts";
import { findCollector, findSink } from "../../plugins/registry.ts";
import { installGenerator, REMOTE_ROOT } from "./bundle.ts";
import { probeEnvironment } from "./environment.ts";
import { readHostClaims, readPortClaims } from "./claims.ts";
import { refreshPublished } from "./published.ts";
import type { SelfLoadCounts } from "../runner/self-load.ts";
import { renderCollector } from "../../infra/render/index.ts";
import { createHash } from "node:crypto";
import { checkOom, readOomCounter, type OomKill } from "./oom.ts";
import { readBackLimits } from "./readback.ts";
import type { HostShell } from "./shell.ts";
import { matchesImagePin, probeVersion } from "./versions.ts";
import { waitListening } from "./ready.ts";
import { dockerStepTarget } from "./docker-steps.ts";
import type { StepTarget } from "../runner/steps.ts";
import { execa } from "execa";
import { catalog } from "../../infra/catalog.ts";
import { dedupeExhaustion, exhaustionIn, type Exhaustion } from "../runner/exhaustion.ts";
import { parseDfLine } from "../runner/step-scripts.ts";

/** How many of the last lines of each container's log the exhaustion scan reads. */
const LOG_LINES = 5000;

/** Options of a RemoteSite. */
export interface RemoteSiteOptions {
  stack: StackSpec;
  plan: CellPlan;
  /** the deployed stack's outputs (harness/provision/outputs.ts parseStackOutputs) */
  outputs: StackOutputs;
  /** the shell into a host's container (harness/remote/hosts.ts shellsFor) */
  shell: (host: string) => HostShell;
  /** docker: the shaper image of the stack (tc, ss), for fault steps (./docker-steps.ts); absent: the site runs no steps */
  shaperImage?: string;
}

export class RemoteSite implements RunSite {
  readonly limits: Record<string, AppliedLimits> = {};
  readonly versions: SiteVersions = {};
  private readonly roles: string[];
  /** per host: its cgroup's oom_kill count when the run began (null: unreadable), and when (RFC 3339) */
  private readonly oomBaseline = new Map<string, { count: number | null; since: string }>();
  private readonly collectorRoles: string[];
  /** hosts a fault step killed, stopped or restarted: the observer may find their container unreadable */
  private readonly disturbed = new Set<string>();

  /**
   * @throws ProvisioningError E_STACK_OUTPUTS when the deployed stack lacks a host the cell needs, or the sink has
   *         no verifier
   */
  constructor(private readonly opts: RemoteSiteOptions) {
    const { outputs, plan } = opts;
    const deployed = Object.keys(outputs.hosts);
    this.roles = hostRoles(deployed, plan);
    this.collectorRoles = plan.collector ? collectorHosts(deployed) : [];
    const missing = this.roles.filter((r) => !outputs.hosts[r]);
    if (missing.length) {
      throw new ProvisioningError(
        "E_STACK_OUTPUTS",
        `stack ${outputs.stack}: this scenario needs hosts ${this.roles.join(", ")}; the deployed stack has ${deployed.join(", ") || "none"}`,
      );
    }
    if (!findSink(plan.sink.name)?.verifier)
      throw new ProvisioningError(
        "E_STACK_OUTPUTS",
        `scenario ${plan.scenario}: no verifier for sink "${plan.sink.name}"`,
      );
  }

  /** The endpoints of `component` on `host`, or an error saying the stack runs something else there. */
  private endpointsOn(component: string, host: string): ComponentEndpoints {
    const ep = (this.opts.outputs.endpoints[component] ?? []).find((e) => e.host === host);
    if (!ep?.data) {
      const runs = this.opts.outputs.hosts[host]?.component ?? "nothing";
      throw new ProvisioningError(
        "E_STACK_OUTPUTS",
        `stack ${this.opts.outputs.stack}: host ${host} runs ${runs}, not ${component} with a data endpoint; \`ingestbench up --stack ${this.opts.outputs.stack} --scenario F\` deploys the scenario's components`,
      );
    }
    return ep;
  }

  /** Probe each instance's version and apply the pin rule (also the scenario's own `version`, when given). */
  private async checkComponent(
    component: string,
    hosts: readonly string[],
    scenarioVersion: unknown,
  ): Promise<void> {
    const { outputs } = this.opts;
    const pinned = outputs.versions[component]?.pinned;
    if (pinned === undefined)
      throw new ProvisioningError(
        "E_STACK_OUTPUTS",
        `stack ${outputs.stack}: no version for ${component} in the outputs`,
      );
    // the scenario's pin may be finer than the image's ("18.4.0-beta.17" for the embedded package, "18.4" for the image)
    if (
      typeof scenarioVersion === "string" &&
      !matchesImagePin(pinned, scenarioVersion) &&
      !matchesImagePin(scenarioVersion, pinned)
    ) {
      throw new VerificationError(
        "E_VERSION",
        `scenario ${this.opts.plan.scenario} pins ${component} ${scenarioVersion}, but stack ${outputs.stack} deploys ${pinned} (infra/catalog.ts)`,
      );
    }
    const instances = [];
    for (const host of hosts) {
      const tag = outputs.hosts[host]!.image.replace(/@.*$/, "").split(":").pop() ?? "";
      const running = await probeVersion(
        this.opts.shell(host),
        component,
        tag,
        outputs.versions[component]?.versionCommand,
      );
      instances.push({ host, pinned, running });
      this.versions[instances.length === 1 ? component : `${component}@${host}`] = { pinned, running };
    }
    checkVersions(component, instances, matchesImagePin);
  }

  async startSink(): Promise<SiteSink> {
    const { outputs, plan } = this.opts;
    const ep = this.endpointsOn(plan.sink.name, SINK);
    const control = fromHarness(outputs, ep);
    await this.checkComponent(plan.sink.name, [SINK], plan.sink.config.version);
    // the limits each container runs under, read back (docker inspect, its cgroup, tc in its shaper), and the OOM
    // counters the end of the run is compared with
    await Promise.all(
      this.roles.map(async (r) => {
        const shell = this.opts.shell(r);
        this.limits[r] = await readBackLimits(shell, outputs.hosts[r]!.limits, {
          shaper: `${shell.container}-shaper`,
        });
        this.oomBaseline.set(r, {
          count: (await readOomCounter(shell))?.count ?? null,
          since: new Date().toISOString(),
        });
      }),
    );
    await waitListening(this.opts.shell(SINK), ep.data!.port);
    return {
      control,
      data: { host: ep.data!.host, port: ep.data!.port },
      params: sinkParams(plan.sink.name, plan.sink.config),
    };
  }

  async startEntries(downstream?: { genBase?: number }, signal?: AbortSignal): Promise<Endpoint[]> {
    const { plan } = this.opts;
    if (!plan.collector) {
      const ep = this.endpointsOn(plan.sink.name, SINK);
      return [{ host: ep.data!.host, port: ep.data!.port }];
    }
    const name = plan.collector.name;
    const eps = this.collectorRoles.map((h) => this.endpointsOn(name, h));
    await this.checkComponent(name, this.collectorRoles, plan.collector.config.version);
    if (plan.selfLoad) await this.startSelfLoad(downstream?.genBase ?? 0, signal);
    await Promise.all(this.collectorRoles.map((h) => waitListening(this.opts.shell(h), this.readyPort(h)!)));
    return eps.map((ep) => ({ host: ep.data!.host, port: ep.data!.port }));
  }

  /**
   * The port that listens once `role`'s component serves: its data port, but for a collector making its own load
   * (generator: none) the metrics port when it has one (Fluentd's sample input opens no data port; syslog-ng keeps
   * its syslog() source beside the generator, plugins/collectors/syslog-ng/component.ts)
   */
  private readyPort(role: string): number | undefined {
    const { outputs, plan } = this.opts;
    const ep = (outputs.endpoints[outputs.hosts[role]?.component ?? ""] ?? []).find((e) => e.host === role);
    return plan.selfLoad && this.collectorRoles.includes(role) && ep?.metrics
      ? ep.metrics.port
      : ep?.data?.port;
  }

  /**
   * generator: none on docker: the collectors were deployed idle (infra/docker/pipeline.ts, RenderInput.idle); each
   * collector host's config is rendered again with its built-in generator and this run's gens (collector host i
   * stamps genBase + i × generatorsPerHost …, as on the local platform: ./local-site.ts), uploaded over the idle one,
   * and its container restarted with its shaper (./docker-steps.ts restart, which also reads the ports the engine
   * publishes anew): the generator starts now, and the collector's counters count this run's events only.
   * @throws ConfigurationError E_GENERATOR_NONE off the docker platform; ProvisioningError as the upload or restart
   */
  private async startSelfLoad(genBase: number, signal?: AbortSignal): Promise<void> {
    const { plan, outputs } = this.opts;
    const collector = plan.collector!;
    const self = plan.selfLoad!;
    if (outputs.platform !== "docker") {
      throw new ConfigurationError(
        "E_GENERATOR_NONE",
        `scenario ${plan.scenario}: generator: none runs on local and docker stacks; stack ${outputs.stack} runs on the ${outputs.platform} platform`,
        { field: "generator" },
      );
    }
    const sinkEp = this.endpointsOn(plan.sink.name, SINK).data!;
    const sink = {
      name: plan.sink.name,
      host: sinkEp.host,
      port: sinkEp.port,
      params: sinkParams(plan.sink.name, plan.sink.config),
    };
    // the restart of ./docker-steps.ts (no step helper runs: the shaper image is not needed)
    const target = dockerStepTarget({
      outputs,
      shell: this.opts.shell,
      roles: this.roles,
      shaperImage: this.opts.shaperImage ?? "",
      limits: this.limits,
      onDisturb: () => undefined,
      readyPort: (h) => this.readyPort(h),
    });
    for (const [i, role] of this.collectorRoles.entries()) {
      const gens = genBase + i * self.generatorsPerHost;
      const rendered = renderCollector(collector.name, collector.config, sink, plan.fields, gens);
      await this.opts.shell(role).upload(rendered.file, rendered.text);
      const restarted = await target.restart(role, signal ?? new AbortController().signal);
      const sha = createHash("sha256").update(rendered.text).digest("hex");
      this.limits[role]?.notes.push(
        `generator: none: ${self.input} started for this run (gens ${gens}..${gens + self.generatorsPerHost - 1}; ${rendered.file} sha256 ${sha.slice(0, 12)}): ${restarted}`,
      );
    }
  }

  /**
   * generator: none: each collector host's own count of the events its built-in generator made (the plugin's
   * claims, core/plugin.ts SelfLoad counterKey), per generator index, and what the collectors still queue. A
   * plugin whose SelfLoad counts per port (Fluentd: one monitor_agent per worker) gives generator index k the
   * count on its k-th claims port alone.
   * @throws IngestbenchError E_CLAIMS when a count cannot be read or is absent
   */
  async selfLoadCounts(): Promise<SelfLoadCounts> {
    const { plan, outputs } = this.opts;
    const collector = plan.collector!;
    const plugin = findCollector(collector.name)!;
    const load = plugin.selfLoad!;
    const claims = plugin.claims;
    const perHost = plan.selfLoad!.generatorsPerHost;
    if (!claims)
      throw new IngestbenchError(
        "E_CLAIMS",
        `collector ${collector.name} reports no counters: the events its built-in generator made cannot be counted`,
      );
    const made: number[] = [];
    let queued = 0;
    for (const role of this.collectorRoles) {
      // one claims read per generator index (per port) or one for the host
      const reads: Array<Record<string, number>> =
        claims.kind === "http" && load.perPort
          ? await readPortClaims(outputs, collector.name, claims, role, collector.config)
          : [await this.claimsReader()!(role)];
      for (let k = 0; k < perHost; k++) {
        const counts = load.perPort ? reads[k] : reads[0];
        const key = load.counterKey(k, collector.config);
        const n = counts?.[key];
        if (n === undefined)
          throw new IngestbenchError(
            "E_CLAIMS",
            `collector ${collector.name} on ${role} reports no "${key}" count for generator index ${k} (${load.counter})`,
          );
        made.push(n);
      }
      for (const r of reads) queued += r.queued ?? 0;
    }
    return { made, queued };
  }

  /**
   * The sink's control endpoint now: on docker its container's published ports are read from the engine again
   * (a restart may have moved them: ./published.ts) before the endpoint is taken from the outputs.
   */
  async sinkControl(): Promise<Endpoint> {
    const { outputs, plan } = this.opts;
    if (outputs.platform === "docker") await refreshPublished(outputs, SINK, this.opts.shell(SINK));
    return fromHarness(outputs, this.endpointsOn(plan.sink.name, SINK));
  }

  /** the sink host's kernel, CPU, cores, memory and cgroup version, and the loadgen's node (./environment.ts) */
  async environment(): Promise<Environment> {
    return probeEnvironment(this.opts.shell(SINK), this.opts.shell(LOADGEN));
  }

  /**
   * The sink VM's clock against the harness on azure, where the sink and the loadgen are two VMs (a shell in the
   * sink's container reads the VM's kernel clock); undefined on docker, whose containers share the engine's clock.
   */
  async sinkClock(): Promise<ClockOffset | undefined> {
    if (oneClock(this.opts.stack.platform)) return undefined;
    const shell = this.opts.shell(SINK);
    return measureHostClock((command, args) => shell.spawn(command, args));
  }

  async observer(): Promise<Observer> {
    const capped = new Set(this.roles.filter((h) => this.limits[h]?.applied.cfsQuotaUs !== undefined));
    // a docker host whose shaper redirects ingress through its ifb device (infra/docker/shaper.ts; read back as
    // ingressTbfRateBytesPerSec, harness/remote/readback.ts): received bytes are counted after that tbf
    const ingressShaped = new Set(
      this.roles.filter((h) => this.limits[h]?.applied.ingressTbfRateBytesPerSec !== undefined),
    );
    return createRemoteObserver(
      this.roles.map((h) => this.opts.shell(h)),
      { cappedHosts: capped, ingressShaped, mayBeDown: (h) => this.disturbed.has(h) },
    );
  }

  /**
   * The generator bundle installed on the loadgen host and, with `replayFile` (a path on this machine), that file
   * uploaded beside it, streamed from disk whatever its size (HostShell.upload of `{ file }`, ./shell.ts: the
   * harness never holds it; its timeout grows with the size, 30 s + 1 s per 8 MiB).
   * @throws ConfigurationError E_REPLAY when the replay file cannot be read here (before anything is uploaded, the
   *         local platform's code for it: core/events/source.ts); ProvisioningError E_REMOTE_EXEC, E_GENERATOR_BUNDLE
   *         from the upload (./bundle.ts)
   */
  async loadgen(replayFile?: string): Promise<Loadgen> {
    if (replayFile !== undefined) {
      await access(replayFile, constants.R_OK).catch((err: unknown) => {
        throw new ConfigurationError(
          "E_REPLAY",
          `cannot read replay file ${replayFile}: ${(err as Error).message}`,
          { cause: err },
        );
      });
    }
    const shell = this.opts.shell(LOADGEN);
    const program = await installGenerator(shell);
    let remoteReplay: string | undefined;
    if (replayFile !== undefined) {
      // the replay file goes beside the generator; its name keeps the local basename for people reading ps output
      remoteReplay = `${REMOTE_ROOT}/replay/${path.basename(replayFile)}`;
      await shell.upload(remoteReplay, { file: replayFile });
    }
    return {
      spawn: shell.spawn,
      program,
      ...(remoteReplay !== undefined ? { replayFile: remoteReplay } : {}),
    };
  }

  /** The claims reader of every collector host, every sample interval: the same counts as collectorClaims, per host. */
  async collectorSignals(): Promise<CollectorSignals | undefined> {
    const read = this.claimsReader();
    if (!read) return undefined;
    return hostSignals(
      this.opts.plan.collector!.name,
      this.collectorRoles,
      await Promise.allSettled(this.collectorRoles.map(read)),
    );
  }

  /** How one collector host's claimed counts are read (the plugin's `claims`), or undefined when it has none. */
  private claimsReader(): ((host: string) => Promise<Record<string, number>>) | undefined {
    const collector = this.opts.plan.collector;
    if (!collector) return undefined;
    const claims = findCollector(collector.name)?.claims;
    if (!claims) return undefined;
    return claims.kind === "http"
      ? (h: string) => readHostClaims(this.opts.outputs, collector.name, claims, h, collector.config)
      : (h: string) => {
          const shell = this.opts.shell(h);
          return claims.read((cmd, args, opts) => shell.run(cmd, [...args], opts));
        };
  }

  async collectorClaims(): Promise<RunRecord["collectorClaims"] | undefined> {
    const collector = this.opts.plan.collector;
    if (!collector) return undefined;
    // from the metrics endpoint (Fluent Bit, Vector, Fluentd) or inside the container (syslog-ng's control socket)
    const claims = findCollector(collector.name)?.claims;
    if (!claims) return undefined;
    const read =
      claims.kind === "http"
        ? (h: string) => readHostClaims(this.opts.outputs, collector.name, claims, h, collector.config)
        : (h: string) => {
            const shell = this.opts.shell(h);
            return claims.read((cmd, args, opts) => shell.run(cmd, [...args], opts));
          };
    // every collector host in collector-1, collector-2 order; a host that fails keeps its error (sumClaims)
    const results = await Promise.allSettled(this.collectorRoles.map(read));
    return sumClaims(collector.name, this.collectorRoles, results);
  }

  /**
   * As on the local platform, the sink's CPU cap is lifted once the measurement is over, so that the ledger's
   * full-table queries take seconds, not minutes on a quarter core: `docker update` (over SSH on azure) to a quota of
   * period × the CPUs the container sees (nproc), i.e. no cap. Best effort: a failure is noted, never the run's error.
   */
  async endMeasurement(): Promise<Record<string, string[]>> {
    const applied = this.limits[SINK]?.applied;
    if (applied?.cfsQuotaUs === undefined) return {};
    const shell = this.opts.shell(SINK);
    const period = Number(applied.cfsPeriodUs ?? 100_000);
    try {
      const quota = period * Number((await shell.run("nproc", [])).trim());
      if (!Number.isInteger(quota) || quota <= 0) throw new Error(`nproc gave no CPU count`);
      await shell.engine(["update", `--cpu-period=${period}`, `--cpu-quota=${quota}`, shell.container]);
      return {
        [SINK]: [`CPU cap lifted after the drain, for the ledger queries (cpu-quota ${quota}/${period})`],
      };
    } catch (err) {
      return {
        [SINK]: [
          `CPU cap NOT lifted after the drain (ledger queries ran capped): ${(err as Error).message.split("\n")[0]}`,
        ],
      };
    }
  }

  /** OOM kills in each host's container since startSink (./oom.ts): docker inspect State.OOMKilled and the cgroup's oom_kill counter. */
  async oomKills(): Promise<OomKill[]> {
    const found = await Promise.all(
      [...this.oomBaseline.keys()].map((r) => {
        const memory = this.limits[r]?.applied.memoryLimitBytes;
        const b = this.oomBaseline.get(r);
        return checkOom(
          this.opts.shell(r),
          b?.count ?? null,
          typeof memory === "number" ? memory : null,
          b?.since,
        );
      }),
    );
    return found.filter((k): k is OomKill => k !== null);
  }

  /**
   * Exhaustion in each component container (harness/runner/exhaustion.ts): the last LOG_LINES lines of `docker logs`
   * (stdout and stderr), and `df -Pk` of the component's data directory inside it (a volume with less than 1 % or
   * 1 MiB free is named full, and is the evidence of an ENOSPC line). Docker only; never throws.
   */
  async exhaustion(): Promise<Exhaustion[]> {
    if (this.opts.outputs.platform !== "docker") return [];
    const out: Exhaustion[] = [];
    for (const role of this.roles.filter((r) => r !== LOADGEN)) {
      const h = this.opts.outputs.hosts[role]!;
      const shell = this.opts.shell(role);
      const logs = await execa(
        process.env.INGESTBENCH_DOCKER ?? "docker",
        ["logs", "--tail", String(LOG_LINES), h.container],
        { all: true, reject: false, timeout: 30_000 },
      ).then(
        (r) => r.all ?? "",
        () => "",
      );
      const found = exhaustionIn(role, [{ source: `docker logs ${h.container}`, text: logs }]);
      const dir = catalog[h.component]?.dataDir;
      const df = dir
        ? parseDfLine(
            (await shell.run("sh", ["-c", `df -Pk "$1" | tail -n 1`, "sh", dir]).catch(() => "")).trim(),
          )
        : null;
      if (df) {
        const line = `df of ${dir} in ${h.container}: ${df.usedKiB} of ${df.totalKiB} KiB used, ${df.availKiB} KiB free (${df.filesystem})`;
        if (df.totalKiB > 0 && (df.availKiB < df.totalKiB / 100 || df.availKiB < 1024))
          found.push({ kind: "disk-full", host: role, source: "df of the data volume", line });
        for (const e of found) if (e.kind === "disk-full") e.evidence ??= line;
      }
      out.push(...found);
    }
    return dedupeExhaustion(out);
  }

  /** docker stacks: the fault steps' target (./docker-steps.ts); undefined on azure (refused before deploying) */
  get steps(): (() => StepTarget) | undefined {
    const { outputs, shaperImage } = this.opts;
    if (outputs.platform !== "docker" || shaperImage === undefined) return undefined;
    return () =>
      dockerStepTarget({
        outputs,
        shell: this.opts.shell,
        roles: this.roles,
        shaperImage,
        limits: this.limits,
        onDisturb: (h) => this.disturbed.add(h),
        readyPort: (h) => this.readyPort(h),
      });
  }

  async teardown(): Promise<string[]> {
    // generators stop on stdin EOF (the run closes their stdin); the components stay up for the next cell and are
    // destroyed with the stack
    return [];
  }
}

/** The component's data endpoint as this machine reaches it. @throws ProvisioningError E_UNREACHABLE when unknown */
function fromHarness(outputs: StackOutputs, ep: ComponentEndpoints): Endpoint {
  const at = harnessAddress(outputs, ep);
  if (at) return at;
  throw new ProvisioningError(
    "E_UNREACHABLE",
    `stack ${outputs.stack}: ${ep.host}'s port ${ep.data?.port ?? "(none)"} is not reachable from this machine (no published port in the outputs); the verifier counts from here`,
  );
}
