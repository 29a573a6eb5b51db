/**
 * The ONE place unit strings are parsed (stack files, scenario files, CLI flags).
 *
 * Every parser throws a plain `Error` whose message names the value, says what is wrong and lists the
 * accepted forms; `zUnit` turns such errors into zod issues so config errors carry file:line and field.
 *
 * Unit conventions (decided here, once):
 * - Bytes: IEC prefixes Ki, Mi, Gi, Ti, Pi are powers of 1024; SI prefixes k/K, M, G, T, P are powers of 1000
 *   (IEC 80000-13). The trailing "B" is optional: "2GiB" = "2Gi" = 2147483648, "2GB" = 2000000000.
 * - Rates: "B/s" is bytes per second, "bit/s", "b/s" and "bps" are bits per second (networking convention:
 *   "96Mbps" = 96 megabits/s; note that tc(8) reads "kbps" as kilobytes/s — we do not). Same prefixes as bytes.
 *   libvirt's `<bandwidth average=...>` is in kilobytes per second with k = 1000 (libvirt formatdomain docs;
 *   it hands tc "<n>kbps"), so "12000KB/s" = 12,000,000 B/s = 96 Mbit/s. libvirt `<iotune>` total_bytes_sec is
 *   plain bytes/s: "125829120B/s" = 120 MiB/s.
 * - CPU: cgroup CFS bandwidth, quota over period in microseconds (cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us,
 *   cgroup v2 cpu.max "<quota> <period>"). The kernel rejects quota or period below 1000 µs and period above
 *   1000000 µs (kernel/sched/core.c, min_cfs_quota_period / max_cfs_quota_period). Cores are written with the
 *   kernel's default period of 100000 µs.
 * - Durations: Go-style sequences of <number><unit>, units us (µs), ms, s, m, h, d; results in milliseconds, whole
 *   µs below 2^53; a run's timing (parseRunDuration) at most 7 days (MAX_RUN_DURATION_MS says why).
 */
import { z } from "zod";
import type { CpuLimit } from "./limits.ts";

/** Default CFS period in µs (kernel default cpu.cfs_period_us; cgroup v2 cpu.max default "max 100000"). */
export const DEFAULT_CPU_PERIOD_US = 100_000;
/** Kernel minimum for CFS quota and period, µs (1 ms). */
export const MIN_CPU_US = 1_000;
/** Kernel maximum CFS period, µs (1 s). */
export const MAX_CPU_PERIOD_US = 1_000_000;
/** Largest CPU cap accepted, in cores. */
export const MAX_CORES = 1024;

const NUM = String.raw`(\d+(?:\.\d+)?|\.\d+)`;

const CPU_FORMS =
  'cores ("0.25", 0.25, "2"), a cgroup v2 cpu.max pair "<quota> <period>" in microseconds ("25000 100000"), ' +
  "or { quota: 25000us, period: 100000us } (durations: us, ms, s)";
const BYTES_FORMS =
  'a byte count with an optional unit: "1024", 1024, "512MiB", "2GiB" (IEC, powers of 1024) or "2GB", "500kB" (SI, powers of 1000)';
const RATE_FORMS =
  'a rate with a unit: "125829120B/s", "120MiB/s", "10MB/s", "12000KB/s" (bytes; libvirt <bandwidth> average is KB/s, 1 KB = 1000 B), ' +
  'or "96Mbit/s", "96Mbps", "1Gbit/s", "500kbit/s" (bits)';
const IOPS_FORMS = 'a positive whole number of IO operations per second: 3000, "3000" or "3000iops"';
const DURATION_FORMS = 'a duration such as "500ms", "30s", "1m30s", "4h", "100us" (units us, ms, s, m, h, d)';
const PERCENT_FORMS = 'a percentage with a % sign between 0% and 100%, e.g. "0.1%"';

function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (v === undefined) return "nothing";
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function fmtNum(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(12)));
}

// ---------------------------------------------------------------------------------------------- durations

const DURATION_UNIT_US: Record<string, number> = {
  us: 1,
  µs: 1,
  μs: 1,
  ms: 1_000,
  s: 1_000_000,
  m: 60_000_000,
  h: 3_600_000_000,
  d: 86_400_000_000,
};

/**
 * The longest duration of a run's timing (a measurement, warmup, interval, drain, step, timeout, lock wait): 7 days.
 * Longer is a typo, not a benchmark (a nightly plan's runs fit in a night; the longest soak is hours), and the runner
 * waits with Node timers, which fire at once for a delay above 2^31 − 1 ms (about 24.8 days) instead of waiting.
 */
export const MAX_RUN_DURATION_MS = 7 * 86_400_000;

