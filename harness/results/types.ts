/**
 * The shapes of what a run writes: results/<stack>/<scenario>/<run-id>/run.json and series.jsonl.
 * Documented field by field in docs/results.md.
 */
import type { ClockOffset } from "../generators/clock.ts";

import type { AppliedLimits, CapsFit } from "../../core/limits.ts";

/** run.json `caps`: the caps fit of the hosts that ran together (core/limits.ts CapsFit), and which hosts they were. */
export type RunCaps = CapsFit & { hosts: string[] };
import type { GeneratorFinal } from "../generators/types.ts";
import type { AppFigure } from "../scenario/app-schema.ts";
import type { HostWindow, MachineWindow } from "../observers/types.ts";
import type { Ledger, LedgerPass, SinkCost } from "../../core/verifier.ts";

export type Phase = "warmup" | "measure" | "drain";

/** One line of series.jsonl: one sampling window. */
export interface SeriesPoint {
  /** epoch ms at the midpoint of the count query */
  t: number;
  /** seconds since load started */
  elapsedS: number;
  phase: Phase;
  /** rows the sink confirmed (count query) */
  stored: number;
  /** duration of the count query, ms (it grows with the table: the rate divides by real elapsed time) */
  countQueryMs: number;
  /** rows/s between the previous and this count, over the real elapsed time between the two query midpoints */
  rowsPerSec: number | null;
  /** wire MiB/s: rowsPerSec × the encoded bytes per row sent so far (protocol framing and tracking fields included) */
  mibPerSec: number | null;
  /**
   * log MiB/s: rowsPerSec × the mean bytes of the log line per row sent so far (the generated text or the replayed
   * file's line, not its encoding; harness/runner/summary.ts logMibPerSec); null when not known; absent in older results
   */
  logMibPerSec?: number | null;
  /**
   * ingest lag: query time − newest stored sent_at, ms, with sent_at moved onto the harness clock by the measured
   * offset (RunRecord.clock; exact to ± its boundMs). Not clamped: below −boundMs would mean a clock moved mid-run.
   */
  lagMs: number | null;
  /**
   * the backlog behind the newest row, from counts (GeneratorGroup.backlog, harness/runner/generator-group.ts): rows
   * acknowledged but not yet stored, and the age of the oldest of them (query time − when the harness first saw more
   * rows acknowledged than stored), ms. Both are lower bounds: a per-sample count cannot name the missing seqs (the
   * ledger names them after the drain). Null when nothing acknowledged was missing; absent in older results.
   */
  backlogRows?: number | null;
  backlogLagMs?: number | null;
  /** generator-side totals at this time (what was sent and acknowledged, not what was stored) */
  sent: number;
  accepted: number;
  /** generator-side rejections so far (refused by the sink or collector; absent in older results) */
  rejected?: number;
  hosts: Record<string, HostWindow>;
  /** machine-wide CPU pressure, steal and the harness's CPU in this window (local platform) */
  machine?: MachineWindow;
  /**
   * delivery latency (the sink's stored_at − sent_at) of the rows that became visible in this window
   * (harness/runner/delivery.ts); null: none did; absent: the sink has no stored-at (Summary.deliveryLatency says why)
   */
  delivery?: DeliveryPoint | null;
  /** the collector's own signals read in this window (syslog-ng-ctl stats, rsyslog impstats); absent without a collector that reports them */
  collector?: CollectorSignals;
  /** the sink's own signals read in this window (OpenSearch's merges from node stats); absent when the sink reports none */
  sink?: SinkSignals;
  /** the harness process's resident set at this sample, bytes (process.memoryUsage.rss(): /proc/self/statm resident pages; absent in older results) */
  harnessRssBytes?: number;
}

/** The states of the saturation verdict (harness/runner/saturation.ts). */
export type SaturationState = "steady" | "saturated" | "oscillating" | "rejecting" | "undetermined";

