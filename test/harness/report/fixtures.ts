/**
 * Synthetic results for the report and query tests: results/<stack>/<scenario>/<run-id>/{run.json, series.jsonl}
 * in the shapes of harness/results/types.ts, with known figures.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Bottleneck, RunRecord, SeriesPoint } from "../../../harness/results/types.ts";

export interface SyntheticRun {
  stack: string;
  scenario: string;
  invocation: string;
  rowsPerSecond: number;
  cell?: string;
  /** scenarioConfig.cell: the swept values */
  cellValues?: Record<string, unknown>;
  replicate?: number;
  lost?: number;
  duplicated?: number;
  cores?: number;
  /** series lines to write (0: no series.jsonl) */
  points?: number;
  /** fields merged into window i of the series (e.g. collector, sink, logMibPerSec, more hosts) */
  window?: (i: number, p: SeriesPoint) => Record<string, unknown>;
  /** fields merged into run.json (e.g. storage, limits of more hosts) and into its summary (e.g. cost) */
  record?: Record<string, unknown>;
  summary?: Record<string, unknown>;
  /** the scenario's file replay (scenarioConfig.source.file) */
  sourceFile?: string;
  /** the stored verdict (summary.bottleneck); default sink cpu */
  bottleneck?: { resource: string; host: string; score: number };
}

let counter = 0;

/** Windows of a run: 2 warmup, points − 4 measure, 2 drain; the first window has no rate yet (null). */
export function syntheticSeries(s: SyntheticRun, start: number): SeriesPoint[] {
  const n = s.points ?? 12;
  const out: SeriesPoint[] = [];
  let stored = 0;
  for (let i = 0; i < n; i++) {
    const phase = i < 2 ? "warmup" : i >= n - 2 ? "drain" : "measure";
    const rate = s.rowsPerSecond * (1 + 0.05 * Math.sin(i));
    stored += Math.round(rate);
    const p: SeriesPoint = {
      t: start + (i + 1) * 1000,
      elapsedS: i + 1,
      phase,
      stored,
      countQueryMs: 3 + i * 0.1,
      rowsPerSec: i === 0 ? null : rate,
      mibPerSec: i === 0 ? null : (rate * 240) / 2 ** 20,
      lagMs: 200 + 10 * i,
      sent: stored,
      accepted: stored,
      hosts: {
        sink: {
          cpuCores: 0.1 + 0.01 * i,
          throttledShare: i % 3 === 0 ? 0.5 : 0.1,
          periods: 10,
          throttledPeriods: i % 3 === 0 ? 5 : 1,
          throttledMs: 3,
          memoryBytes: 1e8,
          memoryPeakBytes: 1.2e8,
          memoryWorkingSetBytes: 5e7,
          ioReadBytesPerSec: 0,
          ioWriteBytesPerSec: 5 * 2 ** 20,
          ioReadOpsPerSec: 0,
          ioWriteOpsPerSec: 10,
          netRxBytesPerSec: 6e6,
          netTxBytesPerSec: 1e4,
          netRxPacketsPerSec: 100,
          netTxPacketsPerSec: 100,
        },
        loadgen: {
          cpuCores: 0.3,
          throttledShare: 0,
          periods: 10,
          throttledPeriods: 0,
          throttledMs: 0,
          memoryBytes: 7e7,
          memoryPeakBytes: 7e7,
          memoryWorkingSetBytes: 7e7,
          ioReadBytesPerSec: 0,
          ioWriteBytesPerSec: 0,
          ioReadOpsPerSec: 0,
          ioWriteOpsPerSec: 0,
          netRxBytesPerSec: 1e4,
          netTxBytesPerSec: 6e6,
          netRxPacketsPerSec: 100,
          netTxPacketsPerSec: 100,
        },
      },
    };
    out.push(s.window ? ({ ...p, ...s.window(i, p) } as SeriesPoint) : p);
  }
  return out;
}

