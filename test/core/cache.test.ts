/** core/cache.ts: where the cache lives, entries made whole or not at all, stale staging swept, copies exact. */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cacheEntry, cacheRoot, copyTree, fillCacheEntry } from "../../core/cache.ts";

const base = mkdtempSync(path.join(os.tmpdir(), "ib-cache-test-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const env = { INGESTBENCH_CACHE_DIR: base };

describe("the cache", () => {
  it("lives in INGESTBENCH_CACHE_DIR, else XDG_CACHE_HOME/ingestbench, else ~/.cache/ingestbench; `off` turns it off", () => {
    expect(cacheRoot({ INGESTBENCH_CACHE_DIR: "/x/y" })).toBe("/x/y");
    expect(cacheRoot({ XDG_CACHE_HOME: "/xdg" })).toBe("/xdg/ingestbench");
    expect(cacheRoot({})).toBe(path.join(os.homedir(), ".cache", "ingestbench"));
    expect(cacheRoot({ INGESTBENCH_CACHE_DIR: "off", XDG_CACHE_HOME: "/xdg" })).toBeNull();
    expect(cacheEntry("k", "abc", { INGESTBENCH_CACHE_DIR: "off" })).toBeNull();
    expect(cacheEntry("k", "abc", { INGESTBENCH_CACHE_DIR: "/x" })).toBe("/x/k/abc");
  });

  it("puts an entry in place whole: of two fills of one key one wins, a failed fill leaves nothing, stale staging is swept", async () => {
    const entry = cacheEntry("kind", "key1", env)!;
    const fill =
      (text: string) =>
      async (dir: string): Promise<void> => {
        mkdirSync(path.join(dir, "sub"));
        writeFileSync(path.join(dir, "sub", "f"), text);
      };
    const won = await Promise.all([fillCacheEntry(entry, fill("a")), fillCacheEntry(entry, fill("b"))]);
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(["a", "b"]).toContain(readFileSync(path.join(entry, "sub", "f"), "utf8"));
    expect(await fillCacheEntry(entry, fill("c"))).toBe(false); // there already: untouched
    expect(readFileSync(path.join(entry, "sub", "f"), "utf8")).not.toBe("c");

    const failed = cacheEntry("kind", "key2", env)!;
    await expect(
      fillCacheEntry(failed, async () => {
        throw new Error("disk full");
      }),
    ).rejects.toThrow("disk full");
    expect(existsSync(failed)).toBe(false);

    // a staging directory of a process that cannot exist (above the kernel's pid_max limit of 2^22) is removed
    const stale = path.join(path.dirname(entry), ".staging-4194305-dead");
    mkdirSync(stale);
    const mine = path.join(path.dirname(entry), `.staging-${process.pid}-live`);
    mkdirSync(mine);
    await fillCacheEntry(cacheEntry("kind", "key3", env)!, fill("d"));
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(mine)).toBe(true); // a live process's staging stays
    rmSync(mine, { recursive: true });
    expect(readdirSync(path.dirname(entry)).sort()).toEqual(["key1", "key3"]);
  });

  it("copies a tree with its modes and times", async () => {
    const from = path.join(base, "from");
    mkdirSync(path.join(from, "d"), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(from, "d", "f"), "x", { mode: 0o600 });
    const to = path.join(base, "to");
    mkdirSync(to);
    await copyTree(from, to);
    expect(readFileSync(path.join(to, "d", "f"), "utf8")).toBe("x");
    expect(statSync(path.join(to, "d", "f")).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(to, "d")).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(to, "d", "f")).mtimeMs).toBe(statSync(path.join(from, "d", "f")).mtimeMs);
    await expect(copyTree(path.join(base, "nothing"), to)).rejects.toThrow();
  });
});
