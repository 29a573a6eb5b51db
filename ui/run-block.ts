/**
 * The run block: everything a run's record says, in a few lines (what `--verbose` prints after each run and what
 * `ingestbench show <run-id>` prints from run.json): status and directory, unenforced limits, throughput, bottleneck,
 * contention, lag and delivery latency, the saturation verdict, the ledger and the content check, the instrument's own
 * cost, the query phase, the application under test, fault steps, failed checks and the error.
 */
import path from "node:path";
import type { ReplayReads } from "../core/events/source.ts";
import type { Contention, RunRecord } from "../harness/results/types.ts";
import { bottleneckLabel, mibText } from "../harness/results/format.ts";
import { faultLines, timelineLines } from "../harness/runner/fault-cost.ts";
import { queryLines } from "../harness/runner/query-load.ts";
import { appLine } from "../harness/runner/app-host.ts";
import { bytes, fix, int as fmtInt, mib, ms, pct, pctSmall, secondsOf, sig, usd } from "./format.ts";

/** The contention figures of a run in one line: "!! contended: …" when flagged, else the per-host wait shares. */
export function contentionLine(c: Contention): string {
  const hosts = Object.entries(c.hosts)
    .map(([h, x]) => `${h} ${pct(x.share)} (${x.waitMsPerSec.toFixed(0)} ms/s)`)
    .join(", ");
  const machine = [
    c.psiCpuSomeShare === null ? null : `PSI cpu some ${pct(c.psiCpuSomeShare)}`,
    c.stealShare === null ? null : `steal ${pct(c.stealShare, 1)}`,
    c.harnessCores === null ? null : `harness ${c.harnessCores.toFixed(2)} cores`,
  ]
    .filter(Boolean)
    .join(", ");
  if (!c.contended) return `contention: waiting for a CPU ${hosts}; ${machine}`;
  // the reasons already name the flagged hosts, the steal that flagged and the PSI: the rest only, once
  const named = (h: string): boolean => c.reasons.some((r) => r.startsWith(`${h} waited `));
  const others = Object.entries(c.hosts)
    .filter(([h]) => !named(h))
    .map(([h, x]) => `${h} ${pct(x.share)} (${x.waitMsPerSec.toFixed(0)} ms/s)`);
  const rest = [
    others.length ? `also waiting for a CPU: ${others.join(", ")}` : null,
    c.stealShare === null || c.reasons.some((r) => r.startsWith("steal "))
      ? null
      : `steal ${pct(c.stealShare, 1)}`,
    c.psiCpuSomeShare === null || c.reasons.some((r) => r.startsWith("CPU pressure"))
      ? null
      : `PSI cpu some ${pct(c.psiCpuSomeShare)}`,
    c.harnessCores === null ? null : `harness ${c.harnessCores.toFixed(2)} cores`,
  ].filter(Boolean);
  return `!! contended: ${[...c.reasons, ...rest].join("; ")}`;
}

/**
 * A run's result in a few lines: status and directory (under `resultsRoot`, relative to the working directory when
 * inside it), unenforced limits, throughput, bottleneck, ledger, the query phase (one line per query cell), failed checks, error.
 */
