// ui/format.ts: one precision rule per kind of number, "–" for what is not a number.
import { describe, expect, it } from "vitest";
import {
  bytes,
  clip,
  duration,
  fix,
  int,
  mib,
  ms,
  pct,
  pctSmall,
  plural,
  rate,
  secondsOf,
  sig,
  usd,
  width,
  wrap,
} from "../../ui/format.ts";

describe("ui/format.ts", () => {
  it("integers and rates: rounded, thousands separators, '–' when null, NaN or infinite", () => {
    expect(int(1234567.4)).toBe("1,234,567");
    expect(int(0.5)).toBe("1");
    expect(int(-1234.6)).toBe("-1,235");
    for (const x of [null, undefined, Number.NaN, Infinity]) expect(int(x)).toBe("–");
    expect(rate(33598.4)).toBe("33,598 rows/s");
    expect(rate(812.5, "tx/s")).toBe("813 tx/s");
    expect(rate(null)).toBe("– rows/s");
    expect(fix(1.234, 2, "x")).toBe("1.23x");
    expect(fix(Number.NaN, 2)).toBe("–");
    expect(ms(1234.5)).toBe("1,235 ms");
  });

  it("percentages: 0 decimals unless the figure asks for more; small shares to 2, 3 under 1 %", () => {
    expect(pct(0.123)).toBe("12 %");
    expect(pct(0.1234, 1)).toBe("12.3 %");
    expect(pct(null)).toBe("–");
    expect(pctSmall(0.042)).toBe("4.20 %");
    expect(pctSmall(0.00098)).toBe("0.098 %");
  });

  it("bytes, MiB, seconds and durations", () => {
    expect(bytes(1536)).toBe("1.5 KiB");
    expect(bytes(300)).toBe("300 B");
    expect(mib(100 * 2 ** 20)).toBe("100 MiB");
    expect(secondsOf(2100)).toBe("2.1 s");
    expect(secondsOf(null)).toBe("–");
    expect(duration(45)).toBe("45s");
    expect(duration(250)).toBe("4m10s");
    expect(duration(3720)).toBe("1h02m");
    expect(duration(-3)).toBe("0s");
  });

  it("plurals, widths and clipping", () => {
    expect(plural(1, "run")).toBe("1 run");
    expect(plural(3, "query", "queries")).toBe("3 queries");
    expect(width("\x1b[1mab\x1b[0m·c")).toBe(4);
    expect(clip("abcdef", 4)).toBe("abc…");
    expect(clip("abc", 4)).toBe("abc");
  });

  it("costs: three significant digits across decades, separators from 1000 up, dollars with $; '–' when unknown", () => {
    expect(sig(0.012345)).toBe("0.0123");
    expect(sig(12.345)).toBe("12.3");
    expect(sig(175)).toBe("175");
    expect(sig(12345.6)).toBe("12,346");
    expect(sig(0)).toBe("0");
    expect(sig(null)).toBe("–");
    expect(usd(0.0133333)).toBe("$0.0133");
    expect(usd(Number.NaN)).toBe("–");
  });

  it("wrap: after '; ' where it can, else ', ', else a space, else a cut; continuations 4 columns deeper", () => {
    expect(wrap("short", 10)).toEqual(["short"]);
    expect(wrap("  key: aaaa bbbb; cccc dddd; eeee", 24)).toEqual([
      "  key: aaaa bbbb;",
      "      cccc dddd; eeee",
    ]);
    expect(wrap("  key: aaa, bbb, ccc, ddd", 16)).toEqual(["  key: aaa, bbb,", "      ccc, ddd"]);
    expect(wrap("run x: ok  → /a/very/long/path/without/spaces", 40)).toEqual([
      "run x: ok  →",
      "    /a/very/long/path/without/spaces",
    ]);
    expect(wrap("x".repeat(25), 10)).toEqual([
      "x".repeat(10),
      `    ${"x".repeat(8)}`,
      `    ${"x".repeat(7)}`,
    ]);
  });
});
