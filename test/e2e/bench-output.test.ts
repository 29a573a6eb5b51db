// What `ingestbench bench` prints, for real: a two-cell sweep of pg-copy into PostgreSQL on a capped local stack,
// through the CLI as users run it, piped (plain progress). The default output is a line per run and the table, every
// line within 100 columns; the table names as best cell the one whose run.json recorded the highest rows/s; `show`
// prints a run in full from its run.json. The load is paced (rows/s are not asserted, only read back from run.json).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../harness/results/types.ts";
import { shortRunId } from "../../ui/run-line.ts";
import { projectRoot } from "../helpers/bench.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-bench-output-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `ingestbench <args>` from the project root, piped: exit code, stdout, stderr (killed after `ms`). */
function cli(ms: number, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/ingestbench.js", ...args], {
      cwd: projectRoot,
      env: { ...process.env, COLUMNS: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    // SIGINT: the CLI tears its runs down before it exits
    const timer = setTimeout(() => child.kill("SIGINT"), ms);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const SCENARIO = `name: ui-sweep
description: two cells of pg-copy into PostgreSQL, paced (the output test of test/e2e/bench-output.test.ts)
event:
  - { name: ts, type: timestamp }
  - { name: msg, type: string, size: 60 }
generator: { pg-copy: { batch: 500, connections: 1, rate: 3000, seed: 7 } }
collector: none
sink: { postgres: { version: "18.4.0-beta.17" } }
warmup: 1s
duration: 4s
interval: 1s
drain: { timeout: 20s }
replicates: 1
matrix: { generator.pg-copy.batch: [500, 1500] }
checks:
  - { ledger.lost: 0 }
`;

describe("bench output (real PostgreSQL, local-quarter-core)", () => {
  it("real: a line per run, the per-cell table last naming the recorded best cell, ≤ 20 lines of ≤ 100 columns; show prints a run in full", async () => {
    const scenario = path.join(tmp, "ui-sweep.yaml");
    writeFileSync(scenario, SCENARIO);
    const results = path.join(tmp, "results");
    const began = Date.now();
    const r = await cli(
      240_000,
      "bench",
      "--stack",
      "local-quarter-core",
      "--progress",
      "plain",
      "--results",
      results,
      scenario,
    );
    expect(r.err + r.out).not.toMatch(/unexpected error/);
    expect(r.code).toBe(0);
    const out = r.out.trimEnd().split("\n");
    const err = r.err.trimEnd().split("\n");
    const all = [...err, ...out];
    // piped, the live line's stand-in is a progress line ("[1/2] …") at most every 30 s; the rest is at most 20 lines
    const progress = all.filter((l) => /^\[\d+\/\d+\] /.test(l));
    expect(progress.length).toBeLessThanOrEqual(Math.floor((Date.now() - began) / 30_000));
    expect(all.length - progress.length, all.join("\n")).toBeLessThanOrEqual(20);
    expect(all.filter((l) => [...l].length > 100)).toEqual([]);
    // the runs as recorded
    const dir = path.join(results, "local-quarter-core", "ui-sweep");
    const runs = readdirSync(dir).map(
      (id) => JSON.parse(readFileSync(path.join(dir, id, "run.json"), "utf8")) as RunRecord,
    );
    expect(runs.map((x) => x.cell).sort()).toEqual(["batch=1500", "batch=500"]);
    for (const run of runs) {
      expect(run.ledger?.lost).toBe(0);
      // one line per run, with its rows/s as recorded and its short id
      const line = out.find((l) => l.startsWith(`ok  local-quarter-core ${run.cell} `));
      expect(line).toBeDefined();
      expect(line).toContain(`${Math.round(run.summary!.rowsPerSecond).toLocaleString("en-US")} rows/s`);
      expect(line).toContain(`run ${shortRunId(run.runId)}`);
    }
    const best = runs.reduce((a, b) => (b.summary!.rowsPerSecond > a.summary!.rowsPerSecond ? b : a));
    expect(out).toContain(
      `best ${best.cell} at ${Math.round(best.summary!.rowsPerSecond).toLocaleString("en-US")} rows/s; ${out.find((l) => l.startsWith("best "))!.split("; ")[1]}`,
    );
    expect(
      out.some((l) => l === "one run a cell: the knee compares single runs (a rise under 5 % is none)"),
    ).toBe(true);
    const bestRow = out.find((l) => l.startsWith(`│ ${best.cell} `))!;
    expect(bestRow).toMatch(/│ best/);
    // the table ends the output: its bottom border, then only the line naming the columns --wide adds
    const bottom = out.findIndex((l) => l.startsWith("└"));
    expect(bottom).toBeGreaterThan(0);
    expect(out.slice(bottom + 1).every((l) => l.startsWith("more columns with --wide: "))).toBe(true);
    // show: the run block from run.json, by the short id the line ends with
    const shown = await cli(60_000, "show", "--results", results, shortRunId(best.runId));
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(new RegExp(`^run ${best.runId}: ok `));
    expect(shown.out).toContain(`ledger: sent ${best.ledger!.sent.toLocaleString("en-US")}, stored`);
    expect(shown.out).toMatch(/\n {2}bottleneck: /);
  }, 300_000);
});