/**
 * A duration in µs. The sum must be a safe integer of µs (below 2^53 µs, about 285 years) and at most `maxUs` when
 * given; `maxText` says what that bound is and why.
 */
function parseDurationUs(
  v: unknown,
  maxUs = Number.MAX_SAFE_INTEGER,
  maxText = "2^53 µs (about 285 years), the most a duration holds",
): number {
  if (typeof v === "number") {
    if (v === 0) return 0;
    throw new Error(
      `${show(v)} is a bare number, which is ambiguous as a duration: add a unit; expected ${DURATION_FORMS}`,
    );
  }
  if (typeof v !== "string") throw new Error(`expected ${DURATION_FORMS}, got ${show(v)}`);
  const s = v.trim();
  if (s === "0") return 0;
  if (/^-/.test(s)) throw new Error(`${show(v)} is negative; expected ${DURATION_FORMS}`);
  const re = new RegExp(`${NUM}\\s*(us|µs|μs|ms|s|m|h|d)`, "gy");
  let total = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while (pos < s.length && (m = re.exec(s)) !== null) {
    total += Number(m[1]) * (DURATION_UNIT_US[m[2] as string] as number);
    pos = re.lastIndex;
    while (s[pos] === " ") pos++;
    re.lastIndex = pos;
  }
  if (pos !== s.length || s.length === 0) {
    const hint = /^\d+(\.\d+)?$/.test(s) ? " (a bare number is ambiguous: add a unit)" : "";
    throw new Error(`${show(v)} is not a duration${hint}; expected ${DURATION_FORMS}`);
  }
  // "99999999999999999999h" sums to 3.6e29 µs: finite, but no whole number of µs a timer or run.json can hold
  const wholeUs = Math.round(total);
  if (!Number.isSafeInteger(wholeUs) || wholeUs > maxUs)
    throw new Error(`${show(v)} is more than ${maxText}`);
  return Math.round(total * 1000) / 1000;
}

/**
 * Parse a duration into milliseconds (may be fractional below 1 ms, e.g. "100us" → 0.1).
 * Accepts "500ms", "30s", "1m30s", "4h", "2d", "100us"/"100µs", and "0" / 0. A bare non-zero number is rejected
 * (is 30 seconds or milliseconds?), and a sum beyond 2^53 µs ("99999999999999999999h"). Throws Error listing the
 * accepted forms. A run's timing goes through parseRunDuration (at most 7 days).
 */
export function parseDuration(v: string | number): number {
  return parseDurationUs(v) / 1000;
}

/**
 * parseDuration for a run's timing (--duration, --warmup, --lock-wait, a scenario's or a nightly plan's durations):
 * at most MAX_RUN_DURATION_MS (7 days). @throws Error naming the bound and its reason, or as parseDuration
 */
export function parseRunDuration(v: string | number): number {
  return (
    parseDurationUs(
      v,
      MAX_RUN_DURATION_MS * 1000,
      `7d, the longest a run's durations may be: a measurement of more than a week is a typo, and the runner's timers cannot wait beyond 24.8 days`,
    ) / 1000
  );
}

// ---------------------------------------------------------------------------------------------- cpu

function coresText(quotaUs: number, periodUs: number): string {
  return fmtNum(Number((quotaUs / periodUs).toPrecision(6)));
}

function validPair(q: number, p: number): boolean {
  return q >= MIN_CPU_US && p >= MIN_CPU_US && p <= MAX_CPU_PERIOD_US && q / p <= MAX_CORES;
}

