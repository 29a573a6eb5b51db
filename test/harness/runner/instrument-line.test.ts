// How the instrument's own cost is shown after each run (harness/runner/drive.ts instrumentLine): the verifier's share
// of the sink's CPU cap, or of the machine's cores when the sink had no cap below them (docs/decisions/0008).
import { describe, expect, it } from "vitest";
import type { InstrumentRecord, RunRecord } from "../../../harness/results/types.ts";
import { instrumentLine } from "../../../ui/run-block.ts";

const instrument = (verifier: Partial<InstrumentRecord["verifier"]>): RunRecord =>
  ({
    instrument: {
      measureSeconds: 30,
      harness: {
        cpuSeconds: 0.3,
        cores: 0.01,
        rss: {
          openBytes: 100 * 2 ** 20,
          lastBytes: 90 * 2 ** 20,
          maxBytes: 103 * 2 ** 20,
          afterLoadMaxBytes: 107 * 2 ** 20,
        },
      },
      verifier: {
        samples: 30,
        sampleWallMs: 90,
        sink: null,
        sinkCapCores: 0.25,
        shareOfSinkCap: 0.00265,
        basis: "sample wall time",
        ...verifier,
      },
      overhead: {
        provisionAndSinkStartMs: 200,
        prepareMs: 10,
        collectorsAndGeneratorsUpMs: 200,
        ledgerMs: 3800,
        fidelityMs: 3800,
        afterLoadMs: 3800,
        teardownMs: 1100,
        completionCheckMs: 3300,
        completionCheckWalBytes: 0,
        settleMs: 5700,
        finalCountMs: null,
      },
    },
  }) as unknown as RunRecord;

describe("the instrument line", () => {
  it("names the sink's cap, or the machine's cores when the sink was uncapped; the harness's memory after the load", () => {
    expect(instrumentLine(instrument({}))).toBe(
      "  instrument: harness 1.00 % of a core (RSS 100 MiB → 90 MiB, max 103 MiB, after the load max 107 MiB); verifier 0.265 % of the sink's 0.25-core cap" +
        " (sample wall time, 30 samples); overhead: provision + sink start 0.2 s, schema 0.0 s, generators up 0.2 s, completion check 3.3 s (sink WAL 0 MiB)," +
        " settle 5.7 s, ledger 3.8 s, content 3.8 s (both 3.8 s), teardown 1.1 s",
    );
    expect(instrumentLine(instrument({ sinkCapCores: 2, sinkUncapped: true }))).toMatch(
      /; verifier 0\.265 % of the machine's 2 cores \(the sink's CPU uncapped; sample wall time, 30 samples\);/,
    );
    // older results, without the flag, keep the old wording
    expect(instrumentLine(instrument({ sinkCapCores: 2 }))).toMatch(
      /; verifier 0\.265 % of the sink's 2-core cap \(/,
    );
    expect(instrumentLine({ instrument: null } as unknown as RunRecord)).toBeNull();
  });

  it("counts the completion check's passes when there was more than one (run.json completionChecks)", () => {
    const passes = (completionChecks?: number): string => {
      const r = instrument({});
      Object.assign(r.instrument!.overhead, completionChecks === undefined ? {} : { completionChecks });
      return instrumentLine(r)!;
    };
    expect(passes(3)).toContain(", completion check 3.3 s in 3 passes (sink WAL 0 MiB),");
    expect(passes(1)).toContain(", completion check 3.3 s (sink WAL 0 MiB),");
    expect(passes()).toContain(", completion check 3.3 s (sink WAL 0 MiB),");
  });

  it("says how the ledger read the sink: the completion check's pass, or its own pass and why (run.json ledgerPass)", () => {
    const withPass = (ledgerPass: object, settledInCompletionPass?: boolean): string => {
      const r = instrument({});
      Object.assign(r.instrument!.overhead, {
        ledgerPass,
        ...(settledInCompletionPass ? { settledInCompletionPass } : {}),
      });
      return instrumentLine(r)!;
    };
    expect(
      withPass(
        {
          tookCompletionPass: true,
          detail:
            "the completion check's last pass (no transaction committed at the sink since its snapshot)",
        },
        true,
      ),
    ).toContain(
      " settle 5.7 s (from the completion check's pass), ledger 3.8 s (the completion check's pass), content",
    );
    expect(
      withPass({
        tookCompletionPass: false,
        detail: "its own pass (2 transactions committed at the sink since the completion check's snapshot)",
      }),
    ).toContain(
      " settle 5.7 s, ledger 3.8 s (its own pass: 2 transactions committed at the sink since the completion check's snapshot), content",
    );
  });
});
