// The bundled generator child kept in the cache directory for the local platform (harness/generators/bundle.ts):
// built once (a real esbuild build of harness/generators/child.ts), reused while every input hashes as when it was
// built, built again when an input or the file itself differs, and run by plain node (no tsx).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cacheRoot as cacheDir } from "../../../core/cache.ts";
import { cachedGeneratorFile, localGeneratorProgram } from "../../../harness/generators/bundle.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "ib-bundle-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Manifest {
  file: string;
  sha256: string;
  inputs: Array<[string, string]>;
}
/** The manifest beside the bundle, and its path. */
const manifestOf = (): { file: string; m: Manifest } => {
  const name = readdirSync(dir).find((f) => /^generator-[0-9a-f]{12}\.json$/.test(f))!;
  return {
    file: path.join(dir, name),
    m: JSON.parse(readFileSync(path.join(dir, name), "utf8")) as Manifest,
  };
};

describe("the bundled generator in the cache directory", () => {
  it("is built once, lists its inputs with their hashes, and is reused while they hold", async () => {
    const file = await cachedGeneratorFile(dir);
    expect(path.dirname(file)).toBe(dir);
    expect(path.basename(file)).toMatch(/^generator-[0-9a-f]{12}\.mjs$/);
    const { m } = manifestOf();
    expect(m.file).toBe(path.basename(file));
    expect(m.inputs.map(([f]) => f)).toContain("harness/generators/child.ts");
    expect(m.inputs.every(([, h]) => /^[0-9a-f]{64}$/.test(h))).toBe(true);
    const mtime = statSync(file).mtimeMs;
    expect(await cachedGeneratorFile(dir)).toBe(file);
    expect(statSync(file).mtimeMs).toBe(mtime); // not written again
  });

  it("is made again when an input no longer hashes as recorded, or the file was changed", async () => {
    const file = await cachedGeneratorFile(dir);
    const { file: manifest, m } = manifestOf();
    writeFileSync(
      manifest,
      JSON.stringify({ ...m, inputs: m.inputs.map(([f, h], i) => [f, i === 0 ? "0".repeat(64) : h]) }),
    );
    expect(await cachedGeneratorFile(dir)).toBe(file);
    expect(manifestOf().m).toEqual(m); // the true hashes again
    writeFileSync(file, "// not the bundle\n");
    expect(await cachedGeneratorFile(dir)).toBe(file);
    expect(readFileSync(file, "utf8")).toContain("__ibCreateRequire");
  });

  it("runs under plain node and speaks child.ts's protocol (a bad spec: an error line, exit 1)", async () => {
    const file = await cachedGeneratorFile(dir);
    const r = spawnSync(process.execPath, [file, "{}"], {
      encoding: "utf8",
      env: { PATH: process.env.PATH },
      input: "",
    });
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ type: "error", code: "E_GENERATOR_SPEC" });
  });

  it("INGESTBENCH_CACHE_DIR names the directory; `off` turns it off (the generators then run through tsx)", async () => {
    expect(cacheDir({ INGESTBENCH_CACHE_DIR: dir })).toBe(dir);
    expect(cacheDir({ XDG_CACHE_HOME: "/x" })).toBe("/x/ingestbench");
    expect(cacheDir({ INGESTBENCH_CACHE_DIR: "off" })).toBeNull();
    const saved = process.env.INGESTBENCH_CACHE_DIR;
    process.env.INGESTBENCH_CACHE_DIR = "off";
    try {
      expect(await localGeneratorProgram()).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.INGESTBENCH_CACHE_DIR;
      else process.env.INGESTBENCH_CACHE_DIR = saved;
    }
  });
});
