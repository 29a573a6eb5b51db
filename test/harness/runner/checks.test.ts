import { describe, expect, it } from "vitest";
import { evaluateChecks } from "../../../harness/runner/checks.ts";

describe("evaluateChecks", () => {
  const result = { ledger: { lost: 0, duplicated: 3, unexpected: 0 }, summary: { rowsPerSecond: 5000 } };

  it("passes exact and bounded checks that hold and fails those that do not", () => {
    const out = evaluateChecks(
      [
        { path: "ledger.lost", equals: 0 },
        { path: "ledger.duplicated", equals: 0 },
        { path: "summary.rowsPerSecond", min: 4000, max: 6000 },
      ],
      result,
    );
    expect(out.map((c) => [c.check, c.ok])).toEqual([
      ["ledger.lost", true],
      ["ledger.duplicated", false],
      ["summary.rowsPerSecond", true],
    ]);
    expect(out[1]).toMatchObject({ actual: 3, expected: "= 0" });
  });

  it("fails a check whose path resolves to nothing", () => {
    expect(evaluateChecks([{ path: "ledger.nonsense", equals: 0 }], result)[0]).toMatchObject({
      ok: false,
      actual: null,
    });
  });

  it("always fails a run that stored rows it never sent", () => {
    const out = evaluateChecks([], { ledger: { unexpected: 12 }, summary: {} });
    expect(out).toEqual([expect.objectContaining({ check: "ledger.unexpected", ok: false, actual: 12 })]);
  });
});

describe("the content check's verdict", () => {
  it("always fails a run whose stored rows differ from what was sent, and names the check once", () => {
    expect(evaluateChecks([], { ledger: { altered: 2, unexpected: 0 }, summary: {} })).toEqual([
      expect.objectContaining({
        check: "ledger.altered",
        ok: false,
        actual: 2,
        expected: expect.stringMatching(/^= 0 \(stored rows must hold what was sent/),
      }),
    ]);
    expect(
      evaluateChecks([{ path: "ledger.altered", equals: 0 }], { ledger: { altered: 1 }, summary: {} }).filter(
        (c) => c.check === "ledger.altered",
      ),
    ).toHaveLength(1);
    expect(evaluateChecks([], { ledger: { altered: 0 }, summary: {} })).toEqual([]);
  });
});
