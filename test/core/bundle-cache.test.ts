// Programs bundled by esbuild and kept in a cache directory (core/bundle-cache.mjs), on a small project of its own in
// a temporary directory: real esbuild builds, run by plain node from a directory far from the sources. Checks that each
// module keeps its own import.meta.url (and that without the plugin it would not), that text in strings is left as
// written, that the source map leads a stack frame back to the .ts line, and that the cache is reused only while every
// input hashes as recorded. The CLI's own bundle through bin/ingestbench.js: test/harness/cli.test.ts.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
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
writeFileSync(
  path.join(root, "main.ts"),
  [
    'import { where, fail } from "./lib/where.ts";',
    "const own: string = import.meta.url;",
    "console.log(JSON.stringify({ main: own, lib: where(), text: 'import.meta.url' }));",
    "if (process.argv[2] === 'fail') fail();",
    "",
  ].join("\n"),
);
const libSource = (n: number): string =>
  [
    "// a comment naming import.meta.url",
    `export const version: number = ${n};`,
    "export function where(): string { return new URL('.', import.meta.url).href + '#' + version; }",
    "export function fail(): never {",
    "  throw new Error('failed on purpose');",
    "}",
    "",
  ].join("\n");
/** Write a source file as an edit made a while ago (a bundle built now would be recorded in its manifest). */
const writeOld = (file: string, text: string): void => {
  writeFileSync(file, text);
  const past = new Date(Date.now() - 60_000);
  utimesSync(file, past, past);
};
writeOld(path.join(root, "lib", "where.ts"), libSource(1));
writeOld(path.join(root, "main.ts"), readFileSync(path.join(root, "main.ts"), "utf8"));