/** The saturation verdict as run.json's Summary.saturation keeps it (harness/runner/saturation.ts computes it). */
export interface SaturationVerdict {
  state: SaturationState;
  /** "saturated (backpressure)", "oscillating (120,000–190,000 rows/s)", "rejecting", "steady", "undetermined (3 samples)" */
  label: string;
  /** seconds since load start at which the saturation began (saturated only) */
  beganS?: number;
  /** what the verdict rests on, for people */
  evidence: string;
  /** measurement samples it read */
  samples: number;
  /**
   * the collector's flush and queue counters as the verdict read them (harness/runner/collector-pressure.ts): the
   * output under the most pressure, whether they say saturated, mean ms per flush (last and first third of the
   * measurement), the rise of slow flushes, retries and failed sends, the queue's used share (median of the last third,
   * 0–1) and what was queued at the end; absent when the collector reports none
   */
  collector?: { name: string; output: string; saturated: boolean } & PressureFigures;
}

/** One window's delivery latency: rows read, and their p50, p99 and max, ms (HDR histogram, 3 significant digits). */
export interface DeliveryPoint {
  rows: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * The collector's own counters at one sample (cumulative where the collector's are), per collector host; keys as the
 * collector names them (plugins/collectors/syslog-ng/component.ts parseSignals, plugins/collectors/rsyslog/component.ts
 * parseImpstatsSignals), e.g. "d_sink.queued", "a_sink queue.size".
 */
/** The sink's own signals at one sample (RunningComponent.signals of the sink): its values, or why the read failed. */
export interface SinkSignals {
  name: string;
  values?: Record<string, number>;
  error?: string;
}

export interface CollectorSignals {
  name: string;
  hosts: Record<string, Record<string, number>>;
  /** per host whose read failed, its message */
  errors?: Record<string, string>;
}

/**
 * A run's delivery latency (harness/runner/delivery.ts): over the rows stored after the warmup (measurement and
 * drain), with the rows it rests on, the resolution of the sink's stamp and how the two clocks relate.
 */
export interface DeliverySummary {
  rows: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** the sink's stored-at resolution, ms (ClickHouse 18.16: 1000, read at the middle of the second) */
  resolutionMs: number;
  /** rows read without a stored-at value (in no percentile) */
  unstamped: number;
  /** rows whose latency read below 0, recorded as 0 */
  belowZero: number;
  /** how the sink's clock and the generator's relate, and whether an offset is applied */
  clock: string;
}

/**
 * What bound a run: a capped resource of a host; "latency" when an open-loop generator fell behind its offered rate
 * with no resource saturated (round trips downstream push back); "client" when a closed loop's own pattern bound it.
 */
export type Resource =
  "cpu" | "memory" | "disk" | "network" | "contention" | "latency" | "client" | "uncertain";

/**
 * The resource that bound the run, named from observations (not from configuration). "contention" (shown `host
 * contention`): the host waited for a CPU other load held, not its own cap; "uncertain": the deciding score lies
 * within the margin of its threshold (harness/runner/bottleneck.ts MARGIN), so no category is named.
 */
export interface Bottleneck {
  resource: Resource;
  host: string;
  /** 0..1+: throttled share for cpu, observed/limit for the others */
  score: number;
  evidence: string;
  /** the deciding candidate's score − its threshold (positive: binds; negative: the closest one's distance below); absent in older runs */
  margin?: number;
  /** the deciding candidate's threshold */
  threshold?: number;
  /** every resource considered, with its score and threshold, for the record */
  candidates: Array<{
    resource: Resource;
    host: string;
    score: number;
    evidence: string;
    threshold?: number;
  }>;
}

/** One host's wait for a CPU over the measurement phase (harness/observers/local.ts; docs/design.md, "Contention"). */
export interface HostContention {
  /** schedstat run delay summed over the host's tasks, ms per second of wall time */
  runDelayMsPerSec: number;
  /** run delay less the time the host's own CPU cap throttled it (cpu.stat throttled_time), ms per second */
  waitMsPerSec: number;
  /** wait / (wait + CPU time used): the share of its runnable time the host waited for a CPU other load held */
  share: number;
}

