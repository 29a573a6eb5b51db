/**
 * `ingestbench stacks [--json]`: list the stacks in stacks/ with their platform and each host's requested limits
 * (azure: its VM size too). A broken stack file is reported, the others listed, and the exit code is 2.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import { listStacks, loadPulumiStack, loadStack } from "../../../infra/stack/schema.ts";
import type { StackSpec } from "../../../core/limits.ts";
import { thisMachine } from "../../../infra/local/platform.ts";
import { stackCapsFit } from "../../results/caps.ts";
import { EXIT, type CommandModule } from "../context.ts";

/** How a stack's caps fit this machine, as `stacks` and `validate` show it (local and docker stacks). */
export interface StackFit {
  /** every host of the stack running at once (a collector host only runs for scenarios with a collector) */
  oversubscribed: boolean;
  reasons: string[];
  /** per host, its caps at or above this machine: "uncapped (≥ machine)" */
  uncapped: Record<string, string[]>;
  machine: { cores: number; memoryBytes: number };
}

/**
 * The caps of all of a stack's hosts against this machine (harness/results/caps.ts stackCapsFit); undefined for
 * azure stacks, whose hosts are VMs of their own. A flag, not an error: such a stack still runs, its runs flagged
 * `oversubscribed` (docs/decisions/0008-oversubscribed-stacks-are-flagged.md).
 */
export function stackFit(stack: StackSpec): StackFit | undefined {
  const fit = stackCapsFit(stack, Object.keys(stack.hosts), thisMachine());
  return (
    fit && {
      oversubscribed: fit.oversubscribed,
      reasons: fit.reasons,
      uncapped: fit.uncapped,
      machine: fit.machine,
    }
  );
}

/** The fit as one line of text ("" when the caps fit and none is at or above the machine). */
export function stackFitText(fit: StackFit | undefined): string {
  if (!fit) return "";
  const parts: string[] = [];
  const m = `${fit.machine.cores} cores, ${(fit.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB`;
  if (fit.oversubscribed) parts.push(`oversubscribed on this machine (${m}): ${fit.reasons.join("; ")}`);
  for (const [h, us] of Object.entries(fit.uncapped))
    parts.push(`${h} uncapped (≥ machine): ${us.join("; ")}`);
  return parts.join("; ");
}

/** One stack as `stacks --json` prints it: a valid one with its hosts, or a broken one with its error. */
export type StackEntry =
  | {
      name: string;
      ok: true;
      platform: string;
      hosts: Array<{ name: string; vmSize: string | null; requested: Record<string, unknown> }>;
      fit?: StackFit;
    }
  | { name: string; ok: false; error: string };

/** Every stack of `stacksDir`, in name order. Only IngestbenchErrors make a stack broken; others propagate. */
export function stackEntries(stacksDir: string): StackEntry[] {
  return listStacks(stacksDir).map((name): StackEntry => {
    try {
      const s = loadStack(name, stacksDir);
      // an azure host's hardware is its VM size (with the caps in its stack file on top)
      const vmSizes =
        s.platform === "azure" ? (loadPulumiStack(name, stacksDir).platform.azure?.vmSizes ?? {}) : {};
      const fit = stackFit(s);
      return {
        name,
        ok: true,
        platform: s.platform,
        hosts: Object.values(s.hosts).map((h) => ({
          name: h.name,
          vmSize: vmSizes[h.name] ?? null,
          requested: h.requested,
        })),
        ...(fit ? { fit } : {}),
      };
    } catch (err) {
      if (!(err instanceof IngestbenchError)) throw err;
      return { name, ok: false, error: err.message };
    }
  });
}

export const registerStacks: CommandModule = (program, ctx) => {
  program
    .command("stacks")
    .summary("List the stacks and their hosts' caps")
    .description(
      "List the stacks in stacks/ as a table: each host's CPU, memory, disk and network caps (azure: its VM size). A broken stack file is reported, the others listed, and the exit code is 2.",
    )
    .option("--json", "print one JSON array on stdout (its fields: docs/commands.md)")
    .action(
      ctx.action((flags: { json?: boolean }) => {
        const entries = stackEntries(ctx.stacksDir);
        if (flags.json) {
          ctx.printJson(entries);
        } else {
          for (const e of entries) {
            if (e.ok) {
              const fit = stackFitText(e.fit);
              ctx.print(
                `${e.name} (${e.platform}): ${e.hosts.map((h) => `${h.name}${h.vmSize ? ` ${h.vmSize}` : ""} ${JSON.stringify(h.requested)}`).join("; ")}${fit ? `\n  !! ${fit}` : ""}`,
              );
            } else ctx.print(`${e.name}: INVALID (${e.error.split("\n")[0]})`);
          }
        }
        return entries.every((e) => e.ok) ? EXIT.ok : EXIT.configuration;
      }),
    );
};
