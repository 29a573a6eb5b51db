/**
 * `ingestbench show <run>`: a run in full (the run block, ui/run-block.ts) from its run.json, for any run the results
 * directory holds, old ones included. The run is named by its id ("20261205T091714Z-aee9c2"), by the short id a run
 * line ends with ("aee9c2", ui/run-line.ts shortRunId), or by a prefix of its id.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { ConfigurationError } from "../core/errors.ts";
import type { RunRecord } from "../harness/results/types.ts";
import { wrap } from "./format.ts";
import { describeRun } from "./run-block.ts";
import { shortRunId } from "./run-line.ts";

/** A run's run.json found under the results directory: results/<stack>/<scenario>/<run-id>/run.json. */
export interface FoundRun {
  dir: string;
  record: RunRecord;
}

/** The directories under `dir` ([] when it cannot be read). */
async function dirs(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/**
 * The run directories under `resultsRoot` whose id is `id`, ends with "-<id>", or starts with `id`.
 * @throws ConfigurationError E_NO_RESULTS when none matches (naming the results directory); E_FLAG when several do
 *         (listing them); E_RESULTS_READ when the run's run.json cannot be read
 */
export async function findRun(resultsRoot: string, id: string): Promise<FoundRun> {
  const want = id.trim();
  if (want === "")
    throw new ConfigurationError("E_FLAG", "show: give a run id, e.g. 20261205T091714Z-aee9c2 or aee9c2");
  const hits: string[] = [];
  for (const stack of await dirs(resultsRoot))
    for (const scenario of await dirs(path.join(resultsRoot, stack)))
      for (const run of await dirs(path.join(resultsRoot, stack, scenario)))
        if (run === want || shortRunId(run) === want || run.startsWith(want))
          hits.push(path.join(resultsRoot, stack, scenario, run));
  const exact = hits.filter((h) => path.basename(h) === want);
  const chosen = exact.length === 1 ? exact : hits;
  if (chosen.length === 0)
    throw new ConfigurationError(
      "E_NO_RESULTS",
      `no run "${want}" under ${resultsRoot} (a run's id is the last part of its directory, results/<stack>/<scenario>/<run-id>/)`,
      { field: "run" },
    );
  if (chosen.length > 1)
    throw new ConfigurationError(
      "E_FLAG",
      `"${want}" names ${chosen.length} runs: ${chosen
        .slice(0, 5)
        .map((h) => path.relative(resultsRoot, h))
        .join(", ")}${chosen.length > 5 ? ", …" : ""}; give more of the id`,
      { field: "run" },
    );
  const dir = chosen[0]!;
  const file = path.join(dir, "run.json");
  try {
    return { dir, record: JSON.parse(await readFile(file, "utf8")) as RunRecord };
  } catch (err) {
    throw new ConfigurationError("E_RESULTS_READ", `${file}: cannot be read (${(err as Error).message})`, {
      cause: err,
    });
  }
}

/** The widest a line of `show` is, in columns: longer lines of the run block are folded (ui/format.ts wrap). */
export const SHOW_WIDTH = 120;

/**
 * The run block of the run `id` names under `resultsRoot` (see findRun for the errors), its lines folded to
 * SHOW_WIDTH columns (`--verbose` prints the same block unfolded).
 */
export async function showRun(resultsRoot: string, id: string): Promise<string> {
  const { record } = await findRun(resultsRoot, id);
  return describeRun(record, resultsRoot)
    .split("\n")
    .flatMap((l) => wrap(l, SHOW_WIDTH))
    .join("\n");
}