/** Run a bundle's text from the cache directory with plain node; its stdout parsed, stderr and status. */
function runBundle(
  file: string,
  ...args: string[]
): { out: { main: string; lib: string; text: string } | null; err: string; status: number | null } {
  const r = spawnSync(process.execPath, ["--enable-source-maps", file, ...args], {
    encoding: "utf8",
    cwd: tmp,
  });
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
    expect(r.out).toEqual({
      main: pathToFileURL(entry).href,
      lib: `${pathToFileURL(path.join(root, "lib")).href}/#1`,
      text: "import.meta.url",
    });
    // without the plugin a module sees the bundle's own URL: the plugin is what keeps paths pointing into the project
    const plain = await buildBundle({ root, entry });
    writeFileSync(file, plain.code);
    expect(runBundle(file).out?.main).toBe(pathToFileURL(file).href);
  });

  it("cachedBundleFile: written once with its source map, reused while its inputs hold, built again when one changes", async () => {
    let builds = 0;
    const build = () => {
      builds++;
      return buildBundle({ root, entry, keepImportMetaUrl: true, sourceMap: true });
    };
    const file = await cachedBundleFile({ dir: cache, name: "demo", root, build });
    expect(path.basename(file)).toMatch(/^demo-[0-9a-f]{12}\.mjs$/);
    expect(readFileSync(file, "utf8")).toMatch(
      new RegExp(`//# sourceMappingURL=${path.basename(file)}\\.map\\n$`),
    );
    const manifest = readdirSync(cache).find((f) => /^demo-[0-9a-f]{12}\.json$/.test(f))!;
    expect(
      (
        JSON.parse(readFileSync(path.join(cache, manifest), "utf8")) as { inputs: Array<[string, string]> }
      ).inputs
        .map(([f]) => f)
        .sort(),
    ).toEqual(["lib/where.ts", "main.ts"]);
    const mtime = statSync(file).mtimeMs;
    expect(await cachedBundleFile({ dir: cache, name: "demo", root, build })).toBe(file);
    expect(builds).toBe(1);
    expect(statSync(file).mtimeMs).toBe(mtime);

    // the source map leads a frame back to the .ts file and line (lib/where.ts line 5: the throw)
    const failed = runBundle(file, "fail");
    expect(failed.status).toBe(1);
    expect(failed.err).toContain(`${path.join(root, "lib", "where.ts")}:5`);

    // an input changed: built again, and the new bundle runs the new code
    writeOld(path.join(root, "lib", "where.ts"), libSource(2));
    const again = await cachedBundleFile({ dir: cache, name: "demo", root, build });
    expect(builds).toBe(2);
    expect(again).not.toBe(file);
    expect(runBundle(again).out?.lib).toMatch(/#2$/);
    expect(existsSync(file)).toBe(true); // kept: only a caller that asks (the CLI) has the replaced one removed

    // the bundle file itself changed, or its source map: built again
    writeFileSync(again, "// not the bundle\n");
    expect(await cachedBundleFile({ dir: cache, name: "demo", root, build })).toBe(again);
    expect(builds).toBe(3);
    expect(runBundle(again).out?.lib).toMatch(/#2$/);
    writeFileSync(`${again}.map`, "garbage");
    expect(await cachedBundleFile({ dir: cache, name: "demo", root, build })).toBe(again);
    expect(builds).toBe(4);
    expect(runBundle(again, "fail").err).toContain(`${path.join(root, "lib", "where.ts")}:5`);
  });

  it("extraInputs are recorded beside esbuild's: a change to one builds again", async () => {
    const settings = path.join(root, "build-settings.txt");
    writeOld(settings, "one\n");
    let builds = 0;
    const build = () => {
      builds++;
      return buildBundle({ root, entry });
    };
    const file = await cachedBundleFile({
      dir: cache,
      name: "extra",
      root,
      build,
      extraInputs: ["build-settings.txt"],
    });
    expect(
      await cachedBundleFile({ dir: cache, name: "extra", root, build, extraInputs: ["build-settings.txt"] }),
    ).toBe(file);
    expect(builds).toBe(1);
    writeOld(settings, "two\n");
    await cachedBundleFile({ dir: cache, name: "extra", root, build, extraInputs: ["build-settings.txt"] });
    expect(builds).toBe(2);
  });

  // lib/where.ts at version `before`, saved as version `after` once esbuild has read it (a start racing an edit): the
  // racing start runs what esbuild read, the next one builds again and runs the edit
  // (a build without the import.meta.url plugin, as the generator's, hashes its inputs after esbuild ran: the mtime
  // check; with the plugin, the text it read)
  const raceCases: Array<[string, string, (file: string, text: string) => void, boolean]> = [
    [
      "saved while esbuild ran (no plugin): the next start builds again, its mtime not older than the build",
      "race",
      (f, t) => writeFileSync(f, t),
      false,
    ],
    [
      "replaced while esbuild ran, its mtime kept old (cp -p): recorded with the text the build read, so the next start builds again",
      "race-old",
      writeOld,
      true,
    ],
  ];
  for (const [title, name, save, keepImportMetaUrl] of raceCases) {
    it(`a file ${title}`, async () => {
      const lib = path.join(root, "lib", "where.ts");
      writeOld(lib, libSource(3));
      let builds = 0;
      const build = async () => {
        builds++;
        const b = await buildBundle({ root, entry, keepImportMetaUrl });
        if (builds === 1) save(lib, libSource(4));
        return b;
      };
      expect(runBundle(await cachedBundleFile({ dir: cache, name, root, build })).out?.lib).toMatch(/#3$/);
      const second = await cachedBundleFile({ dir: cache, name, root, build });
      expect(builds).toBe(2);
      expect(runBundle(second).out?.lib).toMatch(/#4$/);
    });
  }

  it("removeReplaced: every other bundle of the name (and map) is removed once the new one is written, those left by a build without a manifest too", async () => {
    const build = () => buildBundle({ root, entry, keepImportMetaUrl: true, sourceMap: true });
    writeOld(path.join(root, "lib", "where.ts"), libSource(5));
    const old = await cachedBundleFile({ dir: cache, name: "cli-like", root, build, removeReplaced: true });
    const orphan = path.join(cache, "cli-like-0123456789ab.mjs"); // as a build whose manifest was not written leaves one
    writeFileSync(orphan, "// orphan\n");
    writeFileSync(`${orphan}.map`, "{}");
    const otherName = path.join(cache, "cli-likeness-0123456789ab.mjs"); // another name's: kept
    writeFileSync(otherName, "// another\n");
    writeOld(path.join(root, "lib", "where.ts"), libSource(6));
    const now = await cachedBundleFile({ dir: cache, name: "cli-like", root, build, removeReplaced: true });
    expect(now).not.toBe(old);
    expect(
      [old, `${old}.map`, orphan, `${orphan}.map`, now, `${now}.map`, otherName].map((f) => existsSync(f)),
    ).toEqual([false, false, false, false, true, true, true]);
  });

  it("a failed build is the caller's error, and nothing is cached", async () => {
    writeOld(
      path.join(root, "broken.ts"),
      "import { nothing } from './missing.ts';\nconsole.log(nothing);\n",
    );
    await expect(
      cachedBundleFile({
        dir: cache,
        name: "broken",
        root,
        build: () => buildBundle({ root, entry: path.join(root, "broken.ts") }),
      }),
    ).rejects.toThrow(/missing\.ts/);
    expect(readdirSync(cache).filter((f) => f.startsWith("broken-"))).toEqual([]);
    // a syntax error in one of our files is esbuild's message at its place in that file (bin/build-cli-bundle.mjs
    // prints the first one), not the importer's "Transform failed"
    writeOld(path.join(root, "syntax.ts"), "export const a = 1;\nconst x: = 2;\n");
    writeOld(path.join(root, "imports-syntax.ts"), "import { a } from './syntax.ts';\nconsole.log(a);\n");
    const failure = (await buildBundle({
      root,
      entry: path.join(root, "imports-syntax.ts"),
      keepImportMetaUrl: true,
    }).catch((e: unknown) => e)) as {
      errors?: Array<{ text: string; location: { file: string; line: number } | null }>;
    };
    expect(failure.errors?.[0]).toMatchObject({
      text: 'Unexpected "="',
      location: { file: "syntax.ts", line: 2 },
    });
  });
});
