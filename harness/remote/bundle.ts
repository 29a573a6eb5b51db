/**
 * The generator program for a remote loadgen host: harness/generators/child.ts and everything it imports, bundled
 * by esbuild into one ESM file that plain `node` (20) runs — no tsx, no node_modules on the host — and installed
 * into the host's container through a HostShell, once per content hash.
 *
 * The child's protocol does not change (JSON lines ready/progress/final/error on stdout; stops on SIGTERM, SIGINT
 * or stdin EOF; see child.ts), so harness/generators/process.ts's GeneratorProcess drives a remote child as it
 * drives a local one.
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";

import { ProvisioningError } from "../../core/errors.ts";
import type { HostShell } from "./shell.ts";

/** Where the harness puts its files inside a loadgen container. */
export const REMOTE_ROOT = "/opt/ingestbench";

export interface GeneratorBundle {
  /** ESM source */
  code: string;
  /** hex SHA-256 of `code` as UTF-8 */
  sha256: string;
  /** UTF-8 length of `code`, bytes */
  bytes: number;
}

/** Optional native add-ons some dependencies `require` lazily (pg: `pg.native`); left out of the bundle, never
 *  loaded by the generators. */
export const OPTIONAL_EXTERNALS: readonly string[] = ["pg-native"];

const ENTRY = fileURLToPath(new URL("../generators/child.ts", import.meta.url));

/** CJS modules inside an ESM bundle call `require` for Node built-ins (pg, undici…); esbuild's shim uses a `require`
 *  in scope when there is one, so the bundle defines one (esbuild docs, "Bundling for node"). */
const REQUIRE_BANNER = 'import { createRequire as __ibCreateRequire } from "node:module"; const require = __ibCreateRequire(import.meta.url);';

let cached: Promise<GeneratorBundle> | null = null;

/** esbuild (JS API) bundle of harness/generators/child.ts and all its imports into one ESM file for node20 (no tsx,
 *  no node_modules needed on the host); cached per process. CJS deps that `require` built-ins need a
 *  createRequire banner; optional native deps (pg-native, …) external.
 *  @throws ProvisioningError "E_GENERATOR_BUNDLE" with esbuild's messages when the build fails */
export function bundleGenerator(): Promise<GeneratorBundle> {
  cached ??= (async () => {
    let code: string;
    try {
      const { build } = await import("esbuild");
      const result = await build({
        entryPoints: [ENTRY],
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        write: false,
        external: [...OPTIONAL_EXTERNALS],
        banner: { js: REQUIRE_BANNER },
        legalComments: "none",
        logLevel: "silent",
      });
      const out = result.outputFiles[0];
      if (!out) throw new Error("esbuild produced no output file");
      code = out.text;
    } catch (err) {
      throw new ProvisioningError("E_GENERATOR_BUNDLE", `bundling ${ENTRY} for the loadgen host failed: ${(err as Error).message}`, { cause: err });
    }
    const buf = Buffer.from(code, "utf8");
    return { code, sha256: createHash("sha256").update(buf).digest("hex"), bytes: buf.length };
  })();
  cached.catch(() => { cached = null; }); // a failed build is retried by the next caller
  return cached;
}

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
    (await shell.run("sh", ["-c", 'if [ -f "$1" ]; then sha256sum "$1"; fi', "sh", file])).trim().split(/\s+/)[0] || undefined;
  if ((await remoteSum()) !== bundle.sha256) {
    await shell.upload(file, bundle.code, 0o644);
    const after = await remoteSum();
    if (after !== bundle.sha256) {
      throw new ProvisioningError("E_GENERATOR_BUNDLE", `${shell.describe}: ${file} has sha256 ${after ?? "(missing)"} after upload, expected ${bundle.sha256}`);
    }
  }
  return { command: "node", args: [file] };
}
