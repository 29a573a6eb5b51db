/**
 * Where the project's own OpenSearch build is (./launcher/, built by scripts/build-opensearch.sh): the cache entry
 * `opensearch-launcher/<key>/bin/opensearch` (core/cache.ts), `<key>` computed here exactly as the script does, so a
 * change to the pom or the sources is a new entry and an old build is never run for a new recipe.
 */
import { createHash } from "node:crypto";
import { accessSync, constants, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheEntry } from "../../../core/cache.ts";

/** The launcher's Maven project (pom.xml, bin/opensearch, src/). */
export const LAUNCHER_DIR = fileURLToPath(new URL("./launcher/", import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : [],
  );
}

/**
 * The build's cache key: the first 32 hex digits of the sha256 over `sha256sum` lines ("<hex>  <path>\n", paths
 * relative to launcher/, sorted bytewise) of pom.xml, bin/ and src/ — scripts/build-opensearch.sh's `key`.
 */
export function launcherKey(dir: string = LAUNCHER_DIR): string {
  const paths = [join(dir, "pom.xml"), ...files(join(dir, "bin")), ...files(join(dir, "src"))]
    .map((p) => relative(dir, p))
    .sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : Buffer.from(a) > Buffer.from(b) ? 1 : 0));
  const lines = paths
    .map(
      (p) =>
        `${createHash("sha256")
          .update(readFileSync(join(dir, p)))
          .digest("hex")}  ${p}\n`,
    )
    .join("");
  return createHash("sha256").update(lines).digest("hex").slice(0, 32);
}

/** The built launcher's bin/opensearch, or null when scripts/build-opensearch.sh has not built this recipe here. */
export function builtLauncher(env: NodeJS.ProcessEnv = process.env): string | null {
  const entry = cacheEntry("opensearch-launcher", launcherKey(), env);
  if (entry === null) return null;
  const bin = join(entry, "bin", "opensearch");
  try {
    accessSync(bin, constants.X_OK);
    return bin;
  } catch {
    return null;
  }
}
