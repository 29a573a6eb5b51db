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
    const run = newBenchRun(
      "local-quarter-core",
      quickstartPlan({ warmup: "1s", duration: "2s", sinkVersion: "17.2.0-beta.15" }),
    );
    const record = await run.run();
    expect(record.status).toBe("error");
    expect(record.error!.message).toMatch(/17\.2\.0-beta\.15/);
    expect(record.error!.message).toMatch(/18\.4\.0-beta\.17/);
    expect(JSON.parse(readFileSync(path.join(run.dir, "run.json"), "utf8")).status).toBe("error");
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });

  /** Start a 60 s bench (the CLI itself, or through `npm run ingestbench`), wait for 4 series points, signal `target`. */
  async function interruptMidRun(
    how: "cli" | "npm",
    signal: NodeJS.Signals,
  ): Promise<{ code: number | null; dir: string; stderr: string }> {
    const results = mkdtempSync(path.join(os.tmpdir(), "ibtest-sig-"));
    onTestFinished(() => rmSync(results, { recursive: true, force: true }));
    const args = [
      "bench",
      "--stack",
      "local-quarter-core",
      "--results",
      results,
      "--warmup",
      "1s",
      "--duration",
      "60s",
      "scenarios/quickstart.yaml",
    ];
    const child =
      how === "cli"
        ? spawn(process.execPath, ["bin/ingestbench.js", ...args], {
            cwd: projectRoot,
            stdio: ["ignore", "pipe", "pipe"],
          })
        : spawn("npm", ["run", "--silent", "ingestbench", "--", ...args], {
            cwd: projectRoot,
            stdio: ["ignore", "pipe", "pipe"],
          });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // wait until the run has written at least four series points, bounded
    const runDirOf = (): string | undefined => {
      const base = path.join(results, "local-quarter-core", "quickstart");
      if (!existsSync(base)) return undefined;
      const ids = readdirSync(base);
      return ids[0] ? path.join(base, ids[0]) : undefined;
    };
    let dir: string | undefined;
    for (let i = 0; i < 120; i++) {
      dir = runDirOf();
      const series =
        dir && existsSync(path.join(dir, "series.jsonl"))
          ? readFileSync(path.join(dir, "series.jsonl"), "utf8")
          : "";
      if (series.split("\n").filter(Boolean).length >= 4) break;
      await sleep(500);
    }
    expect(dir, stderr).toBeDefined();
    child.kill(signal);
    const code = await exited;
    // the harness itself must be gone too (npm may exit before it), within the teardown's time
    for (
      let i = 0;
      i < 120 && readFileSync(path.join(dir!, "run.json"), "utf8").includes('"status": "running"');
      i++
    )
      await sleep(500);
    return { code, dir: dir!, stderr };
  }

  function expectInterruptedAndClean(dir: string): void {
    const record = JSON.parse(readFileSync(path.join(dir, "run.json"), "utf8"));
    expect(record.status).toBe("interrupted");
    expect(record.error.code).toBe("E_INTERRUPTED");
    // what was measured before the signal is summarised, not thrown away
    expect(record.summary.rowsPerSecond).toBeGreaterThan(0);
    // PostgreSQL's live samples are estimates settled after the load, which this run never reached: it says so
    expect(record.summary.estimated).toMatch(
      /^live estimates: the run ended before its samples were settled/,
    );
    expect(record.summary.deliveryLatency.unavailable).toMatch(
      /^not read: the run ended before the samples were settled/,
    );
    expect(
      readFileSync(path.join(dir, "series.jsonl"), "utf8").split("\n").filter(Boolean).length,
    ).toBeGreaterThanOrEqual(4);
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  }

  it("after SIGINT to the CLI mid-run: exit 130, results so far written as interrupted, nothing left", async () => {
    const { code, dir } = await interruptMidRun("cli", "SIGINT");
    expect(code).toBe(130);
    expectInterruptedAndClean(dir);
  });

  it("after SIGTERM to npm alone (`npm run ingestbench -- bench`): npm leaves, the harness notices and tears down, nothing left", async () => {
    const { dir } = await interruptMidRun("npm", "SIGTERM");
    expectInterruptedAndClean(dir);
    expect(JSON.parse(readFileSync(path.join(dir, "run.json"), "utf8")).error.message).toMatch(/SIGTERM/);
  });
});
