/**
 * Garbage collection of Pulumi stacks: destroy the project's docker/azure stacks whose deployment is past its
 * expiry, so that a killed `ingestbench bench` never leaves VMs running for long.
 *
 * A stack's expiry is `ingestbench:expiry` of its config (default 4 h, infra/stack/schema.ts DEFAULT_EXPIRY_MS),
 * counted from its last update (`lastUpdate` of `pulumi stack ls --json`): every `up` restarts it, which the
 * harness does per cell, and DIY backends have no stack tags to hold a creation time. Stacks being updated, never
 * updated, or holding no resources are kept.
 *
 * Before that, collectDeadDeployments removes what a killed harness left: the deployments it registered
 * (./deployments.ts) are destroyed and their docker resources swept by label (infra/docker/gc.ts), without waiting
 * for the expiry.
 */
import type { ConfigMap, LocalWorkspace, StackSummary } from "@pulumi/pulumi/automation/index.js";
import { DEFAULT_EXPIRY_MS } from "../../infra/stack/schema.ts";
import { parseDuration } from "../../core/units.ts";
import { ProvisioningError } from "../../core/errors.ts";
import fs from "node:fs/promises";
import {
  dockerClient,
  engineAnswers,
  labelledStacks,
  stackLabel,
  sweepByLabel,
  type DockerSweep,
} from "../../infra/docker/gc.ts";
import { markInterrupted } from "../../infra/local/gc.ts";
import { deploymentDir, listDeployments } from "./deployments.ts";
import { openWorkspace, PulumiProvisioner, type ProvisionerOptions } from "./provisioner.ts";

/** The gc verdict on one stack. */
export interface StackVerdict {
  name: string;
  expired: boolean;
  /** ISO time the stack expires(d) at, null when unknown */
  expiresAt: string | null;
  /** why it is kept or collected */
  reason: string;
}

/** What collectExpiredStacks found and did. */
export interface PulumiGcReport {
  /** set when the Pulumi part did not run (e.g. no Pulumi CLI), with the reason */
  skipped?: string;
  dryRun: boolean;
  /** every stack of the project with its verdict */
  stacks: StackVerdict[];
  /** stacks destroyed (empty under dry-run) */
  destroyed: string[];
  errors: string[];
}

/**
 * The verdict on one stack at time `nowMs` (ms since the epoch).
 * @param summary an entry of `pulumi stack ls --json` (automation StackSummary)
 * @param config the stack's config (`pulumi config --show-secrets --json`), for `ingestbench:expiry`
 */
export function stackVerdict(summary: StackSummary, config: ConfigMap, nowMs: number): StackVerdict {
  const keep = (reason: string, expiresAt: string | null = null): StackVerdict => ({
    name: summary.name,
    expired: false,
    expiresAt,
    reason,
  });
  if (summary.updateInProgress) return keep("an update is in progress");
  if (summary.resourceCount === 0) return keep("no resources deployed");
  if (!summary.lastUpdate) return keep("never updated");
  const last = Date.parse(summary.lastUpdate);
  if (Number.isNaN(last)) return keep(`unreadable lastUpdate ${JSON.stringify(summary.lastUpdate)}`);
  const raw = config["ingestbench:expiry"]?.value;
  let expiryMs = DEFAULT_EXPIRY_MS;
  if (raw !== undefined) {
    try {
      expiryMs = parseDuration(raw);
    } catch (err) {
      return keep(`ingestbench:expiry ${JSON.stringify(raw)} is not a duration: ${(err as Error).message}`);
    }
  }
  const expiresAt = new Date(last + expiryMs).toISOString();
  const span =
    raw === undefined ? `default expiry ${DEFAULT_EXPIRY_MS / 3_600_000}h` : `ingestbench:expiry ${raw}`;
  return last + expiryMs <= nowMs
    ? {
        name: summary.name,
        expired: true,
        expiresAt,
        reason: `last update ${summary.lastUpdate} + ${span} is past`,
      }
    : keep(`last update ${summary.lastUpdate} + ${span}: not expired`, expiresAt);
}