/** Write one run; returns its record. Run ids sort in write order. */
export function writeSyntheticRun(root: string, s: SyntheticRun): RunRecord {
  const n = counter++;
  const startMs = Date.parse(s.invocation) + n * 60_000;
  const runId = `${new Date(startMs).toISOString().replace(/[-:]/g, "").slice(0, 15)}Z-${n.toString(16).padStart(6, "0")}`;
  const cores = s.cores ?? 0.25;
  const sent = Math.round(s.rowsPerSecond * 30);
  const lost = s.lost ?? 0;
  const duplicated = s.duplicated ?? 0;
  const record: RunRecord = {
    status: lost > 0 ? "failed" : "ok",
    runId,
    invocation: s.invocation,
    stack: s.stack,
    platform: "local",
    scenario: s.scenario,
    scenarioFile: `scenarios/${s.scenario}.yaml`,
    cell: s.cell ?? "default",
    replicate: s.replicate ?? 1,
    seed: 42,
    startedAt: new Date(startMs).toISOString(),
    finishedAt: new Date(startMs + 40_000).toISOString(),
    commit: "0174451d0a5c7a47e8d5e1d3527a0332e68d6d59",
    environment: {
      kernel: "Linux 6.18.44",
      cpuModel: "AMD EPYC",
      cores: 2,
      memoryBytes: 25276518400,
      cgroup: "v1",
      node: "v20.20.2",
      hostname: "vm",
    },
    limits: {
      loadgen: {
        requested: { cpu: "1" },
        applied: { cfsPeriodUs: 100000, cfsQuotaUs: 100000 },
        enforced: true,
        notes: [],
      },
      sink: {
        requested: { cpu: String(cores), memory: "2GiB" },
        applied: {
          cfsPeriodUs: 100000,
          cfsQuotaUs: Math.round(cores * 100000),
          memoryLimitBytes: 2 ** 31,
          dataInterface: `ib${n}d1`,
        },
        enforced: true,
        notes: [],
      },
    },
    versions: { postgres: { pinned: "18.4.0-beta.17", running: "18.4" } },
    scenarioConfig: {
      name: s.scenario,
      cell: s.cellValues ?? {},
      ...(s.sourceFile ? { source: { file: s.sourceFile } } : {}),
    },
    summary: {
      rowsPerSecond: s.rowsPerSecond,
      mibPerSecond: (s.rowsPerSecond * 240) / 2 ** 20,
      windowRowsPerSecond: {
        median: s.rowsPerSecond,
        min: s.rowsPerSecond * 0.95,
        max: s.rowsPerSecond * 1.05,
      },
      bytesPerRow: 240,
      measuredSeconds: 30,
      sinkCores: 0.2,
      cpuMsPer1000Rows: 3,
      throttledShare: 0.2,
      sinkNetworkMbitPerSecond: 48,
      sinkDiskWriteMiBPerSecond: 5,
      sinkDiskWriteIops: 10,
      sinkMemoryPeakBytes: 1.2e8,
      sinkMemoryWorkingSetBytes: 5e7,
      lagP50Ms: 250,
      lagP99Ms: 310,
      lagMaxMs: 320,
      countQueryMaxMs: 5,
      drainSeconds: 1,
      bottleneck: {
        resource: "cpu",
        host: "sink",
        score: 0.9,
        ...(s.bottleneck as object),
        evidence: "synthetic",
        candidates: [],
      } as Bottleneck,
      ...s.summary,
    },
    ledger: {
      sent,
      accepted: sent,
      stored: sent - lost + duplicated,
      distinct: sent - lost,
      lost,
      duplicated,
      overwritten: 0,
      rejected: 0,
      unexpected: 0,
      missingRanges: lost > 0 ? [[0, 10, 10 + lost - 1]] : [],
    },
    generator: null,
    checks: [{ check: "ledger.lost", expected: "= 0", actual: lost, ok: lost === 0 }],
    error: null,
    ...(s.record as Partial<RunRecord>),
  };
  const dir = path.join(root, s.stack, s.scenario, runId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "run.json"), `${JSON.stringify(record, null, 2)}\n`);
  const points = syntheticSeries(s, startMs);
  if (points.length > 0)
    writeFileSync(path.join(dir, "series.jsonl"), points.map((p) => `${JSON.stringify(p)}\n`).join(""));
  return record;
}