/** Check a quota/period pair in µs against the kernel's bounds; `written` says how the user wrote it, for messages. */
function checkPair(q: number, p: number, written: string, form: "cpu.max" | "object"): CpuLimit {
  if (!Number.isFinite(q) || !Number.isFinite(p) || q <= 0 || p <= 0) {
    throw new Error(`${written}: quota and period must both be positive; expected ${CPU_FORMS}`);
  }
  if (!Number.isInteger(q) || !Number.isInteger(p)) {
    throw new Error(`${written}: quota and period must be whole microseconds; expected ${CPU_FORMS}`);
  }
  if (q < MIN_CPU_US || p < MIN_CPU_US) {
    const scaled = validPair(q * 1000, p * 1000);
    const cores = coresText(q, p);
    const coresOk =
      q / p > 0 && q / p <= MAX_CORES && Math.round((q / p) * DEFAULT_CPU_PERIOD_US) >= MIN_CPU_US;
    let suggestion: string;
    if (scaled && form === "cpu.max")
      suggestion = `write "${q * 1000} ${p * 1000}" (${cores} cores) or just "${cores}"`;
    else if (scaled)
      suggestion = `write { quota: ${q * 1000}us, period: ${p * 1000}us } (${cores} cores) or just "${cores}"`;
    else if (coresOk) suggestion = `write the cores you mean as "${cores}"`;
    else suggestion = `give at least ${MIN_CPU_US} µs for each`;
    const what =
      form === "cpu.max"
        ? `looks like a cgroup cpu.max written in milliseconds or as a ratio`
        : `has a quota or period below ${MIN_CPU_US} µs`;
    throw new Error(
      `${written} ${what}; the kernel wants microseconds, at least ${MIN_CPU_US} for quota and period ` +
        `(cgroup v2 cpu.max is "<quota> <period>" in µs, period at most ${MAX_CPU_PERIOD_US}): ${suggestion}`,
    );
  }
  if (p > MAX_CPU_PERIOD_US) {
    throw new Error(
      `${written}: period ${p} µs exceeds the kernel's maximum of ${MAX_CPU_PERIOD_US} µs (1 s); ` +
        `use the default period ${DEFAULT_CPU_PERIOD_US} µs, e.g. "${Math.round((q / p) * DEFAULT_CPU_PERIOD_US)} ${DEFAULT_CPU_PERIOD_US}"`,
    );
  }
  if (q / p > MAX_CORES) {
    throw new Error(`${written} is ${coresText(q, p)} cores, more than the ${MAX_CORES} accepted`);
  }
  return { quotaUs: q, periodUs: p };
}

function fromCores(cores: number, written: string): CpuLimit {
  if (!Number.isFinite(cores) || cores <= 0) {
    throw new Error(
      `${written}: a CPU cap must be more than 0 cores (omit cpu for no cap); expected ${CPU_FORMS}`,
    );
  }
  if (cores > MAX_CORES) throw new Error(`${written} is more than the ${MAX_CORES} cores accepted`);
  const quotaUs = Math.round(cores * DEFAULT_CPU_PERIOD_US);
  if (quotaUs < MIN_CPU_US) {
    throw new Error(
      `${written} cores is a quota of ${quotaUs} µs per ${DEFAULT_CPU_PERIOD_US} µs period, below the kernel's minimum of ` +
        `${MIN_CPU_US} µs (at least ${MIN_CPU_US / DEFAULT_CPU_PERIOD_US} cores)`,
    );
  }
  return { quotaUs, periodUs: DEFAULT_CPU_PERIOD_US };
}

function quotaPartUs(v: unknown, which: string, written: string): number {
  if (typeof v === "number") return v; // microseconds, as in cgroup files
  if (typeof v === "string" && /^\d+$/.test(v.trim())) return Number(v.trim());
  try {
    return parseDurationUs(v);
  } catch {
    throw new Error(`${written}: ${which} ${show(v)} is not a duration; expected ${CPU_FORMS}`);
  }
}

/**
 * Parse a CPU cap into a CFS quota/period in microseconds.
 *
 * Accepted: cores as number or string (0.25, "0.25", "2"; period 100000 µs, quota rounded to whole µs);
 * cgroup v2 cpu.max syntax "25000 100000" (µs); `{ quota, period }` with durations ("25000us", "25ms", "0.1s")
 * or bare numbers/digit strings meaning µs. Rejects 0, negatives, more than 1024 cores, a period above 1 s, and
 * any quota or period below 1000 µs — e.g. "25 100" (a cpu.max written in ms) gets the suggestion "25000 100000".
 * @throws Error explaining the accepted forms.
 */
export function parseCpu(v: string | number | { quota: string | number; period: string | number }): CpuLimit {
  if (typeof v === "number") return fromCores(v, show(v));
  if (typeof v === "string") {
    const s = v.trim();
    if (/^(\d+(\.\d+)?|\.\d+)$/.test(s)) return fromCores(Number(s), show(v));
    const pair = /^(\S+)\s+(\S+)$/.exec(s);
    if (pair) {
      const [, qs, ps] = pair as unknown as [string, string, string];
      if (qs === "max") {
        throw new Error(
          `${show(v)} is cpu.max for "no limit": omit cpu to leave the host uncapped; otherwise expected ${CPU_FORMS}`,
        );
      }
      if (!/^\d+$/.test(qs) || !/^\d+$/.test(ps)) {
        throw new Error(`${show(v)}: cpu.max quota and period are whole microseconds; expected ${CPU_FORMS}`);
      }
      return checkPair(Number(qs), Number(ps), show(v), "cpu.max");
    }
    if (/^\d+m$/.test(s)) {
      throw new Error(
        `${show(v)}: millicores are not accepted; write cores as "${fmtNum(Number(s.slice(0, -1)) / 1000)}"`,
      );
    }
    throw new Error(`${show(v)} is not a CPU cap; expected ${CPU_FORMS}`);
  }
  if (v !== null && typeof v === "object" && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const extra = Object.keys(o).filter((k) => k !== "quota" && k !== "period");
    if (extra.length > 0) throw new Error(`unknown key ${show(extra[0])} in cpu; allowed: quota, period`);
    if (o.quota === undefined || o.period === undefined) {
      throw new Error(
        `cpu as an object needs both quota and period, e.g. { quota: 25000us, period: 100000us }`,
      );
    }
    const written = `{ quota: ${String(o.quota)}, period: ${String(o.period)} }`;
    const q = quotaPartUs(o.quota, "quota", written);
    const p = quotaPartUs(o.period, "period", written);
    return checkPair(q, p, written, "object");
  }
  throw new Error(`expected ${CPU_FORMS}, got ${show(v)}`);
}

