// Programs bundled by esbuild and kept in a cache directory (core/bundle-cache.mjs), on a small project of its own in
// a temporary directory: real esbuild builds, run by plain node from a directory far from the sources. Checks that each
// module keeps its own import.meta.url (and that without the plugin it would not), that text in strings is left as
// written, that the source map leads a stack frame back to the .ts line, and that the cache is reused only while every
// input hashes as recorded. The CLI's own bundle through bin/ingestbench.js: test/harness/cli.test.ts.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildBundle, cachedBundleFile } from "../../core/bundle-cache.mjs";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-bundle-cache-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const root = path.join(tmp, "project");
const cache = path.join(tmp, "far", "away", "cache");
mkdirSync(path.join(root, "lib"), { recursive: true });
writeFileSync(path.join(root, "main.ts"), [
  'import { where, fail } from "./lib/where.ts";',
  "const own: string = import.meta.url;",
  "console.log(JSON.stringify({ main: own, lib: where(), text: 'import.meta.url' }));",
  "if (process.argv[2] === 'fail') fail();",
  "",
].join("\n"));
const libSource = (n: number): string => [
  "// a comment naming import.meta.url",
  `export const version: number = ${n};`,
  "export function where(): string { return new URL('.', import.meta.url).href + '#' + version; }",
  "export function fail(): never {",
  "  throw new Error('failed on purpose');",
  "}",
  "",
].join("\n");
writeFileSync(path.join(root, "lib", "where.ts"), libSource(1));

/** Run a bundle's text from the cache directory with plain node; its stdout parsed, stderr and status. */
function runBundle(file: string, ...args: string[]): { out: { main: string; lib: string; text: string } | null; err: string; status: number | null } {
  const r = spawnSync(process.execPath, ["--enable-source-maps", file, ...args], { encoding: "utf8", cwd: tmp });
  const line = r.stdout.trim();
  return { out: line ? JSON.parse(line) : null, err: r.stderr, status: r.status };
}

describe("core/bundle-cache.mjs on a project of its own", () => {
  const entry = path.join(root, "main.ts");

  it("keepImportMetaUrl: every module sees its own file's URL wherever the bundle is kept; strings and comments are left as written", async () => {
    const b = await buildBundle({ root, entry, keepImportMetaUrl: true, sourceMap: true });
    expect(b.inputs.sort()).toEqual(["lib/where.ts", "main.ts"]);
    expect(b.bytes).toBe(Buffer.byteLength(b.code));
    mkdirSync(cache, { recursive: true });
    const file = path.join(cache, "kept.mjs");
    writeFileSync(file, b.code);
    const r = runBundle(file);
    expect(r.status, r.err).toBe(0);
    expect(r.out).toEqual({ main: pathToFileURL(entry).href, lib: `${pathToFileURL(path.join(root, "lib")).href}/#1`, text: "import.meta.url" });
    // without the plugin a module sees the bundle's own URL: the plugin is what keeps paths pointing into the project
    const plain = await buildBundle({ root, entry });
    writeFileSync(file, plain.code);
    expect(runBundle(file).out?.main).toBe(pathToFileURL(file).href);
  });

  it("cachedBundleFile: written once with its source map, reused while its inputs hold, built again when one changes", async () => {
    let builds = 0;
    const build = () => { builds++; return buildBundle({ root, entry, keepImportMetaUrl: true, sourceMap: true }); };
    const file = await cachedBundleFile({ dir: cache, name: "demo", root, build });
    expect(path.basename(file)).toMatch(/^demo-[0-9a-f]{12}\.mjs$/);
    expect(readFileSync(file, "utf8")).toMatch(new RegExp(`//# sourceMappingURL=${path.basename(file)}\\.map\\n$`));
    const manifest = readdirSync(cache).find((f) => /^demo-[0-9a-f]{12}\.json$/.test(f))!;
    expect((JSON.parse(readFileSync(path.join(cache, manifest), "utf8")) as { inputs: Array<[string, string]> }).inputs.map(([f]) => f).sort()).toEqual(["lib/where.ts", "main.ts"]);
    const mtime = statSync(file).mtimeMs;
    expect(await cachedBundleFile({ dir: cache, name: "demo", root, build })).toBe(file);
    expect(builds).toBe(1);
    expect(statSync(file).mtimeMs).toBe(mtime);

    // the source map leads a frame back to the .ts file and line (lib/where.ts line 5: the throw)
    const failed = runBundle(file, "fail");
    expect(failed.status).toBe(1);
    expect(failed.err).toContain(`${path.join(root, "lib", "where.ts")}:5`);

    // an input changed: built again, and the new bundle runs the new code
    writeFileSync(path.join(root, "lib", "where.ts"), libSource(2));
    const again = await cachedBundleFile({ dir: cache, name: "demo", root, build });
    expect(builds).toBe(2);
    expect(again).not.toBe(file);
    expect(runBundle(again).out?.lib).toMatch(/#2$/);

    // the bundle file itself changed: built again
    writeFileSync(again, "// not the bundle\n");
    expect(await cachedBundleFile({ dir: cache, name: "demo", root, build })).toBe(again);
    expect(builds).toBe(3);
    expect(runBundle(again).out?.lib).toMatch(/#2$/);
  });

  it("a failed build is the caller's error, and nothing is cached", async () => {
    writeFileSync(path.join(root, "broken.ts"), "import { nothing } from './missing.ts';\nconsole.log(nothing);\n");
    await expect(cachedBundleFile({ dir: cache, name: "broken", root, build: () => buildBundle({ root, entry: path.join(root, "broken.ts") }) })).rejects.toThrow(/missing\.ts/);
    expect(readdirSync(cache).filter((f) => f.startsWith("broken-"))).toEqual([]);
  });
});