export const INVOCATION = "2026-11-29T10:00:00.000Z";
export const OLD_INVOCATION = "2026-11-28T10:00:00.000Z";
export const BATCHES = [1000, 8000, 50000];

/**
 * Two scenarios:
 * - "sweep": matrix generator.pg-copy.batch ∈ {1000, 8000, 50000} × 2 replicates on stacks "small" (run first)
 *   and "large": 12 runs, 12 series lines each; small's runs at batch=50000 are saturated (backpressure);
 * - "plain": no matrix, one run each on "small" (5 lost, 2 duplicated), "medium" and "large" (8 series lines),
 *   plus an older invocation on "small" that the report must leave out.
 */
export function writeSyntheticResults(root: string): { sweepRuns: RunRecord[]; plainRuns: RunRecord[] } {
  const sweepRuns: RunRecord[] = [];
  for (const stack of ["small", "large"]) {
    for (const replicate of [1, 2]) {
      for (const batch of BATCHES) {
        const base = stack === "small" ? 20_000 : 80_000;
        sweepRuns.push(
          writeSyntheticRun(root, {
            stack,
            scenario: "sweep",
            invocation: INVOCATION,
            cell: `batch=${batch}`,
            cellValues: { "generator.pg-copy.batch": batch },
            replicate,
            rowsPerSecond: base * (1 + Math.log10(batch / 1000)) + replicate * 100,
            cores: stack === "small" ? 0.25 : 2,
            ...(stack === "small" && batch === 50000
              ? {
                  summary: {
                    saturation: {
                      state: "saturated",
                      label: "saturated (backpressure)",
                      evidence: "synthetic",
                      samples: 4,
                    },
                  },
                }
              : {}),
          }),
        );
      }
    }
  }
  writeSyntheticRun(root, {
    stack: "small",
    scenario: "plain",
    invocation: OLD_INVOCATION,
    rowsPerSecond: 1,
    points: 8,
  });
  const plainRuns = [
    writeSyntheticRun(root, {
      stack: "small",
      scenario: "plain",
      invocation: INVOCATION,
      rowsPerSecond: 10_000,
      lost: 5,
      duplicated: 2,
      points: 8,
    }),
    writeSyntheticRun(root, {
      stack: "medium",
      scenario: "plain",
      invocation: INVOCATION,
      rowsPerSecond: 30_000,
      cores: 1,
      points: 8,
    }),
    writeSyntheticRun(root, {
      stack: "large",
      scenario: "plain",
      invocation: INVOCATION,
      rowsPerSecond: 90_000,
      cores: 2,
      points: 8,
    }),
  ];
  return { sweepRuns, plainRuns };
}

/** Marks in a Vega SVG: counts of items by their aria role description, and the vertices of each line path. */
export function svgMarks(svg: string): {
  bars: number;
  points: number;
  ticks: number;
  texts: number;
  lines: number[];
} {
  const count = (role: string): number => svg.split(`aria-roledescription="${role}"`).length - 1;
  const lines = [...svg.matchAll(/<path[^>]*aria-roledescription="line mark"[^>]*\sd="([^"]*)"/g)].map(
    (m) => (m[1]!.match(/[ML]/g) ?? []).length,
  );
  return {
    bars: count("bar"),
    points: count("point"),
    ticks: count("tick"),
    texts: count("text mark"),
    lines,
  };
}

/** The collector host's window in the pipeline fixture: 0.24 of its 0.25 cores, throttled 8 of 10 periods. */
const collectorWindow = {
  cpuCores: 0.24,
  throttledShare: 0.8,
  periods: 10,
  throttledPeriods: 8,
  throttledMs: 40,
  memoryBytes: 1.95 * 2 ** 30,
  memoryPeakBytes: 1.95 * 2 ** 30,
  memoryWorkingSetBytes: 1.9 * 2 ** 30,
  ioReadBytesPerSec: 0,
  ioWriteBytesPerSec: 0,
  ioReadOpsPerSec: 0,
  ioWriteOpsPerSec: 0,
  netRxBytesPerSec: 6e6,
  netTxBytesPerSec: 6e6,
  netRxPacketsPerSec: 100,
  netTxPacketsPerSec: 100,
  dtMs: 1000,
  runDelayMs: 340,
  contentionMs: 300,
};

