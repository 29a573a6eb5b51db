// The source files the architecture tests scan (test/architecture/printed-words.test.ts, comment-figures.test.ts).
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/** Every source file under `dir` of `root`, relative to `root` with "/" separators (tests, .d.ts and node_modules left out). */
export function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(root, rel))) {
      if (name === "node_modules") continue;
      const child = `${rel}/${name}`;
      if (statSync(path.join(root, child)).isDirectory()) walk(child);
      else if (/\.(ts|js|mjs|cjs)$/.test(name) && !name.endsWith(".d.ts") && !name.endsWith(".test.ts"))
        out.push(child);
    }
  };
  walk(dir);
  return out;
}
