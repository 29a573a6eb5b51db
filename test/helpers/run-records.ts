/** Synthetic run.json files shaped like real ones, for tests of compare and nightly (no benchmark needed). */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { RunRecord } from "../../harness/results/types.ts";

export interface Spec {
  stack: string;
  invocation: string;
  rows: number;
  cell?: string;
  cores?: number | null;
  memoryGiB?: number | null;
  postgres?: string;
  kernel?: string;
  status?: RunRecord["status"];
  /** the scenario's `source: { file }` (scenarioConfig.source); absent = seeded text */
  sourceFile?: string;
  /** the run's measured duration as planned (scenarioConfig.run.durationMs); absent = not recorded */
  durationMs?: number;
  /** scenario name; default quickstart */
  scenario?: string;
  /** component versions; default { postgres: pinned 18.4.0-beta.17, running `postgres` } */
  versions?: RunRecord["versions"];
  /** run.json `query` (the query phase) */
  query?: RunRecord["query"];
  /** the summary's delivery latency p50/p99, ms; absent = none recorded */
  delivery?: { p50Ms: number; p99Ms: number };
  /** the summary's cost (harness/runner/cost.ts); absent = none recorded (older results) */
  cost?: NonNullable<RunRecord["summary"]>["cost"];
  /** run.json `storage`: bytes on the sink's disk per million stored rows (the rest derived); absent = none recorded */
  storageBytesPerMillionRows?: number;
}

let counter = 0;

/** Write a run.json shaped like a real one under root/<stack>/<scenario, default quickstart>/<run-id>/, with the given figures. */
export function writeRunRecord(root: string, s: Spec): RunRecord {
  const n = counter++;
  const runId = `${s.invocation.replace(/[-:.]/g, "").slice(0, 15)}Z-${n.toString(16).padStart(6, "0")}`;
  const cores = s.cores === undefined ? 0.25 : s.cores;
  const memoryGiB = s.memoryGiB === undefined ? 2 : s.memoryGiB;
  const applied: Record<string, number | string> = {
    dataInterface: `ib${n}d1`,
    dataPeerInterface: `ib${n}d0`,
  };
  if (cores !== null) Object.assign(applied, { cfsPeriodUs: 100000, cfsQuotaUs: Math.round(cores * 100000) });
  if (memoryGiB !== null) applied.memoryLimitBytes = memoryGiB * 2 ** 30;
  const stored = Math.round(s.rows * 30);
  const record: RunRecord = {
    status: s.status ?? "ok",
    runId,
    invocation: s.invocation,
    stack: s.stack,
    platform: "local",
    scenario: s.scenario ?? "quickstart",
    scenarioFile: `scenarios/${s.scenario ?? "quickstart"}.yaml`,
    cell: s.cell ?? "default",
    replicate: 1,
    seed: 42,
    startedAt: s.invocation,
    finishedAt: s.invocation,
    commit: "0174451d0a5c7a47e8d5e1d3527a0332e68d6d59",
    environment: {
      kernel: s.kernel ?? "Linux 6.18.44",
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
        requested: {
          ...(cores !== null ? { cpu: String(cores) } : {}),
          ...(memoryGiB !== null ? { memory: `${memoryGiB}GiB` } : {}),
        },
        applied,
        enforced: true,
        notes: [],
      },
    },
    versions: s.versions ?? { postgres: { pinned: "18.4.0-beta.17", running: s.postgres ?? "18.4" } },
    scenarioConfig: {
      ...(s.durationMs === undefined
        ? {}
        : { run: { warmupMs: 5000, durationMs: s.durationMs, intervalMs: 1000 } }),
      ...(s.sourceFile ? { source: { file: s.sourceFile } } : {}),
    },
    summary:
      s.status === "error"
        ? null
        : {
            rowsPerSecond: s.rows,
            mibPerSecond: (s.rows * 240) / 2 ** 20,
            windowRowsPerSecond: { median: s.rows, min: s.rows * 0.9, max: s.rows * 1.1 },
            bytesPerRow: 240,
            measuredSeconds: 30,
            sinkCores: 0.2,
            cpuMsPer1000Rows: 3,
            throttledShare: 0.1,
            sinkNetworkMbitPerSecond: 50,
            sinkDiskWriteMiBPerSecond: 10,
            sinkDiskWriteIops: 40,
            sinkMemoryPeakBytes: 7e8,
            sinkMemoryWorkingSetBytes: 2e8,
            lagP50Ms: 300,
            lagP99Ms: 500,
            lagMaxMs: 520,
            countQueryMaxMs: 20,
            drainSeconds: 1,
            bottleneck: { resource: "cpu", host: "sink", score: 0.9, evidence: "synthetic", candidates: [] },
            ...(s.cost ? { cost: s.cost } : {}),
            ...(s.delivery
              ? {
                  deliveryLatency: {
                    rows: stored,
                    ...s.delivery,
                    maxMs: s.delivery.p99Ms * 2,
                    resolutionMs: 0.001,
                    unstamped: 0,
                    belowZero: 0,
                    clock: "one clock",
                  },
                }
              : {}),
          },
    ledger:
      s.status === "error"
        ? null
        : ({
            sent: stored,
            accepted: stored,
            stored,
            distinct: stored,
            lost: 0,
            duplicated: 0,
            overwritten: 0,
            rejected: 0,
            unexpected: 0,
            missingRanges: [],
          } as unknown as RunRecord["ledger"]),
    generator: null,
    checks: [],
    error: null,
    ...(s.query ? { query: s.query } : {}),
    ...(s.storageBytesPerMillionRows !== undefined
      ? {
          storage: {
            bytes: Math.round((s.storageBytesPerMillionRows * stored) / 1e6),
            rows: stored,
            bytesPerMillionRows: s.storageBytesPerMillionRows,
            source: "synthetic",
          },
        }
      : {}),
  };
  const dir = path.join(root, s.stack, s.scenario ?? "quickstart", runId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "run.json"), `${JSON.stringify(record, null, 2)}\n`);
  return record;
}
