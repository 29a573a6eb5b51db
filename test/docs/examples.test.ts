/**
 * The scenario examples in the docs are valid: every fenced YAML block of README.md, docs/ (decisions included),
 * scenarios/README.md and plugins/README.md that starts with `steps:` or `checks:` loads as part of a scenario
 * through the real loader (harness/runner/plan.ts loadScenarioFile), every inline `when: …` parses as a step
 * condition (harness/scenario/steps.ts parseCondition), and every inline check example (`{ ledger.lost: 0 }`) loads as
 * a check. Then the check is shown to fail on a bad example of each kind (`elapsed >= 3s` among them).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadScenarioFile } from "../../harness/runner/plan.ts";
import { parseCondition } from "../../harness/scenario/steps.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOCS = [
  "README.md",
  "scenarios/README.md",
  "plugins/README.md",
  ...["docs", "docs/decisions"].flatMap((d) =>
    readdirSync(path.join(ROOT, d))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `${d}/${f}`),
  ),
];

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-doc-examples-"));
symlinkSync(path.join(ROOT, "scenarios", "steps"), path.join(tmp, "steps")); // scripts resolve beside the scenario, as in scenarios/
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A scenario with every host role a doc example names (loadgen, collector, sink) and `extra` appended. */
const BASE = [
  "name: doc-example",
  "event: [{ name: msg, type: string, size: 20 }]",
  "generator: { syslog: { batch: 100, connections: 1, rate: 1000, seed: 1 } }",
  'collector: { syslog-ng: { version: "3.38" } }',
  'sink: { postgres: { version: "18.4.0-beta.17" } }',
  "duration: 10s",
  "replicates: 1",
].join("\n");

let n = 0;
/** The loader's error for BASE + `extra`, or null when it loads. */
function problem(extra: string): string | null {
  const file = path.join(tmp, `e${n++}.yaml`);
  writeFileSync(file, `${BASE}\n${extra}\n`);
  try {
    loadScenarioFile(file);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

interface Example {
  where: string;
  text: string;
}

/** Fenced blocks starting with `steps:` or `checks:`, inline `when: …` spans, inline check maps, per doc. */
function examples(docs: readonly string[]): { blocks: Example[]; conditions: Example[]; checks: Example[] } {
  const blocks: Example[] = [];
  const conditions: Example[] = [];
  const checks: Example[] = [];
  for (const doc of docs) {
    const md = readFileSync(path.join(ROOT, doc), "utf8");
    const at = (i: number) => `${doc}:${md.slice(0, i).split("\n").length}`;
    for (const m of md.matchAll(/^```(?:yaml)?\n((?:steps|checks):\n[\s\S]*?)^```$/gm))
      blocks.push({ where: at(m.index), text: m[1]! });
    const prose = md.replace(/^```[\s\S]*?^```$/gm, (b) => b.replace(/[^\n]/g, " ")); // inline spans outside blocks, same offsets
    for (const m of prose.matchAll(/`when: ([^`]+)`/g)) conditions.push({ where: at(m.index), text: m[1]! });
    for (const m of prose.matchAll(/`(\{ ?(?:ledger|summary|generator|query|app)\.[\w.]+: [^`]+\})`/g))
      checks.push({ where: at(m.index), text: m[1]! });
  }
  return { blocks, conditions, checks };
}

describe("the docs' scenario examples are valid", () => {
  const found = examples(DOCS);

  it("every steps:/checks: block loads as part of a scenario", () => {
    expect(found.blocks.length).toBeGreaterThanOrEqual(1);
    const bad = found.blocks
      .map((b) => ({ where: b.where, problem: problem(b.text) }))
      .filter((b) => b.problem !== null);
    expect(bad).toEqual([]);
  });

  it("every inline `when:` is a step condition (elapsed among them) and every inline check loads", () => {
    expect(found.conditions.map((c) => c.text)).toEqual(
      expect.arrayContaining(["stored >= 20000", "elapsed >= 3"]),
    );
    expect(found.conditions.filter((c) => parseCondition(c.text) === null)).toEqual([]);
    expect(found.checks.map((c) => c.text)).toEqual(expect.arrayContaining(["{ ledger.lost: 0 }"]));
    const bad = found.checks
      .map((c) => ({ where: c.where, problem: problem(`checks:\n  - ${c.text}`) }))
      .filter((c) => c.problem !== null);
    expect(bad).toEqual([]);
  });

  it("the check can fail: a bad block, a condition with a unit, a check on no result path", () => {
    const doc = path.join(tmp, "bad.md");
    writeFileSync(
      doc,
      "Steps:\n\n```yaml\nsteps:\n  - { when: elapsed >= 3s, kill: collector }\n```\n\nAlso `when: elapsed >= 3s` and `{ summary.elapsed: { min: 3 } }`.\n",
    );
    const bad = examples([path.relative(ROOT, doc)]);
    expect(bad.blocks.map((b) => problem(b.text))).toEqual([
      expect.stringMatching(
        /steps\.0\.when: "3s" is not a number in "elapsed >= 3s": .*without a unit: "elapsed >= 3"/,
      ),
    ]);
    expect(bad.conditions.map((c) => parseCondition(c.text))).toEqual([null]);
    expect(bad.checks.map((c) => problem(`checks:\n  - ${c.text}`))).toEqual([
      expect.stringMatching(/checks\.0/),
    ]);
  });
});
