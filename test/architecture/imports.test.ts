/**
 * The layering of core/plugin.ts, checked on the source: every relative import (static, `import type`,
 * `export ... from` and dynamic `import()`, as the TypeScript compiler's preProcessFile finds them) of every .ts
 * file under core/, plugins/, infra/, harness/ and bin/. Allowed edges:
 * - core/ imports nothing of ours outside core/;
 * - plugins/ import core/ and plugins/ (never infra/ or harness/);
 * - infra/ imports core/, plugins/ and infra/ (never harness/);
 * - ui/ (printed words: ui/format.ts, the run line and block, the tables) imports core/, plugins/, infra/ and harness/
 *   (the records and comparisons it prints); harness/ imports ui/ to hand it records;
 * - harness/ and bin/ import anything;
 * and no import circle, of any length, nor two folders of harness/ that import each other. Test files
 * (`*.test.ts`, beside their plugin or under test/) are the harness's clients and may import any layer (a verifier's
 * test drives it with a harness generator); they are parsed for the circles and the missing-file check only.
 *
 * Every folder under plugins/sinks/ and plugins/collectors/ is registered in plugins/registry.ts under its folder's
 * name, every registered plugin has its folder, and the descriptors agree with themselves (names, kinds, the sinks a
 * collector writes into are registered).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { CollectorPlugin, SinkPlugin } from "../../core/plugin.ts";
import { collectorPlugins, collectors, isSinkName, sinks } from "../../plugins/registry.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const LAYERS = ["core", "plugins", "infra", "harness", "ui", "bin"] as const;
type Layer = (typeof LAYERS)[number];

/** Every .ts (and bin/ .js) file under `dir`, relative to the repository root, with "/" separators. */
function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(ROOT, rel))) {
      const child = `${rel}/${name}`;
      if (statSync(path.join(ROOT, child)).isDirectory()) walk(child);
      else if (/\.(ts|js|mjs)$/.test(name) && !name.endsWith(".d.ts")) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

/** file → the files of ours it imports (relative specifiers only: packages and node: builtins are not ours). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of LAYERS.flatMap(sources)) {
    const info = ts.preProcessFile(readFileSync(path.join(ROOT, file), "utf8"), true, true);
    const targets = info.importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith("./") || spec.startsWith("../"))
      .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

function layerOf(file: string): Layer | "other" {
  const top = file.split("/")[0];
  return (LAYERS as readonly string[]).includes(top!) ? (top as Layer) : "other";
}

/** Which layers each layer may import (besides itself). */
const ALLOWED: Record<Layer, ReadonlyArray<Layer | "other">> = {
  core: [],
  plugins: ["core"],
  infra: ["core", "plugins"],
  harness: ["core", "plugins", "infra", "ui"],
  ui: ["core", "plugins", "infra", "harness"],
  bin: ["core", "plugins", "infra", "harness", "ui"],
};

/** The strongly connected components with more than one file, or a file importing itself (Tarjan, 1972). */
function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** One cycle through the files of `scc`, as "a → b → a" (a shortest path back to its first file, by BFS). */
function cycleText(graph: Map<string, string[]>, scc: readonly string[]): string {
  const members = new Set(scc);
  const start = scc[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x: string | undefined = v; x !== undefined && x !== start; x = prev.get(x))
          path.splice(1, 0, x);
        return [...path, start].join(" → ");
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return scc.join(", ");
}

describe("import layering (core/plugin.ts): core → nothing; plugins → core; infra → core, plugins; no circles", () => {
  const graph = importGraph();

  it("finds the source files and their imports (the parser reads static, type-only and dynamic imports)", () => {
    expect(graph.size).toBeGreaterThan(100);
    // bin/ingestbench.js loads the CLI with a dynamic import()
    expect(graph.get("bin/ingestbench.js")).toContain("harness/cli/index.ts");
  });

  it("every import of ours points at a file that exists", () => {
    const missing = [...graph].flatMap(([from, tos]) =>
      tos.filter((to) => !graph.has(to) && !safeExists(to)).map((to) => `${from} → ${to}`),
    );
    expect(missing).toEqual([]);
  });

  it("no layer imports a layer above it (test files excepted)", () => {
    const bad: string[] = [];
    for (const [from, tos] of graph) {
      const lf = layerOf(from);
      if (lf === "other" || from.endsWith(".test.ts")) continue;
      for (const to of tos) {
        const lt = layerOf(to);
        if (lt !== lf && !ALLOWED[lf].includes(lt))
          bad.push(`${from} → ${to} (${lf} may import ${[lf, ...ALLOWED[lf]].join(", ")} only)`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("no import circle", () => {
    expect(circles(graph).map((scc) => cycleText(graph, scc))).toEqual([]);
  });

  it("no two folders of harness/ import each other (e.g. harness/provision/ and harness/remote/)", () => {
    const folderOf = (f: string): string | null =>
      /^harness\/[^/]+\//.test(f) ? f.split("/").slice(0, 2).join("/") : null;
    const edges = new Map<string, Map<string, string>>();
    for (const [from, tos] of graph) {
      const a = folderOf(from);
      if (!a || from.endsWith(".test.ts")) continue;
      for (const to of tos) {
        const b = folderOf(to);
        if (!b || b === a) continue;
        if (!edges.has(a)) edges.set(a, new Map());
        if (!edges.get(a)!.has(b)) edges.get(a)!.set(b, `${from} → ${to}`);
      }
    }
    const both: string[] = [];
    for (const [a, out] of edges) {
      for (const [b, example] of out) {
        const back = edges.get(b)?.get(a);
        if (back && a < b) both.push(`${a} ↔ ${b}: ${example}; ${back}`);
      }
    }
    expect(both).toEqual([]);
  });
});

function safeExists(file: string): boolean {
  try {
    return statSync(path.join(ROOT, file)).isFile();
  } catch {
    return false;
  }
}

describe("plugins/registry.ts lists exactly the plugin folders", () => {
  const registries: Array<["sinks" | "collectors", Readonly<Record<string, SinkPlugin | CollectorPlugin>>]> =
    [
      ["sinks", sinks],
      ["collectors", collectors],
    ];
  for (const [kind, registry] of registries) {
    it(`plugins/${kind}/: every folder is registered under its name, and every registered ${kind.slice(0, -1)} has its folder`, () => {
      const folders = readdirSync(path.join(ROOT, "plugins", kind))
        .filter((n) => statSync(path.join(ROOT, "plugins", kind, n)).isDirectory())
        .sort();
      expect(Object.keys(registry).sort()).toEqual(folders);
      for (const [name, plugin] of Object.entries(registry)) {
        expect(plugin.name, `plugins/${kind}/${name}: the descriptor's name`).toBe(name);
        expect(plugin.kind, `plugins/${kind}/${name}: kind`).toBe(kind.slice(0, -1));
        expect(
          existsSync(path.join(ROOT, "plugins", kind, name, "index.ts")),
          `plugins/${kind}/${name}/index.ts`,
        ).toBe(true);
        if (plugin.local)
          expect([plugin.local.name, plugin.local.kind], `plugins/${kind}/${name}: local component`).toEqual([
            name,
            plugin.kind,
          ]);
        if (plugin.image)
          expect([plugin.image.name, plugin.image.kind], `plugins/${kind}/${name}: image`).toEqual([
            name,
            plugin.kind,
          ]);
        expect(
          plugin.local !== undefined || plugin.image !== undefined,
          `plugins/${kind}/${name} runs somewhere (local or image)`,
        ).toBe(true);
      }
    });
  }

  it("a collector writes only into registered sinks, and has a renderer wherever it has an image", () => {
    for (const c of collectorPlugins) {
      const writesTo = [...(c.render?.writesTo ?? []), ...(c.local?.writesTo ?? [])];
      expect(
        writesTo.filter((s) => !isSinkName(s)),
        `plugins/collectors/${c.name}: unregistered sinks`,
      ).toEqual([]);
      if (c.image)
        expect(c.render !== undefined, `plugins/collectors/${c.name}: an image needs a renderer`).toBe(true);
    }
  });

  it("the registry imports each plugin from its own folder's index.ts", () => {
    const text = readFileSync(path.join(ROOT, "plugins/registry.ts"), "utf8");
    const specs = ts
      .preProcessFile(text, true, true)
      .importedFiles.map((f) => f.fileName)
      .filter((s) => s.startsWith("./"));
    const expected = [
      ...Object.keys(sinks).map((n) => `./sinks/${n}/index.ts`),
      ...Object.keys(collectors).map((n) => `./collectors/${n}/index.ts`),
    ];
    expect(specs.filter((s) => /^\.\/(sinks|collectors)\//.test(s)).sort()).toEqual(expected.sort());
  });
});
