/**
 * The fluent-bit local component's program checks, before anything is provisioned (harness/runner/local-site.ts
 * checkRunnableLocally → checkPrograms; core/program.ts). Fluent Bit is not installed in CI: a missing program is the
 * case CI sees; the version drift uses a STAND-IN script that prints what `fluent-bit --version` prints ("Fluent Bit
 * v4.0.3"), not a real Fluent Bit. The real Fluent Bit 4.2.8 ran once on this project's machine through this
 * component (README.md, docs/measurements.md).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadStack } from "../../../infra/stack/schema.ts";
import { checkRunnableLocally } from "../../../harness/runner/local-site.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-fluent-bit-program-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SCENARIO = "scenarios/fluent-bit-clickhouse-batch-count-local.yaml";
const plan = () => ({ ...planCells(loadScenarioFile(SCENARIO), SCENARIO)[0]!, scenarioFile: SCENARIO });

/** stacks/Pulumi.local-pipeline-byob-fluent.yaml with the collector's fluent-bit program replaced by `program`. */
function stackWith(program: string): string {
  const file = path.join(tmp, `Pulumi.fb-${Math.random().toString(36).slice(2, 8)}.yaml`);
  writeFileSync(
    file,
    readFileSync("stacks/Pulumi.local-pipeline-byob-fluent.yaml", "utf8").replace(
      /fluent-bit: \/opt\/byob\/fluent-bit-4\.2\.8\/_b\/bin\/fluent-bit/,
      `fluent-bit: ${program}`,
    ),
  );
  return file;
}

describe("fluent-bit local component: the program is checked before provisioning", () => {
  it("a stack pointing at a missing fluent-bit is refused (E_PROGRAM_MISSING) with the stack's line and how to get it", () => {
    const stack = loadStack(stackWith(path.join(tmp, "no-such-dir", "fluent-bit")));
    let err: unknown;
    try {
      checkRunnableLocally(stack, plan());
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "E_PROGRAM_MISSING" });
    const msg = (err as Error).message;
    expect(msg).toMatch(
      /Pulumi\.fb-\w+\.yaml:\d+:\d+: config\.ingestbench:hosts\.collector: programs\.fluent-bit is ".*no-such-dir\/fluent-bit"/,
    );
    expect(msg).toContain("build it from its source: plugins/collectors/fluent-bit/README.md");
  });

  it("a version drift is refused naming both versions (stand-in script printing `Fluent Bit v4.0.3`)", () => {
    const standIn = path.join(tmp, "fluent-bit-4.0.3");
    writeFileSync(standIn, '#!/bin/sh\necho "Fluent Bit v4.0.3"\necho "Git commit: "\n');
    chmodSync(standIn, 0o755);
    const stack = loadStack(stackWith(standIn));
    expect(() => checkRunnableLocally(stack, plan())).toThrow(
      /fluent-bit at .*fluent-bit-4\.0\.3 \(stack\) reports version 4\.0\.3, but the scenario pins 4\.2\.8; refusing before provisioning/,
    );
  });
});