export function describeRun(r: RunRecord, resultsRoot = "results"): string {
  const dir = path.join(resultsRoot, r.stack, r.scenario, r.runId);
  const shown =
    path.isAbsolute(dir) && !path.relative(process.cwd(), dir).startsWith("..")
      ? path.relative(process.cwd(), dir)
      : dir;
  const lines = [`run ${r.runId}: ${r.status}  → ${shown}/`];
  if (r.caps?.oversubscribed)
    lines.push(
      `  !! oversubscribed: ${r.caps.reasons.join("; ")} (caps are limits, not reservations: the hosts compete for the machine)`,
    );
  for (const [host, l] of Object.entries(r.limits)) {
    if (!l.enforced) lines.push(`  !! limits NOT enforced on ${host}: ${l.notes.join("; ")}`);
    if (l.enforced === "partial")
      lines.push(`  !! limits partially enforced on ${host}: ${(l.partial ?? []).join("; ")}`);
    if (l.uncapped?.length) lines.push(`  uncapped (≥ machine) on ${host}: ${l.uncapped.join("; ")}`);
  }
  if (r.summary) {
    const s = r.summary;
    lines.push(
      `  ${fmtInt(s.rowsPerSecond)} rows/s${s.requestsPerSecond !== undefined ? ` (${fmtInt(s.requestsPerSecond)} req/s)` : ""}, ${mibText(s)} over ${s.measuredSeconds.toFixed(1)} s; sink ${s.sinkCores.toFixed(2)} cores` +
        `${s.throttledShare === null ? "" : `, throttled in ${(s.throttledShare * 100).toFixed(0)} % of periods`}, link ${s.sinkNetworkMbitPerSecond.toFixed(1)} Mbit/s`,
    );
    if (s.estimated) lines.push(`  !! ${s.estimated}`);
    if (s.shortWindow) lines.push(`  !! ${s.shortWindow}`);
    lines.push(
      s.bottleneck.resource === "uncertain"
        ? `  bottleneck: ${s.bottleneck.evidence}`
        : `  bottleneck: ${bottleneckLabel(s.bottleneck)} (${s.bottleneck.evidence})`,
    );
    if (s.contention) lines.push(`  ${contentionLine(s.contention)}`);
    const lag = lagLine(r);
    if (lag) lines.push(`  ${lag}`);
    const delivery = deliveryLine(r);
    if (delivery) lines.push(`  ${delivery}`);
    if (s.saturation) lines.push(`  verdict: ${verdictLine(s.saturation)}`);
    const cost = costLine(s);
    if (cost) lines.push(`  ${cost}`);
  }
  const storage = storageLine(r);
  if (storage) lines.push(`  ${storage}`);
  if (r.ledger) {
    const l = r.ledger;
    if (l.inferred)
      lines.push(
        `  sent inferred: ${l.inferred.by} made ${fmtInt(l.sent)} by its own count (${l.inferred.counter}); ${fmtInt(l.inferred.outsideRange)} stored seqs outside 0 .. made − 1`,
      );
    lines.push(
      `  ledger${l.inferred ? " (sent inferred)" : ""}: sent ${fmtInt(l.sent)}, stored ${fmtInt(l.stored)}, distinct ${fmtInt(l.distinct)}, lost ${fmtInt(l.lost)}, duplicated ${fmtInt(l.duplicated)}, rejected ${fmtInt(l.rejected)}` +
        (l.missingRanges.length
          ? `; first missing ${l.missingRanges
              .slice(0, 3)
              .map(([g, a, b]) => `gen ${g} ${a}..${b}`)
              .join(", ")}`
          : ""),
    );
  } else if (r.summary) {
    lines.push(
      `  ledger: not taken (the run ended, ${r.status}, before its ledger was counted: nothing says whether rows were lost)`,
    );
  } else if (r.status === "interrupted") {
    // stopped in provisioning or warmup: say so, rather than nothing (what the series kept is the warmup's)
    lines.push(
      "  nothing measured: interrupted before its measurement began (no figures, no ledger; series.jsonl keeps any warmup samples)",
    );
  }
  const content = contentLine(r);
  if (content) lines.push(content);
  const instrument = instrumentLine(r);
  if (instrument) lines.push(instrument);
  if (r.query) lines.push(...queryLines(r.query));
  if (r.app) lines.push(appLine(r.app));
  // fault steps: what ran when, and what each fault cost (./fault-cost.ts)
  for (const line of timelineLines(r.timeline ?? [])) lines.push(`  ${line}`);
  for (const line of faultLines(r.faults ?? [], r.timeline ?? [])) lines.push(`  ${line}`);
  for (const c of r.checks.filter((c) => !c.ok))
    lines.push(`  check failed: ${c.check} ${c.expected}, got ${c.actual}`);
  if (r.error) lines.push(`  error ${r.error.code}: ${r.error.message}`);
  // the whole text and stack of an unexpected error only with --debug (INGESTBENCH_DEBUG=1, harness/cli/index.ts)
  if (r.error?.detail && process.env.INGESTBENCH_DEBUG === "1")
    lines.push(...r.error.detail.split("\n").map((l) => `    ${l}`));
  return lines.join("\n");
}

/**
 * "lag p50 120 ms, p99 (n=30) 480 ms, max 495 ms; backlog ≥ 600 ms at most; clock offset +0.03 ± 0.11 ms (8 exchanges)":
 * the percentiles with the samples they rest on, the largest backlog age (a lower bound, SeriesPoint.backlogLagMs),
 * and the loadgen clock offset applied to them (RunRecord.clock). Null when the run measured no lag.
 */
export function lagLine(r: RunRecord): string | null {
  const s = r.summary;
  if (!s || s.lagP99Ms === null) return null;
  const n = s.lagSamples === undefined ? "" : ` (n=${s.lagSamples})`;
  const parts = [`lag p50 ${ms(s.lagP50Ms)}, p99${n} ${ms(s.lagP99Ms)}, max ${ms(s.lagMaxMs)}`];
  if (s.backlogLagMaxMs != null) parts.push(`backlog ≥ ${ms(s.backlogLagMaxMs)} at most`);
  if (r.clock) {
    parts.push(
      r.clock.measured
        ? `clock offset ${r.clock.offsetMs >= 0 ? "+" : ""}${r.clock.offsetMs.toFixed(2)} ± ${r.clock.boundMs.toFixed(2)} ms (${r.clock.exchanges} exchanges)`
        : `clock offset not measured (${r.clock.reason}): lag uncorrected`,
    );
  }
  return parts.join("; ");
}

