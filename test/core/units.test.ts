import { describe, expect, it } from "vitest";
import {
  formatBytes,
  formatCpu,
  formatDuration,
  formatRate,
  MAX_RUN_DURATION_MS,
  parseBytes,
  parseCpu,
  parseDuration,
  parseIops,
  parsePercent,
  parseRate,
  parseRunDuration,
  zUnit,
} from "../../core/units.ts";

describe("parseCpu", () => {
  it("reads cores as string or number, with the kernel's default 100000 µs period", () => {
    expect(parseCpu("0.25")).toEqual({ quotaUs: 25000, periodUs: 100000 });
    expect(parseCpu(0.25)).toEqual({ quotaUs: 25000, periodUs: 100000 });
    expect(parseCpu("2")).toEqual({ quotaUs: 200000, periodUs: 100000 });
    expect(parseCpu(1)).toEqual({ quotaUs: 100000, periodUs: 100000 });
    expect(parseCpu(".5")).toEqual({ quotaUs: 50000, periodUs: 100000 });
    expect(parseCpu("0.01")).toEqual({ quotaUs: 1000, periodUs: 100000 });
  });

  it("reads cgroup v2 cpu.max syntax in microseconds", () => {
    expect(parseCpu("25000 100000")).toEqual({ quotaUs: 25000, periodUs: 100000 });
    expect(parseCpu("  50000   1000000 ")).toEqual({ quotaUs: 50000, periodUs: 1000000 });
    expect(parseCpu("1000 1000")).toEqual({ quotaUs: 1000, periodUs: 1000 });
  });

  it("reads { quota, period } with duration units or µs numbers", () => {
    expect(parseCpu({ quota: "25000us", period: "100000us" })).toEqual({ quotaUs: 25000, periodUs: 100000 });
    expect(parseCpu({ quota: "25ms", period: "0.1s" })).toEqual({ quotaUs: 25000, periodUs: 100000 });
    expect(parseCpu({ quota: "50ms", period: "100ms" })).toEqual({ quotaUs: 50000, periodUs: 100000 });
    expect(parseCpu({ quota: 25000, period: 100000 })).toEqual({ quotaUs: 25000, periodUs: 100000 });
    expect(parseCpu({ quota: "25000", period: "100000" })).toEqual({ quotaUs: 25000, periodUs: 100000 });
  });

  it('rejects "25 100" (004\'s cpu.max as written) explaining microseconds and suggesting "25000 100000"', () => {
    let message = "";
    try {
      parseCpu("25 100");
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('"25 100"');
    expect(message).toContain("cpu.max");
    expect(message).toContain("microseconds");
    expect(message).toContain("at least 1000");
    expect(message).toContain('write "25000 100000"');
    expect(message).toContain('"0.25"');
  });

  it("rejects any quota or period below 1000 µs, suggesting the ×1000 pair when that is valid", () => {
    expect(() => parseCpu("50 100")).toThrow(/write "50000 100000"/);
    expect(() => parseCpu("999 100000")).toThrow(/at least 1000/);
    expect(() => parseCpu("25000 999")).toThrow(/at least 1000/);
    // ×1000 would make the period 5 s, above the kernel's 1 s maximum: suggest cores instead
    expect(() => parseCpu("25 5000")).toThrow(/give at least 1000 µs for each/);
    expect(() => parseCpu("3 10")).toThrow(/write "3000 10000" \(0.3 cores\)/);
    expect(() => parseCpu("500 2000")).toThrow(/write the cores you mean as "0.25"/);
    expect(() => parseCpu({ quota: "25us", period: "100us" })).toThrow(/quota: 25000us, period: 100000us/);
    expect(() => parseCpu({ quota: 25, period: 100 })).toThrow(/microseconds, at least 1000/);
  });

  it("rejects zero, negative, too many cores, a period above 1 s and garbage", () => {
    expect(() => parseCpu(0)).toThrow(/more than 0 cores/);
    expect(() => parseCpu("0")).toThrow(/more than 0 cores/);
    expect(() => parseCpu(-1)).toThrow(/more than 0 cores/);
    expect(() => parseCpu("-1")).toThrow(/not a CPU cap/);
    expect(() => parseCpu(1025)).toThrow(/1024 cores/);
    expect(() => parseCpu("2000000 1000000")).not.toThrow();
    expect(() => parseCpu("2000000000 1000000")).toThrow(/1024/);
    expect(() => parseCpu("50000 2000000")).toThrow(/maximum of 1000000 µs/);
    expect(() => parseCpu({ quota: "1s", period: "2s" })).toThrow(/maximum of 1000000 µs/);
    expect(() => parseCpu("0.001")).toThrow(/below the kernel's minimum/);
    expect(() => parseCpu("max 100000")).toThrow(/no limit/);
    expect(() => parseCpu("250m")).toThrow(/millicores.*"0.25"/);
    expect(() => parseCpu("quarter")).toThrow(/cores \("0.25", 0.25, "2"\)/);
    expect(() => parseCpu("25.5 100000")).toThrow(/whole microseconds/);
    expect(() => parseCpu({ quota: "25ms" } as never)).toThrow(/both quota and period/);
    expect(() => parseCpu({ quota: "25ms", period: "100ms", burst: 1 } as never)).toThrow(
      /unknown key "burst"/,
    );
    expect(() => parseCpu({ quota: "fast", period: "100ms" })).toThrow(/quota "fast" is not a duration/);
    expect(() => parseCpu(null as never)).toThrow(/expected cores/);
  });
});

describe("parseBytes", () => {
  it("reads IEC (1024^n) and SI (1000^n) prefixes, B optional", () => {
    expect(parseBytes("2GiB")).toBe(2 * 1024 ** 3);
    expect(parseBytes("512MiB")).toBe(512 * 1024 ** 2);
    expect(parseBytes("4GiB")).toBe(4294967296);
    expect(parseBytes("1KiB")).toBe(1024);
    expect(parseBytes("1kiB")).toBe(1024);
    expect(parseBytes("1TiB")).toBe(1024 ** 4);
    expect(parseBytes("2Gi")).toBe(2 * 1024 ** 3);
    expect(parseBytes("2GB")).toBe(2_000_000_000);
    expect(parseBytes("2G")).toBe(2_000_000_000);
    expect(parseBytes("500kB")).toBe(500_000);
    expect(parseBytes("500KB")).toBe(500_000);
    expect(parseBytes("1TB")).toBe(1e12);
    expect(parseBytes("1.5KiB")).toBe(1536);
    expect(parseBytes("2 GiB")).toBe(2 * 1024 ** 3);
    expect(parseBytes("1024")).toBe(1024);
    expect(parseBytes("1024B")).toBe(1024);
    expect(parseBytes(1024)).toBe(1024);
    expect(parseBytes(0)).toBe(0);
  });

  it("rejects bits, fractions of a byte, negatives, unknown units", () => {
    expect(() => parseBytes("2Gb")).toThrow(/lowercase "b" means bits/);
    expect(() => parseBytes("0.1KiB")).toThrow(/not a whole number of bytes/);
    expect(() => parseBytes(1.5)).toThrow(/whole, non-negative/);
    expect(() => parseBytes(-1)).toThrow(/whole, non-negative/);
    expect(() => parseBytes("-1GiB")).toThrow(/not a size/);
    expect(() => parseBytes("2 gigs")).toThrow(/"2GiB" \(IEC, powers of 1024\)/);
    expect(() => parseBytes("2mB")).toThrow(/"2mB" is not a size/);
    expect(() => parseBytes("")).toThrow(/not a size/);
  });
});

describe("parseRate", () => {
  it("reads libvirt's <bandwidth> average in KB/s: 12000KB/s = 12,000,000 B/s = 96 Mbit/s", () => {
    expect(parseRate("12000KB/s")).toBe(12_000_000);
    expect(parseRate("12000kB/s")).toBe(12_000_000);
    expect(parseRate("96Mbit/s")).toBe(12_000_000);
    expect(parseRate("96Mbps")).toBe(12_000_000);
    expect(parseRate("96Mb/s")).toBe(12_000_000);
    expect(formatRate(parseRate("12000KB/s"), "bits")).toBe("96.0 Mbit/s");
  });

  it("reads libvirt's <iotune> total_bytes_sec in bytes/s: 125829120B/s = 120 MiB/s", () => {
    expect(parseRate("125829120B/s")).toBe(125829120);
    expect(parseRate("120MiB/s")).toBe(125829120);
    expect(formatRate(125829120)).toBe("120.0 MiB/s");
  });

  it("reads the other byte and bit forms", () => {
    expect(parseRate("10MB/s")).toBe(10_000_000);
    expect(parseRate("1Gbit/s")).toBe(125_000_000);
    expect(parseRate("1Gbps")).toBe(125_000_000);
    expect(parseRate("500kbit/s")).toBe(62_500);
    expect(parseRate("500Kbit/s")).toBe(62_500);
    expect(parseRate("8kbit/s")).toBe(1000);
    expect(parseRate("8bit/s")).toBe(1);
    expect(parseRate("1Mibit/s")).toBe(131072);
    expect(parseRate("1 GiB/s")).toBe(1024 ** 3);
  });

  it("rejects bare numbers (ambiguous: libvirt KB/s or bytes?), zero and unknown units", () => {
    expect(() => parseRate(12000)).toThrow(/ambiguous.*12000KB\/s/);
    expect(() => parseRate("12000")).toThrow(/bare number is ambiguous/);
    expect(() => parseRate("0B/s")).toThrow(/more than 0/);
    expect(() => parseRate("96 megabits")).toThrow(/"96Mbit\/s"/);
    expect(() => parseRate("12000KB")).toThrow(/not a rate/);
  });
});

describe("parseIops, parsePercent", () => {
  it("reads IOPS", () => {
    expect(parseIops(3000)).toBe(3000);
    expect(parseIops("3000")).toBe(3000);
    expect(parseIops("3000iops")).toBe(3000);
    expect(parseIops("3000 IOPS")).toBe(3000);
    expect(() => parseIops(0)).toThrow(/positive whole number/);
    expect(() => parseIops(1.5)).toThrow(/positive whole number/);
    expect(() => parseIops("3k")).toThrow(/not an IOPS cap/);
  });

  it("reads percentages with a % sign", () => {
    expect(parsePercent("0.1%")).toBe(0.1);
    expect(parsePercent("5 %")).toBe(5);
    expect(() => parsePercent(0.1)).toThrow(/ambiguous: add %/);
    expect(() => parsePercent("101%")).toThrow(/more than 100%/);
  });
});

describe("parseDuration", () => {
  it("reads Go-style durations into milliseconds", () => {
    expect(parseDuration("4h")).toBe(4 * 3600 * 1000);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("1m30s")).toBe(90_000);
    expect(parseDuration("1h 2m")).toBe(3_720_000);
    expect(parseDuration("100us")).toBe(0.1);
    expect(parseDuration("100µs")).toBe(0.1);
    expect(parseDuration("0.1s")).toBe(100);
    expect(parseDuration("1.5h")).toBe(5_400_000);
    expect(parseDuration("2d")).toBe(172_800_000);
    expect(parseDuration("0")).toBe(0);
    expect(parseDuration(0)).toBe(0);
  });

  it("rejects bare numbers, negatives and unknown units", () => {
    expect(() => parseDuration(30)).toThrow(/bare number.*add a unit/);
    expect(() => parseDuration("30")).toThrow(/bare number is ambiguous/);
    expect(() => parseDuration("-5s")).toThrow(/negative/);
    expect(() => parseDuration("5 minutes")).toThrow(/"1m30s"/);
    expect(() => parseDuration("1m30")).toThrow(/not a duration/);
    expect(() => parseDuration("")).toThrow(/not a duration/);
  });

  it("refuses a sum beyond 2^53 µs; a run's timing (parseRunDuration) beyond 7 days, saying why", () => {
    // accepted before: 3.6e26 ms in run.json, "about 100000000000000000000h" planned
    expect(() => parseDuration("99999999999999999999h")).toThrow(
      /^"99999999999999999999h" is more than 2\^53 µs \(about 285 years\), the most a duration holds$/,
    );
    expect(() => parseDuration(`${"9".repeat(400)}s`)).toThrow(/is more than 2\^53 µs/); // Number() of it is Infinity
    expect(parseDuration("104000d")).toBe(104_000 * 86_400_000); // just below 2^53 µs
    expect(parseDuration("30d")).toBe(30 * 86_400_000); // e.g. a stack's expiry: not a run's timing
    expect(MAX_RUN_DURATION_MS).toBe(7 * 86_400_000);
    expect(parseRunDuration("7d")).toBe(MAX_RUN_DURATION_MS);
    expect(parseRunDuration("167h")).toBe(167 * 3_600_000);
    expect(parseRunDuration("30s")).toBe(30_000);
    const week =
      /^"7d1ms" is more than 7d, the longest a run's durations may be: a measurement of more than a week is a typo, and the runner's timers cannot wait beyond 24.8 days$/;
    expect(() => parseRunDuration("7d1ms")).toThrow(week);
    expect(() => parseRunDuration("99999999999999999999h")).toThrow(
      /^"99999999999999999999h" is more than 7d, the longest/,
    );
    expect(() => parseRunDuration("soon")).toThrow(/not a duration/);
  });
});

describe("formatting", () => {
  it("formats bytes, rates, cpu and durations for display", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(2 * 1024 ** 3)).toBe("2.0 GiB");
    expect(formatRate(12_000_000)).toBe("11.4 MiB/s");
    expect(formatRate(12_000_000, "bits")).toBe("96.0 Mbit/s");
    expect(formatRate(125_000_000, "bits")).toBe("1.0 Gbit/s");
    expect(formatRate(100, "bits")).toBe("800 bit/s");
    expect(formatCpu({ quotaUs: 25000, periodUs: 100000 })).toBe("0.25 cores (25000/100000 µs)");
    expect(formatDuration(90_000)).toBe("1m30s");
    expect(formatDuration(0.1)).toBe("100us");
    expect(formatDuration(4 * 3600 * 1000)).toBe("4h");
    expect(formatDuration(0)).toBe("0s");
    for (const text of ["1m30s", "4h", "500ms", "100us", "1h2m3s4ms"])
      expect(parseDuration(formatDuration(parseDuration(text)))).toBe(parseDuration(text));
  });
});

describe("zUnit", () => {
  it("turns parser errors into zod issues and undefined into a required issue", () => {
    const s = zUnit(parseCpu);
    expect(s.parse("0.25")).toEqual({ quotaUs: 25000, periodUs: 100000 });
    const bad = s.safeParse("25 100");
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toContain('write "25000 100000"');
    const missing = s.safeParse(undefined);
    expect(missing.error?.issues[0]?.code).toBe("invalid_type");
    expect(zUnit(parseCpu).optional().parse(undefined)).toBeUndefined();
  });
});