/**
 * List the project's stacks and destroy the expired ones (or only list them with `dryRun`). Without a Pulumi CLI
 * the report says it was skipped and why; other failures are collected in `errors`, never thrown.
 */
export async function collectExpiredStacks(
  opts: ProvisionerOptions & { dryRun?: boolean; nowMs?: number },
): Promise<PulumiGcReport> {
  const report: PulumiGcReport = { dryRun: Boolean(opts.dryRun), stacks: [], destroyed: [], errors: [] };
  let ws: LocalWorkspace;
  try {
    ws = await openWorkspace(opts);
  } catch (err) {
    if (err instanceof ProvisioningError && err.code === "E_PULUMI_CLI") {
      report.skipped = `Pulumi stacks not collected: ${err.message}`;
      return report;
    }
    report.errors.push((err as Error).message);
    return report;
  }
  let summaries: StackSummary[];
  try {
    summaries = await ws.listStacks();
  } catch (err) {
    report.errors.push(`pulumi stack ls failed: ${(err as Error).message}`);
    return report;
  }
  const now = opts.nowMs ?? Date.now();
  for (const summary of summaries) {
    let verdict: StackVerdict;
    try {
      verdict = stackVerdict(summary, await ws.getAllConfig(summary.name), now);
    } catch (err) {
      report.errors.push(`stack ${summary.name}: reading its config failed: ${(err as Error).message}`);
      continue;
    }
    report.stacks.push(verdict);
    if (!verdict.expired || opts.dryRun) continue;
    try {
      const p = await PulumiProvisioner.inWorkspace(ws, summary.name, opts, "select");
      await p.destroy();
      report.destroyed.push(summary.name);
    } catch (err) {
      report.errors.push((err as Error).message);
    }
  }
  return report;
}

/** What gc did with one deployment whose owner died (harness/provision/deployments.ts). */
export interface DeadDeployment {
  stack: string;
  platform: string;
  ownerPid: number;
  command: string;
  /** `pulumi destroy` of the stack's state succeeded (false: no CLI, no such stack, or it failed: see notes/errors) */
  destroyed: boolean;
  /** what the label sweep of the engine removed (docker stacks; after the destroy, whatever it left) */
  removed: DockerSweep | null;
  /** run records marked interrupted */
  records: string[];
  notes: string[];
}

/** What collectDeadDeployments found and did. */
export interface DeploymentGcReport {
  dryRun: boolean;
  /** deployments whose owner is gone (or, with includeLive, every one) */
  collected: DeadDeployment[];
  /** deployments left alone: their owner runs */
  live: Array<{ stack: string; ownerPid: number; command: string }>;
  /** docker stacks on the engine with no registry whose containers are past their `ingestbench.expiry-seconds` */
  expired: Array<{ stack: string; createdAt: string; removed: DockerSweep }>;
  /** set when the engine (DOCKER_HOST) does not answer: nothing there was swept */
  engineSkipped?: string;
  errors: string[];
}

const noSweep = (s: DockerSweep) =>
  s.containers.length + s.networks.length + s.volumes.length + s.images.length === 0;

/**
 * The leftovers of harness processes that died while they owned a deployment (SIGKILL during deploy, load or
 * drain): for each deployment registry whose owner is gone, `pulumi destroy` of its stack (a stale lock of the
 * killed update is cancelled first), then every container, network, volume and dangling built image labelled
 * with the stack on the engine the owner used, then its run records marked interrupted and the registry removed.
 * Docker stacks on the current engine without any registry are swept too once their containers are older than
 * their `ingestbench.expiry-seconds` label. Never throws; failures are in `errors` (the registry is kept for a
 * later gc).
 */