/**
 * "delivery p50 12 ms, p99 80 ms, max 140 ms over 60,000 rows (stored_at − sent_at at the sink; one clock: …)", with
 * the stamp's resolution when it is coarser than 1 ms; "delivery latency: unavailable (why)"; null without a summary
 * or in older results.
 */
export function deliveryLine(r: RunRecord): string | null {
  const d = r.summary?.deliveryLatency;
  if (!d) return null;
  if ("unavailable" in d) return `delivery latency: unavailable (${d.unavailable})`;
  const notes = [
    "stored_at − sent_at at the sink",
    d.resolutionMs > 1 ? `stamped to ${fmtInt(d.resolutionMs)} ms, read at its middle` : null,
    d.unstamped > 0 ? `${fmtInt(d.unstamped)} rows without a stamp` : null,
    d.clock,
  ]
    .filter(Boolean)
    .join("; ");
  return `delivery p50 ${ms(d.p50Ms)}, p99 ${ms(d.p99Ms)}, max ${ms(d.maxMs)} over ${fmtInt(d.rows)} rows (${notes})`;
}

/** "saturated (backpressure) from 4.2 s: delivery p50 +400 ms/s …", or the label and its evidence. */
export function verdictLine(v: NonNullable<NonNullable<RunRecord["summary"]>["saturation"]>): string {
  return v.state === "saturated" && v.beganS !== undefined
    ? `${v.label} from ${v.beganS.toFixed(1)} s (${v.evidence})`
    : `${v.label} (${v.evidence})`;
}

/**
 * The content check's line: "content: exact, 40,000 rows compared (all)" or "content: ALTERED 2 of … rows (sample of
 * 10,000 seqs): gen 0 seq 17 msg expected … stored …"; null without a ledger.
 */
export function contentLine(r: RunRecord): string | null {
  const f = r.ledger?.fidelity;
  if (!f) return null;
  if ("unavailable" in f) return `  content: not compared (${f.unavailable})`;
  const scope = `${fmtInt(f.rowsCompared)} rows compared (${f.mode === "all" ? "all" : `sample of ${fmtInt(f.sampleSize ?? 0)} seqs`})`;
  const modified = f.replayModified
    ? `; the replay file was modified at ${f.replayModified.at}, after the generators started (${f.replayModified.generatorsStarted}): the lines compared are the file's as it is now, so altered rows may be the file's doing, not the pipeline's`
    : "";
  const rl = f.replayLines;
  const changed =
    rl && rl.cut + rl.repaired > 0
      ? `; of the file's ${fmtInt(rl.lines)} lines the generators sent ${[rl.cut ? `${fmtInt(rl.cut)} cut at 64 KiB` : "", rl.repaired ? `${fmtInt(rl.repaired)} with invalid UTF-8 or NUL replaced` : ""].filter(Boolean).join(" and ")}: compared as sent, not as in the file`
      : "";
  const replay = (f.replay ? `; replay file: ${replayReadText(f.replay)}` : "") + changed;
  if (f.altered === 0) return `  content: exact, ${scope}${replay}${modified}`;
  // after a change to the replay file, what the check expected is the file's line now, not what was sent
  const expected = f.replayModified ? "the file now" : "sent";
  const ex = f.examples
    .slice(0, 2)
    .map((e) => `gen ${e.gen} seq ${e.seq} ${e.field}: ${expected} ${e.expected}, stored ${e.stored}`);
  return `  content: ALTERED ${fmtInt(f.altered)} of ${scope}${replay}${modified}; ${ex.join("; ")}`;
}

/**
 * What the content check read of a replay file: "612.0 MiB read (9,812 seeks to the generators' index of 262,144
 * marks)", or with why the index went unused, or "300 B read" without one (also bench/harness.ts's replay rows).
 */
export function replayReadText(r: ReplayReads): string {
  const how = r.indexDropped
    ? ` (the generators' index not used: ${r.indexDropped})`
    : r.indexMarks > 0
      ? ` (${fmtInt(r.seeks)} seeks to the generators' index of ${fmtInt(r.indexMarks)} marks)`
      : "";
  return `${bytes(r.bytes)} read${how}`;
}

/**
 * The instrument's own cost (RunRecord.instrument): "  instrument: harness 0.9 % of a core (RSS 98 MiB → 101 MiB, max 104 MiB); verifier 0.04 % of the
 * sink's 0.25-core cap (sink cpu, 93 queries); overhead: provision + sink start 2.1 s, schema 0.1 s, generators up
 * 1.3 s, ledger 0.2 s, content 0.4 s, teardown 0.5 s"; null in older results.
 */