/** Contention seen over the measurement phase: per host, the machine's CPU pressure and steal, the harness's own CPU. */
export interface Contention {
  /** true when a host's wait share reached CONTENDED or steal reached STEAL_CONTENDED (harness/runner/summary.ts) */
  contended: boolean;
  /** the figures behind `contended`, one sentence per host or counter that reached its mark */
  reasons: string[];
  hosts: Record<string, HostContention>;
  /** /proc/pressure/cpu "some" total: share of wall time some task waited for a CPU (null without PSI) */
  psiCpuSomeShare: number | null;
  /** /proc/stat steal / all CPU time (null where not read) */
  stealShare: number | null;
  /** the harness process's own CPU (getrusage(RUSAGE_SELF), as /proc/self/stat utime + stime), cores */
  harnessCores: number | null;
}

export interface Summary {
  /**
   * distinct rows stored per second over the measurement phase (real elapsed time between the bracketing count
   * queries); with duplicates in the ledger, the stored-rows rate × distinct/stored (see storedRowsPerSecond)
   */
  rowsPerSecond: number;
  /**
   * requests per second at that rate, for generators that send requests (HTTP, bulk, COPY batches): rowsPerSecond
   * ÷ the generator's mean rows per request (sent ÷ requests), as write-up 001 reports its load; absent otherwise
   */
  requestsPerSecond?: number;
  /** rows (duplicates included) stored per second; present when it differs from rowsPerSecond */
  storedRowsPerSecond?: number;
  /**
   * wire MiB/s: rowsPerSecond × bytesPerRow in MiB/s; null when the bytes sent are not known (bytesUnknown says why)
   */
  mibPerSecond: number | null;
  /**
   * log MiB/s: rowsPerSecond × logBytesPerRow ÷ 2^20, what write-up 004 read from its file; null when the log bytes
   * are not known; absent in older results
   */
  logMibPerSecond?: number | null;
  /** median, min and max of the per-window rows/s in the measurement phase */
  windowRowsPerSecond: { median: number; min: number; max: number };
  /** mean encoded bytes per row as sent (COPY text / JSON line); null when not known (bytesUnknown) */
  bytesPerRow: number | null;
  /**
   * mean bytes of the log line itself per row as sent: the last string field's UTF-8 bytes, the generated text or
   * the replayed file's line without its line end (core/events/source.ts EventSource.logBytes), not the wire
   * encoding; null when not known (bytesUnknown, an application under test); absent in older results
   */
  logBytesPerRow?: number | null;
  /**
   * why the bytes sent are not known (mibPerSecond and bytesPerRow null): a `generator: none` run's events are made
   * inside the collector (harness/runner/self-load.ts), so no byte passes the harness; absent when they are known
   */
  bytesUnknown?: string;
  measuredSeconds: number;
  /** mean CPU used by the sink host, cores */
  sinkCores: number;
  /** sink CPU time per 1000 stored rows, ms */
  cpuMsPer1000Rows: number;
  /** share of CFS periods throttled on the sink (null without a CPU cap) */
  throttledShare: number | null;
  /** mean of max(rx, tx) on the sink's data-plane interface, Mbit/s */
  sinkNetworkMbitPerSecond: number;
  sinkDiskWriteMiBPerSecond: number;
  sinkDiskWriteIops: number;
  /** largest memory charge (includes page cache) and largest working set (charge less inactive page cache), bytes */
  sinkMemoryPeakBytes: number;
  sinkMemoryWorkingSetBytes: number;
  lagP50Ms: number | null;
  /** with fewer than 100 samples (see lagSamples) this p99 lies between the two largest samples: read it as the max */
  lagP99Ms: number | null;
  lagMaxMs: number | null;
  /** measurement samples the lag percentiles rest on (absent in older results) */
  lagSamples?: number;
  /** the largest backlog age in the measurement (SeriesPoint.backlogLagMs; a lower bound), ms, or null when none */
  backlogLagMaxMs?: number | null;
  countQueryMaxMs: number;
  /**
   * seconds from the last measurement point to the first point at or after it that holds the final count (0 when the
   * last measurement point does: a fixed workload's window ends there); before 2026-12-05, to the drain's last point
   */
  drainSeconds: number;
  bottleneck: Bottleneck;
  /** CPU contention observed (absent in older runs and where the observer reads no run delay) */
  contention?: Contention;
  /** per-row delivery latency at the sink, or why the sink has none (absent in older results) */
  deliveryLatency?: DeliverySummary | { unavailable: string };
  /**
   * set when the figures rest on the verifier's live estimates because the run ended (interrupted, an error) before
   * they were settled (Verifier.afterLoad): says so in words; absent when the figures are settled or exact
   */
  estimated?: string;
  /**
   * set when a fixed workload was all sent before its warmup ended and the warmup's last sample had already stored some
   * of it: its window is then only the span from that sample to the end (the rate is not the workload's), said in
   * words with what to change; absent otherwise
   */
  shortWindow?: string;
  /** the saturation verdict from the series (harness/runner/saturation.ts; absent in older results) */
  saturation?: SaturationVerdict;
  /** what the rows cost the whole stack, every host (harness/runner/cost.ts; absent in older results) */
  cost?: StackCost;
}