// ---------------------------------------------------------------------------------------------- bytes, rates

function prefixFactor(prefix: string | undefined, iec: boolean, written: string): number {
  if (!prefix) return 1;
  const order = "KMGTP".indexOf(prefix.toUpperCase());
  if (order < 0 || (prefix !== "k" && prefix !== prefix.toUpperCase())) {
    throw new Error(`${written}: unknown prefix ${show(prefix)}`);
  }
  return (iec ? 1024 : 1000) ** (order + 1);
}

/**
 * Parse a size into bytes (a whole number ≥ 0). IEC Ki/Mi/Gi/Ti/Pi = 1024^n, SI k/K/M/G/T/P = 1000^n, "B" optional:
 * "2GiB" → 2147483648, "512MiB", "2GB" → 2000000000, "1024", 1024, "1.5KiB" → 1536. Lowercase "b" (bits) is rejected.
 * @throws Error listing the accepted forms.
 */
export function parseBytes(v: string | number): number {
  if (typeof v === "number") {
    if (Number.isInteger(v) && v >= 0) return v;
    throw new Error(`${show(v)} is not a whole, non-negative number of bytes; expected ${BYTES_FORMS}`);
  }
  if (typeof v !== "string") throw new Error(`expected ${BYTES_FORMS}, got ${show(v)}`);
  const s = v.trim();
  const m = new RegExp(`^${NUM}\\s*(?:([kKMGTP])(i)?)?(B)?$`).exec(s);
  if (!m) {
    const bits = new RegExp(`^${NUM}\\s*([kKMGTP]i?)?b$`).test(s);
    throw new Error(
      `${show(v)} is not a size${bits ? ' (lowercase "b" means bits; write "B" for bytes)' : ""}; expected ${BYTES_FORMS}`,
    );
  }
  const bytes = Number(m[1]) * prefixFactor(m[2], m[3] === "i", show(v));
  const rounded = Math.round(bytes);
  if (Math.abs(bytes - rounded) > 1e-6 * Math.max(1, bytes)) {
    throw new Error(`${show(v)} is ${bytes} bytes, not a whole number of bytes`);
  }
  return rounded;
}

/**
 * Parse a bandwidth into bytes per second (> 0; may be fractional for odd bit rates).
 * Bytes: "125829120B/s", "120MiB/s", "10MB/s", "12000KB/s" (= 12,000,000 B/s, libvirt <bandwidth> units).
 * Bits: "96Mbit/s", "96Mbps", "96Mb/s", "1Gbit/s", "500kbit/s" (÷ 8). Prefixes as in parseBytes; a unit is required
 * (a bare 12000 could be libvirt KB/s or bytes/s).
 * @throws Error listing the accepted forms.
 */
export function parseRate(v: string | number): number {
  if (typeof v === "number") {
    throw new Error(
      `${show(v)} is a bare number, which is ambiguous as a rate: add a unit; expected ${RATE_FORMS}`,
    );
  }
  if (typeof v !== "string") throw new Error(`expected ${RATE_FORMS}, got ${show(v)}`);
  const s = v.trim();
  const m = new RegExp(`^${NUM}\\s*(?:([kKMGTP])(i)?)?(B/s|bit/s|bits/s|b/s|bps)$`).exec(s);
  if (!m) {
    const bare = /^\d+(\.\d+)?$/.test(s) ? " (a bare number is ambiguous: add a unit)" : "";
    throw new Error(`${show(v)} is not a rate${bare}; expected ${RATE_FORMS}`);
  }
  const n = Number(m[1]) * prefixFactor(m[2], m[3] === "i", show(v));
  const bytesPerSec = m[4] === "B/s" ? n : n / 8;
  if (!(bytesPerSec > 0)) throw new Error(`${show(v)}: a rate must be more than 0 (omit it for no cap)`);
  return bytesPerSec;
}

