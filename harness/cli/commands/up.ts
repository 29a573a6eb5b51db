/**
 * `ingestbench up --stack S [--scenario F [--cell C]] [--json] [--lock-wait D]`: deploy a docker or azure stack and
 * leave it up (deployStack, harness/provision/deployed.ts, holding the stack's lock meanwhile); prints its outputs, as
 * JSON with --json.
 */
import { deployStack, describeOutputs } from "../../provision/deployed.ts";
import { lockWaitMs } from "../../runner/drive.ts";
import type { CommandModule } from "../context.ts";

interface UpFlags {
  stack: string;
  scenario?: string;
  cell?: string;
  json?: boolean;
  quiet?: boolean;
  lockWait?: string;
}

export const registerUp: CommandModule = (program, ctx) => {
  program
    .command("up")
    .summary("Deploy a docker or azure stack and leave it up")
    .description(
      "Deploy a docker or azure stack with Pulumi and leave it up; print its hosts, applied limits and endpoints. Ctrl-C or a failed deployment destroys what was created. More: docs/deployed-stacks.md.",
    )
    .requiredOption("-s, --stack <name>", "stack name (stacks/Pulumi.<name>.yaml), e.g. docker-4c4g")
    .option("--scenario <file>", "deploy the components of this scenario's cell")
    .option("--cell <id>", "the cell of --scenario, e.g. batch=8000 (default: the first)")
    .option("--json", "print the outputs as JSON (only that on stdout)")
    .option("-q, --quiet", "no Pulumi progress output")
    .option(
      "--lock-wait <d>",
      "when a bench, up or down holds the stack, wait this long for it (e.g. 10m) instead of refusing (default: INGESTBENCH_LOCK_WAIT, else 0)",
    )
    .action(
      ctx.action(async (flags: UpFlags) =>
        ctx.interruptible(async (signal) => {
          const outputs = await deployStack({
            stack: flags.stack,
            projectRoot: ctx.projectRoot,
            scenario: flags.scenario,
            cell: flags.cell,
            signal,
            lockWaitMs: lockWaitMs(flags.lockWait),
            notice: (t) => void ctx.stderr.write(t),
            ...(flags.quiet ? {} : { onOutput: (t: string) => void ctx.stderr.write(t) }),
          });
          if (flags.json) ctx.printJson(outputs);
          else ctx.print(describeOutputs(outputs));
        }),
      ),
    );
};
