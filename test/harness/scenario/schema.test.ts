import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigurationError } from "../../../core/errors.ts";
import { loadScenario, type PluginRegistries } from "../../../harness/scenario/schema.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** A stand-in for the real pg-copy generator's schema: strict, with a default. */
const fakePgCopy = z
  .object({
    batch: z.number().int().positive(),
    connections: z.number().int().positive().default(1),
    rate: z.union([z.literal("max"), z.number().positive()]),
    seed: z.number().int(),
  })
  .strict();

const registries: PluginRegistries = {
  generators: { "pg-copy": fakePgCopy, "http-json": { schema: z.object({ url: z.string() }).strict() } },
  sinks: { postgres: z.object({ version: z.string() }).strict() },
  collectors: {
    "syslog-ng": z
      .object({ "batch-lines": z.number().int().positive(), workers: z.number().int().default(1) })
      .strict(),
  },
};

let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-scenario-"));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** The quickstart body, one line per entry, so tests can patch lines and know their numbers (1-based = index + 1). */
const base = [
  "name: quickstart", //                                                              1
  "description: test", //                                                             2
  "event:", //                                                                        3
  "  - { name: ts,  type: timestamp }", //                                            4
  "  - { name: msg, type: string, size: 180 }", //                                    5
  "generator: { pg-copy: { batch: 8000, connections: 1, rate: max, seed: 42 } }", //  6
  "collector: none", //                                                               7
  'sink: { postgres: { version: "18.4.0-beta.17" } }', //                             8
  "warmup: 5s", //                                                                    9
  "duration: 30s", //                                                                 10
  "drain: { timeout: 60s }", //                                                       11
  "replicates: 1", //                                                                 12
  "matrix: {}", //                                                                    13
  "checks:", //                                                                       14
  "  - { ledger.lost: 0 }", //                                                        15
  "  - { ledger.duplicated: 0 }", //                                                  16
];

let n = 0;
function write(lines: string[]): string {
  const file = path.join(tmp, `s${n++}.yaml`);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

/** base with line `lineNo` (1-based) replaced by `text` (or removed when text is null). */
function patched(patches: Record<number, string | null>, extra: string[] = []): string[] {
  const out: string[] = [];
  base.forEach((l, i) => {
    const p = patches[i + 1];
    if (p === undefined) out.push(l);
    else if (p !== null) out.push(p);
  });
  return [...out, ...extra];
}

function errorOf(file: string): ConfigurationError {
  try {
    loadScenario(file, registries);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigurationError);
    return e as ConfigurationError;
  }
  throw new Error(`expected ${file} to be rejected`);
}

describe("scenarios/quickstart.yaml", () => {
  it("loads with a pg-copy registry into exact values", () => {
    const file = path.join(root, "scenarios/quickstart.yaml");
    const s = loadScenario(file, registries);
    expect(s.file).toBe(file);
    expect(s.name).toBe("quickstart");
    expect(s.description).toMatch(/PostgreSQL/);
    expect(s.event).toEqual([
      { name: "ts", type: "timestamp" },
      { name: "msg", type: "string", size: 180 },
    ]);
    expect(s.source).toBeUndefined();
    expect(s.generator).toEqual({
      name: "pg-copy",
      config: { batch: 8000, connections: 1, rate: "max", seed: 42 },
    });
    expect(s.collector).toBeNull();
    expect(s.sink).toEqual({ name: "postgres", config: { version: "18.4.0-beta.17" } });
    expect(s.warmup).toEqual({ ms: 5000, text: "5s" });
    expect(s.duration).toEqual({ ms: 30000, text: "30s" });
    expect(s.interval).toEqual({ ms: 1000, text: "1s" });
    expect(s.drain).toEqual({ timeout: { ms: 60000, text: "60s" } });
    expect(s.replicates).toBe(1);
    expect(s.matrix).toEqual({});
    expect(s.checks).toEqual([
      { path: "ledger.lost", equals: 0 },
      { path: "ledger.duplicated", equals: 0 },
    ]);
    expect(s.cells).toHaveLength(1);
    expect(s.cells[0]?.id).toBe("default");
    expect(s.cells[0]?.values).toEqual({});
    expect(s.cells[0]?.scenario.generator).toEqual(s.generator);
  });
});