/**
 * What the measurement phase's rows cost the whole stack (every host: loadgen, collectors, sink, app), from the CPU
 * each host used (SeriesPoint hosts[h].cpuCores × dtMs) and, where every host has a price, its price per hour.
 */
export interface StackCost {
  /** Σ hosts' core-seconds ÷ distinct rows stored in the window × 1e6; null with no rows or no host samples */
  coreSecondsPerMillionRows: number | null;
  /** per host, CPU seconds used over the measurement phase (cores × seconds) */
  hostsCoreSeconds: Record<string, number>;
  /** Σ hosts' price/hour × the window's wall hours ÷ its distinct rows × 1e6; absent without a price for every host */
  usdPerMillionRows?: number;
  /** the same per GiB (2^30 bytes) ingested: of log text (logBytesPerRow) when known, else of the wire (bytesPerRow) */
  usdPerGiB?: number;
  /** which bytes usdPerGiB counts: "log" (Summary.logBytesPerRow) or "wire" (Summary.bytesPerRow) */
  usdPerGiBOf?: "log" | "wire";
  /** Σ hosts' price per hour, US dollars */
  usdPerHour?: number;
  /** where the prices come from and the date they state (several hosts' joined with "; ") */
  prices?: { source: string; date: string };
  /** why there are no dollars: the hosts without a price, and why each has none */
  noPrice?: string;
}

export interface CheckResult {
  check: string;
  expected: string;
  actual: number | null;
  ok: boolean;
}

export type RunStatus = "ok" | "failed" | "error" | "interrupted";

export interface Environment {
  kernel: string;
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  cgroup: "v1" | "v2" | "none";
  node: string;
  hostname: string;
}

/**
 * The end of a run's wait for seq completion (core/ledger.ts, "Seq completion"; harness/runner/completion.ts). Times
 * are epoch ms, as SeriesPoint.t.
 */
export interface CompletionRecord {
  /** which wait: the fixed workload's (its window ends here) or the drain after a timed load */
  phase: "workload" | "drain";
  /** complete: every acknowledged seq is at the sink; timeout: the wait ended with seqs missing */
  outcome: "complete" | "timeout";
  /** acknowledged seqs missing when the wait ended, and the first ranges of them ([gen index, from, to]) */
  missing: number;
  missingRanges: Array<[number, number, number]>;
  /** from the end of the load (every generator done or stopped) to the end of the wait, ms */
  waitedMs: number;
  /**
   * the sample the window ends at: the first that saw the workload complete, or at a timeout the first that saw the
   * final stored count (the last arrival); null when the drain follows a timed load (its window ended at the load's end)
   */
  windowEndT: number | null;
  /**
   * width of the interval that holds the true end, ms: from the query start of the sample before windowEndT's to the
   * end of the query that confirmed it; null with windowEndT
   */
  windowErrorMs: number | null;
  /** sampling interval used once the sink held ≥ 95 % of the expected rows, ms */
  tightIntervalMs: number;
}

/**
 * One fault step as it ran (harness/runner/steps.ts): when it started and ended (epoch ms and seconds since t0, the
 * start of load), how it ended, and what it printed (stdout and stderr, cut to STEP_OUTPUT_MAX characters).
 * `status`: "ok" (exit 0), "failed" (non-zero exit or an error), "timeout" (past the step's timeout), "skipped"
 * (its time or condition did not come during the load; start and end null).
 */
