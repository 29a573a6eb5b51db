// How the content check is shown: the run's lines (harness/runner/drive.ts contentLine) and compare's ledger column
// (harness/results/format.ts ledgerCell).
import { describe, expect, it } from "vitest";
import type { FidelityResult } from "../../../core/fidelity.ts";
import { ledgerCell } from "../../../harness/results/format.ts";
import { ledgerTotals } from "../../../harness/results/caps.ts";
import type { RunRecord } from "../../../harness/results/types.ts";
import { contentLine, describeRun } from "../../../ui/run-block.ts";

const fidelity = (over: Partial<FidelityResult>): FidelityResult => ({
  mode: "all",
  limits: { all: 1_000_000, sample: 10_000 },
  seqsCompared: 40_000,
  rowsCompared: 40_001,
  altered: 0,
  alteredByField: {},
  examples: [],
  compared: [],
  notCompared: [],
  seconds: 0.5,
  ...over,
});
const record = (f: NonNullable<RunRecord["ledger"]>["fidelity"]): RunRecord =>
  ({ ledger: { fidelity: f } }) as unknown as RunRecord;

describe("the content check in the terminal and in compare", () => {
  it("says exact with how many rows it compared, or ALTERED with the first two examples", () => {
    expect(contentLine(record(fidelity({})))).toBe("  content: exact, 40,001 rows compared (all)");
    expect(contentLine(record(fidelity({ mode: "sample", sampleSize: 10_000, rowsCompared: 10_000 })))).toBe(
      "  content: exact, 10,000 rows compared (sample of 10,000 seqs)",
    );
    const altered = fidelity({
      altered: 3,
      examples: [
        { gen: 0, seq: 202, field: "msg", expected: '"abc"', stored: '"abcx"' },
        {
          gen: 0,
          seq: 303,
          field: "ts",
          expected: "2024-11-07T00:00:00.303Z",
          stored: "2024-11-07T01:00:00.303Z",
        },
        { gen: 0, seq: 404, field: "n", expected: "1", stored: "2" },
      ],
    });
    expect(contentLine(record(altered))).toBe(
      '  content: ALTERED 3 of 40,001 rows compared (all); gen 0 seq 202 msg: sent "abc", stored "abcx"; gen 0 seq 303 ts: sent 2024-11-07T00:00:00.303Z, stored 2024-11-07T01:00:00.303Z',
    );
    expect(
      contentLine(
        record({ unavailable: "the x verifier cannot read stored rows back: content not compared" }),
      ),
    ).toMatch(/^ {2}content: not compared \(/);
    expect(contentLine({ ledger: null } as unknown as RunRecord)).toBeNull();
  });

  it("after a replay, says how many of the file's lines the generators changed before sending (compared as sent)", () => {
    const f = fidelity({
      replay: { bytes: 300, indexMarks: 0, seeks: 0, indexDropped: null, seconds: 1 },
      replayLines: { lines: 3_300, cut: 300, repaired: 301 },
    });
    expect(contentLine(record(f))).toBe(
      "  content: exact, 40,001 rows compared (all); replay file: 300 B read; of the file's 3,300 lines the generators sent 300 cut at 64 KiB and 301 with invalid UTF-8 or NUL replaced: compared as sent, not as in the file",
    );
    const none = fidelity({
      replay: { bytes: 300, indexMarks: 0, seeks: 0, indexDropped: null, seconds: 1 },
      replayLines: { lines: 3_300, cut: 0, repaired: 0 },
    });
    expect(contentLine(record(none))).toBe(
      "  content: exact, 40,001 rows compared (all); replay file: 300 B read",
    );
  });

  it("after a replay, says how much of the file the check read, and how (the generators' index, or why not)", () => {
    const seeks = fidelity({
      mode: "sample",
      sampleSize: 10_000,
      rowsCompared: 10_000,
      replay: { bytes: 650 * 2 ** 20, indexMarks: 262_144, seeks: 9_812, indexDropped: null, seconds: 1 },
    });
    expect(contentLine(record(seeks))).toBe(
      "  content: exact, 10,000 rows compared (sample of 10,000 seqs); replay file: 650.0 MiB read (9,812 seeks to the generators' index of 262,144 marks)",
    );
    const dropped = fidelity({
      replay: {
        bytes: 16 * 2 ** 30,
        indexMarks: 0,
        seeks: 0,
        indexDropped: "the index is of a 5-byte file; this one has 6 bytes",
        seconds: 1,
      },
    });
    expect(contentLine(record(dropped))).toBe(
      "  content: exact, 40,001 rows compared (all); replay file: 16.0 GiB read (the generators' index not used: the index is of a 5-byte file; this one has 6 bytes)",
    );
    expect(
      contentLine(
        record(fidelity({ replay: { bytes: 300, indexMarks: 0, seeks: 0, indexDropped: null, seconds: 1 } })),
      ),
    ).toBe("  content: exact, 40,001 rows compared (all); replay file: 300 B read");
    const changed = fidelity({
      altered: 1,
      examples: [{ gen: 0, seq: 5, field: "msg", expected: "sha256:ab", stored: "sha256:cd" }],
      replay: { bytes: 300, indexMarks: 0, seeks: 0, indexDropped: null, seconds: 1 },
      replayModified: { at: "2026-12-04T00:41:12.000Z", generatorsStarted: "2026-12-04T00:40:55.000Z" },
    });
    expect(contentLine(record(changed))).toBe(
      "  content: ALTERED 1 of 40,001 rows compared (all); replay file: 300 B read; the replay file was modified at 2026-12-04T00:41:12.000Z, after the generators started (2026-12-04T00:40:55.000Z): the lines compared are the file's as it is now, so altered rows may be the file's doing, not the pipeline's; gen 0 seq 5 msg: the file now sha256:ab, stored sha256:cd",
    );
  });

  it("an interrupted run says its figures are live estimates and that no ledger was taken", () => {
    const r = {
      runId: "20261201T000000Z-abcdef",
      stack: "local-quarter-core",
      scenario: "quickstart",
      status: "interrupted",
      limits: {},
      ledger: null,
      checks: [],
      summary: {
        rowsPerSecond: 22193,
        mibPerSecond: 5.27,
        bytesPerRow: 250,
        measuredSeconds: 15.9,
        sinkCores: 0.2,
        throttledShare: null,
        sinkNetworkMbitPerSecond: 40,
        bottleneck: { resource: "client", evidence: "x" },
        estimated: "live estimates: the run ended before its samples were settled (…)",
      },
    } as unknown as RunRecord;
    const text = describeRun(r, "/tmp/results");
    expect(text).toContain("\n  !! live estimates: the run ended before its samples were settled (…)\n");
    expect(text).toContain(
      "\n  ledger: not taken (the run ended, interrupted, before its ledger was counted: nothing says whether rows were lost)",
    );
  });

  it("compare's ledger column is exact only when nothing was altered either", () => {
    expect(ledgerCell(1, { lost: 0, duplicated: 0, stored: 10, sent: 10, altered: 0 })).toBe(
      "exact (10 stored)",
    );
    expect(ledgerCell(1, { lost: 0, duplicated: 0, stored: 10, sent: 10, altered: 2 })).toBe(
      "lost 0, dup 0, altered 2",
    );
    expect(ledgerCell(1, { lost: 1, duplicated: 0, stored: 9, sent: 10 })).toBe("lost 1, dup 0");
  });

  it("says where sent was inferred from the collector's own counter (generator: none), in the run's lines and in compare", () => {
    expect(ledgerCell(2, { lost: 0, duplicated: 0, stored: 10, sent: 10, inferred: 2 })).toBe(
      "exact (10 stored; sent inferred)",
    );
    expect(ledgerCell(3, { lost: 1, duplicated: 0, stored: 9, sent: 10, inferred: 1 })).toBe(
      "lost 1, dup 0; sent inferred in 1/3 runs",
    );
    expect(
      ledgerTotals([
        { ledger: { lost: 0, duplicated: 0, stored: 5, sent: 5, inferred: { from: "collector" } } },
        { ledger: { lost: 0, duplicated: 0, stored: 5, sent: 5 } },
      ] as unknown as RunRecord[]),
    ).toEqual({
      lost: 0,
      duplicated: 0,
      stored: 10,
      sent: 10,
      altered: 0,
      inferred: 1,
      ledgers: 2,
      withoutLedger: [],
    });
    const r = {
      runId: "r",
      stack: "s",
      scenario: "x",
      status: "ok",
      limits: {},
      checks: [],
      error: null,
      summary: null,
      ledger: {
        sent: 2000,
        accepted: 2000,
        stored: 2000,
        distinct: 2000,
        lost: 0,
        duplicated: 0,
        overwritten: 0,
        rejected: 0,
        unexpected: 0,
        missingRanges: [],
        inferred: {
          from: "collector",
          by: "syslog-ng example-msg-generator()",
          counter: "syslog-ng-ctl stats: source s_gen processed",
          made: [2000],
          outsideRange: 0,
        },
      },
    } as unknown as RunRecord;
    const lines = describeRun(r).split("\n");
    expect(lines).toContain(
      "  sent inferred: syslog-ng example-msg-generator() made 2,000 by its own count (syslog-ng-ctl stats: source s_gen processed); 0 stored seqs outside 0 .. made − 1",
    );
    expect(lines.some((l) => l.startsWith("  ledger (sent inferred): sent 2,000, stored 2,000"))).toBe(true);
  });
});
