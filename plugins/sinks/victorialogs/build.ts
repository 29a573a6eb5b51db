/**
 * The project's own build of VictoriaLogs (scripts/build-victorialogs.sh: the Go module
 * github.com/VictoriaMetrics/VictoriaLogs at v1.52.2, pinned by ./build/go.mod and go.sum, cached outside the clone
 * by the content hash of its inputs). The script is the one place that computes the cache key: `--path` prints where
 * the binary is for the inputs of this clone, built or not, and builds nothing.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** scripts/build-victorialogs.sh of this clone. */
export const BUILD_SCRIPT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../scripts/build-victorialogs.sh",
);

/** the script's answer per cache location (INGESTBENCH_CACHE_DIR, XDG_CACHE_HOME, HOME) */
const answers = new Map<string, string | null>();

/**
 * The path of the project's build of victoria-logs, or null when it is not built on this machine (or Go, which the
 * cache key names, is not installed). The script's answer is asked once per process: its inputs are files of the
 * clone, which do not change under a running harness.
 */
export function builtVictoriaLogs(env: NodeJS.ProcessEnv = process.env): string | null {
  const key = [env.INGESTBENCH_CACHE_DIR, env.XDG_CACHE_HOME, env.HOME].join("\u0000");
  let where = answers.get(key);
  if (where === undefined) {
    const r = spawnSync("bash", [BUILD_SCRIPT, "--path"], { env, encoding: "utf8", timeout: 60_000 });
    const out = r.status === 0 ? r.stdout.trim() : "";
    where = out.startsWith("/") ? out : null;
    answers.set(key, where);
  }
  return where !== null && existsSync(where) ? where : null;
}