export interface TimelineEntry {
  index: number;
  name: string;
  /** kill | stop | cont | restart | exec | network | script */
  action: string;
  /** the host role it acted on; null for a script */
  host: string | null;
  /** "at 5s" or "when stored >= 20000" */
  trigger: string;
  /** whether `faults` accounts for it (the step's `fault`, harness/scenario/steps.ts) */
  fault: boolean;
  status: "ok" | "failed" | "timeout" | "skipped";
  startT: number | null;
  endT: number | null;
  startS: number | null;
  endS: number | null;
  exitCode: number | null;
  output: string;
}

/**
 * What one fault step (kill, stop, restart, network, or a script) cost, from the ledger and the series
 * (harness/runner/fault-cost.ts): the missing seq ranges attributed to it, throughput recovery and peaks after it.
 */
export interface FaultCost {
  /** the timeline entry's index */
  step: number;
  name: string;
  /** acknowledged seqs absent at the sink attributed to this step (sent before it ended, after the previous fault ended) */
  lost: number;
  /** those seqs' ranges, [gen, from, to] inclusive (from the ledger's missingRanges, which lists at most the first 20) */
  lostRanges: Array<[number, number, number]>;
  /** the run's duplicated rows when this is its only fault (duplicate seq ranges are not queried: the ledger counts them), else null */
  duplicated: number | null;
  /** median stored rows/s of the measured samples before the fault */
  preMedianRowsPerSec: number | null;
  /** seconds from the fault's start until a sample's stored rows/s was back at ≥ 90 % of preMedianRowsPerSec; null: never during the load */
  recoverySeconds: number | null;
  /** largest ingest lag (newest stored event's age) from the fault's start to the next fault or the load's end, ms */
  peakLagMs: number | null;
  /** largest backlog age over the same span, ms (a lower bound of the delivery latency, SeriesPoint.backlogLagMs) */
  peakBacklogLagMs: number | null;
}

/**
 * What the instrument itself cost during the run (harness/runner/run.ts): the harness process's CPU over the
 * measurement, what the verifier's samples cost the sink then, and the run's overhead phases. Absent in older results.
 */
