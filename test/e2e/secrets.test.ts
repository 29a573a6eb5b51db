/**
 * Secrets kept secret (docs/design.md, "Secrets"): a real local run whose PostgreSQL needs a known password
 * (INGESTBENCH_POSTGRES_PASSWORD; scram-sha-256 for host connections, so the verifier and the generator really use
 * it), and a deployed run through the recording Pulumi CLI stand-in, SIGKILLed inside `pulumi up`. Every artifact is
 * scanned for the secret (plain, base64, URL-encoded: test/helpers/secret-scan.ts): the results directory (run.json,
 * series.jsonl), the report (HTML, Markdown), the harness's stdout and stderr, every temp file the run makes (its
 * TMPDIR is a fresh directory, polled while it runs: the host data dirs, logs, rendered configs) and the stand-in's
 * recorded calls, config files and state. Temp files may hold it only with mode 0600. After the SIGKILL,
 * `git status --porcelain stacks/` is clean and `ingestbench gc` removes the cell's config file.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { kernelRelease } from "../../harness/results/format.ts";
import type { RunRecord } from "../../harness/results/types.ts";
import { createDockerCliStandIn, type DockerCliStandIn } from "../helpers/docker-cli-stand-in.ts";
import { createPulumiCliStandIn, type PulumiCliStandIn } from "../helpers/pulumi-cli-stand-in.ts";
import { scanForSecret, type SecretHit } from "../helpers/secret-scan.ts";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const SECRET = "ib-S3cret+pw/7f3a9";
/** The other sinks' passwords, set beside it in both runs: none may appear anywhere either (each sink's own variable) */
const OTHERS: Record<string, string> = {
  INGESTBENCH_CLICKHOUSE_PASSWORD: "ib-Ch+pw/2b81",
  INGESTBENCH_ELASTICSEARCH_PASSWORD: "ib-Es+pw/5c02",
  INGESTBENCH_OPENSEARCH_PASSWORD: "ib-Os+pw/9d13",
  INGESTBENCH_LOKI_PASSWORD: "ib-Lk+pw/3e24",
  INGESTBENCH_GRIDDB_PASSWORD: "ib-Gd+pw/7f35",
};
/** scanForSecret for the PostgreSQL secret and each of OTHERS */
const scanAll = (dirs: string[]): SecretHit[] =>
  [SECRET, ...Object.values(OTHERS)].flatMap((s) => scanForSecret(dirs, s));
