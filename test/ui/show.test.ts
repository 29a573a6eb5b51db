// ui/show.ts: a run in full from its run.json, found by id, short id or prefix, also for runs recorded before ui/
// existed (test/fixtures/results: real runs of 2026-12-01).
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findRun, showRun } from "../../ui/show.ts";
import { projectRoot } from "../helpers/bench.ts";

const fixtures = path.join(projectRoot, "test/fixtures/results");

describe("ui/show.ts", () => {
  it("an old run by its short id: the run block with its figures from run.json", async () => {
    const text = await showRun(fixtures, "a0a598");
    expect(text.split("\n")[0]).toMatch(
      /^run 20261201T154516Z-a0a598: ok {2}→ .*local-pipeline\/syslog-ng-postgres\/20261201T154516Z-a0a598\/$/,
    );
    // recorded before log bytes were counted: its wire MiB/s alone, said as such
    expect(text).toContain("  1,998 rows/s, 0.66 wire MiB/s over 6.0 s;");
    expect(text).toContain(
      "  ledger: sent 36,500, stored 36,500, distinct 36,500, lost 0, duplicated 0, rejected 0",
    );
    const byId = await findRun(fixtures, "20261201T154516Z-a0a598");
    expect(byId.record.runId).toBe("20261201T154516Z-a0a598");
  });

  it("refuses an id that names several runs or none, saying what to give", async () => {
    await expect(findRun(fixtures, "20261201T15")).rejects.toThrow(/names 7 runs: .*; give more of the id/);
    await expect(findRun(fixtures, "ffffff")).rejects.toMatchObject({ code: "E_NO_RESULTS" });
  });
});
