/**
 * Garbage collection of Pulumi stacks: destroy the project's docker/azure stacks whose deployment is past its
 * expiry, so that a killed `ingestbench bench` never leaves VMs running for long.
 *
 * A stack's expiry is `ingestbench:expiry` of its config (default 4 h, infra/stack/schema.ts DEFAULT_EXPIRY_MS),
 * counted from its last update (`lastUpdate` of `pulumi stack ls --json`): every `up` restarts it, which the
 * harness does per cell, and DIY backends have no stack tags to hold a creation time. Stacks being updated, never
 * updated, or holding no resources are kept.
 */
import type { ConfigMap, LocalWorkspace, StackSummary } from "@pulumi/pulumi/automation/index.js";
import { DEFAULT_EXPIRY_MS } from "../../infra/stack/schema.ts";
import { parseDuration } from "../../core/units.ts";
import { ProvisioningError } from "../../core/errors.ts";
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
  const keep = (reason: string, expiresAt: string | null = null): StackVerdict => ({ name: summary.name, expired: false, expiresAt, reason });
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
  const span = raw === undefined ? `default expiry ${DEFAULT_EXPIRY_MS / 3_600_000}h` : `ingestbench:expiry ${raw}`;
  return last + expiryMs <= nowMs
    ? { name: summary.name, expired: true, expiresAt, reason: `last update ${summary.lastUpdate} + ${span} is past` }
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