export interface InstrumentRecord {
  /** the measurement phase these figures cover: from its first sample to its last, seconds */
  measureSeconds: number;
  /** the harness process's own CPU over it (process.cpuUsage(): getrusage(RUSAGE_SELF) user + system; its threads included, the generator children not) */
  harness: {
    cpuSeconds: number;
    cores: number;
    /**
     * its resident set over the measurement, bytes: at the sample opening it, at the last one, and the largest at any
     * sample (absent in older results); `afterLoadMaxBytes`: the largest from the end of the load to the end of the
     * ledger and the content check, sampled every second and at each change of stage (absent in older results and in runs
     * that never ended their load);
     * `afterLoadByStage`: that largest in each stage after the load, by the stage's name as the run's progress and
     * errors name it ("stopping the generators", "waiting for every acknowledged row", "settling the samples",
     * "counting the last sample", "counting the ledger": the ledger with the content check); absent in older results
     */
    rss?: {
      openBytes: number;
      lastBytes: number;
      maxBytes: number;
      afterLoadMaxBytes?: number;
      afterLoadByStage?: Record<string, number>;
    };
  };
  /** the verifier's samples over it */
  verifier: {
    samples: number;
    /** the time the harness waited on sample() calls, ms (every query round trip: an upper bound of the sink's wall time on them) */
    sampleWallMs: number;
    /** the sink's own account of those queries (Verifier.sinkCost, core/verifier.ts); null where the sink keeps none */
    sink: SinkCost | null;
    /** the sink host's CPU cap as applied, cores (the machine's cores when uncapped) */
    sinkCapCores: number;
    /** true when the sink had no CPU cap below the machine's cores (none, or one at or above them: docs/decisions/0008),
     *  so sinkCapCores is the machine's; absent in older results */
    sinkUncapped?: boolean;
    /**
     * the verifier's sink CPU as a share of that cap over the measurement: sink.cpuMs where the sink says, else the
     * sample wall time (an upper bound), divided by measureSeconds × sinkCapCores
     */
    shareOfSinkCap: number;
    /** which figure shareOfSinkCap rests on */
    basis: "sink cpu" | "sample wall time";
  };
  /** per-cell overhead, ms: provision + sink start (until the sink answers), schema, the wait after the load for completion is not included */
  overhead: {
    provisionAndSinkStartMs: number;
    prepareMs: number;
    collectorsAndGeneratorsUpMs: number;
    ledgerMs: number | null;
    fidelityMs: number | null;
    teardownMs: number;
    /**
     * the ledger and the content check together, wall (harness/runner/fidelity.ts ledgerWithFidelity: a sample's
     * reads run beside the ledger, so ledgerMs + fidelityMs can exceed it); absent in records made before it was kept
     */
    afterLoadMs?: number | null;
    /**
     * the rest of the harness's reading after the load, before the ledger, ms (absent in older records): the completion
     * wait's missing-seq queries (core/verifier.ts completionOf) summed; the samples settled from their snapshots
     * (Verifier.afterLoad; null where the verifier's live samples are exact); a fixed workload's last, full count
     * (null when the run ended by its duration); each null when it did not run (an interrupted run)
     */
    completionCheckMs?: number | null;
    /** how many missing-seq queries the completion wait ran (each a pass of the table at PostgreSQL); absent when none ran, and in older records */
    completionChecks?: number;
    /**
     * bytes the sink wrote to its write-ahead log during those completion checks, summed (Completion.walBytes:
     * PostgreSQL's full-page images as a first pass sets hint bits); absent where the sink gives no such figure
     */
    completionCheckWalBytes?: number;
    settleMs?: number | null;
    /** a fixed workload's last point: its full count, or (near 0) only the point, where the settling's pass gave the count (PostgreSQL) */
    finalCountMs?: number | null;
    /**
     * how the ledger read the sink (Verifier.ledgerPass), e.g. PostgreSQL's "the completion check's pass (…)" when it
     * took that pass rather than reading the table again; absent where the verifier has one way only, and in older records
     */
    ledgerPass?: LedgerPass;
    /** the samples were settled from the rows of the completion check's pass (SettledSamples.fromCompletionPass), not by a pass of their own: settleMs is then only the time to take that answer */
    settledInCompletionPass?: boolean;
    /** the site's split of provision + sink start and teardown, ms by part (harness/runner/site.ts overheadParts); absent where the site gives none */
    parts?: Record<string, number>;
  };
}

/**
 * How long an invocation waited for a stack's lock another run held (`--lock-wait`, INGESTBENCH_LOCK_WAIT;
 * harness/runner/drive.ts lockStacks) before its first run on the stack.
 */
export interface LockWait {
  waitedMs: number;
  /** the runs waited for, in the order they held the lock (usually one) */
  holders: Array<{ pid: number; command: string; startedAt: string }>;
}

