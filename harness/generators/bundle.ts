/**
 * The generator program as one file: harness/generators/child.ts and everything it imports, bundled by esbuild into
 * one ESM file that plain `node` (20) runs — no tsx, no node_modules beside it. A deployed stack's loadgen container
 * gets it uploaded (harness/remote/bundle.ts installGenerator); on this machine (the local platform's loadgen host)
 * it is kept in the cache directory and started from there (localGeneratorProgram), because `node --import tsx
 * child.ts` loads ~290 modules through tsx's loader first, several times the CPU the bundled
 * file takes before the child says ready (docs/measurements.md, "Figures moved from code comments").
 *
 * The child's protocol does not change (JSON lines ready/progress/final/error on stdout; stops on SIGTERM, SIGINT
 * or stdin EOF; see child.ts), so ./process.ts's GeneratorProcess drives the bundled child as it drives child.ts.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

import { buildBundle, cachedBundleFile, type Bundle } from "../../core/bundle-cache.mjs";
import { cacheRoot } from "../../core/cache.ts";
import { ProvisioningError } from "../../core/errors.ts";
import type { GeneratorProgram } from "./process.ts";

/** The bundled child: its code, SHA-256, size and inputs (core/bundle-cache.mjs Bundle; built with no source map). */
export type GeneratorBundle = Bundle;

/** Optional native add-ons some dependencies `require` lazily (pg: `pg.native`); left out of the bundle, never
 *  loaded by the generators. */
export const OPTIONAL_EXTERNALS: readonly string[] = ["pg-native"];

const ENTRY = fileURLToPath(new URL("./child.ts", import.meta.url));
/** esbuild's working directory: the project root, so the bundle's text and inputs do not depend on the cwd */
const ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));

/** CJS modules inside an ESM bundle call `require` for Node built-ins (pg, undici…); esbuild's shim uses a `require`
 *  in scope when there is one, so the bundle defines one (esbuild docs, "Bundling for node"). */
const REQUIRE_BANNER =
  'import { createRequire as __ibCreateRequire } from "node:module"; const require = __ibCreateRequire(import.meta.url);';

let cached: Promise<GeneratorBundle> | null = null;

/** esbuild (JS API) bundle of harness/generators/child.ts and all its imports, npm packages included, into one ESM
 *  file for node20 (no tsx, no node_modules needed on the host); cached per process. CJS deps that `require`
 *  built-ins need a createRequire banner; optional native deps (pg-native, …) external.
 *  @throws ProvisioningError "E_GENERATOR_BUNDLE" with esbuild's messages when the build fails */
export function bundleGenerator(): Promise<GeneratorBundle> {
  cached ??= buildBundle({
    root: ROOT,
    entry: ENTRY,
    external: [...OPTIONAL_EXTERNALS],
    banner: REQUIRE_BANNER,
  }).catch((err: unknown) => {
    throw new ProvisioningError(
      "E_GENERATOR_BUNDLE",
      `bundling ${ENTRY} for the loadgen host failed: ${(err as Error).message}`,
      { cause: err },
    );
  });
  cached.catch(() => {
    cached = null;
  }); // a failed build is retried by the next caller
  return cached;
}

/**
 * The bundled child in the cache directory `dir`: `generator-<sha256, 12 hex>.mjs`, reused while every file it was
 * built from is unchanged, else built again (bundleGenerator) and written atomically (core/bundle-cache.mjs, shared
 * with the CLI's own bundle). @returns the file's absolute path. @throws ProvisioningError E_GENERATOR_BUNDLE, or a
 * file system error when the directory cannot be written
 */
export function cachedGeneratorFile(dir: string): Promise<string> {
  return cachedBundleFile({ dir, name: "generator", root: ROOT, build: bundleGenerator });
}

let local: Promise<GeneratorProgram | undefined> | null = null;

/**
 * The program that runs the generators on this machine's loadgen host: `node <cache>/generator-<sha>.mjs` in the
 * project root (cachedGeneratorFile), once per process. Undefined when the cache is off (INGESTBENCH_CACHE_DIR=off)
 * or the bundle cannot be built or cached (a read-only home, no esbuild): the generators then run as
 * `node --import tsx harness/generators/child.ts` (./process.ts), which does the same, only slower to start.
 * Never throws.
 */
export function localGeneratorProgram(): Promise<GeneratorProgram | undefined> {
  const dir = cacheRoot(); // ingestbench's cache directory (core/cache.ts); null when it is off
  if (dir === null) return Promise.resolve(undefined);
  local ??= cachedGeneratorFile(dir).then(
    (file): GeneratorProgram => ({ command: process.execPath, args: [file], cwd: ROOT }),
    () => undefined,
  );
  return local;
}