/** The pipeline fixture's caps beyond the loadgen's and the sink's: the collector's CPU and memory, the sink's link. */
function pipelineLimits(base: RunRecord["limits"]): RunRecord["limits"] {
  return {
    ...base,
    collector: {
      requested: { cpu: "0.25", memory: "2GiB" },
      applied: { cfsPeriodUs: 100000, cfsQuotaUs: 25000, memoryLimitBytes: 2 ** 31 },
      enforced: true,
      notes: [],
    },
    sink: {
      ...base.sink!,
      requested: { ...base.sink!.requested, network: { bandwidth: "100Mbit/s" } },
      applied: { ...base.sink!.applied, tbfRateBytesPerSec: 12.5e6 },
    },
  };
}

export const PIPELINE_STACKS = ["fluentd", "otelcol"] as const;

/**
 * Scenario "replay": a file replay (scenarioConfig.source.file) through a collector host, on stacks "fluentd" (run
 * first: the baseline; 5,000 rows/s + 50 × replicate, log bytes recorded, storage 50 MB per million rows at 4.2x,
 * 60 core-s per million rows) and "otelcol" (8,000 + 50 × replicate, no log bytes: wire MiB/s, 30 MB per million rows,
 * $0.012 per million rows), 3 replicates each, 8 windows. Each window carries the collector's signals (Fluentd:
 * buffer_queue_length = i, slow_flush_count = max(0, i − 4), flush_time_count = 1000 i, retry_count = 0; otelcol:
 * otelcol_exporter_queue_size = 10 i) and OpenSearch's merges (merges.current = i mod 3, merges.total = i). Every
 * run's verdict: cpu on the collector.
 */
export function writePipelineResults(root: string): RunRecord[] {
  const runs: RunRecord[] = [];
  for (const stack of PIPELINE_STACKS)
    for (const replicate of [1, 2, 3]) {
      const fluentd = stack === "fluentd";
      const rowsPerSecond = (fluentd ? 5000 : 8000) + 50 * replicate;
      const run = writeSyntheticRun(root, {
        stack,
        scenario: "replay",
        invocation: INVOCATION,
        replicate,
        rowsPerSecond,
        points: 8,
        sourceFile: "/work/shared/logs/Apache_2k.log",
        bottleneck: { resource: "cpu", host: "collector", score: 0.8 },
        window: (i, p) => ({
          hosts: { ...p.hosts, collector: collectorWindow },
          collector: fluentd
            ? {
                name: "fluentd",
                hosts: {
                  collector: {
                    "ib_sink.buffer_queue_length": i,
                    "ib_sink.slow_flush_count": Math.max(0, i - 4),
                    "ib_sink.flush_time_count": 1000 * i,
                    "ib_sink.retry_count": 0,
                    "ib_sink.emit_records": p.sent,
                  },
                },
              }
            : { name: "otelcol", hosts: { collector: { otelcol_exporter_queue_size: 10 * i } } },
          sink: { name: "opensearch", values: { "merges.current": i % 3, "merges.total": i } },
          ...(fluentd ? { logMibPerSec: p.rowsPerSec === null ? null : (p.rowsPerSec * 120) / 2 ** 20 } : {}),
        }),
        summary: {
          cost: fluentd
            ? { coreSecondsPerMillionRows: 60, hostsCoreSeconds: { collector: 7.2 } }
            : {
                coreSecondsPerMillionRows: 40,
                hostsCoreSeconds: { collector: 7.2 },
                usdPerMillionRows: 0.012,
              },
        },
        record: {
          storage: {
            bytes: 1000,
            rows: 20,
            bytesPerMillionRows: fluentd ? 50e6 : 30e6,
            ...(fluentd ? { uncompressedBytes: 4200, compression: 4.2 } : {}),
            source: "synthetic",
          },
        },
      });
      // the collector's caps and the sink's link, written over the record's limits
      const file = path.join(root, stack, "replay", run.runId, "run.json");
      const full = { ...run, limits: pipelineLimits(run.limits) };
      writeFileSync(file, `${JSON.stringify(full, null, 2)}\n`);
      runs.push(full);
    }
  return runs;
}
