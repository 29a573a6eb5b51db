/**
 * `ingestbench gc [--all] [--kill-live] [--dry-run] [--json]`: remove leftovers of killed runs (collectLeftovers,
 * infra/local/gc.ts), the stale stack locks of killed runs (collectStaleLocks, harness/runner/stack-lock.ts), the deployments of killed harness processes (collectDeadDeployments, harness/provision/gc.ts:
 * Pulumi destroy and a sweep of the Docker engine by label), then destroy the project's Pulumi stacks past their expiry (collectExpiredStacks,
 * harness/provision/gc.ts). Prints a short summary, or everything as JSON with --json; exit 3 when a Pulumi stack
 * could not be destroyed.
 */
import { collectLeftovers, type GcReport } from "../../../infra/local/gc.ts";
import {
  collectDeadDeployments,
  collectExpiredStacks,
  type DeploymentGcReport,
  type PulumiGcReport,
} from "../../provision/gc.ts";
import { collectStaleLocks, type LockGcReport } from "../../runner/stack-lock.ts";
import { EXIT, type CommandModule } from "../context.ts";

interface GcFlags {
  all?: boolean;
  killLive?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

/** The local part of `gc --json`: collectLeftovers' report with its errors as messages (with --dry-run, `dryRun: true`). */
export type LocalGcOutput = Omit<GcReport, "errors"> & { errors: string[] };

/**
 * What `gc --json` prints: the local part, the deployments of killed harness processes (`deployments`), the stale
 * stack locks removed (`locks`, harness/runner/stack-lock.ts) and the Pulumi report.
 */
export type GcOutput = LocalGcOutput & {
  deployments: DeploymentGcReport;
  locks: LockGcReport;
  pulumi: PulumiGcReport;
};

/** "2 container(s), 1 network(s)" of a docker sweep, or "nothing". */
function swept(
  s: { containers: string[]; networks: string[]; volumes: string[]; images: string[] } | null,
): string {
  if (!s) return "nothing swept";
  const parts = (
    [
      ["container(s)", s.containers],
      ["network(s)", s.networks],
      ["volume(s)", s.volumes],
      ["dangling image(s)", s.images],
    ] as const
  )
    .filter(([, l]) => l.length > 0)
    .map(([w, l]) => `${l.length} ${w}`);
  return parts.length ? parts.join(", ") : "nothing left on the engine";
}

/** The few lines `gc` prints without --json: what was removed, what was left alone, the errors. */
export function gcSummary(out: GcOutput): string {
  const lines: string[] = [];
  const kinds = (
    [
      ["run(s)", out.runs],
      ["network namespace(s)", out.netns],
      ["cgroup(s)", out.cgroups],
      ["temp dir(s)", out.dirs],
      ["mount(s)", out.mounts],
      ["registry file(s)", out.registries],
      ["owner marker(s)", out.markers],
    ] as const
  ).filter(([, list]) => list.length > 0);
  const counts = kinds.map(([what, list]) => `${list.length} ${what}`);
  // the processes go with their cgroups: named, not counted among what was removed
  const procs = out.processes?.length
    ? `  processes ${out.dryRun ? "that would be ended" : "ended"} with their cgroups: pid ${out.processes.join(", ")}`
    : null;
  if (out.dryRun) {
    // a dry run names every item it would remove, one line per kind
    lines.push(
      `local leftovers: ${counts.length ? `--dry-run: would remove ${counts.join(", ")} (nothing removed)` : "none"}`,
    );
    for (const [what, list] of kinds) lines.push(`  ${what}: ${list.join(", ")}`);
    if (procs) lines.push(procs);
    if (out.records.length) lines.push(`  would mark interrupted: ${out.records.join(", ")}`);
  } else {
    lines.push(`local leftovers: ${counts.length ? `removed ${counts.join(", ")}` : "none"}`);
    if (procs) lines.push(procs);
    if (out.records.length) lines.push(`  marked interrupted: ${out.records.join(", ")}`);
  }
  if (out.live.length)
    lines.push(`  left alone (owner alive; --kill-live removes them): ${out.live.join(", ")}`);
  for (const e of out.errors) lines.push(`  error: ${e}`);
  const d = out.deployments;
  if (d.collected.length === 0 && d.expired.length === 0)
    lines.push(
      `deployments of killed runs: none${d.live.length ? ` (${d.live.length} owned by running processes left alone)` : ""}`,
    );
  for (const c of d.collected) {
    lines.push(
      `deployment ${c.stack} of ${c.command} (pid ${c.ownerPid}, gone): ${d.dryRun ? "--dry-run: kept" : `${c.destroyed ? "pulumi destroy done; " : ""}${swept(c.removed)}${c.records.length ? `; marked interrupted: ${c.records.join(", ")}` : ""}`}`,
    );
    for (const n of c.notes) lines.push(`  ${n}`);
  }
  for (const e of d.expired)
    lines.push(
      `docker stack ${e.stack} (no registry, created ${e.createdAt}, past its expiry label): ${swept(e.removed)}`,
    );
  if (d.engineSkipped) lines.push(`docker engine: ${d.engineSkipped}`);
  for (const e of d.errors) lines.push(`  error: ${e}`);
  const locks = out.locks;
  if (locks.removed.length === 0)
    lines.push(
      `stack locks of killed runs: none${locks.live.length ? ` (${locks.live.length} held by running processes left alone)` : ""}`,
    );
  for (const l of locks.removed)
    lines.push(`stack lock ${l.stack} of ${l.holder}, gone: ${locks.dryRun ? "--dry-run: kept" : "removed"}`);
  const p = out.pulumi;
  if (p.skipped) {
    lines.push(`pulumi stacks: ${p.skipped.split("\n")[0]}`);
  } else {
    const expired = p.stacks.filter((s) => s.expired).map((s) => s.name);
    lines.push(
      `pulumi stacks: ${p.stacks.length} found, ${p.dryRun ? `${expired.length} past their expiry (--dry-run: kept)${expired.length ? `: ${expired.join(", ")}` : ""}` : `${p.destroyed.length} destroyed${p.destroyed.length ? `: ${p.destroyed.join(", ")}` : ""}`}`,
    );
  }
  for (const e of p.errors) lines.push(`  error: ${e}`);
  return lines.join("\n");
}

export const registerGc: CommandModule = (program, ctx) => {
  program
    .command("gc")
    .summary("Remove what killed runs left, and expired Pulumi stacks")
    .description(
      "Remove leftovers of killed runs (processes, cgroups, namespaces, mounts, temp directories, deployments, stack locks), then destroy Pulumi stacks past their ingestbench:expiry. Prints a short summary. More: docs/commands.md.",
    )
    .option(
      "--all",
      "also remove ownerless run directories younger than the 4 h expiry (runs whose owner is alive are still left alone)",
    )
    .option(
      "--kill-live",
      "also remove runs whose owner process is still alive: stops benchmarks running in other terminals",
    )
    .option(
      "--dry-run",
      "remove nothing: list what gc would remove (local leftovers item by item, deployments, stack locks, Pulumi stacks past their expiry)",
    )
    .option("--json", "print what was collected as one JSON object on stdout")
    .action(
      ctx.action(async (flags: GcFlags) => {
        const report = await collectLeftovers({
          all: Boolean(flags.all),
          includeLive: Boolean(flags.killLive),
          dryRun: Boolean(flags.dryRun),
        });
        const local: LocalGcOutput = { ...report, errors: report.errors.map((e) => e.message) };
        const deployments = await collectDeadDeployments({
          projectDir: ctx.projectRoot,
          dryRun: Boolean(flags.dryRun),
          includeLive: Boolean(flags.killLive),
        });
        const locks = await collectStaleLocks({ dryRun: Boolean(flags.dryRun) });
        const pulumi = await collectExpiredStacks({
          projectDir: ctx.projectRoot,
          dryRun: Boolean(flags.dryRun),
        });
        const out: GcOutput = { ...local, deployments, locks, pulumi };
        if (flags.json) ctx.printJson(out);
        else ctx.print(gcSummary(out));
        return pulumi.errors.length > 0 || deployments.errors.length > 0 ? EXIT.provisioning : EXIT.ok;
      }),
    );
};
