// `ingestbench validate <scenario> --stack S` as a user runs it (bin/ingestbench.js in a child process): the pair
// check's exit code and words (harness/runner/pair-check.ts, ui/pair-check.ts), one diagnostic per finding with --json.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, ["bin/ingestbench.js", ...args], {
    cwd: root,
    env: { ...process.env, INGESTBENCH_AZURE_ALLOW_FROM: "", ...env },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("validate <scenario> --stack S: the pair checked before anything starts", () => {
  it("clickhouse-query-load on docker-4c4g exits 2 naming both ClickHouse versions and the stacks that take it", () => {
    const r = cli(["validate", "scenarios/clickhouse-query-load.yaml", "--stack", "docker-4c4g"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toMatch(/^stacks\/Pulumi\.docker-4c4g\.yaml: ok/);
    expect(r.stderr).toMatch(
      /^scenarios\/clickhouse-query-load\.yaml: refused: on stacks\/Pulumi\.docker-4c4g\.yaml: scenario clickhouse-query-load pins clickhouse 18\.16\.1, but stack docker-4c4g deploys clickhouse 25\.8 \(image clickhouse\/clickhouse-server:25\.8\); refusing before anything is deployed; stacks that take it, checked now: --stack /,
    );
    // a local stack's answer depends on what is installed here, and says so
    expect(r.stderr).toMatch(
      /--stack local-[\w-]+ \(accepted if clickhouse 18\.16\.1 is installed\)|--stack local-[\w-]+.*; each if clickhouse 18\.16\.1 is installed/,
    );
  });

  it("a known-good pair exits 0", () => {
    const r = cli(["validate", "scenarios/clickhouse-query-load.yaml", "--stack", "docker-debian-2-cores"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^scenarios\/clickhouse-query-load\.yaml: ok$/m);
  });

  it("an azure stack's documentation allowFrom: flagged for the stack alone (exit 0), refused with a scenario (exit 2) unless the run gives an address", () => {
    const alone = cli(["validate", "stacks/Pulumi.azure-d2s-v5.yaml"]);
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).toMatch(
      /^stacks\/Pulumi\.azure-d2s-v5\.yaml: ok; stacks\/Pulumi\.azure-d2s-v5\.yaml:\d+:\d+: config\.ingestbench:azure\.allowFrom: allowFrom 203\.0\.113\.10\/32 is a documentation address .*\(a run refuses it\)$/m,
    );
    const paired = cli(["validate", "scenarios/quickstart.yaml", "--stack", "azure-d2s-v5"]);
    expect(paired.code, paired.stderr).toBe(2);
    expect(paired.stderr).toMatch(
      /^scenarios\/quickstart\.yaml: refused: on stacks\/Pulumi\.azure-d2s-v5\.yaml: stacks\/Pulumi\.azure-d2s-v5\.yaml:\d+:\d+: config\.ingestbench:azure\.allowFrom: allowFrom 203\.0\.113\.10\/32 is a documentation address \(RFC 5737\)/,
    );
    expect(paired.stderr).toMatch(
      /INGESTBENCH_AZURE_ALLOW_FROM=<your-ip>\/32, or pulumi config set --path ingestbench:azure\.allowFrom/,
    );
    const given = cli(["validate", "scenarios/quickstart.yaml", "--stack", "azure-d2s-v5"], {
      INGESTBENCH_AZURE_ALLOW_FROM: "100.64.12.34/32",
    });
    expect(given.code, given.stderr).toBe(0);
  });

  it("several findings: one refusal listing each by kind (exit 2); --json gives one diagnostic per finding with its code", () => {
    const r = cli(["validate", "scenarios/app-export-ab-fluentd.yaml", "--stack", "azure-d2s-v5"]);
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toMatch(
      /^scenarios\/app-export-ab-fluentd\.yaml: refused: on stacks\/Pulumi\.azure-d2s-v5\.yaml: stack azure-d2s-v5 refuses scenario app-export-ab-fluentd: 3 findings, checked before anything is provisioned$/,
    );
    expect(lines[1]).toMatch(
      /^ {2}placeholder: stacks\/Pulumi\.azure-d2s-v5\.yaml:\d+:\d+: config\.ingestbench:azure\.allowFrom: /,
    );
    expect(lines[2]).toMatch(
      /^ {2}platform: scenario app-export-ab-fluentd: an application under test runs on local stacks only \(stack azure-d2s-v5 is an azure stack\)$/,
    );
    expect(lines[3]).toMatch(
      /^ {2}version: scenario app-export-ab-fluentd pins clickhouse 18\.16\.1, but stack azure-d2s-v5 deploys clickhouse 25\.8/,
    );
    expect(lines[4]).toMatch(/^ {2}stacks that take it, checked now: --stack local-/);
    const j = cli(["validate", "--json", "scenarios/app-export-ab-fluentd.yaml", "--stack", "azure-d2s-v5"]);
    expect(j.code).toBe(2);
    const results = JSON.parse(j.stdout) as Array<{
      file: string;
      ok: boolean;
      errors: Array<{ code: string; field: string | null }>;
    }>;
    const scenario = results.find((x) => x.file === "scenarios/app-export-ab-fluentd.yaml")!;
    expect(scenario.ok).toBe(false);
    expect(scenario.errors.map((e) => e.code)).toEqual(["E_PLACEHOLDER", "E_APP_NOT_RUNNABLE", "E_VERSION"]);
    expect(scenario.errors[0]!.field).toBe("config.ingestbench:azure.allowFrom");
  });
});
