/**
 * The generator program for a remote loadgen host: the bundled child (../generators/bundle.ts: harness/generators/child.ts
 * and everything it imports in one ESM file that plain `node` (20) runs — no tsx, no node_modules on the host),
 * installed into the host's container through a HostShell, once per content hash.
 *
 * The child's protocol does not change (JSON lines ready/progress/final/error on stdout; stops on SIGTERM, SIGINT
 * or stdin EOF; see child.ts), so harness/generators/process.ts's GeneratorProcess drives a remote child as it
 * drives a local one.
 */
import { ProvisioningError } from "../../core/errors.ts";
import { bundleGenerator } from "../generators/bundle.ts";
import type { HostShell } from "./shell.ts";

export { bundleGenerator, OPTIONAL_EXTERNALS, type GeneratorBundle } from "../generators/bundle.ts";

/** Where the harness puts its files inside a loadgen container. */
export const REMOTE_ROOT = "/opt/ingestbench";

/** Upload the bundle to `${REMOTE_ROOT}/generator-<sha256 first 12>.mjs` on the host unless a `sha256sum` there
 *  already matches; return the program to launch a generator with: { command: "node", args: [thatFile] } (the spec
 *  JSON is appended as the last argument by the caller, as harness/generators/process.ts does for the local child).
 *  @throws ProvisioningError "E_REMOTE_EXEC" from the shell; "E_GENERATOR_BUNDLE" when the uploaded file's hash
 *  does not match afterwards */
export async function installGenerator(shell: HostShell): Promise<{ command: string; args: string[] }> {
  const bundle = await bundleGenerator();
  const file = `${REMOTE_ROOT}/generator-${bundle.sha256.slice(0, 12)}.mjs`;
  // prints nothing when the file is absent, so that a failing exec (no container, no shell) still throws
  const remoteSum = async (): Promise<string | undefined> =>
    (await shell.run("sh", ["-c", 'if [ -f "$1" ]; then sha256sum "$1"; fi', "sh", file]))
      .trim()
      .split(/\s+/)[0] || undefined;
  if ((await remoteSum()) !== bundle.sha256) {
    await shell.upload(file, bundle.code, 0o644);
    const after = await remoteSum();
    if (after !== bundle.sha256) {
      throw new ProvisioningError(
        "E_GENERATOR_BUNDLE",
        `${shell.describe}: ${file} has sha256 ${after ?? "(missing)"} after upload, expected ${bundle.sha256}`,
      );
    }
  }
  return { command: "node", args: [file] };
}
