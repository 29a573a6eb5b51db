// The application under test's result readers (harness/runner/app-host.ts readAppResults): its last JSON line, a
// file (one JSON object or NDJSON), a regex with named groups; every figure a finite number or an error naming the
// figure and key; and the ledger against the app's report (appLedger): stored must be sent − dropped, the only loss
// the drops.
import { describe, expect, it } from "vitest";
import { appLedger, appLine, lastJsonLine, readAppResults } from "../../../harness/runner/app-host.ts";
import type { AppRecord } from "../../../harness/results/types.ts";

const map = {
  throughput: "txPerSecond",
  latencyP99Ms: "p99Ms",
  sent: "records",
  dropped: "dropped",
} as const;

describe("app results: stdout-json", () => {
  it("reads the last JSON-object line, skipping log lines and later non-JSON", () => {
    const stdout = [
      'starting {"not": json',
      JSON.stringify({ txPerSecond: 1, p99Ms: 9, records: 1, dropped: 0 }),
      JSON.stringify({ txPerSecond: 812.5, p99Ms: 4.25, records: 9000, dropped: 17 }),
      "bye",
    ].join("\n");
    expect(readAppResults({ from: "stdout-json", map }, { stdout, stderr: "" })).toEqual({
      figures: { throughput: 812.5, latencyP99Ms: 4.25, sent: 9000, dropped: 17 },
      raw: { txPerSecond: 812.5, p99Ms: 4.25, records: 9000, dropped: 17 },
    });
  });

  it("follows dotted keys into nested objects and takes numeric strings", () => {
    const stdout = JSON.stringify({
      load: { tps: "100.5", p99: 3 },
      exporter: { records: 10, dropped: "2" },
    });
    const r = readAppResults(
      {
        from: "stdout-json",
        map: {
          throughput: "load.tps",
          latencyP99Ms: "load.p99",
          sent: "exporter.records",
          dropped: "exporter.dropped",
        },
      },
      { stdout, stderr: "" },
    );
    expect(r.figures).toEqual({ throughput: 100.5, latencyP99Ms: 3, sent: 10, dropped: 2 });
  });

  it("names the figure and key that is absent or not a number, and the stderr's tail when there is no JSON line", () => {
    const stdout = JSON.stringify({ txPerSecond: 5, p99Ms: null, records: 1, dropped: 0 });
    expect(() => readAppResults({ from: "stdout-json", map }, { stdout, stderr: "" })).toThrow(
      /figure latencyP99Ms maps to "p99Ms", which is null/,
    );
    expect(() =>
      readAppResults({ from: "stdout-json", map: { sent: "exported" } }, { stdout, stderr: "" }),
    ).toThrow(
      expect.objectContaining({
        code: "E_APP_RESULTS",
        message: expect.stringMatching(/"exported", which is absent/),
      }),
    );
    expect(() =>
      readAppResults({ from: "stdout-json", map }, { stdout: "no json here\n", stderr: "Error: boom\n" }),
    ).toThrow(/no JSON-object line on its stdout \(its stderr ends: Error: boom\)/);
  });

  it("lastJsonLine ignores arrays and scalars", () => {
    expect(lastJsonLine('{"a":1}\n[1,2]\n42\n')).toEqual({ a: 1 });
    expect(lastJsonLine("")).toBeNull();
  });
});

describe("app results: file", () => {
  it("reads one JSON object, or the last object line of NDJSON; a missing file is an error", () => {
    const spec = { from: "file" as const, file: "out.json", map };
    const one = JSON.stringify({ txPerSecond: 7, p99Ms: 1, records: 3, dropped: 1 }, null, 2);
    expect(readAppResults(spec, { stdout: "", stderr: "", file: one }).figures).toEqual({
      throughput: 7,
      latencyP99Ms: 1,
      sent: 3,
      dropped: 1,
    });
    const nd = `${JSON.stringify({ txPerSecond: 1, p99Ms: 1, records: 1, dropped: 0 })}\n${JSON.stringify({ txPerSecond: 2, p99Ms: 2, records: 2, dropped: 0 })}\n`;
    expect(readAppResults(spec, { stdout: "", stderr: "", file: nd }).figures.throughput).toBe(2);
    expect(() => readAppResults(spec, { stdout: "", stderr: "" })).toThrow(
      /app results file out\.json was not written/,
    );
    expect(() => readAppResults(spec, { stdout: "", stderr: "", file: "garbage" })).toThrow(
      /no JSON object in out\.json/,
    );
  });
});

describe("app results: regex", () => {
  const pattern = "tx/s (?<tps>[0-9.]+) p99 (?<p99>[0-9.]+) records (?<n>[0-9]+) dropped (?<drops>[0-9]+)";
  const spec = {
    from: "regex" as const,
    pattern,
    map: { throughput: "tps", latencyP99Ms: "p99", sent: "n", dropped: "drops" },
  };

  it("takes the last match over stdout then stderr, its named groups as numbers", () => {
    const stdout = "tx/s 10 p99 2.5 records 100 dropped 0\n";
    const stderr = "progress\ntx/s 950.25 p99 3.75 records 20000 dropped 12\n";
    expect(readAppResults(spec, { stdout, stderr })).toEqual({
      figures: { throughput: 950.25, latencyP99Ms: 3.75, sent: 20000, dropped: 12 },
      raw: { tps: "950.25", p99: "3.75", n: "20000", drops: "12" },
    });
  });

  it("says so when nothing matches", () => {
    expect(() => readAppResults(spec, { stdout: "tx/s fast\n", stderr: "" })).toThrow(
      expect.objectContaining({
        code: "E_APP_RESULTS",
        message: expect.stringContaining("no match of /tx/s"),
      }),
    );
  });
});

describe("appLedger", () => {
  it("agrees when the sink holds sent − dropped and lost only the drops", () => {
    expect(appLedger({ sent: 1000, dropped: 40 }, { distinct: 960, lost: 40 })).toEqual({
      sent: 1000,
      dropped: 40,
      expected: 960,
      stored: 960,
      lost: 40,
      unaccounted: 0,
      agrees: true,
    });
    expect(appLedger({ sent: 0 }, { distinct: 0, lost: 0 }).agrees).toBe(true);
  });

  it("disagrees on a loss beyond the drops, and on a drop the sink stored anyway", () => {
    expect(appLedger({ sent: 1000, dropped: 40 }, { distinct: 955, lost: 45 })).toMatchObject({
      unaccounted: 5,
      agrees: false,
    });
    expect(appLedger({ sent: 1000, dropped: 40 }, { distinct: 970, lost: 30 })).toMatchObject({
      unaccounted: -10,
      agrees: false,
    });
  });
});

describe("appLine", () => {
  it("says the app's figures and whether the ledger agrees", () => {
    const a = {
      variant: "tiny-queue",
      figures: { throughput: 812.5, latencyMeanMs: 4.94, latencyP50Ms: 4.1, latencyP99Ms: 12 },
      ledger: appLedger({ sent: 9000, dropped: 17 }, { distinct: 8983, lost: 17 }),
    } as unknown as AppRecord;
    expect(appLine(a)).toBe(
      "  app tiny-queue: 812.5 tx/s, mean 4.9 ms, p50 4.1 / p99 12.0 ms; records 9,000 sent, 17 dropped, 8,983 stored (the ledger agrees)",
    );
    expect(appLine({ ...a, ledger: appLedger({ sent: 10, dropped: 1 }, { distinct: 8, lost: 2 }) })).toMatch(
      /the ledger DISAGREES: 1 unaccounted\)$/,
    );
  });
});
