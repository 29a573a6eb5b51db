#!/usr/bin/env node
// @ts-check
// Entry point. Runs the CLI (harness/cli/index.ts) from one file that esbuild bundles and core/bundle-cache.mjs keeps in
// the project's node_modules/.cache/ingestbench (checked against its sources at every start; built again, in a child
// process, ./build-cli-bundle.mjs, when one changed; npm packages stay imports, resolved from there), so that the
// harness process of a run does not carry tsx's loader and its state for ~230 files (docs/decisions/0012; the
// figures are in core/bundle-cache.mjs). Through tsx, as before, when INGESTBENCH_CACHE_DIR=off, or with a warning
// when the bundle cannot be built or written (a read-only install, no esbuild); a source file that does not compile
// ends it with one line naming the file and line, exit 70. With --debug or
// INGESTBENCH_DEBUG=1, Node maps the bundle's stack frames back to the .ts files through its source map.
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { currentBundleFile } from "../core/bundle-cache.mjs";
import { CLI_BUNDLE_DIR, CLI_BUNDLE_NAME, COMPILE_ERROR_EXIT, ROOT } from "./build-cli-bundle.mjs";

/** @returns {Promise<string | undefined>} the bundled CLI's path, or undefined to run through tsx */
async function bundledCli() {
  if (process.env.INGESTBENCH_CACHE_DIR === "off") return undefined;
  const current = await currentBundleFile(CLI_BUNDLE_DIR, CLI_BUNDLE_NAME, ROOT);
  if (current) return current;
  const r = spawnSync(process.execPath, [fileURLToPath(new URL("./build-cli-bundle.mjs", import.meta.url))], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const file = r.status === 0 ? r.stdout.trim() : "";
  if (file) return file;
  const why = (r.stderr || r.error?.message || `exit ${r.status ?? r.signal}`).trim().split("\n")[0];
  if (r.status === COMPILE_ERROR_EXIT) {
    // tsx would fail on the same file, with a dozen lines of esbuild's internals: one line, and the exit status of an
    // unexpected error (harness/cli/context.ts EXIT.unexpected)
    process.stderr.write(`ingestbench: a source file does not compile: ${why}\n`);
    process.exit(70);
  }
  process.stderr.write(
    `ingestbench: warning: running through tsx (slower to start, more memory): the CLI could not be bundled into ${CLI_BUNDLE_DIR}: ${why}\n`,
  );
  return undefined;
}

const argv = process.argv;
const end = argv.indexOf("--");
if (process.env.INGESTBENCH_DEBUG === "1" || (end === -1 ? argv : argv.slice(0, end)).includes("--debug"))
  process.setSourceMapsEnabled(true);
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
