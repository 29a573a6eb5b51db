// ui/show.ts: a run in full from its run.json, found by id, short id or prefix, also for runs recorded before ui/
// existed (test/fixtures/results: real runs of 2026-12-01).
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { costLine, describeRun, storageLine } from "../../ui/run-block.ts";
import { findRun, showRun, SHOW_WIDTH } from "../../ui/show.ts";
import { width } from "../../ui/format.ts";
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
  it("folds every line to 120 columns (the contention line of these runs was 487), dropping nothing", async () => {
    const ids = readdirSync(fixtures).flatMap((stack) =>
      readdirSync(path.join(fixtures, stack)).flatMap((scenario) =>
        readdirSync(path.join(fixtures, stack, scenario)).filter((d) => /Z-[0-9a-f]{6}$/.test(d)),
      ),
    );
    expect(ids.length).toBeGreaterThanOrEqual(7);
    const words = (t: string): string => t.replace(/\s+/g, " ").trim();
    let folded = 0;
    for (const id of ids) {
      const { record } = await findRun(fixtures, id);
      const block = describeRun(record, fixtures);
      const shown = await showRun(fixtures, id);
      expect(shown.split("\n").filter((l) => width(l) > SHOW_WIDTH)).toEqual([]);
      expect(words(shown)).toBe(words(block));
      if (block.split("\n").some((l) => width(l) > SHOW_WIDTH)) folded++;
    }
    expect(folded).toBe(ids.length); // every fixture had a line over 120 columns before folding
    // a "key: value" line continues 4 columns deeper than itself, broken after a "; "
    const text = await showRun(fixtures, "cb31b5");
    const contended = text.split("\n").findIndex((l) => l.startsWith("  !! contended: "));
    expect(text.split("\n")[contended]).toMatch(/;$/);
    expect(text.split("\n")[contended + 1]).toMatch(/^ {6}\S/);
  });
});

describe("the run block's cost and storage lines", () => {
  it("cost: the whole stack's core-seconds with each host's, and why there are no dollars; dollars with their prices", () => {
    const cost = {
      coreSecondsPerMillionRows: 48.8,
      hostsCoreSeconds: { loadgen: 0.12, collector: 1.01, sink: 1.66 },
      noPrice: "no price for every host (sink: no pricePerHour in the stack file)",
    };
    expect(costLine({ cost } as never)).toBe(
      "cost: 48.8 core-s per million rows for the whole stack (loadgen 0.12, collector 1.01, sink 1.66 core-s); no price for every host (sink: no pricePerHour in the stack file)",
    );
    const priced = {
      ...cost,
      noPrice: undefined,
      usdPerMillionRows: 0.000189,
      usdPerGiB: 0.0021,
      usdPerGiBOf: "log",
      prices: { source: "stack file", date: "2026-12-01" },
    };
    expect(costLine({ cost: priced } as never)).toBe(
      "cost: $0.000189 per million rows, $0.00210 per GiB of log lines (prices: stack file, 2026-12-01); 48.8 core-s per million rows for the whole stack (loadgen 0.12, collector 1.01, sink 1.66 core-s)",
    );
    expect(costLine({} as never)).toBeNull();
  });

  it("storage: bytes, per million rows, compression where the sink keeps it, and the source; or why not read", () => {
    expect(
      storageLine({
        storage: {
          bytes: 3_452_729,
          uncompressedBytes: 60_000_000,
          compression: 17.4,
          rows: 16_000,
          bytesPerMillionRows: 215_795_563,
          source: "_stats/store primaries",
        },
      }),
    ).toBe(
      "storage: 3.3 MiB on the sink's disk for 16,000 rows, 205.8 MiB per million rows, 17.4× compressed (_stats/store primaries)",
    );
    expect(storageLine({ storage: { unavailable: "refused" } })).toBe("storage: not read (refused)");
    expect(storageLine({})).toBeNull();
  });
});
