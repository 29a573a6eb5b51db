// ui/run-line.ts: a run in one line of at most 100 columns, from run records shaped like real run.json files.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../harness/results/types.ts";
import { describeRun, verdictLine } from "../../ui/run-block.ts";
import {
  FLAG_NOTES,
  ledgerWords,
  newFlagNotes,
  runFlagKeys,
  runLine,
  shortRunId,
  type FlagKey,
} from "../../ui/run-line.ts";
import { writeRunRecord } from "../helpers/run-records.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-run-line-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const base = (over: Partial<Parameters<typeof writeRunRecord>[1]> = {}): RunRecord =>
  writeRunRecord(tmp, {
    stack: "local-quarter-core",
    invocation: "2026-12-05T09:17:14.000Z",
    rows: 33598.4,
    ...over,
  });

describe("ui/run-line.ts", () => {
  it("an ok run: status, stack, cell, rows/s, the ledger's verdict, what bound it, the short run id", () => {
    const r = base();
    expect(runLine(r)).toBe(
      `ok  local-quarter-core  33,598 rows/s  exact  bound by cpu (sink)  run ${shortRunId(r.runId)}`,
    );
    expect(shortRunId("20261205T091714Z-aee9c2")).toBe("aee9c2");
  });

  it("the ledger's verdict in words: lost, duplicated, altered, no ledger", () => {
    const r = base();
    expect(ledgerWords(r)).toBe("exact");
    expect(ledgerWords({ ledger: { ...r.ledger!, lost: 1234, stored: r.ledger!.sent - 1234 } })).toBe(
      "1,234 lost",
    );
    expect(ledgerWords({ ledger: { ...r.ledger!, duplicated: 5, altered: 2 } })).toBe(
      "5 duplicated, 2 altered",
    );
    expect(ledgerWords({ ledger: null })).toBe("no ledger");
  });

  it("flags in words, each note once per invocation, every line and note within 100 columns", () => {
    const r = base({ stack: "a-very-long-stack-name-that-someone-chose-for-their-own-machine" });
    r.caps = {
      oversubscribed: true,
      reasons: ["CPU caps add up to 3 cores on a 2-core machine"],
      uncapped: {},
    } as never;
    r.limits.sink!.enforced = "partial";
    r.summary!.contention = { contended: true, reasons: [], hosts: {} } as never;
    r.summary!.saturation = {
      state: "saturated",
      label: "saturated (backpressure)",
      evidence: "x",
      samples: 30,
      beganS: 4,
    };
    r.summary!.bottleneck = {
      resource: "uncertain",
      host: "sink",
      score: 0.4,
      evidence:
        "uncertain (host contention 0.26 / cpu 0.41): loadgen host contention 0.26 is within ±0.05 of its 0.3 threshold (margin -0.04); …",
      candidates: [],
    };
    const keys = runFlagKeys(r);
    expect(keys).toEqual(["partial", "oversubscribed", "contended", "saturated", "unclear"]);
    const line = runLine(r);
    expect(line.length).toBeLessThanOrEqual(100);
    expect(line).toMatch(
      /^ok {2}a-very-long-stack-name-that-someone-chose-for-their-own-machine {2}33,598 rows\/s/,
    );
    expect(runLine(base({ stack: "s" }), 200)).not.toContain("…");
    const said = new Set<FlagKey>();
    const first = newFlagNotes(keys, said);
    expect(first).toHaveLength(5);
    expect(newFlagNotes(keys, said)).toEqual([]); // said once
    for (const n of Object.values(FLAG_NOTES)) expect(`  ${n.note}`.length).toBeLessThanOrEqual(100);
    const wide = runLine({ ...r, stack: "s" }, 1000);
    expect(wide).toContain("bound: unclear (loadgen host contention)");
    expect(wide).toContain("partial caps, oversubscribed, contended, saturated");
  });

  it("an errored run: the error code and as much of its message as fits, never over 100 columns", () => {
    const r = base({ status: "error" });
    r.error = {
      code: "E_VERSION_PIN",
      kind: "verification",
      message: `the pinned sink version 17.2.0-beta.15 is not the installed one (18.4.0): ${"x".repeat(200)}`,
    } as never;
    const line = runLine(r);
    expect(line.length).toBeLessThanOrEqual(100);
    expect(line).toMatch(
      /^ERROR {2}local-quarter-core {2}E_VERSION_PIN: the pinned sink version .*… {2}run /,
    );
    // many flags beside a long error: the flags and the message give way, the short id stays whole
    const crowded = base({ status: "error" });
    crowded.error = r.error;
    crowded.caps = { oversubscribed: ["a"], uncapped: { sink: ["cpu"] } } as never;
    const c = runLine(crowded);
    expect(c.length).toBeLessThanOrEqual(100);
    expect(c.endsWith(`  run ${crowded.runId.slice(-6)}`)).toBe(true);
  });

  it("the run block of a recorded run.json keeps every figure (what --verbose and show print)", () => {
    const r = base();
    const file = path.join(tmp, r.stack, r.scenario, r.runId, "run.json");
    const block = describeRun(JSON.parse(readFileSync(file, "utf8")) as RunRecord, tmp);
    expect(block.split("\n")[0]).toMatch(new RegExp(`^run ${r.runId}: ok {2}→ `));
    expect(block).toContain("33,598 rows/s");
    expect(block).toContain(`ledger: sent ${r.ledger!.sent.toLocaleString("en-US")}, stored`);
  });
});

