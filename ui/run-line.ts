/**
 * A run in a line: what `ingestbench bench` (and run, nightly, aa) prints by default when a run ends. Status, stack,
 * cell, rows/s, the ledger's verdict, what bound the run and its flags in words, then the run's short id for
 * `ingestbench show`. At most RUN_LINE_WIDTH columns; everything else is in the run block (ui/run-block.ts: `--verbose`,
 * `ingestbench show <run-id>`). A flag's meaning is said once per invocation, in a note (flagNote), not on every line.
 */
import { capsFlags } from "../harness/results/caps.ts";
import { logMibText } from "../harness/results/format.ts";
import type { RunRecord } from "../harness/results/types.ts";
import { clip, int, rate } from "./format.ts";

/** The widest a default line may be, in columns. */
export const RUN_LINE_WIDTH = 100;

/** The run id's last part (after its timestamp): "20261205T091714Z-aee9c2" → "aee9c2"; what `show` accepts too. */
export function shortRunId(runId: string): string {
  const i = runId.lastIndexOf("-");
  return i >= 0 && i < runId.length - 1 ? runId.slice(i + 1) : runId;
}

/** The status as a word that stands out when it is not ok: "ok", "FAILED" (a check), "ERROR", "interrupted". */
export function statusWord(status: RunRecord["status"]): string {
  if (status === "failed") return "FAILED";
  if (status === "error") return "ERROR";
  return status;
}

/**
 * The ledger's verdict in words: "exact" (every row sent stored once, none altered), else what went wrong:
 * "1,234 lost, 5 duplicated", "3 altered"; "no ledger" when the run ended before it was counted.
 */
export function ledgerWords(r: Pick<RunRecord, "ledger">): string {
  const l = r.ledger;
  if (!l) return "no ledger";
  const altered = l.altered ?? 0;
  const parts = [
    l.lost > 0 ? `${int(l.lost)} lost` : null,
    l.duplicated > 0 ? `${int(l.duplicated)} duplicated` : null,
    altered > 0 ? `${int(altered)} altered` : null,
  ].filter(Boolean);
  const exact = parts.length === 0 && l.stored === l.sent;
  return `${exact ? "exact" : parts.length ? parts.join(", ") : `${int(l.stored)} of ${int(l.sent)} stored`}${l.inferred ? " (sent inferred)" : ""}`;
}

/**
 * What bound the run, in words: "bound by client", "bound by cpu (sink)", "bound by host contention"; when the
 * verdict is uncertain, "bound: unclear (sink network)": the figure that decided it, too near its threshold to name it
 * (harness/runner/bottleneck.ts: "uncertain (…): sink network 0.88 is within ±0.05 of its 0.85 threshold").
 */
export function boundWords(r: Pick<RunRecord, "summary">): string | null {
  const b = r.summary?.bottleneck;
  if (!b) return null;
  if (b.resource === "uncertain") {
    const deciding = b.evidence.match(/\): (.+?) [\d.]+ is within/)?.[1];
    return `bound: unclear${deciding ? ` (${deciding})` : ""}`;
  }
  const what = b.resource;
  const host = ["cpu", "memory", "disk", "network"].includes(b.resource) && b.host ? ` (${b.host})` : "";
  return `bound by ${what}${host}`;
}

/**
 * The run's flags, as keys of FLAG_NOTES, in the order shown: the caps flags (harness/results/caps.ts capsFlags),
 * contention, an estimated or short measurement, and a saturation verdict other than steady.
 */
export function runFlagKeys(r: RunRecord): FlagKey[] {
  const keys: FlagKey[] = [];
  const caps = capsFlags(r);
  if (caps.includes("not enforced")) keys.push("not-enforced");
  if (caps.includes("partial")) keys.push("partial");
  if (caps.includes("oversubscribed")) keys.push("oversubscribed");
  if (caps.some((c) => c.startsWith("uncapped"))) keys.push("uncapped");
  const s = r.summary;
  if (s?.contention?.contended) keys.push("contended");
  if (s?.estimated) keys.push("estimated");
  if (s?.shortWindow) keys.push("short");
  const state = s?.saturation?.state;
  // oscillating is a shape, not a warning: the run block and the table's verdict column (--wide) say it
  if (state === "saturated" || state === "rejecting") keys.push(state);
  if (s?.bottleneck.resource === "uncertain") keys.push("unclear");
  return keys;
}

export type FlagKey =
  | "not-enforced"
  | "partial"
  | "oversubscribed"
  | "uncapped"
  | "contended"
  | "estimated"
  | "short"
  | "saturated"
  | "rejecting"
  | "unclear";

/** Each flag's word on a run line, and the one note that explains it to a newcomer (each under 100 columns). */
export const FLAG_NOTES: Record<FlagKey, { word: string | null; note: string }> = {
  "not-enforced": {
    word: "caps NOT applied",
    note: "caps NOT applied: the limits were not set here; the figures are not the stack's size",
  },
  partial: {
    word: "partial caps",
    note: "partial caps: some limits can't be set here (cgroup v1 can't slow buffered disk writes)",
  },
  oversubscribed: {
    word: "oversubscribed",
    note: "oversubscribed: the hosts' caps add up to more than this machine has, so they compete for it",
  },
  uncapped: {
    word: "uncapped",
    note: "uncapped: a cap is as large as the whole machine, so it limits nothing",
  },
  contended: {
    word: "contended",
    note: "contended: a host waited for a CPU other processes held; rows/s may be lower than the stack can do",
  },
  estimated: {
    word: "estimated",
    note: "estimated: part of the figure was estimated, not measured (show <run> says which)",
  },
  short: {
    word: "short window",
    note: "short window: the measurement had few samples; take its rows/s as rough",
  },
  saturated: {
    word: "saturated",
    note: "saturated: latency kept growing while rows/s stayed flat: more arrived than was stored",
  },
  rejecting: {
    word: "rejecting",
    note: "rejecting: the pipeline refused or dropped events during the measurement",
  },
  unclear: {
    word: null,
    note: "bound: unclear (…): the figure named was too near its threshold to call it the bound",
  },
};

