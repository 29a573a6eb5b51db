// The `steps:` of a scenario (harness/scenario/steps.ts), through the real registries and loadScenarioFile: every
// good form parses to its Step, every bad step is refused with one clean "file:line:col: field: problem" line.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import { loadScenarioFile } from "../../../harness/runner/plan.ts";
import { conditionHolds, parseCondition } from "../../../harness/scenario/steps.ts";

let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-steps-"));
  mkdirSync(path.join(tmp, "steps"));
  writeFileSync(path.join(tmp, "steps", "probe.mjs"), "export default async () => 'ok';\n");
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A scenario whose `steps:` block is `lines` (each indented two spaces), starting at line 9. */
function scenario(lines: string[]): string {
  const file = path.join(tmp, `s${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    [
      "name: steps-test", //                                                                     1
      "event: [{ name: msg, type: string, size: 20 }]", //                                       2
      "generator: { syslog: { batch: 100, connections: 1, rate: 1000, seed: 1 } }", //            3
      'collector: { syslog-ng: { version: "3.38" } }', //                                        4
      'sink: { postgres: { version: "18.4.0-beta.17" } }', //                                    5
      "duration: 5s", //                                                                         6
      "replicates: 1", //                                                                        7
      "steps:", //                                                                               8
      ...lines.map((l) => `  ${l}`),
    ].join("\n"),
  );
  return file;
}

/** The error message of loading `lines` as steps (fails the test when the file loads). */
function refusal(lines: string[]): string {
  const file = scenario(lines);
  try {
    loadScenarioFile(file);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigurationError);
    expect((e as ConfigurationError).code).toBe("E_SCENARIO_FIELD");
    expect((e as Error).stack ?? "").not.toMatch(/ReferenceError|TypeError/);
    return (e as Error).message.replaceAll(file, "F");
  }
  throw new Error("the scenario loaded");
}

describe("scenario steps", () => {
  it("parses every action and trigger, with default names, timeouts and fault flags", () => {
    const s = loadScenarioFile(
      scenario([
        "- { at: 3s, kill: collector }",
        "- { at: 4s, restart: collector, timeout: 10s }",
        "- { when: stored >= 20_000, stop: sink }",
        "- { when: elapsed > 2.5, cont: sink, name: thaw }",
        '- { at: 1s, exec: { host: loadgen, command: "ss -tn" } }',
        "- { at: 2s, network: { host: sink, bandwidth: 8Mbit/s } }",
        "- { at: 2s, script: steps/probe.mjs, fault: true }",
      ]),
    );
    expect(s.steps).toEqual([
      {
        index: 0,
        name: "kill collector",
        trigger: { atMs: 3000, text: "3s" },
        action: { kind: "kill", host: "collector" },
        timeoutMs: 30_000,
        fault: true,
      },
      {
        index: 1,
        name: "restart collector",
        trigger: { atMs: 4000, text: "4s" },
        action: { kind: "restart", host: "collector" },
        timeoutMs: 10_000,
        fault: true,
      },
      {
        index: 2,
        name: "stop sink",
        trigger: { when: { metric: "stored", op: ">=", value: 20_000, text: "stored >= 20_000" } },
        action: { kind: "stop", host: "sink" },
        timeoutMs: 30_000,
        fault: true,
      },
      {
        index: 3,
        name: "thaw",
        trigger: { when: { metric: "elapsed", op: ">", value: 2.5, text: "elapsed > 2.5" } },
        action: { kind: "cont", host: "sink" },
        timeoutMs: 30_000,
        fault: false,
      },
      {
        index: 4,
        name: "exec loadgen: ss -tn",
        trigger: { atMs: 1000, text: "1s" },
        action: { kind: "exec", host: "loadgen", command: "ss -tn" },
        timeoutMs: 30_000,
        fault: false,
      },
      {
        index: 5,
        name: "network sink (bandwidth 8Mbit/s)",
        trigger: { atMs: 2000, text: "2s" },
        action: {
          kind: "network",
          host: "sink",
          change: { bandwidthBytesPerSec: 1_000_000 },
          text: "bandwidth 8Mbit/s",
        },
        timeoutMs: 30_000,
        fault: true,
      },
      {
        index: 6,
        name: "script probe.mjs",
        trigger: { atMs: 2000, text: "2s" },
        action: { kind: "script", file: path.join(tmp, "steps", "probe.mjs") },
        timeoutMs: 30_000,
        fault: true,
      },
    ]);
    // the cell's body carries them too (what the run plans from)
    expect(s.cells[0]!.scenario.steps).toHaveLength(7);
  });

  it("a scenario without steps has none", () => {
    const file = scenario([]);
    writeFileSync(file, `${readFileSync(file, "utf8").replace(/steps:\n?$/, "")}\n`);
    expect(loadScenarioFile(file).steps).toEqual([]);
  });

  it.each([
    ["an unknown key", ["- { at: 3s, kil: collector }"], /^F:9:15: steps\.0\.kil: unknown key "kil"/m],
    [
      "no action",
      ["- { at: 3s }"],
      /^F:9:5: steps\.0: a step needs one action: kill, stop, cont, restart, exec, network, script/m,
    ],
    [
      "two actions",
      ["- { at: 3s, kill: collector, stop: sink }"],
      /^F:9:5: steps\.0: one action per step, not kill and stop/m,
    ],
    ["no trigger", ["- { kill: collector }"], /^F:9:5: steps\.0: a step needs a time \(at: 5s/m],
    [
      "both triggers",
      ["- { at: 1s, when: stored > 1, kill: collector }"],
      /^F:9:5: steps\.0: give at or when, not both/m,
    ],
    [
      "a bad duration",
      ["- { at: soon, kill: collector }"],
      /^F:9:11: steps\.0\.at: .*a time from the start of load/m,
    ],
    [
      "a bad operator",
      ["- { when: stored >> 5, kill: collector }"],
      /^F:9:13: steps\.0\.when: unknown operator ">>" in "stored >> 5": the operators are >=, >, <= and <, e\.g\. "stored >= 20000"$/m,
    ],
    [
      "an operator =>",
      ["- { when: stored => 5, kill: collector }"],
      /^F:9:13: steps\.0\.when: unknown operator "=>" in "stored => 5": the operators are >=, >, <= and </m,
    ],
    [
      "no operator",
      ["- { when: stored 5, kill: collector }"],
      /^F:9:13: steps\.0\.when: no operator in "stored 5": the operators are/m,
    ],
    [
      "an unknown metric",
      ["- { when: rows >= 5, kill: collector }"],
      /^F:9:13: steps\.0\.when: unknown metric "rows" in "rows >= 5": a condition compares stored, sent, elapsed/m,
    ],
    [
      "a bad number",
      ["- { when: stored >= lots, kill: collector }"],
      /^F:9:13: steps\.0\.when: "lots" is not a number in "stored >= lots"/m,
    ],
    [
      "elapsed with a unit (at: takes durations, a condition bare seconds)",
      ["- { when: elapsed >= 3s, kill: collector }"],
      /^F:9:13: steps\.0\.when: "3s" is not a number in "elapsed >= 3s": elapsed counts seconds since the load started, without a unit: "elapsed >= 3"$/m,
    ],
    [
      "elapsed in ms",
      ["- { when: elapsed > 500ms, kill: collector }"],
      /^F:9:13: steps\.0\.when: "500ms" is not a number in "elapsed > 500ms": .*"elapsed > 0\.5"$/m,
    ],
    [
      "an unknown host",
      ["- { at: 1s, kill: database }"],
      /^F:9:21: steps\.0\.kill: expected a host role: loadgen, collector/m,
    ],
    [
      "a signal to loadgen",
      ["- { at: 1s, stop: loadgen }"],
      /^F:9:21: steps\.0\.stop: stop: the loadgen host runs the generators/m,
    ],
    [
      "an exec without command",
      ["- { at: 1s, exec: { host: sink } }"],
      /^F:9:15: steps\.0\.exec\.command: expected a shell command/m,
    ],
    [
      "a bandwidth without unit",
      ["- { at: 1s, network: { host: sink, bandwidth: 12 } }"],
      /^F:9:49: steps\.0\.network\.bandwidth: bandwidth: 12 is a bare number/m,
    ],
    [
      "a network step without change",
      ["- { at: 1s, network: { host: sink } }"],
      /^F:9:24: steps\.0\.network: give bandwidth, delay or loss/m,
    ],
    [
      "a missing script",
      ["- { at: 1s, script: steps/nope.mjs }"],
      /^F:9:23: steps\.0\.script: .*steps\/nope\.mjs does not exist/m,
    ],
    [
      "a script that is not .mjs",
      ["- { at: 1s, script: steps/probe.js }"],
      /^F:9:23: steps\.0\.script: expected a zx script file ending in \.mjs/m,
    ],
    [
      "a zero timeout",
      ["- { at: 1s, kill: sink, timeout: 0s }"],
      /^F:9:36: steps\.0\.timeout: timeout must be more than 0/m,
    ],
    [
      "a non-boolean fault",
      ["- { at: 1s, kill: sink, fault: yes please }"],
      /^F:9:34: steps\.0\.fault: expected true or false/m,
    ],
    ["a step that is no map", ["- kill collector"], /^F:9:5: steps\.0: a step is a map/m],
  ])("refuses %s with file:line:col and the field", (_what, lines, expected) => {
    expect(refusal(lines)).toMatch(expected);
  });

  it("the matrix cannot vary steps", () => {
    const file = scenario(["- { at: 1s, kill: collector }"]);
    writeFileSync(file, `${readFileSync(file, "utf8")}\nmatrix: { steps.0.at: [1s, 2s] }\n`);
    expect(() => loadScenarioFile(file)).toThrow(
      /matrix\.steps\.0\.at: "steps" cannot be varied by the matrix/,
    );
  });

  it("conditions compare as written", () => {
    const c = parseCondition("sent < 10")!;
    expect(c).toEqual({ metric: "sent", op: "<", value: 10, text: "sent < 10" });
    expect([9, 10, 11].map((x) => conditionHolds(c, x))).toEqual([true, false, false]);
    expect([9, 10, 11].map((x) => conditionHolds(parseCondition("stored >= 10")!, x))).toEqual([
      false,
      true,
      true,
    ]);
    expect(parseCondition("lag > 5")).toBeNull();
  });
});
