/**
 * What a deployed container runs: the plugin image's version command (core/catalog.ts `versionCommand`, e.g.
 * plugins/sinks/postgres/image.ts) run inside it, the first `x.y[.z]` of its output taken as the running version
 * (GridDB: the installed package's version, which its server runs from). An image without such a command would record its image tag, marked "not probed": the check
 * then compares the pin with the tag, which says what was asked for, not what runs.
 */
import { quote } from "shell-quote";
import { pluginNamed } from "../../plugins/registry.ts";
import type { HostShell } from "./shell.ts";

/** First `major.minor[.patch]` in a version command's output ("syslog-ng 3 (3.38.1)" → "3.38.1"), else null. */
export function versionIn(output: string): string | null {
  return /\d+\.\d+(?:\.\d+)?/.exec(output)?.[0] ?? null;
}

// the pin rule of deployed components lives with the catalog (the pair check before provisioning uses it too)
export { matchesImagePin } from "../../core/catalog.ts";

/**
 * The running version of `component` in the container behind `shell`.
 * @param component a sink or collector plugin's name (plugins/registry.ts)
 * @param imageTag the deployed image's tag (from the stack outputs), used when the image has no version command
 * @param command the deployed image's own version command (stack outputs `versions.<c>.versionCommand`, e.g. a
 *        Debian-built image's); default the plugin image's
 * @returns e.g. "3.38.1", or "5.6.0 (image tag, not probed)"
 * @throws ConfigurationError E_PLUGIN for a name that is no plugin's; ProvisioningError E_REMOTE_EXEC when the
 *         command fails. An output without a version is returned as its first line (at most 80 characters), so that
 *         the pin check names what the container said
 */
export async function probeVersion(
  shell: HostShell,
  component: string,
  imageTag: string,
  command: readonly string[] | null = pluginNamed(component).image?.versionCommand ?? null,
): Promise<string> {
  if (command === null) return `${imageTag} (image tag, not probed)`;
  const [bin, ...args] = command;
  // some CLIs print their version on stderr (tc -V, old JVM tools): both streams are read
  const out = await shell.run("sh", ["-c", `${quote([bin!, ...args])} 2>&1`], { timeoutMs: 60_000 });
  return versionIn(out) ?? (out.trim().split("\n")[0]?.slice(0, 80) || "(no output)");
}
