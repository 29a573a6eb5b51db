/**
 * The project's own OpenTelemetry Collector build (./distribution: go.mod, go.sum, main.go, components.go in the
 * shape the Collector Builder generates), made by scripts/build-otelcol.sh into the cache outside the clone
 * (`<cache>/otelcol/<key>/otelcol`, key: a digest of those files and the Go version). This module finds it; it never
 * builds (CI's .ci/run runs the script; a user runs it once, or brings an installed otelcol-contrib).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, "../../..");
/** The build script, relative to the project root. */
export const OTELCOL_BUILD_SCRIPT = "scripts/build-otelcol.sh";
/** The distribution's folder (its Go module). */
export const OTELCOL_DISTRIBUTION = path.join(here, "distribution");

let cached: { path: string } | undefined;

/**
 * The path the build script gives the binary for the current inputs (`build-otelcol.sh --path`: no build), or null
 * when the script cannot say (no Go on PATH). Read once per process.
 */
export function otelcolBuildPath(): string | null {
  if (cached) return cached.path || null;
  const r = spawnSync("bash", [path.join(ROOT, OTELCOL_BUILD_SCRIPT), "--path"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 30_000,
  });
  cached = { path: r.status === 0 ? r.stdout.trim() : "" };
  return cached.path || null;
}

/** The built binary when it is on this machine (ProgramSpec.built), else null. */
export function otelcolBuilt(): string | null {
  const p = otelcolBuildPath();
  return p !== null && existsSync(p) ? p : null;
}

/**
 * The component ids the distribution's components.go registers, by kind, as the Collector names them in a config
 * (`<package>.NewFactory()`, the package name less its kind suffix; healthcheckextension is `health_check`).
 */
export function distributionComponents(): Record<
  "receivers" | "processors" | "exporters" | "extensions",
  string[]
> {
  const text = readFileSync(path.join(OTELCOL_DISTRIBUTION, "components.go"), "utf8");
  const out = { receivers: [], processors: [], exporters: [], extensions: [] } as Record<
    "receivers" | "processors" | "exporters" | "extensions",
    string[]
  >;
  const kinds = [
    ["receiver", "receivers"],
    ["processor", "processors"],
    ["exporter", "exporters"],
    ["extension", "extensions"],
  ] as const;
  for (const m of text.matchAll(/\b([a-z]+)\.NewFactory\(\)/g)) {
    const pkg = m[1]!;
    const kind = kinds.find(([suffix]) => pkg.endsWith(suffix));
    if (!kind) continue;
    const name = pkg === "healthcheckextension" ? "health_check" : pkg.slice(0, -kind[0].length);
    if (!out[kind[1]].includes(name)) out[kind[1]].push(name);
  }
  return out;
}
