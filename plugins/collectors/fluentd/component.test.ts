/**
 * The fluentd local component's program checks, before anything is provisioned (harness/runner/local-site.ts
 * checkRunnableLocally → checkPrograms; core/program.ts). Fluentd is not installed in CI: a missing program is the
 * case CI sees; the version drift uses a STAND-IN script that prints what `fluentd --version` prints
 * ("fluentd 1.11.5"), not a real Fluentd. The real Fluentd 1.12.0 ran once on this project's machine through this
 * component (README.md, docs/measurements.md).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadStack } from "../../../infra/stack/schema.ts";
import { checkRunnableLocally } from "../../../harness/runner/local-site.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-fluentd-program-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SCENARIO = "scenarios/fluentd-clickhouse-chunk-limit-records.yaml";
const plan = () => ({ ...planCells(loadScenarioFile(SCENARIO), SCENARIO)[0]!, scenarioFile: SCENARIO });

/** stacks/Pulumi.local-pipeline-byob-fluent.yaml with the collector's fluentd command line replaced by `line`. */
function stackWith(line: string): string {
  const file = path.join(tmp, `Pulumi.fd-${Math.random().toString(36).slice(2, 8)}.yaml`);
  writeFileSync(
    file,
    readFileSync("stacks/Pulumi.local-pipeline-byob-fluent.yaml", "utf8").replace(
      /fluentd: "ruby \/opt\/byob\/fluentd-1\.12\.0\/bin\/fluentd"/,
      `fluentd: "${line}"`,
    ),
  );
  return file;
}

describe("fluentd local component: the program is checked before provisioning", () => {
  it("a stack command line naming a missing program is refused (E_PROGRAM_MISSING) with how to get Fluentd", () => {
    const stack = loadStack(stackWith(`${path.join(tmp, "no-ruby")} /opt/fluentd/bin/fluentd`));
    expect(() => checkRunnableLocally(stack, plan())).toThrow(
      /config\.ingestbench:hosts\.collector: programs\.fluentd is ".*no-ruby \/opt\/fluentd\/bin\/fluentd", but .*no-ruby is not an executable file or a program on PATH; install Fluentd .*ruby \/opt\/fluentd-1\.12\.0\/bin\/fluentd/,
    );
  });

  it("a version drift is refused naming both versions, the command line's own arguments kept (stand-in script printing `fluentd 1.11.5`)", () => {
    const standIn = path.join(tmp, "fake-ruby");
    writeFileSync(standIn, '#!/bin/sh\necho "fluentd 1.11.5"\n');
    chmodSync(standIn, 0o755);
    const stack = loadStack(stackWith(`${standIn} /opt/fluentd-1.11.5/bin/fluentd`));
    expect(() => checkRunnableLocally(stack, plan())).toThrow(
      /fluentd at .*fake-ruby \/opt\/fluentd-1\.11\.5\/bin\/fluentd \(stack\) reports version 1\.11\.5, but the scenario pins 1\.12\.0; refusing before provisioning/,
    );
  });
});
