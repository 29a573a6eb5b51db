/**
 * Results on disk: results/<stack>/<scenario>/<run-id>/{run.json, series.jsonl}.
 * series.jsonl is appended while the run goes (so an interrupted run keeps what it measured) and run.json is
 * written atomically (temp file + rename) at the end, and also once at the start with status "running".
 */
import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { RunRecord, SeriesPoint } from "./types.ts";
import { ConfigurationError } from "../../core/errors.ts";
import { closestKey } from "../../core/yaml.ts";
import { redact } from "../../core/secrets.ts";

/** Write `data` to `file` atomically: readers see the old or the new file, never half of one. */
export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, file);
}

export function runDir(resultsRoot: string, stack: string, scenario: string, runId: string): string {
  return path.join(resultsRoot, stack, scenario, runId);
}

/** An open run directory: append series points, then write the record. */
export class RunWriter {
  private series: WriteStream | null = null;
  constructor(readonly dir: string) {}

  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    this.series = createWriteStream(path.join(this.dir, "series.jsonl"), { flags: "a" });
  }

  append(point: SeriesPoint): void {
    this.series?.write(`${redact(JSON.stringify(point))}\n`);
  }

  /** Replace series.jsonl with `points` (a run that fills in its points after the load: harness/runner/run.ts deliveryAfterLoad). */
  async rewriteSeries(points: readonly SeriesPoint[]): Promise<void> {
    await this.close();
    await writeFileAtomic(
      path.join(this.dir, "series.jsonl"),
      points.map((p) => `${redact(JSON.stringify(p))}\n`).join(""),
    );
    await this.open();
  }

  async writeRecord(record: RunRecord | (Omit<RunRecord, "status"> & { status: "running" })): Promise<void> {
    // error messages may quote a command line or a config: every known secret is redacted (core/secrets.ts)
    await writeFileAtomic(path.join(this.dir, "run.json"), `${redact(JSON.stringify(record, null, 2))}\n`);
  }

  async close(): Promise<void> {
    const s = this.series;
    this.series = null;
    if (s)
      await new Promise<void>((resolve, reject) =>
        s.end((err?: Error | null) => (err ? reject(err) : resolve())),
      );
  }
}

/** Every run.json under results/<stack>/<scenario>/, oldest first (run ids start with a UTC timestamp). */
export async function loadRuns(resultsRoot: string, stack: string, scenario: string): Promise<RunRecord[]> {
  const base = path.join(resultsRoot, stack, scenario);
  let ids: string[];
  try {
    ids = (await readdir(base)).sort();
  } catch {
    return [];
  }
  const out: RunRecord[] = [];
  for (const id of ids) {
    try {
      out.push(JSON.parse(await readFile(path.join(base, id, "run.json"), "utf8")) as RunRecord);
    } catch {
      // a directory without a readable run.json is a run killed before its first write; nothing to compare
    }
  }
  return out;
}

/** Read a run's series.jsonl. */
export async function loadSeries(dir: string): Promise<SeriesPoint[]> {
  const text = await readFile(path.join(dir, "series.jsonl"), "utf8");
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SeriesPoint);
}

/**
 * E_NO_RESULTS for a (stack, scenario) without runs, saying which is missing: when the stack has no results at all,
 * the stacks that do (with the nearest name, core/yaml.ts closestKey) and whether a stack file of that name exists
 * here (stacks/Pulumi.<stack>.yaml, from the working directory); else the scenarios it has results of. The command
 * that would make the results (`command`, "" for none) is suggested only when its stack and scenario files exist.
 */
export async function noResultsError(
  resultsRoot: string,
  stack: string,
  scenario: string,
  command = `node bin/ingestbench.js bench --stack ${stack} scenarios/${scenario}.yaml`,
): Promise<ConfigurationError> {
  const dirs = async (d: string): Promise<string[]> =>
    (await readdir(d, { withFileTypes: true }).catch(() => []))
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  const near = (name: string, names: string[]): string => {
    const k = closestKey(name, names);
    return k ? `; did you mean "${k}"?` : "";
  };
  const stackFile = existsSync(path.join("stacks", `Pulumi.${stack}.yaml`));
  const run =
    command && stackFile && existsSync(path.join("scenarios", `${scenario}.yaml`)) ? `; run: ${command}` : "";
  const stacks = await dirs(resultsRoot);
  if (!stacks.includes(stack)) {
    const known = stacks.length
      ? `stacks with results: ${stacks.join(", ")}`
      : "no stack has results there yet";
    const file = stackFile
      ? `stacks/Pulumi.${stack}.yaml exists: it has not been benchmarked yet`
      : `no stacks/Pulumi.${stack}.yaml here either (\`node bin/ingestbench.js stacks\` lists the stacks)`;
    return new ConfigurationError(
      "E_NO_RESULTS",
      `no results of stack "${stack}" under ${resultsRoot} (${known})${near(stack, stacks)}; ${file}${run}`,
      { field: "stack" },
    );
  }
  const scenarios = (await dirs(path.join(resultsRoot, stack))).filter((d) => !d.includes("."));
  return new ConfigurationError(
    "E_NO_RESULTS",
    `no results for scenario "${scenario}" on stack "${stack}" under ${resultsRoot}/${stack}/${scenario} (its scenarios with results: ${scenarios.join(", ") || "none"})${near(scenario, scenarios)}${run}`,
    { field: "scenario" },
  );
}
