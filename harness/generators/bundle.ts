/**
 * The generator program as one file: harness/generators/child.ts and everything it imports, bundled by esbuild into
 * one ESM file that plain `node` (20) runs — no tsx, no node_modules beside it. A deployed stack's loadgen container
 * gets it uploaded (harness/remote/bundle.ts installGenerator); on this machine (the local platform's loadgen host)
 * it is kept in the cache directory and started from there (localGeneratorProgram), because `node --import tsx
 * child.ts` loads ~290 modules through tsx's loader first: on a 2-core AMD EPYC, kernel 6.18, 1.2 s of CPU before
 * the child says ready, the bundled file 0.26 s (`/usr/bin/time node …` of each, the machine busy).
 *
 * The child's protocol does not change (JSON lines ready/progress/final/error on stdout; stops on SIGTERM, SIGINT
 * or stdin EOF; see child.ts), so ./process.ts's GeneratorProcess drives the bundled child as it drives child.ts.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { cacheRoot } from "../../core/cache.ts";
import { ProvisioningError } from "../../core/errors.ts";
import type { GeneratorProgram } from "./process.ts";

export interface GeneratorBundle {
  /** ESM source */
  code: string;
  /** hex SHA-256 of `code` as UTF-8 */
  sha256: string;
  /** UTF-8 length of `code`, bytes */
  bytes: number;
  /** every file esbuild read for it, relative to the project root (esbuild's metafile inputs) */
  inputs: string[];
}

/** Optional native add-ons some dependencies `require` lazily (pg: `pg.native`); left out of the bundle, never
 *  loaded by the generators. */
export const OPTIONAL_EXTERNALS: readonly string[] = ["pg-native"];

const ENTRY = fileURLToPath(new URL("./child.ts", import.meta.url));
/** esbuild's working directory: the project root, so the bundle's text and inputs do not depend on the cwd */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

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
    let inputs: string[];
    try {
      const { build } = await import("esbuild");
      const result = await build({
        entryPoints: [ENTRY],
        absWorkingDir: ROOT,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        write: false,
        metafile: true,
        external: [...OPTIONAL_EXTERNALS],
        banner: { js: REQUIRE_BANNER },
        legalComments: "none",
        logLevel: "silent",
      });
      const out = result.outputFiles[0];
      if (!out) throw new Error("esbuild produced no output file");
      code = out.text;
      inputs = Object.keys(result.metafile.inputs);
    } catch (err) {
      throw new ProvisioningError("E_GENERATOR_BUNDLE", `bundling ${ENTRY} for the loadgen host failed: ${(err as Error).message}`, { cause: err });
    }
    const buf = Buffer.from(code, "utf8");
    return { code, sha256: sha256(buf), bytes: buf.length, inputs };
  })();
  cached.catch(() => { cached = null; }); // a failed build is retried by the next caller
  return cached;
}

const sha256 = (data: Buffer | string): string => createHash("sha256").update(data).digest("hex");

/** What the cache keeps beside a bundle: its file, its hash and the hash of every input it was built from. */
interface BundleManifest {
  file: string;
  sha256: string;
  inputs: Array<[file: string, sha256: string]>;
}

/** `file` when it still holds `m.sha256` and every input still hashes as when it was built, else undefined. */
async function stillCurrent(dir: string, m: BundleManifest): Promise<string | undefined> {
  const file = path.join(dir, path.basename(m.file));
  const hashOf = (f: string): Promise<string> => readFile(f).then(sha256, () => "");
  const [own, ...inputs] = await Promise.all([hashOf(file), ...m.inputs.map(([f]) => hashOf(path.resolve(ROOT, f)))]);
  return own === m.sha256 && m.inputs.every(([, h], i) => inputs[i] === h) ? file : undefined;
}

/** Write `data` to `file` through a temporary file and a rename, so that a reader never sees half a file. */
async function writeAtomic(file: string, data: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, data, { mode: 0o644 });
    await rename(tmp, file);
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * The bundled child in the cache directory `dir`: `generator-<sha256, 12 hex>.mjs`, reused while every file it was
 * built from is unchanged (checked by content: `generator-<hash of the project root>.json` lists each input's
 * SHA-256), else built again (bundleGenerator) and written atomically, so several projects and processes share the
 * directory. @returns the file's absolute path. @throws ProvisioningError E_GENERATOR_BUNDLE, or a file system
 * error when the directory cannot be written
 */
export async function cachedGeneratorFile(dir: string): Promise<string> {
  const manifestFile = path.join(dir, `generator-${sha256(ROOT).slice(0, 12)}.json`);
  const manifest = await readFile(manifestFile, "utf8").then((t) => JSON.parse(t) as BundleManifest, () => undefined);
  const current = manifest && await stillCurrent(dir, manifest);
  if (current) return current;
  const bundle = await bundleGenerator();
  const file = path.join(dir, `generator-${bundle.sha256.slice(0, 12)}.mjs`);
  const inputs = await Promise.all(bundle.inputs.map(async (f): Promise<[string, string]> => [f, sha256(await readFile(path.resolve(ROOT, f)))]));
  await mkdir(dir, { recursive: true });
  await writeAtomic(file, bundle.code);
  await writeAtomic(manifestFile, `${JSON.stringify({ file: path.basename(file), sha256: bundle.sha256, inputs } satisfies BundleManifest)}\n`);
  return file;
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
