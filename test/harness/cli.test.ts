// The CLI as users run it (node bin/ingestbench.js ...): exit codes and messages for bad input, before anything runs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { prepareResultsDir } from "../../harness/results/preflight.ts";
import { projectRoot } from "../helpers/bench.ts";

function cli(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, ["bin/ingestbench.js", ...args], { cwd: projectRoot, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-cli-"));

describe("ingestbench CLI", () => {
  it("exits 2 on usage errors and prints its version", () => {
    expect(cli("bench", "scenarios/quickstart.yaml").code).toBe(2); // missing --stack
    expect(cli("no-such-command").code).toBe(2);
    const v = cli("--version");
    expect(v.code).toBe(0);
    expect(v.out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("refuses an unusable results directory before provisioning anything (exit 2)", () => {
    const file = path.join(tmp, "a-file");
    writeFileSync(file, "");
    const r = cli("bench", "--stack", "local-2-cores", "--results", path.join(file, "sub"), "scenarios/quickstart.yaml");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/E_RESULTS_DIR|not a directory/);
    expect(r.err).not.toMatch(/provisioning/);
    expect(() => prepareResultsDir("/proc/ingestbench-nope/x")).toThrow(/procfs/);
  });

  it("validate tells stacks from scenarios by content and names a check path that does not exist", () => {
    const text = "config:\n  ingestbench:platform: local\n  ingestbench:hosts:\n    sink: { cpu: \"25 100\" }\n";
    const stack = path.join(tmp, "Pulumi.my-stack.yaml");
    writeFileSync(stack, text);
    const r1 = cli("validate", stack);
    expect(r1.code).toBe(2);
    expect(r1.err).toMatch(/Pulumi\.my-stack\.yaml:4:\d+: config\.ingestbench:hosts\.sink\.cpu: .*25000 100000/);
    // a stack file under another name is still read as a stack (and told how stack files are named)
    const misnamed = path.join(tmp, "my-stack.yaml");
    writeFileSync(misnamed, text);
    const r0 = cli("validate", misnamed);
    expect(r0.code).toBe(2);
    expect(r0.err).toMatch(/stack files are named Pulumi.<stack>.yaml/);
    const scenario = path.join(tmp, "typo.yaml");
    writeFileSync(scenario, "name: typo\nevent:\n  - { name: msg, type: string, size: 10 }\ngenerator: { pg-copy: {} }\nsink: { postgres: { version: \"18.4.0-beta.17\" } }\nduration: 5s\nchecks:\n  - { ledger.lots: 0 }\n");
    const r2 = cli("validate", scenario, "scenarios/quickstart.yaml");
    expect(r2.code).toBe(2);
    expect(r2.err).toMatch(/checks\[0\]: "ledger.lots" is not a number in the run result/);
    expect(r2.out).toMatch(/quickstart\.yaml: ok/);
  });

  it("exits 4 when the pinned sink version is not the installed one (a verification error), after tearing down", () => {
    const scenario = path.join(tmp, "pin.yaml");
    writeFileSync(scenario, "name: pin\nevent:\n  - { name: msg, type: string, size: 10 }\ngenerator: { pg-copy: {} }\nsink: { postgres: { version: \"17.2.0-beta.15\" } }\nduration: 2s\n");
    const r = cli("bench", "-q", "--stack", "local-2-cores", "--results", path.join(tmp, "results"), scenario);
    expect(r.code).toBe(4);
    expect(r.out).toMatch(/E_VERSION_PIN/);
  });
});
