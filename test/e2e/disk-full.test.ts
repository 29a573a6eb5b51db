// A `disk-full` step on the local platform, through the real runner: pg-copy → PostgreSQL 18.4 whose host's data
// directory is a 160 MiB tmpfs (the stack's `disk: { tmpfs: … }`); at 1 s the step fills that volume to 100 %, the
// server's next relation extension fails with ENOSPC, and the run must name it: run.json `exhaustion`, the error
// E_DISK_FULL and the bottleneck `disk` on the sink, with the volume's df — never an unexplained loss.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BenchRun } from "../../harness/runner/run.ts";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import { loadStack } from "../../infra/stack/schema.ts";
import { projectRoot } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-disk-full-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("disk-full step (local platform, real PostgreSQL on a size-capped volume)", () => {
  it("fills the sink's tmpfs at 1 s; the run names ENOSPC (E_DISK_FULL, bottleneck disk on sink, the volume's df)", async () => {
    const stacks = path.join(tmp, "stacks");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(stacks);
    writeFileSync(
      path.join(stacks, "Pulumi.local-disk-full.yaml"),
      [
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        '    loadgen: { cpu: "1" }',
        '    sink: { cpu: "1", memory: 2GiB, disk: { tmpfs: 160MiB } }',
        "  ingestbench:expiry: 1h",
        "",
      ].join("\n"),
    );
    const scenario = path.join(tmp, "disk-full.yaml");
    writeFileSync(
      scenario,
      [
        "name: disk-full",
        "event: [{ name: ts, type: timestamp }, { name: msg, type: string, size: 180 }]",
        "generator: { pg-copy: { batch: 2000, connections: 1, rate: 20000, seed: 42 } }",
        "collector: none",
        'sink: { postgres: { version: "18.4.0-beta.17" } }',
        "warmup: 1s",
        "duration: 3s",
        "interval: 500ms",
        "drain: { timeout: 3s }",
        "replicates: 1",
        "steps:",
        "  - { at: 1s, disk-full: { host: sink, level: 100% } }",
        "",
      ].join("\n"),
    );
    const stack = loadStack("local-disk-full", stacks);
    const [plan] = planCells(loadScenarioFile(scenario), scenario, { replicates: 1 });
    const run = new BenchRun({
      stack,
      plan: plan!,
      resultsRoot: path.join(tmp, "results"),
      invocation: new Date().toISOString(),
      projectRoot,
    });
    const t = performance.now();
    const record = await run.run();
    const seconds = (performance.now() - t) / 1000;

    const step = record.timeline![0]!;
    expect(step).toMatchObject({ action: "disk-full", host: "sink", status: "ok", exitCode: 0, fault: true });
    expect(step.output).toMatch(/^data volume .*\/sink\/data: (\d+) of \1 KiB used \(100 %\), 0 KiB free/);
    // named by kind and code, with the line that says ENOSPC and the volume's df as evidence
    expect(record.error?.code, JSON.stringify(record.error)).toBe("E_DISK_FULL");
    expect(record.error!.message).toMatch(/host sink ran out of disk space \(ENOSPC\)/);
    const disk = record.exhaustion!.find((e) => e.kind === "disk-full" && e.host === "sink");
    expect(disk, JSON.stringify(record.exhaustion)).toBeDefined();
    expect(record.exhaustion!.some((e) => /No space left on device|ENOSPC/i.test(e.line))).toBe(true);
    expect(disk!.evidence ?? disk!.line).toMatch(/KiB used, \d+ KiB free/);
    if (record.summary)
      expect(record.summary.bottleneck).toMatchObject({ resource: "disk", host: "sink", score: 1 });
    console.log(
      `disk-full: ${seconds.toFixed(1)} s; step ${step.startS?.toFixed(2)}–${step.endS?.toFixed(2)} s: ${step.output}; error ${record.error!.message.slice(0, 600)}; ledger ${JSON.stringify(record.ledger && { sent: record.ledger.sent, stored: record.ledger.stored, lost: record.ledger.lost, rejected: record.ledger.rejected })}`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});
