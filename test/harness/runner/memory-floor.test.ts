// Memory caps too small for a component to start (harness/runner/memory-floor.ts, core/plugin.ts minMemory): refused
// before provisioning at the stack file's line and column, with the component's floor and its reason; `validate`
// refuses a stack whose host cap is below the floor of every component its platform can start there (exit 2, one
// verdict line per file).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import { loadStack } from "../../../infra/stack/schema.ts";
import { findSink } from "../../../plugins/registry.ts";
import { checkMemoryFloors, memoryFloorWarnings } from "../../../harness/runner/memory-floor.ts";
import {
  crossCheck,
  validateExitCode,
  validateFile,
  withCrossChecks,
} from "../../../harness/cli/commands/validate.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-floor-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function stackWith(name: string, sinkMemory: string): string {
  const file = path.join(tmp, `Pulumi.${name}.yaml`);
  writeFileSync(
    file,
    `config:\n  ingestbench:platform: local\n  ingestbench:hosts:\n    loadgen: { cpu: "1", memory: 1KiB }\n    sink:\n      cpu: "0.5"\n      memory: ${sinkMemory}\n`,
  );
  return file;
}

const plan = (sink: string) => ({ sink: { name: sink, config: {} }, collector: null });

describe("memory caps too small for the component to start", () => {
  it("PostgreSQL and ClickHouse have a floor; a sink host capped below it is refused naming file:line:col, field and reason", () => {
    for (const sink of ["postgres", "clickhouse"])
      expect(findSink(sink)?.minMemory?.bytes).toBe(16 * 2 ** 20);
    const file = stackWith("tiny", "1KiB");
    let err: unknown;
    try {
      checkMemoryFloors(loadStack(file), plan("postgres"));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as ConfigurationError).code).toBe("E_CAP_TOO_SMALL");
    expect((err as ConfigurationError).message).toBe(
      `${file}:7:15: config.ingestbench:hosts.sink.memory: a memory cap of 1.0 KiB is too small for postgres on host sink to start: it needs at least 16.0 MiB (${findSink("postgres")!.minMemory!.why}); raise the cap`,
    );
    expect(() => checkMemoryFloors(loadStack(stackWith("under", "16777215B")), plan("clickhouse"))).toThrow(
      /too small for clickhouse/,
    );
    // at the floor and above it runs (a squeezed component is measured; its OOM kill is the run's to report)
    expect(() => checkMemoryFloors(loadStack(stackWith("floor", "16MiB")), plan("clickhouse"))).not.toThrow();
    // the loadgen host runs no plugin: its cap has no floor here
    expect(() => checkMemoryFloors(loadStack(stackWith("big", "2GiB")), plan("postgres"))).not.toThrow();
  });

  it("syslog-ng has a floor too: a collector host capped below it is refused before provisioning, naming the collector", () => {
    const file = path.join(tmp, "Pulumi.tinycoll.yaml");
    writeFileSync(
      file,
      `config:\n  ingestbench:platform: local\n  ingestbench:hosts:\n    loadgen: { cpu: "1" }\n    collector: { cpu: "1", memory: 1KiB }\n    sink: { cpu: "1", memory: 1GiB }\n`,
    );
    const withCollector = {
      sink: { name: "postgres", config: {} },
      collector: { name: "syslog-ng", config: {} },
    };
    let message = "";
    try {
      checkMemoryFloors(loadStack(file), withCollector);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.startsWith(`${file}:5:`), message).toBe(true);
    expect(message).toContain(
      "config.ingestbench:hosts.collector.memory: a memory cap of 1.0 KiB is too small for syslog-ng on host collector to start: it needs at least 2.0 MiB",
    );
    writeFileSync(
      file,
      `config:\n  ingestbench:platform: local\n  ingestbench:hosts:\n    loadgen: { cpu: "1" }\n    collector: { cpu: "1", memory: 2MiB }\n    sink: { cpu: "1", memory: 1GiB }\n`,
    );
    expect(() => checkMemoryFloors(loadStack(file), withCollector)).not.toThrow();
  });

  it("validate refuses a local stack whose sink cap is below every local sink's floor: one verdict line with the reason, exit 2", () => {
    const file = stackWith("tiny-v", "1KiB");
    const r = validateFile(file);
    expect(r).toMatchObject({
      ok: false,
      errors: [
        expect.objectContaining({
          code: "E_CAP_TOO_SMALL",
          line: 7,
          col: 15,
          field: "config.ingestbench:hosts.sink.memory",
        }),
      ],
    });
    expect(r.text).toBe(
      `${file}: refused: ${file}:7:15: config.ingestbench:hosts.sink.memory: a memory cap of 1.0 KiB is too small for any sink the local platform runs on host sink to start: ` +
        "postgres needs at least 16.0 MiB, clickhouse needs at least 16.0 MiB, opensearch needs at least 384.0 MiB, victorialogs needs at least 8.0 MiB (docs/decisions/0009-memory-caps-too-small-to-start.md); raise the cap",
    );
    expect(r.text).not.toMatch(/\bok\b/);
    expect(r.warnings).toBeUndefined();
    expect(validateExitCode([r])).toBe(2);
    // no note either way for a cap every component clears, nor for the loadgen host (no component there)
    expect(memoryFloorWarnings(loadStack(stackWith("ok-v", "2GiB")))).toEqual([]);
    expect(validateFile(stackWith("ok-v", "2GiB"))).toMatchObject({ ok: true });
  });

  it("validate fails (not ok) for a docker stack whose named component cannot start under its host's memory cap, at the field's position", () => {
    const file = path.join(tmp, "Pulumi.docker-tiny.yaml");
    writeFileSync(
      file,
      [
        "config:",
        "  ingestbench:platform: docker",
        "  ingestbench:hosts:",
        '    loadgen: { cpu: "1", memory: 1GiB }',
        "    sink:",
        '      cpu: "1"',
        "      memory: 8MiB",
        "  ingestbench:components:",
        "    sink: postgres",
        "",
      ].join("\n"),
    );
    const r = validateFile(file);
    expect(r.ok).toBe(false);
    expect(r.errors).toEqual([
      expect.objectContaining({
        code: "E_CAP_TOO_SMALL",
        line: 7,
        col: 15,
        field: "config.ingestbench:hosts.sink.memory",
        message: expect.stringMatching(
          /too small for postgres on host sink to start: it needs at least 16\.0 MiB/,
        ),
      }),
    ]);
    writeFileSync(file, readFileSync(file, "utf8").replace("8MiB", "2GiB"));
    expect(validateFile(file)).toMatchObject({ ok: true });
  });

  it("validate STACK SCENARIO: the scenario's cells on the stack, as a run checks them (E_CAP_TOO_SMALL before provisioning), one verdict per file", () => {
    const stack = stackWith("tiny-x", "1KiB");
    // a stack taken as valid (here it is refused on its own: crossCheck checks the valid ones)
    const results = [
      { file: stack, kind: "stack" as const, ok: true, errors: [] },
      validateFile("scenarios/quickstart.yaml"),
    ];
    const crossed = crossCheck(results);
    expect(crossed).toHaveLength(1);
    expect(crossed[0]).toMatchObject({
      file: "scenarios/quickstart.yaml",
      ok: false,
      errors: [expect.objectContaining({ code: "E_CAP_TOO_SMALL", line: 7, col: 15 })],
    });
    expect(crossed[0]!.text).toMatch(
      /^scenarios\/quickstart\.yaml: refused: on .*Pulumi\.tiny-x\.yaml: .*too small for postgres/,
    );
    const merged = withCrossChecks(results, crossed);
    expect(merged.map((r) => [r.file, r.ok])).toEqual([
      [stack, true],
      ["scenarios/quickstart.yaml", false],
    ]);
    expect(merged[1]!.text).toBe(crossed[0]!.text);
    expect(crossCheck([validateFile(stackWith("fine-x", "2GiB")), results[1]!])).toEqual([]);
  });

  it("validate ONE-STACK SCENARIO checks what bench checks before provisioning (a misspelt app.host, at its line); with several stacks only the memory floors", () => {
    const scenario = path.join(tmp, "app-typo.yaml");
    writeFileSync(
      scenario,
      readFileSync("scenarios/app-export-ab.yaml", "utf8").replace("host: loadgen ", "host: loadgn "),
    );
    const sc = validateFile(scenario);
    expect(sc.ok).toBe(true); // on its own the file is fine: which hosts exist is the stack's
    const pipeline = validateFile("stacks/Pulumi.local-pipeline.yaml");
    const crossed = crossCheck([pipeline, sc]);
    expect(crossed).toHaveLength(1);
    expect(crossed[0]!.errors[0]).toMatchObject({ code: "E_STACK_HOSTS" });
    expect(crossed[0]!.text).toMatch(
      new RegExp(
        `app-typo\\.yaml:\\d+:\\d+: app\\.host: "loadgn" is not a host of stack local-pipeline; stacks/Pulumi\\.local-pipeline\\.yaml:\\d+:\\d+: config\\.ingestbench:hosts: `,
      ),
    );
    // the shipped scenario passes on the same stack, and a glob of stacks pairs on the memory caps only
    expect(crossCheck([pipeline, validateFile("scenarios/app-export-ab.yaml")])).toEqual([]);
    expect(crossCheck([pipeline, validateFile("stacks/Pulumi.local-2-cores.yaml"), sc])).toEqual([]);
  });
});