export function instrumentLine(r: RunRecord): string | null {
  const i = r.instrument;
  if (!i) return null;
  const s = secondsOf;
  const v = i.verifier;
  const o = i.overhead;
  const after = i.harness.rss?.afterLoadMaxBytes;
  const n = v.sink?.queries ?? v.samples;
  const counted = `${n} ${v.sink ? (n === 1 ? "query" : "queries") : n === 1 ? "sample" : "samples"}`;
  const rss = i.harness.rss
    ? ` (RSS ${mib(i.harness.rss.openBytes)} → ${mib(i.harness.rss.lastBytes)}, max ${mib(i.harness.rss.maxBytes)}${after !== undefined ? `, after the load max ${mib(after)}` : ""})`
    : "";
  return (
    `  instrument: harness ${pctSmall(i.harness.cores)} of a core${rss}; verifier ${pctSmall(v.shareOfSinkCap)} of ${v.sinkUncapped ? `the machine's ${+v.sinkCapCores.toFixed(3)} cores` : `the sink's ${+v.sinkCapCores.toFixed(3)}-core cap`}` +
    ` (${v.sinkUncapped ? "the sink's CPU uncapped; " : ""}${v.basis}, ${counted}); overhead: provision + sink start ${s(o.provisionAndSinkStartMs)}, schema ${s(o.prepareMs)},` +
    ` generators up ${s(o.collectorsAndGeneratorsUpMs)},${o.completionCheckMs != null ? ` completion check ${s(o.completionCheckMs)}${(o.completionChecks ?? 1) > 1 ? ` in ${o.completionChecks} passes` : ""}${o.completionCheckWalBytes !== undefined ? ` (sink WAL ${mib(o.completionCheckWalBytes)})` : ""},` : ""}` +
    `${o.settleMs != null ? ` settle ${s(o.settleMs)}${o.settledInCompletionPass ? " (from the completion check's pass)" : ""},` : ""}${o.finalCountMs != null ? ` last count ${s(o.finalCountMs)},` : ""} ledger ${s(o.ledgerMs)}${o.ledgerPass ? ` (${o.ledgerPass.tookCompletionPass ? "the completion check's pass" : o.ledgerPass.detail.replace(/^its own pass \((.*)\)$/, "its own pass: $1")})` : ""}, content ${s(o.fidelityMs)}${o.afterLoadMs != null && o.fidelityMs != null ? ` (both ${s(o.afterLoadMs)})` : ""}, teardown ${s(o.teardownMs)}`
  );
}

/**
 * "cost: 3.86 core-s per million rows for the whole stack (loadgen 0.12, sink 1.66 core-s; no price: sink: no
 * pricePerHour in the stack file)", or "$0.0120 per million rows, $0.0011 per GiB of log lines (…)" with prices.
 */
export function costLine(s: NonNullable<RunRecord["summary"]>): string | null {
  const c = s.cost;
  if (!c) return null;
  const hosts = Object.entries(c.hostsCoreSeconds)
    .map(([h, v]) => `${h} ${fix(v, 2)}`)
    .join(", ");
  const core = `${sig(c.coreSecondsPerMillionRows)} core-s per million rows for the whole stack (${hosts} core-s)`;
  if (c.usdPerMillionRows === undefined) return `cost: ${core}${c.noPrice ? `; ${c.noPrice}` : ""}`;
  const perGiB =
    c.usdPerGiB === undefined
      ? ""
      : `, ${usd(c.usdPerGiB)} per GiB of ${c.usdPerGiBOf === "log" ? "log lines" : "wire bytes"}`;
  const from = c.prices ? ` (prices: ${c.prices.source}, ${c.prices.date})` : "";
  return `cost: ${usd(c.usdPerMillionRows)} per million rows${perGiB}${from}; ${core}`;
}

/** "storage: 146.5 MiB per million rows on the sink's disk (…source)", or why there is none. */
export function storageLine(r: Pick<RunRecord, "storage">): string | null {
  const st = r.storage;
  if (!st) return null;
  if ("unavailable" in st) return `storage: not read (${st.unavailable})`;
  const perM =
    st.bytesPerMillionRows === null
      ? ""
      : `, ${fix(st.bytesPerMillionRows / 2 ** 20, 1)} MiB per million rows`;
  const comp = st.compression === undefined ? "" : `, ${fix(st.compression, 1)}× compressed`;
  return `storage: ${bytes(st.bytes)} on the sink's disk for ${fmtInt(st.rows)} rows${perM}${comp} (${st.source})`;
}
