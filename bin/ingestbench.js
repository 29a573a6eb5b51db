#!/usr/bin/env node
// @ts-check
// Entry point. Runs the CLI (harness/cli/index.ts) from one file that esbuild bundles and core/bundle-cache.mjs keeps in
// the project's node_modules/.cache/ingestbench (built again when a source file changes; npm packages stay imports,
// resolved from there), so that the harness process of a run does not carry tsx's loader and its state for ~230
// files (the figures are in core/bundle-cache.mjs). Through tsx, as before, when INGESTBENCH_CACHE_DIR=off, or with a
// warning when the bundle cannot be built or written (a read-only install, no esbuild). With --debug or
// INGESTBENCH_DEBUG=1, Node maps the bundle's stack frames back to the .ts files through its source map.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildBundle, cachedBundleFile } from "../core/bundle-cache.mjs";

const ROOT = path.resolve(fileURLToPath(new URL("..", import.meta.url)));
const ENTRY = path.join(ROOT, "harness", "cli", "index.ts");
/** Where the bundle is kept: inside the project, so that its imports of npm packages resolve to node_modules. */
export const CLI_BUNDLE_DIR = path.join(ROOT, "node_modules", ".cache", "ingestbench");

/**
 * One line for a failed build: esbuild's first message with its file:line:column (a BuildFailure's `errors`), else the
 * error's first line (a file system error: the directory cannot be written).
 * @param {unknown} err @returns {string}
 */
function buildError(err) {
  const first = /** @type {{ errors?: Array<{ text: string, location: { file: string, line: number, column: number } | null }> }} */ (err).errors?.[0];
  if (first) return `${first.location ? `${first.location.file}:${first.location.line}:${first.location.column + 1}: ` : ""}${first.text}`;
  return err instanceof Error ? err.message.split("\n")[0] ?? "" : String(err);
}

/** @returns {Promise<string | undefined>} the bundled CLI's path, or undefined to run through tsx */
async function bundledCli() {
  if (process.env.INGESTBENCH_CACHE_DIR === "off") return undefined;
  try {
    return await cachedBundleFile({
      dir: CLI_BUNDLE_DIR,
      name: "cli",
      root: ROOT,
      removeReplaced: true,
      build: () => buildBundle({ root: ROOT, entry: ENTRY, packagesExternal: true, keepImportMetaUrl: true, sourceMap: true }),
    });
  } catch (err) {
    process.stderr.write(`ingestbench: warning: running through tsx (slower to start, more memory): the CLI could not be bundled into ${CLI_BUNDLE_DIR}: ${buildError(err)}\n`);
    return undefined;
  }
}

const argv = process.argv;
const end = argv.indexOf("--");
if (process.env.INGESTBENCH_DEBUG === "1" || (end === -1 ? argv : argv.slice(0, end)).includes("--debug")) process.setSourceMapsEnabled(true);
const file = await bundledCli();
/** @type {{ main: (argv: string[]) => Promise<void> }} */
let cli;
if (file) cli = await import(pathToFileURL(file).href);
else {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import("../harness/cli/index.ts");
}
await cli.main(argv);