/**
 * Parse an IOPS cap: 3000, "3000", "3000iops" (case-insensitive) → 3000. Must be a positive whole number.
 * @throws Error listing the accepted forms.
 */
export function parseIops(v: string | number): number {
  let n: number;
  if (typeof v === "number") n = v;
  else if (typeof v === "string" && /^\d+\s*(iops)?$/i.test(v.trim())) n = parseInt(v.trim(), 10);
  else throw new Error(`${show(v)} is not an IOPS cap; expected ${IOPS_FORMS}`);
  if (!Number.isInteger(n) || n <= 0)
    throw new Error(`${show(v)} is not an IOPS cap; expected ${IOPS_FORMS}`);
  return n;
}

/**
 * Parse a percentage written with a % sign ("0.1%" → 0.1, in percent, 0..100). Bare numbers are rejected
 * (0.1 could mean 10 % or 0.1 %). Used for tc netem loss.
 * @throws Error listing the accepted forms.
 */
export function parsePercent(v: string | number): number {
  if (typeof v === "string") {
    const m = new RegExp(`^${NUM}\\s*%$`).exec(v.trim());
    if (m) {
      const p = Number(m[1]);
      if (p <= 100) return p;
      throw new Error(`${show(v)} is more than 100%`);
    }
  }
  const bare = typeof v === "number" || /^\d/.test(String(v)) ? " (a bare number is ambiguous: add %)" : "";
  throw new Error(`${show(v)} is not a percentage${bare}; expected ${PERCENT_FORMS}`);
}

// ---------------------------------------------------------------------------------------------- formatting

function scale(n: number, base: number, units: readonly string[]): [number, string] {
  let i = 0;
  let x = n;
  while (Math.abs(x) >= base && i < units.length - 1) {
    x /= base;
    i++;
  }
  return [x, units[i] as string];
}

/** Format bytes with IEC units for display: 512 → "512 B", 2147483648 → "2.0 GiB", 12000000 → "11.4 MiB". */
export function formatBytes(bytes: number): string {
  const [x, u] = scale(bytes, 1024, ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]);
  return u === "B" ? `${Math.round(x)} B` : `${x.toFixed(1)} ${u}`;
}

/**
 * Format a rate given in bytes per second for display. "bytes" (default, disks): IEC, 12000000 → "11.4 MiB/s";
 * "bits" (networks): SI, 12000000 → "96.0 Mbit/s".
 */
export function formatRate(bytesPerSec: number, unit: "bytes" | "bits" = "bytes"): string {
  if (unit === "bits") {
    const [x, u] = scale(bytesPerSec * 8, 1000, ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"]);
    return u === "bit/s" ? `${Math.round(x)} bit/s` : `${x.toFixed(1)} ${u}`;
  }
  return `${formatBytes(bytesPerSec)}/s`;
}

/** Format a CPU cap for display: { quotaUs: 25000, periodUs: 100000 } → "0.25 cores (25000/100000 µs)". */
export function formatCpu(cpu: CpuLimit): string {
  return `${coresText(cpu.quotaUs, cpu.periodUs)} cores (${cpu.quotaUs}/${cpu.periodUs} µs)`;
}

/** Format milliseconds for display in parseDuration syntax: 90000 → "1m30s", 0.1 → "100us", 1500 → "1s500ms". */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  let us = Math.round(ms * 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400_000_000],
    ["h", 3_600_000_000],
    ["m", 60_000_000],
    ["s", 1_000_000],
    ["ms", 1_000],
    ["us", 1],
  ] as const) {
    if (us >= size) {
      parts.push(`${Math.floor(us / size)}${unit}`);
      us %= size;
    }
  }
  return parts.join("");
}

// ---------------------------------------------------------------------------------------------- zod adapter

/**
 * Wrap a unit parser as a zod schema: input is whatever YAML produced, output the parsed value. A thrown Error
 * becomes one custom issue with the parser's message at the field's path; `undefined` becomes a "required" issue
 * (use `.optional()` for optional fields).
 */
export function zUnit<T>(parse: (v: never) => T): z.ZodType<T, z.ZodTypeDef, unknown> {
  return z.unknown().transform((v, ctx): T => {
    if (v === undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.invalid_type,
        expected: z.ZodParsedType.string,
        received: z.ZodParsedType.undefined,
      });
      return z.NEVER;
    }
    try {
      return parse(v as never);
    } catch (e) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: e instanceof Error ? e.message : String(e) });
      return z.NEVER;
    }
  });
}
