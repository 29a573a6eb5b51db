/**
 * `ingestbench validate` and `ingestbench bench` (local stacks) on the scenarios of the container platforms, through
 * the CLI as a user runs it: Fluentd, Fluent Bit and Vector (collector renderers, infra/render/) and Elasticsearch,
 * GridDB and Loki (container sinks) validate like the local components, and a local stack refuses them before it
 * provisions anything (no cgroup, netns or process is made: the refusal comes before provisionLocal). No collector
 * or container sink runs here.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-validate-container-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, ["bin/ingestbench.js", ...args], {
    cwd: projectRoot,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const CONTAINER_SCENARIOS = [
  "scenarios/fluentd-griddb-chunk-limit-records.yaml",
  "scenarios/fluentd-griddb-two-collectors.yaml",
  "scenarios/fluent-bit-clickhouse-batch-count.yaml",
  "scenarios/elasticsearch-bulk-8000.yaml",
];

describe("ingestbench validate: container-platform scenarios", () => {
  it("accepts 000's, 001's and 004's scenarios (Fluentd, Fluent Bit, GridDB, Elasticsearch) and exits 0", () => {
    const r = cli("validate", ...CONTAINER_SCENARIOS, "scenarios/quickstart.yaml");
    expect(r.err).toBe("");
    expect(r.out.trim().split("\n")).toEqual(
      [...CONTAINER_SCENARIOS, "scenarios/quickstart.yaml"].map((f) => `${f}: ok`),
    );
    expect(r.code).toBe(0);
  });

  it("reports a bad Fluentd parameter and a collector the generator cannot feed, naming file, line and field; exits 2", () => {
    const bad = path.join(tmp, "bad-fluentd.yaml");
    const text = readFileSync(
      path.join(projectRoot, "scenarios/fluentd-griddb-chunk-limit-records.yaml"),
      "utf8",
    );
    writeFileSync(bad, text.replace("flush_thread_count: 8", "flush_thread_count: 0"));
    const line = text.split("\n").findIndex((l) => l.includes("flush_thread_count: 8")) + 1;
    const pairing = path.join(tmp, "bad-pairing.yaml");
    writeFileSync(
      pairing,
      text.replace("generator: { fluent-forward: { batch: 1000,", "generator: { http-json: { batch: 1000,"),
    );
    const r = cli("validate", bad, pairing, "scenarios/elasticsearch-bulk-8000.yaml");
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${bad}:${line}:`);
    expect(r.err).toMatch(
      /collector\.fluentd\.buffer\.flush_thread_count: number must be greater than or equal to 1/,
    );
    // the pairing error names the line and column of the generator the collector cannot receive, and the cell
    const genLine = text.split("\n").findIndex((l) => l.startsWith("generator: { fluent-forward:")) + 1;
    expect(r.err).toMatch(
      new RegExp(
        `bad-pairing\\.yaml:${genLine}:14: generator\\.http-json: collector "fluentd" receives fluent-forward, not the "http-json" generator \\(cell chunk_limit_records=\\d+\\)`,
      ),
    );
    expect(r.out).toBe("scenarios/elasticsearch-bulk-8000.yaml: ok\n");
  });
});

describe("ingestbench bench on a local stack refuses container-only components before provisioning", () => {
  it("Elasticsearch (004): the sink runs on docker and azure stacks only", () => {
    const results = path.join(tmp, "results-es");
    const r = cli(
      "bench",
      "--stack",
      "local-quarter-core",
      "scenarios/elasticsearch-bulk-8000.yaml",
      "--results",
      results,
      "--replicates",
      "1",
      "--duration",
      "1s",
      "--warmup",
      "0s",
      "-q",
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /scenario elasticsearch-bulk-8000: sink "elasticsearch" has no local component: it runs on docker and azure stacks only \(stack local-quarter-core is a local stack\)/,
    );
    // refused before any run started: nothing provisioned, not even the results directory
    expect(existsSync(results)).toBe(false);
  });

  it("Fluent Bit (001) into a local ClickHouse with no fluent-bit installed: refused before provisioning, saying how to get one", () => {
    const results = path.join(tmp, "results-fb");
    const r = cli(
      "bench",
      "--stack",
      "local-pipeline",
      "scenarios/fluent-bit-clickhouse-batch-count.yaml",
      "--results",
      results,
      "--replicates",
      "1",
      "--duration",
      "1s",
      "-q",
    );
    expect(r.code).toBe(2);
    // the local component runs an installed Fluent Bit (plugins/collectors/fluent-bit/component.ts); none is on PATH
    // here or in CI, and local-pipeline names none
    expect(r.err).toMatch(
      /Pulumi\.local-pipeline\.yaml:\d+:\d+: config\.ingestbench:hosts\.collector: fluent-bit needs a program: none of fluent-bit is on PATH; install Fluent Bit .*programs: \{ fluent-bit: /,
    );
    // refused once, before the first of its 4 cells: nothing provisioned, not even the results directory
    expect(r.err.match(/needs a program/g)).toHaveLength(1);
    expect(existsSync(results)).toBe(false);
  });
});
