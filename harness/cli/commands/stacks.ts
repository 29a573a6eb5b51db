/**
 * `ingestbench stacks [--json]`: list the stacks in stacks/ with their platform and each host's requested limits
 * (azure: its VM size too). A broken stack file is reported, the others listed, and the exit code is 2.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import { listStacks, loadPulumiStack, loadStack } from "../../../infra/stack/schema.ts";
import { EXIT, type CommandModule } from "../context.ts";

/** One stack as `stacks --json` prints it: a valid one with its hosts, or a broken one with its error. */
export type StackEntry =
  | { name: string; ok: true; platform: string; hosts: Array<{ name: string; vmSize: string | null; requested: Record<string, unknown> }> }
  | { name: string; ok: false; error: string };

/** Every stack of `stacksDir`, in name order. Only IngestbenchErrors make a stack broken; others propagate. */
export function stackEntries(stacksDir: string): StackEntry[] {
  return listStacks(stacksDir).map((name): StackEntry => {
    try {
      const s = loadStack(name, stacksDir);
      // an azure host's hardware is its VM size (with the caps in its stack file on top)
      const vmSizes = s.platform === "azure" ? loadPulumiStack(name, stacksDir).platform.azure?.vmSizes ?? {} : {};
      return { name, ok: true, platform: s.platform, hosts: Object.values(s.hosts).map((h) => ({ name: h.name, vmSize: vmSizes[h.name] ?? null, requested: h.requested })) };
    } catch (err) {
      if (!(err instanceof IngestbenchError)) throw err;
      return { name, ok: false, error: err.message };
    }
  });
}

export const registerStacks: CommandModule = (program, ctx) => {
  program.command("stacks")
    .description("List the stacks in stacks/ with their platform and host limits (azure: each host's VM size too); a broken stack file is reported, the others listed, and the exit code is 2.")
    .option("--json", "print one JSON array on stdout: per stack { name, ok, platform, hosts: [{ name, vmSize, requested }] } or { name, ok: false, error }")
    .action(ctx.action((flags: { json?: boolean }) => {
      const entries = stackEntries(ctx.stacksDir);
      if (flags.json) {
        ctx.printJson(entries);
      } else {
        for (const e of entries) {
          if (e.ok) ctx.print(`${e.name} (${e.platform}): ${e.hosts.map((h) => `${h.name}${h.vmSize ? ` ${h.vmSize}` : ""} ${JSON.stringify(h.requested)}`).join("; ")}`);
          else ctx.print(`${e.name}: INVALID (${e.error.split("\n")[0]})`);
        }
      }
      return entries.every((e) => e.ok) ? EXIT.ok : EXIT.configuration;
    }));
};