export interface RunRecord {
  status: RunStatus;
  runId: string;
  /** groups the runs of one `ingestbench bench` invocation */
  invocation: string;
  stack: string;
  platform: string;
  scenario: string;
  scenarioFile: string;
  cell: string;
  replicate: number;
  seed: number | null;
  startedAt: string;
  finishedAt: string | null;
  /** the invocation's wait for the stack's lock, in the first of its runs on the stack; absent: it waited for none */
  lockWait?: LockWait;
  commit: string;
  environment: Environment;
  limits: Record<string, AppliedLimits>;
  /**
   * the caps of the hosts that ran together against the machine they share (harness/results/caps.ts stackCapsFit;
   * local and docker stacks): `oversubscribed` with its reasons, per host its caps at or above the machine
   */
  caps?: RunCaps;
  versions: Record<string, { pinned: string; running: string }>;
  scenarioConfig: unknown;
  summary: Summary | null;
  /** what the run's table or index takes on the sink's disk after the ledger (harness/runner/storage.ts) */
  storage?: RunStorage | { unavailable: string };
  ledger: Ledger | null;
  /** the generators' report (summed over generator processes when there are several; see `generators`) */
  generator: GeneratorFinal | null;
  /** each generator process's own report, by genId, when a run had more than one (one per collector host) */
  generators?: GeneratorFinal[];
  checks: CheckResult[];
  /** what the collector itself says it received, wrote, dropped and queued (e.g. syslog-ng-ctl stats), beside the ledger */
  collectorClaims?: {
    name: string;
    counts: Record<string, number> | null;
    error?: string;
    /** collector hosts summed, when several */ hosts?: string[];
  };
  /**
   * the loadgen host's clock offset (generator − harness) measured before load and applied to lag
   * (harness/generators/clock.ts); absent in older results
   */
  clock?: ClockOffset;
  /**
   * the sink host's clock offset (sink − harness) measured before load where the sink and the loadgen do not share a
   * kernel clock (azure: harness/generators/clock.ts measureHostClock); the difference to `clock` is applied to
   * delivery latency (Summary.deliveryLatency.clock says so). Absent on one-clock platforms.
   */
  sinkClock?: ClockOffset;
  /** this run's first generator id: its events carry gen = genBase + generator index (core/ledger.ts, "Run identity") */
  genBase?: number;
  /** how the wait for the sink to hold every acknowledged seq ended (the fixed workload's, else the drain's) */
  completion?: CompletionRecord;
  /** the query phase's results (scenario `query`, harness/runner/query-load.ts); absent without one */
  query?: QueryPhaseRecord;
  /** the application under test and its variant, its own figures, and the ledger against them (harness/runner/app-host.ts) */
  app?: AppRecord;
  /** the scenario's fault steps as they ran, in step order (absent without steps) */
  timeline?: TimelineEntry[];
  /** what each fault step cost (absent without steps; harness/runner/fault-cost.ts) */
  faults?: FaultCost[];
  /**
   * resource exhaustion named from the components' logs and the generators' errors (harness/runner/exhaustion.ts):
   * kind (disk-full, ports, buffer-overflow), host, source, the line, evidence (e.g. the data volume's df); absent: none seen
   */
  exhaustion?: Array<{ kind: string; host: string; source: string; line: string; evidence?: string }>;
  /** the instrument's own cost: harness CPU, the verifier's cost at the sink, per-cell overhead (absent in older results) */
  instrument?: InstrumentRecord;
  /** kind: configuration | provisioning | verification (errors.ts classes) or run (anything else) */
  /**
   * why the run did not finish; `message` is one line; `detail` (unexpected errors only: not an IngestbenchError) the
   * whole error text and its stack, printed with --debug
   */
  error: {
    code: string;
    kind: "configuration" | "provisioning" | "verification" | "run";
    message: string;
    detail?: string;
  } | null;
}

/**
 * One query cell's result: one statement run `count` times by each of `concurrency` closed-loop workers over HTTP
 * (harness/runner/query-load.ts). Latencies in milliseconds from an HdrHistogram (hdr-histogram-js, 3 significant
 * digits, microsecond resolution); a closed loop sends the next request when the previous answers, so no coordinated
 * omission correction applies.
 */
export interface QueryCellResult {
  /** "<statement>@<concurrency>x<count>", e.g. "count@10x50": the key compare matches cells by */
  id: string;
  statement: string;
  concurrency: number;
  /** requests per worker */
  count: number;
  /** requests sent (concurrency × count per pass; during the ingest, what was sent before the load ended) */
  requests: number;
  /** answers with status 200 whose rows matched the statement's `rows` (when given) */
  ok: number;
  /** transport errors, non-200 answers and wrong answers (a row count other than `rows`) */
  errors: number;
  /** the first few errors, as text */
  errorSamples: string[];
  /** rows returned, summed over the ok answers */
  rows: number;
  /** wall time of the cell, first request sent to last answer */
  elapsedMs: number;
  /** requests / elapsed seconds (ok and errors alike: errors are counted, not hidden) */
  requestsPerSecond: number;
  latencyMs: { mean: number; p50: number; p99: number; max: number };
}

/** run.json `query`: the table the queries ran against and each cell's result, in the scenario's order. */
export interface QueryPhaseRecord {
  /** the sink the statements went to (its plugin name) */
  sink: string;
  /**
   * rows in the table the queries ran against: after the ingest, its stored rows, every acknowledged seq present;
   * during it (`during: "ingest"`), the stored count when the phase ended
   */
  tableRows: number;
  cells: QueryCellResult[];
  /** "ingest" when the queries ran while the load ran (mixed mode); absent: after the ingest */
  during?: "ingest";
  /** during the ingest: passes over the statements × cells (each cell's figures are summed over them) */
  passes?: number;
  /** the phase's `prepare` statements: ms they took, one after the other before the first cell (absent: none) */
  prepareMs?: number;
}

