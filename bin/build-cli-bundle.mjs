#!/usr/bin/env node
// @ts-check
// Builds the CLI's bundle into node_modules/.cache/ingestbench (core/bundle-cache.mjs; docs/decisions/0012) when it is
// not current, and prints its path on stdout. On failure one line on stderr, and exit COMPILE_ERROR_EXIT when a source
// file does not compile (esbuild's message with its file:line:column: tsx would fail on it too), else 1. bin/ingestbench.js runs this
// in a child process, so that esbuild's build (its output, source map and metafile: the harness went from about 100
// to 138 MiB for a whole run when it built in-process) is not carried by the harness.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildBundle, cachedBundleFile } from "../core/bundle-cache.mjs";

/** The project root. */
export const ROOT = path.resolve(fileURLToPath(new URL("..", import.meta.url)));
/** Where the bundle is kept: inside the project, so that its imports of npm packages resolve to node_modules. */
export const CLI_BUNDLE_DIR = path.join(ROOT, "node_modules", ".cache", "ingestbench");
/** The bundle's name in CLI_BUNDLE_DIR (its manifest `cli-<hash of ROOT>.json`, its file `cli-<hash>.mjs`). */
export const CLI_BUNDLE_NAME = "cli";
/** This script's exit status when a source file does not compile. */
export const COMPILE_ERROR_EXIT = 3;
/** Recorded and checked beside esbuild's inputs: this file's build options and the esbuild version. */
const EXTRA_INPUTS = ["bin/build-cli-bundle.mjs", "node_modules/esbuild/package.json"];

/**
 * One line for a failed build: esbuild's first message with its file:line:column (a BuildFailure's `errors`), else the
 * error's first line (a file system error: the directory cannot be written).
 * @param {unknown} err @returns {string}
 */
function buildError(err) {
  const first =
    /** @type {{ errors?: Array<{ text: string, location: { file: string, line: number, column: number } | null }> }} */ (
      err
    ).errors?.[0];
  if (first)
    return `${first.location ? `${first.location.file}:${first.location.line}:${first.location.column + 1}: ` : ""}${first.text}`;
  return err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    const file = await cachedBundleFile({
      dir: CLI_BUNDLE_DIR,
      name: CLI_BUNDLE_NAME,
      root: ROOT,
      removeReplaced: true,
      extraInputs: EXTRA_INPUTS,
      build: () =>
        buildBundle({
          root: ROOT,
          entry: path.join(ROOT, "harness", "cli", "index.ts"),
          packagesExternal: true,
          keepImportMetaUrl: true,
          sourceMap: true,
        }),
    });
    process.stdout.write(`${file}\n`);
  } catch (err) {
    process.stderr.write(`${buildError(err)}\n`);
    process.exitCode = /** @type {{ errors?: unknown[] }} */ (err).errors?.length ? COMPILE_ERROR_EXIT : 1;
  }
}
