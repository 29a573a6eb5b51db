import { describe, expect, it } from "vitest";
import { collectorHosts, checkVersions } from "../../../harness/runner/versions.ts";
import { mergeFinals, sumProgress, takeReplayIndex } from "../../../harness/runner/generator-group.ts";
import type { GeneratorFinal } from "../../../harness/generators/types.ts";

const majorMinor = (pinned: string, running: string): boolean =>
  running === pinned || running.startsWith(`${pinned}.`);

describe("version gate", () => {
  it("passes one pinned version on every host", () => {
    expect(() =>
      checkVersions(
        "syslog-ng",
        [
          { host: "collector-1", pinned: "3.38", running: "3.38.1" },
          { host: "collector-2", pinned: "3.38", running: "3.38.1" },
        ],
        majorMinor,
      ),
    ).not.toThrow();
  });

  it("refuses a pin mismatch, naming the host and both versions", () => {
    expect(() =>
      checkVersions("syslog-ng", [{ host: "collector", pinned: "3.37", running: "3.38.1" }], majorMinor),
    ).toThrow(
      "syslog-ng on host collector runs version 3.38.1 but the scenario pins 3.37; refusing to start",
    );
  });

  it("refuses two collector hosts on different versions even when both satisfy the pin, naming both", () => {
    let err: unknown;
    try {
      checkVersions(
        "syslog-ng",
        [
          { host: "collector-1", pinned: "3.38", running: "3.38.1" },
          { host: "collector-2", pinned: "3.38", running: "3.38.2" },
        ],
        majorMinor,
      );
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "E_VERSION" });
    expect((err as Error).message).toBe(
      "syslog-ng runs version 3.38.1 on host collector-1 but version 3.38.2 on host collector-2; all hosts running syslog-ng must run one version; refusing to start",
    );
  });

  it("finds collector hosts in numeric order, and nothing else", () => {
    expect(
      collectorHosts(["sink", "collector-10", "collector-2", "loadgen", "collector-1", "collectors"]),
    ).toEqual(["collector-1", "collector-2", "collector-10"]);
    expect(collectorHosts(["loadgen", "collector", "sink"])).toEqual(["collector"]);
  });
});

describe("generator group totals", () => {
  const final = (
    genId: number,
    sent: number,
    requests: number,
    p50: number,
    p99: number,
  ): GeneratorFinal => ({
    genId,
    sent,
    accepted: sent - 1,
    rejected: 1,
    bytes: sent * 200,
    requests,
    repeated: 0,
    rejectedRanges: [[0, 0]],
    latencyMs: { mean: p50, p50, p99, max: p99 * 2 },
    errors: [`e${genId}`],
  });

  it("sums totals and weights latency by requests; one generator's report is kept as it is", () => {
    const a = final(0, 1000, 10, 10, 50);
    const b = final(1, 3000, 30, 30, 20);
    expect(sumProgress([a, b])).toEqual({
      sent: 4000,
      accepted: 3998,
      rejected: 2,
      bytes: 800_000,
      requests: 40,
      repeated: 0,
    });
    const m = mergeFinals([a, b]);
    expect(m).toMatchObject({
      sent: 4000,
      accepted: 3998,
      requests: 40,
      genId: -1,
      errors: ["gen 0: e0", "gen 1: e1"],
    });
    expect(m.latencyMs).toEqual({ mean: 25, p50: 25, p99: 50, max: 100 });
    expect(mergeFinals([a])).toBe(a);
    expect(() => mergeFinals([])).toThrow(/no generator reports/);
  });

  it("takes the widest replay index out of the reports, so that it never reaches run.json", () => {
    const partial = { size: 5000, lines: 40, lineCount: 0, marks: "" };
    const whole = { size: 5000, lines: 90, lineCount: 90, marks: "" };
    const reports = [
      { ...final(0, 10, 1, 1, 1), replayIndex: partial },
      { ...final(1, 10, 1, 1, 1), replayIndex: whole },
      final(2, 10, 1, 1, 1),
    ];
    expect(takeReplayIndex(reports)).toBe(whole);
    expect(reports.map((r) => "replayIndex" in r)).toEqual([false, false, false]);
    expect(JSON.stringify(mergeFinals(reports))).not.toContain("marks");
    expect(takeReplayIndex([final(0, 10, 1, 1, 1)])).toBeUndefined();
  });
});
