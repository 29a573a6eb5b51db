/**
 * `ingestbench down --stack S [--cancel] [--lock-wait D]`: destroy a docker or azure stack's resources (destroyStack,
 * harness/provision/deployed.ts, holding the stack's lock meanwhile).
 */
import { destroyStack } from "../../provision/deployed.ts";
import { lockWaitMs } from "../../runner/drive.ts";
import type { CommandModule } from "../context.ts";

export const registerDown: CommandModule = (program, ctx) => {
  program
    .command("down")
    .summary("Destroy a deployed stack")
    .description(
      "Destroy a docker or azure stack (pulumi destroy). --cancel first releases a lock left by a killed update (pulumi cancel): only when no update is running.",
    )
    .requiredOption("-s, --stack <name>", "stack name, e.g. docker-4c4g")
    .option("--cancel", "release a stale lock (pulumi cancel) before destroying")
    .option("-q, --quiet", "no Pulumi progress output")
    .option(
      "--lock-wait <d>",
      "when a bench or up holds the stack, wait this long for it (e.g. 10m) instead of refusing (default: INGESTBENCH_LOCK_WAIT, else 0)",
    )
    .action(
      ctx.action(async (flags: { stack: string; cancel?: boolean; quiet?: boolean; lockWait?: string }) => {
        const name = await destroyStack({
          stack: flags.stack,
          projectRoot: ctx.projectRoot,
          cancelStaleLock: Boolean(flags.cancel),
          lockWaitMs: lockWaitMs(flags.lockWait),
          notice: (t) => void ctx.stderr.write(t),
          ...(flags.quiet ? {} : { onOutput: (t: string) => void ctx.stderr.write(t) }),
        });
        ctx.print(`stack ${name}: destroyed`);
      }),
    );
};
