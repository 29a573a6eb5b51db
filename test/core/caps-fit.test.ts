import { describe, expect, it } from "vitest";
import { capsFit, combineEnforcement, type HostSpec } from "../../core/limits.ts";
import { parsePressure, parseProcStatCpu, parseSchedstat } from "../../core/schedstat.ts";

const host = (name: string, cores?: number, memGiB?: number): HostSpec => ({
  name,
  requested: {},
  limits: {
    ...(cores !== undefined ? { cpu: { quotaUs: cores * 100000, periodUs: 100000 } } : {}),
    ...(memGiB !== undefined ? { memoryBytes: memGiB * 2 ** 30 } : {}),
  },
});
const MACHINE = { cores: 2, memoryBytes: 24 * 2 ** 30 };

describe("capsFit", () => {
  it("local-2-cores on a 2-core machine: 1 + 2 cores is oversubscribed, and the sink's 2 cores are no cap", () => {
    const f = capsFit([host("loadgen", 1), host("sink", 2, 4)], MACHINE);
    expect(f.oversubscribed).toBe(true);
    expect(f.cpuCores).toBe(3);
    expect(f.reasons).toEqual([
      "CPU caps of loadgen + sink add up to 3 cores on a 2-core machine (asked: loadgen 1, sink 2)",
    ]);
    expect(f.uncapped).toEqual({ sink: ["cpu: 2 cores asked of a 2-core machine"] });
  });
  it("a cap above the machine counts as the machine; memory is summed too; uncapped hosts ask for nothing", () => {
    expect(capsFit([host("loadgen", 1), host("sink", 0.25, 2)], MACHINE).oversubscribed).toBe(false);
    const f = capsFit([host("sink", 8)], MACHINE);
    expect(f).toMatchObject({
      cpuCores: 2,
      oversubscribed: false,
      uncapped: { sink: ["cpu: 8 cores asked of a 2-core machine"] },
    });
    expect(capsFit([host("a", undefined, 16), host("b", undefined, 16)], MACHINE).reasons).toEqual([
      "memory caps of a + b add up to 32 GiB on a 24 GiB machine (asked: a 16 GiB, b 16 GiB)",
    ]);
    expect(capsFit([host("loadgen"), host("sink")], MACHINE).oversubscribed).toBe(false);
  });
  it("a cap above the machine: the message says what was asked (1 + 64 = 65 cores) and what the machine has, not a clamped '3 cores'", () => {
    const f = capsFit([host("loadgen", 1), host("sink", 64, 48)], MACHINE); // one host's 48 GiB is the machine, not oversubscribed
    expect(f).toMatchObject({ oversubscribed: true, cpuCores: 3, cpuCoresAsked: 65 });
    expect(f.reasons).toEqual([
      "CPU caps of loadgen + sink add up to 65 cores on a 2-core machine (asked: loadgen 1, sink 64; each host can use at most the machine's 2, so they compete for up to 3)",
    ]);
  });
  it("combines enforcement: false wins, then partial", () => {
    expect(combineEnforcement(true, "partial")).toBe("partial");
    expect(combineEnforcement("partial", false)).toBe(false);
    expect(combineEnforcement(true, true)).toBe(true);
  });
});

describe("core/schedstat.ts parsers (kernel text formats: sched-stats.rst, psi.rst, proc.rst)", () => {
  it("reads schedstat's run delay, PSI totals and /proc/stat steal", () => {
    expect(parseSchedstat("1234 5678 9\n")).toEqual({ runNs: 1234, waitNs: 5678, timeslices: 9 });
    expect(parseSchedstat("garbage")).toBeUndefined();
    expect(
      parsePressure(
        "some avg10=86.88 avg60=58.25 avg300=30.39 total=1452956071\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
      ),
    ).toEqual({ someUs: 1452956071, fullUs: 0 });
    expect(parsePressure("")).toBeUndefined();
    expect(
      parseProcStatCpu("cpu  319836 118 70719 272760 2601 0 2061 1016 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"),
    ).toEqual({ totalTicks: 319836 + 118 + 70719 + 272760 + 2601 + 0 + 2061 + 1016, stealTicks: 1016 });
  });
});