/** The app's own figures, by the names ingestbench knows (APP_FIGURES), as read by `readAppResults`. */
export type AppFigures = Partial<Record<AppFigure, number>>;

/** run.json `app`: what ran, what it reported, and whether the ledger agrees with its drops (harness/runner/app-host.ts). */
export interface AppRecord {
  variant: string;
  host: string;
  argv: string[];
  exitCode: number | null;
  /** the figures mapped by `app.results.map` */
  figures: AppFigures;
  /** the object (stdout-json, file) or named groups (regex) they were read from */
  raw: Record<string, unknown>;
  /** mean CPU per observed host over the measured window, cores */
  cpuCores: Record<string, number>;
  /** the sink's ledger against the app's report (`appLedger`); null before the ledger */
  ledger: AppLedgerCheck | null;
  /** the last lines of its stderr */
  stderrTail: string[];
}

/** The ledger against the app: stored records must be sent − dropped, and the only loss its drops. */
export interface AppLedgerCheck {
  sent: number;
  dropped: number;
  /** sent − dropped */
  expected: number;
  /** distinct seqs the sink stored */
  stored: number;
  /** seqs the sink never stored (the ledger's lost) */
  lost: number;
  /** lost − dropped: > 0 is loss in the pipeline, < 0 a drop the app reported but the sink has */
  unaccounted: number;
  agrees: boolean;
  /** the app's recordBytes against the records the sink holds, per record (harness/runner/app-bytes.ts); absent in older results */
  bytes?: AppBytesCheck;
}

/**
 * The bytes check of an app run (harness/runner/app-bytes.ts): the app's `recordBytes` against the sum of the own
 * encodings (per protocol) of the records the sink holds; or why it was not made.
 */
export type AppBytesCheck =
  | {
      /** the app's recordBytes: what it wrote of the records it did not drop */
      reported: number;
      /** the sum over the distinct records the sink holds of their own encoding's length */
      atSink: number;
      /** distinct records read back */
      records: number;
      /** reported − atSink */
      unaccounted: number;
      agrees: boolean;
      /** what one record's bytes are, e.g. "each record's RFC 6587 frame" */
      per: string;
    }
  | { unchecked: string };

/** A run's storage footprint (harness/runner/storage.ts), run.json `storage`. */
export interface RunStorage {
  /** bytes on the sink's disk (core/verifier.ts StorageFootprint.bytes) */
  bytes: number;
  /** the same rows uncompressed, where the sink keeps the figure */
  uncompressedBytes?: number;
  /** uncompressedBytes / bytes */
  compression?: number;
  /** the distinct rows the ledger found stored */
  rows: number;
  /** bytes × 1e6 / rows, rounded; null without rows */
  bytesPerMillionRows: number | null;
  /**
   * the log lines' own bytes of the stored rows, rows × Summary.logBytesPerRow (the text the generator or the
   * replayed file carried, not the wire encoding); absent where the summary has no log bytes
   */
  logBytes?: number;
  /** logBytes / bytes: how many times smaller than the log text the sink keeps it; absent with logBytes */
  logCompression?: number;
  source: string;
}

/** The figures behind a collector's pressure words (harness/runner/collector-pressure.ts) (null where the collector does not report them). */
export interface PressureFigures {
  /** mean ms per flush over the last third of the measurement, and over the first */
  flushMs: number | null;
  flushMsAtStart: number | null;
  /** the rise of the collector's slow-flush count over the measurement */
  slowFlushes: number | null;
  /** median used share of the queue's limit over the last third, 0–1 */
  queueUsed: number | null;
  /** what was queued at the last sample, in queuedUnit */
  queued: number | null;
  queuedUnit: "bytes" | "items" | null;
  /** the rise of retries and of failed sends over the measurement */
  retries: number | null;
  sendFailures: number | null;
}
