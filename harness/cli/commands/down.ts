/**
 * `ingestbench down --stack S [--cancel]`: destroy a docker or azure stack's resources (destroyStack,
 * harness/provision/deployed.ts).
 */
import { destroyStack } from "../../provision/deployed.ts";
import type { CommandModule } from "../context.ts";

export const registerDown: CommandModule = (program, ctx) => {
  program.command("down")
    .description("Destroy a docker or azure stack's resources (pulumi destroy). --cancel first releases a lock left by a killed update (pulumi cancel): only when no update is running.")
    .requiredOption("-s, --stack <name>", "stack name, e.g. docker-4c4g")
    .option("--cancel", "release a stale lock (pulumi cancel) before destroying")
    .option("-q, --quiet", "no Pulumi progress output")
    .action(ctx.action(async (flags: { stack: string; cancel?: boolean; quiet?: boolean }) => {
      const name = await destroyStack({
        stack: flags.stack, projectRoot: ctx.projectRoot, cancelStaleLock: Boolean(flags.cancel),
        ...(flags.quiet ? {} : { onOutput: (t: string) => void ctx.stderr.write(t) }),
      });
      ctx.print(`stack ${name}: destroyed`);
    }));
};
