/**
 * Finding the Pulumi CLI. The Automation API (`@pulumi/pulumi/automation`) drives the `pulumi` binary: every
 * LocalWorkspace operation is a `pulumi ...` child process, and LocalWorkspace.create first runs `pulumi version`
 * and refuses a CLI older than the SDK's minimum (3.2.0-alpha for @pulumi/pulumi 3.248.0, automation/minimumVersion.js).
 * Without the binary the SDK fails with execa's bare "spawn pulumi ENOENT"; this module says what is missing instead.
 */
import path from "node:path";
import type { PulumiCommand } from "@pulumi/pulumi/automation/index.js";
import { automation } from "./automation.ts";
import { ProvisioningError } from "../../core/errors.ts";
import { findOnPath } from "../../core/which.ts";

/** Where the Pulumi CLI comes from (https://www.pulumi.com/docs/install/). */
export const PULUMI_INSTALL_HINT =
  "install it with `curl -fsSL https://get.pulumi.com | sh` (puts it in ~/.pulumi/bin; see https://www.pulumi.com/docs/install/), " +
  "then add ~/.pulumi/bin to PATH or open a new shell";

/**
 * The Pulumi CLI on `env.PATH`. @throws ProvisioningError E_PULUMI_CLI when there is none; the message says how to
 * install it
 */
export function requirePulumiCli(env: NodeJS.ProcessEnv = process.env): string {
  const found = findOnPath("pulumi", env.PATH);
  if (found !== null) return found;
  throw new ProvisioningError(
    "E_PULUMI_CLI",
    `the Pulumi CLI (\`pulumi\`) is not on PATH (${env.PATH ?? "PATH unset"}); docker and azure stacks are deployed ` +
      `through it by Pulumi's Automation API: ${PULUMI_INSTALL_HINT}`,
  );
}

/**
 * A PulumiCommand for the CLI found on `env.PATH`, version-checked by the SDK (`pulumi version`).
 *
 * A CLI at `<root>/bin/pulumi` (the installer's layout) is used by absolute path with `root`, so the SDK also puts
 * its directory first on the child's PATH (bundled plugins); any other location is run as `pulumi` from PATH.
 * @throws ProvisioningError E_PULUMI_CLI when no `pulumi` is on PATH (the message says how to install it), or
 *         when `pulumi version` fails or is below the SDK's minimum version.
 */
export async function pulumiCommand(env: NodeJS.ProcessEnv = process.env): Promise<PulumiCommand> {
  const found = requirePulumiCli(env);
  const dir = path.dirname(found);
  const { PulumiCommand } = await automation();
  try {
    return path.basename(dir) === "bin"
      ? await PulumiCommand.get({ root: path.dirname(dir) })
      : await PulumiCommand.get();
  } catch (err) {
    throw new ProvisioningError(
      "E_PULUMI_CLI",
      `the Pulumi CLI at ${found} is not usable: ${(err as Error).message.trim()}`,
      { cause: err },
    );
  }
}