/** The flags a run line shows: runFlagKeys less "contended" when the bound already says contention. */
function lineFlagKeys(r: RunRecord): FlagKey[] {
  const keys = runFlagKeys(r);
  return r.summary?.bottleneck.resource === "contention" ? keys.filter((k) => k !== "contended") : keys;
}

/** The flags' words for a run line, in order (a flag without a word, "unclear", is said by the bound). */
function flagWordList(keys: readonly FlagKey[]): string[] {
  return keys.flatMap((k) => FLAG_NOTES[k].word ?? []);
}

/** The flags in words for a run line ("caps partly applied, contended"); "" when none. */
export function flagWords(keys: readonly FlagKey[]): string {
  return flagWordList(keys).join(", ");
}

/**
 * One run in one line of at most `max` columns (RUN_LINE_WIDTH by default):
 * "ok  local-quarter-core  33,598 rows/s  5.28 log MiB/s  exact  bound by client  partial caps  run aee9c2" (the cell
 * is named when it is not "default"; log MiB/s, write-up 004's unit, is the log lines' own bytes,
 * Summary.logMibPerSecond, when known); an error: "ERROR  local-2-cores  E_VERSION_PIN: …  run 477040". The least
 * needed parts give way first: log MiB/s (it is in the run block), unless the run replayed a file (`source: { file }`,
 * write-up 004's case, where it is the figure to read): then the flags' words are shortened first (those that fit,
 * then "…"; each flag's note is printed under the line all the same) and log MiB/s goes rather than the last "…";
 * then the flags are shortened; then the error's message is cut; never the status, stack, cell or rows/s.
 */
export function runLine(r: RunRecord, max = RUN_LINE_WIDTH): string {
  const log = r.summary?.logMibPerSecond;
  if (typeof log !== "number" || r.error) return lineOf(r, max, null)!;
  // a seeded run's log MiB/s is rows/s × the text's size: shown only when the line keeps every flag word
  const line = replayed(r)
    ? lineOf(r, max, logMibText(log))
    : lineOf(r, Number.POSITIVE_INFINITY, logMibText(log));
  return line !== null && line.length <= max ? line : lineOf(r, max, null)!;
}

/** Whether the run replayed a log file (its scenario's `source: { file }`, run.json scenarioConfig). */
function replayed(r: RunRecord): boolean {
  return (r.scenarioConfig as { source?: { file?: unknown } } | null | undefined)?.source?.file !== undefined;
}

/**
 * runLine with `extra` (or nothing) after the rates; null when `extra` is given and the line cannot keep it and at
 * least "…" of the flags.
 */
function lineOf(r: RunRecord, max: number, extra: string | null): string | null {
  // a scenario without a matrix has one cell, "default": nothing to tell apart
  const cell = r.cell === "default" ? "" : ` ${r.cell}`;
  const head = `${statusWord(r.status)}  ${r.stack}${cell}${r.replicate > 1 ? ` r${r.replicate}` : ""}`;
  const id = `run ${shortRunId(r.runId)}`;
  const parts: string[] = [];
  if (r.summary) parts.push(rate(r.summary.rowsPerSecond));
  if (r.summary?.requestsPerSecond !== undefined) parts.push(`${rate(r.summary.requestsPerSecond, "req/s")}`);
  if (extra) parts.push(extra);
  if (r.summary || r.ledger) parts.push(ledgerWords(r));
  const bound = boundWords(r);
  if (bound) parts.push(bound);
  const flags = flagWords(lineFlagKeys(r));
  const failed = r.checks.filter((c) => !c.ok).map((c) => `check ${c.check} failed`);
  const error = r.error ? `${r.error.code}: ${r.error.message.split("\n")[0]}` : null;
  if (r.status === "interrupted" && !r.summary) parts.push("nothing measured");
  const join = (xs: Array<string | null>): string => [head, ...xs.filter(Boolean)].join("  ");
  // the error's message and the flags take what room is left, cut with "…"
  const fixed = [...parts, ...failed];
  const tail = [flags || null, id];
  // the id ends every line whole (`ingestbench show <id>` takes it): what is cut is cut before it
  const withId = (xs: Array<string | null>): string => `${clip(join(xs), max - id.length - 2)}  ${id}`;
  if (error) {
    const room = max - join([...fixed, "", ...tail]).length;
    return withId([...fixed, clip(error, Math.max(12, room)), flags || null]);
  }
  const full = join([...fixed, ...tail]);
  if (full.length <= max) return full;
  // the flags that fit, in order, then "…" for the rest
  const words = flagWordList(lineFlagKeys(r));
  for (let k = words.length - 1; k >= 0; k--) {
    const line = join([...fixed, `${[...words.slice(0, k), "…"].join(", ")}`, id]);
    if (line.length <= max) return line;
  }
  // with `extra`: only whole, and never in place of every flag
  if (extra && (flags || join([...fixed, id]).length > max)) return null;
  return withId(fixed);
}

/** The notes of `keys` not said yet in this invocation (`said` is updated): one line each, to print once. */
export function newFlagNotes(keys: readonly FlagKey[], said: Set<FlagKey>): string[] {
  const out: string[] = [];
  for (const k of keys) {
    if (said.has(k)) continue;
    said.add(k);
    out.push(`  ${FLAG_NOTES[k].note}`);
  }
  return out;
}
