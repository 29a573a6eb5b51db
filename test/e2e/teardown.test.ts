// Teardown leaves no cgroup, namespace, process or temporary directory: after an error and after SIGINT
// (success is covered by the other end-to-end tests).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, onTestFinished } from "vitest";
import { leftovers } from "../helpers/leftovers.ts";
import { newBenchRun, projectRoot, quickstartPlan } from "../helpers/bench.ts";

describe("teardown", () => {
  it("after an error (pinned version not installed): the run is written with status error and nothing is left", async () => {
    const run = newBenchRun("local-quarter-core", quickstartPlan({ warmup: "1s", duration: "2s", sinkVersion: "17.2.0-beta.15" }));
    const record = await run.run();
    expect(record.status).toBe("error");
    expect(record.error!.message).toMatch(/17\.2\.0-beta\.15/);
    expect(record.error!.message).toMatch(/18\.4\.0-beta\.17/);
    expect(JSON.parse(readFileSync(path.join(run.dir, "run.json"), "utf8")).status).toBe("error");
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  it("after SIGINT to the CLI mid-run: exit 130, results so far written as interrupted, nothing left", async () => {
    const results = mkdtempSync(path.join(os.tmpdir(), "ibtest-sigint-"));
    onTestFinished(() => rmSync(results, { recursive: true, force: true }));
    const child = spawn(process.execPath, ["bin/ingestbench.js", "bench", "--stack", "local-quarter-core", "--results", results, "--warmup", "1s", "--duration", "60s", "scenarios/quickstart.yaml"],
      { cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => { stderr += d; });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // wait until the run has written at least three series points, bounded
    const runDirOf = (): string | undefined => {
      const base = path.join(results, "local-quarter-core", "quickstart");
      if (!existsSync(base)) return undefined;
      const ids = readdirSync(base);
      return ids[0] ? path.join(base, ids[0]) : undefined;
    };
    let dir: string | undefined;
    for (let i = 0; i < 120; i++) {
      dir = runDirOf();
      const series = dir && existsSync(path.join(dir, "series.jsonl")) ? readFileSync(path.join(dir, "series.jsonl"), "utf8") : "";
      if (series.split("\n").filter(Boolean).length >= 4) break;
      await sleep(500);
    }
    expect(dir, stderr).toBeDefined();
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    const record = JSON.parse(readFileSync(path.join(dir!, "run.json"), "utf8"));
    expect(record.status).toBe("interrupted");
    // what was measured before the signal is summarised, not thrown away
    expect(record.summary.rowsPerSecond).toBeGreaterThan(0);
    expect(readFileSync(path.join(dir!, "series.jsonl"), "utf8").split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(4);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
