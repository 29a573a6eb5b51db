/**
 * The A/A noise-floor store: `ingestbench aa` (harness/nightly/aa.ts) writes one file per stack and scenario,
 * results/<stack>/<scenario>.aa/noise-floor.json; both comparisons read the per-cell floors from it
 * (harness/stats/compare.ts applies them).
 */
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ConfigurationError } from "../../core/errors.ts";
import { writeFileAtomic } from "./store.ts";

/**
 * A/A runs (`ingestbench aa`) are stored under results/<stack>/<scenario>.aa/: a scenario directory of their own, so
 * that they never count as a night (nightly's latest/previous) or as a stack's latest bench.
 */
export const AA_SUFFIX = ".aa";

/** One cell's A/A result: group B compared with group A, both the same stack, scenario and cell. */
export interface NoiseFloorCell {
  cell: string;
  /** the noise floor, a fraction: max(CI half-width, |ratio − 1|) (stats/compare.ts noiseFloorOf); null without an interval */
  floor: number | null;
  /** median(B) / median(A) */
  ratio: number;
  /** its bootstrap interval (null with fewer than 2 measured runs in a group) */
  ci: [number, number] | null;
  /** (ci high − ci low) / 2, null without an interval */
  halfWidth: number | null;
  n: { a: number; b: number };
  /** fewer than the minimum sample size in a group: the floor is an underestimate (the interval is too narrow) */
  inconclusive: boolean;
  reason: string;
}

/** results/<stack>/<scenario>.aa/noise-floor.json */
export interface NoiseFloorFile {
  stack: string;
  scenario: string;
  /** invocation of group A ("<iso>/A"); group B is "<iso>/B" */
  invocation: string;
  createdAt: string;
  confidence: number;
  cells: NoiseFloorCell[];
}

/** results/<stack>/<scenario>.aa/noise-floor.json under resultsRoot. */
export function noiseFloorPath(resultsRoot: string, stack: string, scenario: string): string {
  return path.join(resultsRoot, stack, `${scenario}${AA_SUFFIX}`, "noise-floor.json");
}

/** Write (replace) the stack's and scenario's noise floors. */
export async function writeNoiseFloors(resultsRoot: string, file: NoiseFloorFile): Promise<string> {
  const p = noiseFloorPath(resultsRoot, file.stack, file.scenario);
  await mkdir(path.dirname(p), { recursive: true });
  await writeFileAtomic(p, `${JSON.stringify(file, null, 2)}\n`);
  return p;
}

/**
 * The stored A/A result of a stack and scenario, or null when there is none.
 * @throws ConfigurationError E_NOISE_FLOOR when the file exists but is not readable JSON of the expected shape
 */
export function loadNoiseFloors(resultsRoot: string, stack: string, scenario: string): NoiseFloorFile | null {
  const p = noiseFloorPath(resultsRoot, stack, scenario);
  let text: string;
  try {
    text = readFileSync(p, "utf8");
  } catch {
    return null;
  }
  try {
    const f = JSON.parse(text) as NoiseFloorFile;
    if (!Array.isArray(f.cells)) throw new Error("no cells array");
    return f;
  } catch (e) {
    throw new ConfigurationError(
      "E_NOISE_FLOOR",
      `${p}: not a noise-floor file (${(e as Error).message}); run ingestbench aa --stack ${stack} again or delete it`,
    );
  }
}

/**
 * Noise floor per cell (fraction) of a stack, from its stored A/A result; cells without an interval are left out.
 * `use: false` gives an empty map (the comparison was asked not to apply floors).
 * @throws ConfigurationError E_NOISE_FLOOR as loadNoiseFloors
 */
export function floorsOf(
  resultsRoot: string,
  stack: string,
  scenario: string,
  use: boolean | undefined,
): Map<string, number> {
  const out = new Map<string, number>();
  if (use === false) return out;
  for (const c of loadNoiseFloors(resultsRoot, stack, scenario)?.cells ?? [])
    if (c.floor !== null && Number.isFinite(c.floor)) out.set(c.cell, c.floor);
  return out;
}
