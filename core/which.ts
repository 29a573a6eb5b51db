/** Finding an executable on PATH, as a shell does (execvp(3)): for the CLIs the harness drives (pulumi, docker, ssh). */
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

/**
 * The first executable `name` on `pathVar` (a PATH value, entries separated by ":"), or null; a `name` with a slash
 * is taken as a path. Empty PATH entries mean the working directory, as in execvp(3).
 */
export function findOnPath(name: string, pathVar: string | undefined): string | null {
  const candidates = name.includes("/")
    ? [path.resolve(name)]
    : (pathVar ?? "").split(path.delimiter).map((dir) => path.resolve(dir === "" ? "." : dir, name));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}
