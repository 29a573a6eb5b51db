/**
 * The one number formatter of the printed words (ui/): integers, rates, percentages, bytes and durations, each with
 * one precision rule. A figure that is null or not finite prints as "–" (never "NaN", never a false 0). The lines and
 * tables of ui/ and the comparisons (harness/results/format.ts re-exports `int`) format their numbers here.
 */
import { formatBytes } from "../core/units.ts";

/** Whether a figure can be printed (a finite number). */
const ok = (n: number | null | undefined): n is number => typeof n === "number" && Number.isFinite(n);

/** Rounded to an integer with thousands separators: 12345.6 → "12,346"; "–" when null or not finite. */
export function int(n: number | null | undefined): string {
  return ok(n) ? Math.round(n).toLocaleString("en-US") : "–";
}

/** `d` fixed decimals and an optional unit suffix: fix(1.2, 2, "x") → "1.20x"; "–" when null or not finite. */
export function fix(n: number | null | undefined, d: number, unit = ""): string {
  return ok(n) ? `${n.toFixed(d)}${unit}` : "–";
}

/**
 * Three significant digits, integers from 1000 up with separators: 0.012345 → "0.0123", 12.345 → "12.3",
 * 12345.6 → "12,346"; "–" when null or not finite. For figures that span decades (a cost per million rows).
 */
export function sig(n: number | null | undefined): string {
  if (!ok(n)) return "–";
  if (Math.abs(n) >= 1000) return int(n);
  if (n === 0) return "0";
  const d = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(n))));
  return n.toFixed(d);
}

/** US dollars to three significant digits: 0.0123 → "$0.0123", 12.3 → "$12.3"; "–" when null or not finite. */
export function usd(n: number | null | undefined): string {
  return ok(n) ? `$${sig(n)}` : "–";
}

/** A rate as an integer per second with its unit: rate(33598.4) → "33,598 rows/s"; "– rows/s" when unknown. */
export function rate(n: number | null | undefined, unit = "rows/s"): string {
  return `${int(n)} ${unit}`;
}

/**
 * A share (0..1) as a percentage with `d` decimals (default 0): pct(0.123) → "12 %", pct(0.123, 1) → "12.3 %";
 * "–" when null or not finite. The decimals are the caller's figure's own (a CV to 0.1 %, a wait share to 1 %).
 */
export function pct(x: number | null | undefined, d = 0): string {
  return ok(x) ? `${(x * 100).toFixed(d)} %` : "–";
}

/**
 * A small share (a cost: the harness's CPU, the verifier's) to two decimals of a percent, three under 1 %:
 * 0.042 → "4.20 %", 0.00098 → "0.098 %"; "–" when null or not finite.
 */
export function pctSmall(x: number | null | undefined): string {
  return ok(x) ? `${(x * 100).toFixed(x < 0.01 ? 3 : 2)} %` : "–";
}

/** Bytes in binary units, 1 decimal: 1536 → "1.5 KiB" (core/units.ts formatBytes); "–" when null or not finite. */
export function bytes(b: number | null | undefined): string {
  return ok(b) ? formatBytes(b) : "–";
}

/** Bytes as whole MiB: 104857600 → "100 MiB"; "–" when null or not finite. */
export function mib(b: number | null | undefined): string {
  return ok(b) ? `${(b / 2 ** 20).toFixed(0)} MiB` : "–";
}

/** Milliseconds as seconds to 0.1 s: 2100 → "2.1 s"; "–" when null or not finite. */
export function secondsOf(ms: number | null | undefined): string {
  return ok(ms) ? `${(ms / 1000).toFixed(1)} s` : "–";
}

/** Milliseconds, rounded, with separators: 1234.5 → "1,235 ms"; "–" when null or not finite. */
export function ms(v: number | null | undefined): string {
  return ok(v) ? `${int(v)} ms` : "–";
}

/** A duration in seconds, compact, rounded to the second: 45 → "45s", 250 → "4m10s", 3720 → "1h02m". */
export function duration(s: number): string {
  const t = Math.max(0, Math.round(ok(s) ? s : 0));
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, "0")}s`;
  return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, "0")}m`;
}

/** A count and its noun, singular for 1: plural(1, "run") → "1 run", plural(3, "query", "queries") → "3 queries". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${int(n)} ${n === 1 ? one : many}`;
}

/** The printed width of a line in terminal columns (code points; the output has no wide characters). */
export function width(line: string): number {
  return [...line.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "")].length;
}

/** `line` cut to `max` columns, ending in "…" when cut. */
export function clip(line: string, max: number): string {
  const chars = [...line];
  return chars.length <= max ? line : `${chars.slice(0, Math.max(0, max - 1)).join("")}…`;
}

/**
 * `line` folded into lines of at most `max` columns: broken after "; " where it can, else after ", ", else at a
 * space, else cut; each continuation line is indented 4 columns deeper than the line itself, so that a "key: value"
 * line reads as one item. A line that fits comes back alone; none of the text is dropped.
 */
export function wrap(line: string, max: number): string[] {
  if (width(line) <= max) return [line];
  const indent = `${/^ */.exec(line)![0]}    `;
  const out: string[] = [];
  let rest = line;
  let lead = "";
  while (width(lead + rest) > max) {
    const room = Math.max(8, max - width(lead));
    const chars = [...rest];
    const head = chars.slice(0, room + 1).join("");
    // the last break of the best kind that leaves the line at least a third full
    const at = ["; ", ", ", " "]
      .map((sep) => {
        const i = head.lastIndexOf(sep);
        return i >= room / 3 ? i + sep.length - 1 : -1;
      })
      .find((i) => i > 0);
    // else the last space of all (a long path is moved whole to the next line), else a cut
    const space = head.trimEnd().lastIndexOf(" ");
    const cut = at ?? (space > 0 ? space : room);
    const piece = chars.slice(0, cut).join("").trimEnd();
    out.push(lead + piece);
    rest = chars.slice(cut).join("").trimStart();
    lead = indent;
    if (rest === "") break;
  }
  if (rest !== "") out.push(lead + rest);
  return out;
}
