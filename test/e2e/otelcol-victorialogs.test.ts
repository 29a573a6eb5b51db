// The OpenTelemetry Collector between a generator and a real sink on the local platform: the fluent-forward generator
// (loadgen host) → the project's own Collector build 0.165.0 (collector host: fluentforward receiver, batch
// processor, otlphttp exporter) → VictoriaLogs' OTLP endpoint (sink host), three network namespaces joined by a
// bridge, each host in its own cgroup; scenarios/otelcol-victorialogs.yaml, shortened, on stacks/Pulumi.local-otelcol.yaml.
// The ledger must be exact and the Collector's own claims must agree with it. Then the refusals before anything is
// provisioned, with the real build: a scenario pinning another Collector release, a stack naming a missing program.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../core/errors.ts";
import { checkCellsOnStack } from "../../harness/runner/drive.ts";
import { loadStack } from "../../infra/stack/schema.ts";
import { otelcolBuilt } from "../../plugins/collectors/otelcol/build.ts";
import { OTELCOL_PIN } from "../../plugins/collectors/otelcol/render.ts";
import { newBenchRun, projectRoot, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { expectCleanRun } from "../helpers/pipeline-ledger.ts";

const STACK = "local-otelcol";
const SCENARIO = "otelcol-victorialogs.yaml";

/** The build must be on this machine (CI's .ci/run runs scripts/build-otelcol.sh): fail, never skip. */
function requireBuild(): void {
  if (otelcolBuilt() === null)
    throw new Error("the project's Collector build is absent: run `bash scripts/build-otelcol.sh` first");
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-otelcol-e2e-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("fluent-forward → otelcol → otlphttp → VictoriaLogs (real Collector 0.165.0 build, real VictoriaLogs)", () => {
  it("real otelcol → real VictoriaLogs: every acknowledged event stored exactly once; the Collector's claims equal the ledger", async () => {
    requireBuild();
    const run = newBenchRun(STACK, scenarioPlan(SCENARIO, { warmup: "1s", duration: "4s" }));
    const record = await run.run();
    const l = expectCleanRun(record);
    expect(l.sent).toBeGreaterThan(0);
    expect(record.versions.otelcol).toEqual({ pinned: OTELCOL_PIN, running: OTELCOL_PIN });
    expect(record.collectorClaims).toEqual({
      name: "otelcol",
      counts: { received: l.sent, refused: 0, written: l.stored, dropped: 0, queued: 0 },
    });
    // the Collector's own signals in every sample of the series: its exporter's counters and queue gauges
    const series = readFileSync(path.join(run.dir, "series.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as { collector?: { name: string; hosts: Record<string, Record<string, number>> } },
      );
    const last = series.at(-1)!.collector!;
    expect(last.name).toBe("otelcol");
    expect(last.hosts.collector).toMatchObject({
      "fluentforward.accepted": l.sent,
      "otlphttp/ib_victorialogs.sent": l.stored,
      "otlphttp/ib_victorialogs.send_failed": 0,
      "otlphttp/ib_victorialogs.queue_size": 0,
    });
    expect(last.hosts.collector!["otlphttp/ib_victorialogs.queue_capacity"]).toBe(1000);
    expect(
      series.every((p) => p.collector?.hosts.collector?.["otlphttp/ib_victorialogs.queue_capacity"] === 1000),
    ).toBe(true);
    console.log(
      `otelcol-victorialogs: ${record.summary!.rowsPerSecond.toFixed(0)} rows/s over ${record.summary!.measuredSeconds.toFixed(1)} s, ` +
        `stored ${l.stored} of ${l.sent}, drain ${record.summary!.drainSeconds.toFixed(2)} s`,
    );
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  });
});

describe("otelcol refusals before provisioning (real Collector build)", () => {
  it("real otelcol build: a scenario pinning another Collector release is refused with both versions (E_VERSION) before any host exists", () => {
    requireBuild();
    const stack = loadStack(STACK, path.join(projectRoot, "stacks"));
    const plan = scenarioPlan(SCENARIO, { collectorVersion: "0.159.0" });
    let err: unknown;
    try {
      checkCellsOnStack(stack, [plan]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(err).toMatchObject({ code: "E_VERSION" });
    expect((err as Error).message).toMatch(
      new RegExp(
        `Pulumi\\.local-otelcol\\.yaml:\\d+:\\d+: config\\.ingestbench:hosts\\.collector: otelcol at \\S+otelcol \\(built\\) reports version ${OTELCOL_PIN.replace(/\./g, "\\.")}, but the scenario pins 0\\.159\\.0`,
      ),
    );
    // the scenario as shipped passes the same checks
    expect(() => checkCellsOnStack(stack, [scenarioPlan(SCENARIO)])).not.toThrow();
  });

  it("real otelcol build: a stack whose collector host names a missing program is refused (E_PROGRAM_MISSING) naming it and how to get one", () => {
    requireBuild();
    const file = path.join(tmp, "Pulumi.otelcol-missing.yaml");
    writeFileSync(
      file,
      [
        "config:",
        "  ingestbench:platform: local",
        "  ingestbench:hosts:",
        '    loadgen: { cpu: "1" }',
        "    collector:",
        '      cpu: "1"',
        "      memory: 1GiB",
        "      programs: { otelcol: /nonexistent/otelcol }",
        '    sink: { cpu: "1", memory: 2GiB }',
        "",
      ].join("\n"),
    );
    const stack = loadStack(file);
    let err: unknown;
    try {
      checkCellsOnStack(stack, [scenarioPlan(SCENARIO)]);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "E_PROGRAM_MISSING" });
    expect((err as Error).message).toMatch(
      /Pulumi\.otelcol-missing\.yaml:\d+:\d+: config\.ingestbench:hosts\.collector: programs\.otelcol is "\/nonexistent\/otelcol", but \/nonexistent\/otelcol is not an executable file or a program on PATH; build the project's Collector with `bash scripts\/build-otelcol\.sh`/,
    );
  });
});