describe("scenario forms", () => {
  it("applies defaults, reads a collector, a source file and min/max checks", () => {
    const file = write(
      patched(
        { 7: "collector: { syslog-ng: { batch-lines: 5000 } }", 9: null, 11: null, 12: null, 13: null },
        [
          "  - { summary.lagP99Ms: { max: 1000 } }",
          "  - { summary.rowsPerSecond: { min: 1, max: 1e9 } }",
          "source: { file: logs/app.log }",
          "interval: 500ms",
        ],
      ),
    );
    mkdirSync(path.join(tmp, "logs"), { recursive: true });
    writeFileSync(path.join(tmp, "logs/app.log"), "a line\n");
    const s = loadScenario(file, registries);
    expect(s.collector).toEqual({ name: "syslog-ng", config: { "batch-lines": 5000, workers: 1 } });
    expect(s.warmup).toEqual({ ms: 0, text: "0s" });
    expect(s.interval.ms).toBe(500);
    expect(s.drain.timeout.ms).toBe(60000);
    expect(s.replicates).toBe(3); // the default: the fewest with which a comparison reaches a verdict
    expect(s.source).toEqual({ file: path.join(tmp, "logs/app.log") });
    expect(s.checks.slice(2)).toEqual([
      { path: "summary.lagP99Ms", max: 1000 },
      { path: "summary.rowsPerSecond", min: 1, max: 1e9 },
    ]);
  });

  it("expands the matrix into cells, last key fastest, each validated and substituted", () => {
    const file = write(
      patched({ 13: "matrix:" }, [
        "  generator.pg-copy.batch: [1000, 8000]",
        "  generator.pg-copy.connections: [1, 4]",
      ]).filter((l) => !l.startsWith("checks") && !l.startsWith("  - { ledger")),
    );
    const s = loadScenario(file, registries);
    expect(s.matrix).toEqual({
      "generator.pg-copy.batch": [1000, 8000],
      "generator.pg-copy.connections": [1, 4],
    });
    expect(s.cells.map((c) => c.id)).toEqual([
      "batch=1000,connections=1",
      "batch=1000,connections=4",
      "batch=8000,connections=1",
      "batch=8000,connections=4",
    ]);
    expect(s.cells[1]?.values).toEqual({
      "generator.pg-copy.batch": 1000,
      "generator.pg-copy.connections": 4,
    });
    expect(s.cells[1]?.scenario.generator!.config).toEqual({
      batch: 1000,
      connections: 4,
      rate: "max",
      seed: 42,
    });
    expect(s.generator!.config).toEqual({ batch: 8000, connections: 1, rate: "max", seed: 42 });
    expect(s.matrixForm).toBe("product");
  });

  it("takes an explicit list of cells: ids from the values (not positions), each cell validated and substituted", () => {
    const lines = patched({ 13: "matrix:" }).filter((l) => !/^checks|^ {2}- \{ ledger/.test(l));
    lines.push(
      "  - { generator.pg-copy.batch: 200, generator.pg-copy.connections: 4 }",
      "  - { generator.pg-copy.batch: 50000 }",
      "  - { generator.pg-copy.connections: 2, generator.pg-copy.batch: 1000 }",
    );
    const s = loadScenario(write(lines), registries);
    expect(s.matrixForm).toBe("list");
    expect(s.cells.map((c) => c.id)).toEqual([
      "batch=200,connections=4",
      "batch=50000",
      "batch=1000,connections=2",
    ]);
    expect(s.matrix).toEqual({
      "generator.pg-copy.batch": [200, 50000, 1000],
      "generator.pg-copy.connections": [4, 2],
    });
    expect(s.cells[1]?.scenario.generator!.config).toEqual({
      batch: 50000,
      connections: 1,
      rate: "max",
      seed: 42,
    });
    expect(s.cells[2]?.scenario.generator!.config).toEqual({
      batch: 1000,
      connections: 2,
      rate: "max",
      seed: 42,
    });
    // reordering the list does not rename a cell
    const reordered = [...lines.slice(0, -3), lines.at(-1)!, lines.at(-3)!, lines.at(-2)!];
    expect(
      loadScenario(write(reordered), registries)
        .cells.map((c) => c.id)
        .sort(),
    ).toEqual(s.cells.map((c) => c.id).sort());
    // an empty list is one default cell
    expect(loadScenario(write(patched({ 13: "matrix: []" })), registries).cells.map((c) => c.id)).toEqual([
      "default",
    ]);
  });
});

describe("scenario errors name file, line and field", () => {
  it("a bad event field type and a string without size", () => {
    const file = write(
      patched({ 4: "  - { name: ts,  type: datetime }", 5: "  - { name: msg, type: string }" }),
    );
    const err = errorOf(file);
    expect(err.code).toBe("E_SCENARIO_FIELD");
    const lines = err.message.split("\n");
    expect(lines[0]).toMatch(
      new RegExp(
        `^${file.replace(/\./g, "\\.")}:4:24: event\\.0\\.type: invalid enum value\\. Expected 'timestamp' \\| 'string' \\| 'int' \\| 'float' \\| 'bool', received 'datetime'`,
      ),
    );
    expect(lines[1]).toMatch(/:5:5: event\.1\.size: a string field needs size/);
    expect(err.location).toBe(`${file}:4`);
    expect(err.field).toBe("event.0.type");
  });

  it("bad field names, reserved names, out-of-range sizes and size on a non-string", () => {
    const lines = patched({ 4: "  - { name: Ts, type: timestamp }", 5: "  - { name: seq, type: int }" });
    lines.splice(
      5,
      0,
      "  - { name: msg, type: string, size: 70000 }",
      "  - { name: flag, type: bool, size: 3 }",
    );
    const msg = errorOf(write(lines)).message.split("\n");
    expect(msg).toHaveLength(4);
    expect(msg[0]).toMatch(/:4:13: event\.0\.name: field names must match/);
    expect(msg[1]).toMatch(
      /:5:13: event\.1\.name: "seq" is reserved: gen, seq, sent_at are tracking columns/,
    );
    expect(msg[2]).toMatch(/:6:38: event\.2\.size: number must be less than or equal to 65536/);
    expect(msg[3]).toMatch(/:7:37: event\.3\.size: size applies to string fields only, not bool/);
  });

  it("duplicate field names", () => {
    const lines = patched({ 5: "  - { name: ts, type: string, size: 10 }" });
    expect(errorOf(write(lines)).message).toMatch(
      /:5:13: event\.1\.name: duplicate field "ts" \(also event\.0\)/,
    );
  });

  it("an unknown generator lists the known ones, at the line and column of the name", () => {
    const file = write(patched({ 6: "generator: { pg-cpy: { batch: 8000 } }" }));
    const err = errorOf(file);
    expect(err.message).toMatch(
      /:6:14: generator\.pg-cpy: unknown generator "pg-cpy"; known generators: http-json, pg-copy, or "none"; did you mean "pg-copy"\?$/,
    );
    expect(err.field).toBe("generator.pg-cpy");
  });

  it("an unknown collector or sink lists the known ones; a block must have one key", () => {
    const lines = patched({ 7: "collector:", 8: "sink: { clickhouse: {}, postgres: {} }" });
    lines.splice(7, 0, "  fluentd: { flush_interval: 1s }");
    const msg = errorOf(write(lines)).message.split("\n");
    expect(msg[0]).toMatch(
      /:8:3: collector\.fluentd: unknown collector "fluentd"; known collectors: syslog-ng, or "none"$/,
    );
    expect(msg[1]).toMatch(
      /:9:7: sink: sink must be a map with exactly one key, the plugin name \(postgres\)/,
    );
  });

  it("a misspelt plugin name, bare or as the block's key, names its line and column, the known ones and the nearest", () => {
    const bare = write(patched({ 7: "collector: nonne" }));
    const err = errorOf(bare);
    expect(err.message).toBe(
      `${bare}:7:12: collector: unknown collector "nonne"; known collectors: syslog-ng, or "none"; did you mean "none"?`,
    );
    expect(err.field).toBe("collector");
    // a plugin written bare is suggested as the block it must be; as the key, by its name
    expect(errorOf(write(patched({ 7: "collector: syslogng" }))).message).toMatch(
      /:7:12: collector: unknown collector "syslogng"; .*; did you mean \{ syslog-ng: \{ \.\.\. \} \}\?$/,
    );
    expect(errorOf(write(patched({ 8: "sink: { postgre: {} }" }))).message).toMatch(
      /:8:9: sink\.postgre: unknown sink "postgre"; known sinks: postgres; did you mean "postgres"\?$/,
    );
    expect(errorOf(write(patched({ 6: "generator: { pgcopy: { batch: 8000 } }" }))).message).toMatch(
      /:6:14: generator\.pgcopy: unknown generator "pgcopy"; known generators: http-json, pg-copy, or "none"; did you mean "pg-copy"\?$/,
    );
    // nothing near: the known ones only
    expect(errorOf(write(patched({ 8: "sink: mongodb" }))).message).toMatch(
      /:8:7: sink: unknown sink "mongodb"; known sinks: postgres$/,
    );
  });

  it("plugin config problems are reported inside the plugin block, with allowed keys", () => {
    const file = write(
      patched({ 6: "generator: { pg-copy: { batch: -5, rate: fast, seed: 42, size: 10 } }" }),
    );
    const msg = errorOf(file).message.split("\n");
    expect(msg).toHaveLength(3);
    expect(msg[0]).toMatch(/:6:32: generator\.pg-copy\.batch: number must be greater than 0/);
    expect(msg[1]).toMatch(
      /:6:42: generator\.pg-copy\.rate: invalid literal value, expected "max", or expected number, received string/,
    );
    expect(msg[2]).toMatch(
      /:6:58: generator\.pg-copy\.size: unknown key "size"; allowed keys: batch, connections, rate, seed$/,
    );
  });

  it("unknown top-level keys, missing keys and bad durations", () => {
    const file = write(patched({ 10: "duraton: 30s", 9: "warmup: 5 seconds" }));
    const msg = errorOf(file).message.split("\n");
    expect(msg[0]).toMatch(/:1:1: duration: required, but missing/);
    expect(msg[1]).toMatch(/:9:9: warmup: "5 seconds" is not a duration/);
    expect(msg[2]).toMatch(
      /:10:1: duraton: unknown key "duraton"; allowed keys: name, description, event, source, generator.*; did you mean "duration"\?$/,
    );
  });

  it("a duration beyond a week (or beyond what a number of µs holds) is refused at its line, saying the bound", () => {
    const file = write(patched({ 9: "warmup: 8d", 10: "duration: 99999999999999999999h" }));
    const msg = errorOf(file).message.split("\n");
    expect(msg[0]).toMatch(
      /:9:9: warmup: "8d" is more than 7d, the longest a run's durations may be: a measurement of more than a week is a typo/,
    );
    expect(msg[1]).toMatch(/:10:11: duration: "99999999999999999999h" is more than 7d, the longest/);
    expect(loadScenario(write(patched({ 10: "duration: 7d" })), registries).duration).toEqual({
      ms: 7 * 86_400_000,
      text: "7d",
    });
  });

  it("a sampling interval under 100 ms is refused at its line, saying the bound; 100ms loads", () => {
    const msg = errorOf(write(patched({}, ["interval: 1us"]))).message;
    expect(msg).toMatch(
      /:\d+:\d+: interval: interval 1us is shorter than 100 ms, the shortest sampling interval/,
    );
    expect(loadScenario(write(patched({}, ["interval: 100ms"])), registries).interval).toEqual({
      ms: 100,
      text: "100ms",
    });
  });

  it('an empty file, or one of comments only, is said to be empty at its line 1 (not "expected object, received null")', () => {
    for (const lines of [[], ["# a scenario, some day", "", "# name: quickstart"], ["--- # nothing yet"]]) {
      const file = write(lines);
      const err = errorOf(file);
      expect(err.code).toBe("E_SCENARIO_FIELD");
      expect(err.message).toBe(
        `${file}:1:1: the file is empty (no YAML content, only comments or blank lines)`,
      );
      expect(err.location).toBe(`${file}:1`);
    }
    // an explicit null is content: zod's word for it stands
    expect(errorOf(write(["~"])).message).toMatch(/:1:1: expected object, received null$/);
  });

  it("a matrix path that names no field, at the line of the key", () => {
    const file = write(
      patched({ 13: "matrix:" }, ["  generator.pg-copy.batchsize: [1000, 8000]"]).filter(
        (l) => !/^checks|^ {2}- \{ ledger/.test(l),
      ),
    );
    const err = errorOf(file);
    expect(err.message).toMatch(
      /:14:3: matrix\.generator\.pg-copy\.batchsize: "generator\.pg-copy\.batchsize" names no field of this scenario .*there: batch, connections, rate, seed/,
    );
    expect(err.location).toBe(`${file}:14`);
  });

  it("a matrix value that the schema rejects, at the line of that value", () => {
    const lines = patched({ 13: "matrix:" }).filter((l) => !/^checks|^ {2}- \{ ledger/.test(l));
    lines.push("  generator.pg-copy.batch:", "    - 1000", "    - lots", "  checks.0: [1]");
    const msg = errorOf(write(lines)).message.split("\n");
    expect(msg[0]).toMatch(
      /:16:7: matrix\.generator\.pg-copy\.batch\.1: matrix value "lots": expected number, received string$/,
    );
    expect(msg[1]).toMatch(/:17:3: matrix\.checks\.0: "checks" cannot be varied by the matrix/);
  });

  it("a listed cell: bad value, unknown path, a list where one value belongs, a repeat, a non-map, each at its line", () => {
    const lines = patched({ 13: "matrix:" }).filter((l) => !/^checks|^ {2}- \{ ledger/.test(l));
    lines.push(
      "  - { generator.pg-copy.batch: lots }", //                  14
      "  - { generator.pg-copy.batchsize: 10 }", //                15
      "  - { generator.pg-copy.batch: [1, 2] }", //                16
      "  - 7", //                                                  17
    );
    // the shape is checked first (lines 16, 17), then paths and values in place (lines 14, 15)
    const shape = errorOf(write(lines)).message.split("\n");
    expect(shape[0]).toMatch(
      /:16:\d+: matrix\.2\.generator\.pg-copy\.batch: a listed cell gives one value per path/,
    );
    expect(shape[1]).toMatch(/:17:\d+: matrix\.3: a listed cell is a map/);
    const msg = errorOf(write(lines.slice(0, -2))).message.split("\n");
    expect(msg[0]).toMatch(
      /:14:\d+: matrix\.0\.generator\.pg-copy\.batch: matrix value "lots": expected number, received string/,
    );
    expect(msg[1]).toMatch(
      /:15:\d+: matrix\.1\.generator\.pg-copy\.batchsize: "generator\.pg-copy\.batchsize" names no field of this scenario/,
    );
    const dup = patched({ 13: "matrix:" }).filter((l) => !/^checks|^ {2}- \{ ledger/.test(l));
    dup.push(
      "  - { generator.pg-copy.batch: 200 }",
      "  - { generator.pg-copy.batch: 300 }",
      "  - { generator.pg-copy.batch: 200 }",
    );
    expect(errorOf(write(dup)).message).toMatch(/:16:\d+: matrix\.2: this cell repeats cell 0 \(batch=200\)/);
    expect(errorOf(write(patched({ 13: "matrix: 5" }))).message).toMatch(
      /:13:\d+: matrix: matrix is a map from dotted paths to lists of values/,
    );
  });

  it("bad checks", () => {
    const lines = patched({
      15: "  - { ledger.lost: zero }",
      16: "  - { ledger.lost: 0, ledger.duplicated: 0 }",
    });
    lines.push("  - { summary.lag: { max: 5, avg: 1 } }", "  - { summary.lag: { min: 9, max: 5 } }");
    const msg = errorOf(write(lines)).message.split("\n");
    expect(msg[0]).toMatch(
      /:15:20: checks\.0\.ledger\.lost: expected a number \(exact\) or \{ min: n \} \/ \{ max: n \}/,
    );
    expect(msg[1]).toMatch(/:16:5: checks\.1: a check is a map with one key/);
    expect(msg[2]).toMatch(/:17:30: checks\.2\.summary\.lag\.avg: unknown key "avg"; allowed keys: min, max/);
    expect(msg[3]).toMatch(/:18:20: checks\.3\.summary\.lag: min 9 is above max 5/);
  });

  it("YAML syntax errors carry the line", () => {
    const err = errorOf(write(patched({ 6: "generator: { pg-copy: { batch: 8000 }" })));
    expect(err.code).toBe("E_YAML_SYNTAX");
    expect(err.location).toMatch(/:7$/);
  });
});

describe("run-result checks and replay files are checked at their line", () => {
  it("a check path that is not a number in the run result, and a replay file that does not exist", () => {
    const withPaths = { ...registries, checkPaths: new Set(["ledger.lost", "ledger.duplicated"]) };
    const bad = write(patched({ 16: "  - { ledger.duplicatd: 0 }" }));
    expect(() => loadScenario(bad, withPaths)).toThrow(
      new RegExp(
        `${path.basename(bad)}:16:7: checks\\.1\\.ledger\\.duplicatd: "ledger\\.duplicatd" is not a number in the run result; use one of ledger\\.lost, ledger\\.duplicated`,
      ),
    );
    const missing = write(patched({}, ["source: { file: no-such.log }"]));
    expect(() => loadScenario(missing, withPaths)).toThrow(
      new RegExp(
        `${path.basename(missing)}:17:\\d+: source\\.file: ${path.join(tmp, "no-such.log")} does not exist`,
      ),
    );
    // an empty file or a directory has no line to replay: refused here, not by the generator after provisioning
    writeFileSync(path.join(tmp, "empty.log"), "");
    const empty = write(patched({}, ["source: { file: empty.log }"]));
    expect(() => loadScenario(empty, withPaths)).toThrow(
      new RegExp(
        `${path.basename(empty)}:17:\\d+: source\\.file: ${path.join(tmp, "empty.log")} is empty: a replay file needs at least one line`,
      ),
    );
    const dir = write(patched({}, ["source: { file: . }"]));
    expect(() => loadScenario(dir, withPaths)).toThrow(
      /source\.file: .* is a directory, not a file of lines/,
    );
  });
});

describe("the content check's fidelity setting", () => {
  it("defaults to every row up to a million, else 10 000 seqs, and takes its own limits", () => {
    expect(loadScenario(write(base), registries).fidelity).toEqual({ all: 1_000_000, sample: 10_000 });
    expect(
      loadScenario(write(patched({}, ["fidelity: { all: 0, sample: 500 }"])), registries).fidelity,
    ).toEqual({ all: 0, sample: 500 });
    expect(loadScenario(write(patched({}, ["fidelity: { sample: 2000 }"])), registries).fidelity).toEqual({
      all: 1_000_000,
      sample: 2000,
    });
  });

  it("refuses a sample of 0, fractions, more than a million seqs and unknown keys at their line", () => {
    expect(errorOf(write(patched({}, ["fidelity: { all: 10, sample: 0 }"]))).message).toMatch(
      /:17:\d+: fidelity\.sample: /,
    );
    expect(errorOf(write(patched({}, ["fidelity: { all: 1.5 }"]))).message).toMatch(
      /:17:\d+: fidelity\.all: fidelity\.all is a whole number/,
    );
    expect(errorOf(write(patched({}, ["fidelity: { sample: 1000001 }"]))).message).toMatch(
      /:17:\d+: fidelity\.sample: /,
    );
    expect(errorOf(write(patched({}, ["fidelity: { everything: true }"]))).message).toMatch(
      /:17:\d+: fidelity/,
    );
  });
});