const work = mkdtempSync(path.join(os.tmpdir(), "ibtest-secrets-"));
let docker: DockerCliStandIn | undefined;
let pulumi: PulumiCliStandIn | undefined;
afterAll(() => {
  docker?.cleanup();
  pulumi?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

/** Hits outside files of mode 0600 (a 0600 file may hold a secret: a rendered config, a pwfile). */
const exposed = (hits: SecretHit[]) =>
  hits.filter((h) => h.mode !== 0o600).map((h) => `${h.file} (${h.as}, mode ${h.mode.toString(8)})`);

describe("the secret scan itself", () => {
  it("finds a planted copy (plain, base64 of user:secret, URL-encoded) and nothing in clean files", () => {
    const dir = path.join(work, "plant");
    mkdirSync(path.join(dir, "deep"), { recursive: true });
    writeFileSync(path.join(dir, "clean.json"), JSON.stringify({ password: "[redacted]" }));
    expect(scanForSecret([dir], SECRET)).toEqual([]);
    writeFileSync(path.join(dir, "deep", "plain.log"), `connecting with ${SECRET}\n`, { mode: 0o644 });
    writeFileSync(
      path.join(dir, "auth.txt"),
      `Authorization: Basic ${Buffer.from(`admin:${SECRET}`).toString("base64")}\n`,
    );
    writeFileSync(path.join(dir, "url.txt"), `postgres://postgres:${encodeURIComponent(SECRET)}@h/db\n`, {
      mode: 0o600,
    });
    const hits = scanForSecret([dir], SECRET)
      .map((h) => [path.relative(dir, h.file), h.as, h.mode])
      .sort();
    expect(hits).toEqual([
      ["auth.txt", "base64", 0o644],
      ["deep/plain.log", "plain", 0o644],
      ["url.txt", "url-encoded", 0o600],
    ]);
    expect(exposed(scanForSecret([dir], SECRET))).toHaveLength(2);
  });
});

describe("a real local run with a PostgreSQL password (INGESTBENCH_POSTGRES_PASSWORD)", () => {
  it("authenticates with it (scram-sha-256), stores an exact ledger, and leaves it in no artifact", async () => {
    const tmp = path.join(work, "tmp");
    const results = path.join(work, "results");
    mkdirSync(tmp);
    // a TMPDIR like /tmp: the server account (postgres or nobody) must reach its data dir through it
    chmodSync(work, 0o755);
    chmodSync(tmp, 0o1777);
    const env = { ...process.env, TMPDIR: tmp, INGESTBENCH_POSTGRES_PASSWORD: SECRET, ...OTHERS };
    const child = spawn(
      process.execPath,
      [
        "bin/ingestbench.js",
        "bench",
        "--stack",
        "local-quarter-core",
        "scenarios/quickstart.yaml",
        "--warmup",
        "1s",
        "--duration",
        "2s",
        "--results",
        results,
        "--progress",
        "plain",
      ],
      { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // poll the run's temp files while it runs (they are removed at teardown)
    const live: SecretHit[] = [];
    let hba = "";
    let done = false;
    void exited.then(() => {
      done = true;
    });
    while (!done) {
      live.push(...scanAll([tmp]));
      for (const f of findFiles(tmp, "pg_hba.conf")) hba = readFileSync(f, "utf8");
      await sleep(250);
    }
    const code = await exited;
    const [rec] = records(results, "local-quarter-core", "quickstart");
    expect(code, `${stderr}\n${JSON.stringify(rec?.error)}`).toBe(0);
    expect(rec!.status).toBe("ok");
    expect(rec!.ledger).toMatchObject({ lost: 0, duplicated: 0 });
    expect(rec!.ledger!.stored).toBeGreaterThan(0);
    // the numbers name their machine: the run's own environment, in the table that ends bench (ui/bench-table.ts)
    expect(stdout).toContain(
      `measured on ${rec!.environment.cpuModel}, ${rec!.environment.cores} cores, kernel ${kernelRelease(rec!.environment.kernel)}, cgroup ${rec!.environment.cgroup}`,
    );
    // host connections (the verifier's and the generator's) needed the password
    expect(hba).toMatch(/^host all all 0\.0\.0\.0\/0 scram-sha-256$/m);
    expect(hba).not.toMatch(/^host all all 0\.0\.0\.0\/0 trust$/m);

    const report = spawnSync(
      process.execPath,
      [
        "bin/ingestbench.js",
        "report",
        "--results",
        results,
        "--out",
        path.join(results, "report.html"),
        "--markdown",
        path.join(results, "summary.md"),
      ],
      { cwd: repoRoot, env, encoding: "utf8", timeout: 60_000 },
    );
    expect(report.status, report.stderr).toBe(0);
    expect(existsSync(path.join(results, "report.html"))).toBe(true);
    writeFileSync(path.join(work, "harness.out"), stdout + stderr + report.stdout + report.stderr);

    expect(exposed(live)).toEqual([]);
    expect(scanAll([results, path.join(work, "harness.out"), tmp])).toEqual([]);
  }, 120_000);
});

describe("a deployed run SIGKILLed inside pulumi up (recording Pulumi and Docker CLI stand-ins)", () => {
  it("never writes the tracked stack file (git status clean), keeps the secret out of the stand-in's state, and gc removes the cell's config file", async () => {
    const STACK = "docker-4c4g";
    const tmp = path.join(work, "tmp-deployed");
    mkdirSync(tmp);
    docker = createDockerCliStandIn({ containers: {} });
    pulumi = createPulumiCliStandIn({ hang: ["up"], deploy: { [STACK]: { outputs: {}, resourceCount: 1 } } });
    const env = {
      ...pulumi.env,
      PATH: [docker.binDir, pulumi.binDir, process.env.PATH].join(path.delimiter),
      TMPDIR: tmp,
      INGESTBENCH_POSTGRES_PASSWORD: SECRET,
      ...OTHERS,
    };
    const before = gitStatus();
    const scenario = path.join(work, "deployed.yaml");
    writeFileSync(scenario, readFileSync(path.join(repoRoot, "scenarios", "quickstart.yaml"), "utf8"));
    // its own process group, so that the hanging stand-in dies with it
    const child = spawn(
      process.execPath,
      [
        "bin/ingestbench.js",
        "bench",
        "--stack",
        STACK,
        scenario,
        "--results",
        path.join(work, "results-deployed"),
        "--quiet",
      ],
      { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    for (let i = 0; i < 240 && !pulumi.commandLines().some((l) => l.startsWith("up ")); i++) await sleep(250);
    expect(
      pulumi.commandLines().some((l) => l.startsWith("up ")),
      out,
    ).toBe(true);
    process.kill(-child.pid!, "SIGKILL");
    await exited;

    // the CLI got a --config-file in a temp dir of the killed process; the tracked stack file was never written
    const up = pulumi.calls().find((c) => c.argv[0] === "up")!;
    const configFile = up.argv[up.argv.indexOf("--config-file") + 1]!;
    expect(path.basename(path.dirname(configFile))).toBe(
      readdirSync(tmp).find((n) => n.startsWith(`ib-pulumi-config-${child.pid}-`)),
    );
    expect(readFileSync(configFile, "utf8")).toContain("ingestbench:cell");
    expect(gitStatus()).toBe(before);
    expect(gitStatus()).toBe("");
    expect(scanAll([pulumi.dir, docker.dir, tmp, path.join(work, "results-deployed")])).toEqual([]);
    for (const s of [SECRET, ...Object.values(OTHERS)]) expect(out).not.toContain(s);

    const gc = spawnSync(process.execPath, ["bin/ingestbench.js", "gc", "--json"], {
      cwd: repoRoot,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(gc.stdout + gc.stderr).not.toContain(SECRET);
    expect(existsSync(path.dirname(configFile)), gc.stderr).toBe(false);
  }, 120_000);
});

describe("a deployed stack whose sink has no default password (recording Pulumi CLI stand-in)", () => {
  it("is refused before `pulumi up` with E_SINK_PASSWORD naming INGESTBENCH_POSTGRES_PASSWORD, exit 2, when the variable is unset", () => {
    const stand = createPulumiCliStandIn({ deploy: { "docker-4c4g": { outputs: {}, resourceCount: 1 } } });
    const dockerCli = createDockerCliStandIn({ containers: {} });
    try {
      const env: NodeJS.ProcessEnv = {
        ...stand.env,
        PATH: [dockerCli.binDir, stand.binDir, process.env.PATH].join(path.delimiter),
        TMPDIR: work,
      };
      delete env.INGESTBENCH_POSTGRES_PASSWORD;
      const r = spawnSync(
        process.execPath,
        [
          "bin/ingestbench.js",
          "bench",
          "--stack",
          "docker-4c4g",
          "scenarios/quickstart.yaml",
          "--results",
          path.join(work, "results-refused"),
          "--quiet",
        ],
        { cwd: repoRoot, env, encoding: "utf8", timeout: 60_000 },
      );
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        /stack docker-4c4g runs postgres, whose password has no default: set INGESTBENCH_POSTGRES_PASSWORD/,
      );
      expect(stand.commandLines().some((l) => l.startsWith("up "))).toBe(false);
    } finally {
      stand.cleanup();
      dockerCli.cleanup();
    }
  }, 60_000);
});

function gitStatus(): string {
  return spawnSync("git", ["status", "--porcelain", "stacks/"], { cwd: repoRoot, encoding: "utf8" }).stdout;
}

function records(results: string, stack: string, scenario: string): RunRecord[] {
  const dir = path.join(results, stack, scenario);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map(
    (id) => JSON.parse(readFileSync(path.join(dir, id, "run.json"), "utf8")) as RunRecord,
  );
}

function findFiles(root: string, name: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    let entries;
    try {
      entries = readdirSync(p, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) visit(path.join(p, e.name));
      else if (e.name === name) out.push(path.join(p, e.name));
    }
  };
  visit(root);
  return out;
}