export async function collectDeadDeployments(
  opts: ProvisionerOptions & { dryRun?: boolean; includeLive?: boolean; nowMs?: number },
): Promise<DeploymentGcReport> {
  const report: DeploymentGcReport = {
    dryRun: Boolean(opts.dryRun),
    collected: [],
    live: [],
    expired: [],
    errors: [],
  };
  const env = opts.env ?? process.env;
  let entries: Awaited<ReturnType<typeof listDeployments>> = [];
  try {
    entries = await listDeployments();
  } catch (err) {
    report.errors.push(`reading ${deploymentDir()}: ${(err as Error).message}`);
  }
  let ws: LocalWorkspace | null | undefined; // undefined: not opened yet; null: no Pulumi CLI
  const workspace = async (notes: string[]): Promise<LocalWorkspace | null> => {
    if (ws !== undefined) return ws;
    try {
      ws = await openWorkspace(opts);
    } catch (err) {
      ws = null;
      notes.push(`Pulumi state not destroyed: ${(err as Error).message.split("\n")[0]}`);
    }
    return ws;
  };
  for (const { file, registry: reg, alive } of entries) {
    if (alive && !opts.includeLive) {
      report.live.push({ stack: reg.stack, ownerPid: reg.ownerPid, command: reg.command });
      continue;
    }
    const dead: DeadDeployment = {
      stack: reg.stack,
      platform: reg.platform,
      ownerPid: reg.ownerPid,
      command: reg.command,
      destroyed: false,
      removed: null,
      records: [],
      notes: [],
    };
    report.collected.push(dead);
    if (opts.dryRun) continue;
    const before = report.errors.length;
    const w = await workspace(dead.notes);
    if (w) {
      try {
        const p = await PulumiProvisioner.inWorkspace(w, reg.stack, opts, "select");
        await p.destroy({ cancelStaleLock: true });
        dead.destroyed = true;
      } catch (err) {
        if (err instanceof ProvisioningError && err.code === "E_PULUMI_STACK")
          dead.notes.push(`no Pulumi stack ${reg.stack} (killed before it was created)`);
        else report.errors.push(`stack ${reg.stack}: ${(err as Error).message.split("\n")[0]}`);
      }
    }
    if (reg.platform === "docker") {
      const docker = await dockerClient({
        ...env,
        ...(reg.dockerHost ? { DOCKER_HOST: reg.dockerHost } : {}),
      });
      const why = await engineAnswers(docker);
      if (why) {
        report.errors.push(
          `stack ${reg.stack}: the Docker engine at ${reg.dockerHost ?? "the default socket"} does not answer (${why}); its containers were not swept`,
        );
      } else {
        dead.removed = await sweepByLabel(docker, stackLabel(reg.stack), { danglingImages: true });
        report.errors.push(...dead.removed.errors.map((e) => `stack ${reg.stack}: ${e}`));
      }
    }
    for (const rec of reg.resultRecords) if (await markInterrupted(rec, reg.ownerPid)) dead.records.push(rec);
    if (report.errors.length === before) await fs.rm(file, { force: true });
  }

  // docker stacks nobody registered (another TMPDIR, a lost registry) past their label expiry
  const docker = await dockerClient(env);
  const why = await engineAnswers(docker);
  if (why) {
    report.engineSkipped =
      `no Docker engine answers at ${env.DOCKER_HOST ?? "the default socket"} (${why}), so expired docker stacks were not looked for` +
      (env.DOCKER_HOST
        ? ""
        : `; if ingestbench's own engine runs, \`eval "$(bash scripts/docker-engine.sh env)"\` points DOCKER_HOST at it`);
    return report;
  }
  const registered = new Set(entries.map((e) => e.registry.stack));
  const now = opts.nowMs ?? Date.now();
  try {
    for (const s of await labelledStacks(docker)) {
      if (registered.has(s.stack) || s.expiryMs === null || s.createdMs + s.expiryMs > now) continue;
      const removed = await sweepByLabel(docker, stackLabel(s.stack), {
        dryRun: Boolean(opts.dryRun),
        danglingImages: true,
      });
      report.errors.push(...removed.errors.map((e) => `stack ${s.stack}: ${e}`));
      if (!noSweep(removed))
        report.expired.push({ stack: s.stack, createdAt: new Date(s.createdMs).toISOString(), removed });
    }
  } catch (err) {
    report.errors.push(`listing labelled containers: ${(err as Error).message.split("\n")[0]}`);
  }
  return report;
}