describe("ui/run-line.ts: fitting", () => {
  it("the cell is named unless it is 'default'; flags that do not fit give way whole, with '…'; the run id stays", () => {
    const r = base({ stack: "local-quarter-core-with-a-longer-name", cell: "batch-lines=1000,workers=2" });
    r.limits.sink!.enforced = "partial";
    r.caps = { oversubscribed: true, reasons: [], uncapped: {} } as never;
    r.summary!.contention = { contended: true, reasons: [], hosts: {} } as never;
    r.summary!.bottleneck = { ...r.summary!.bottleneck, resource: "contention" };
    const id = shortRunId(r.runId);
    // bound by contention: "contended" is not repeated as a flag (its note still comes once)
    expect(runLine(r, 1000)).toBe(
      `ok  local-quarter-core-with-a-longer-name batch-lines=1000,workers=2  33,598 rows/s  exact  bound by contention  partial caps, oversubscribed  run ${id}`,
    );
    const some = `ok  local-quarter-core-with-a-longer-name batch-lines=1000,workers=2  33,598 rows/s  exact  bound by contention  partial caps, …  run ${id}`;
    expect(runLine(r, some.length)).toBe(some);
    const none = `ok  local-quarter-core-with-a-longer-name batch-lines=1000,workers=2  33,598 rows/s  exact  bound by contention  …  run ${id}`;
    expect(runLine(r, none.length)).toBe(none);
    expect(runLine(r, 100)).toHaveLength(100);
    expect(newFlagNotes(runFlagKeys(r), new Set())).toContain(`  ${FLAG_NOTES.contended.note}`);
  });
});

describe("req/s beside rows/s", () => {
  it("a run of an HTTP generator says its requests per second after its rows/s; others do not", () => {
    const r = base();
    r.summary = { ...r.summary!, requestsPerSecond: 2000.4 };
    expect(runLine(r)).toMatch(/ rows\/s {2}2,000 req\/s {2}/);
    expect(runLine(base())).not.toMatch(/req\/s/);
  });
});

describe("the verdict line of the run block", () => {
  it("a saturation found from the offered rate has no start time and says its evidence", () => {
    expect(
      verdictLine({
        state: "saturated",
        label: "saturated (behind its offered rate)",
        evidence: "the generators sent 21,000 of the 100,000 events/s offered (79 % behind)",
        samples: 20,
      }),
    ).toBe(
      "saturated (behind its offered rate) (the generators sent 21,000 of the 100,000 events/s offered (79 % behind))",
    );
  });
});
