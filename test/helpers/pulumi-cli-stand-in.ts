/**
 * A RECORDING STAND-IN for the Pulumi CLI: installs test/helpers/pulumi-cli-stand-in.mjs as `<dir>/bin/pulumi`
 * in a temp dir, with its state (`state.json`: stacks, their config, outputs, locks; canned answers) and its
 * record of invocations (`calls.jsonl`). Put `env.PATH` first on PATH (or pass `env` to the provisioner) and the
 * Automation API drives it as it would drive the real CLI. It deploys nothing: what it proves is the command
 * lines the harness issues and how the harness reads the answers, not what Pulumi or a cloud does with them —
 * except in ENGINE MODE (`engine`), where `up` and `destroy` apply the project's Pulumi program to a real Docker
 * engine (test/helpers/pulumi-engine.ts says how, and what a real `pulumi up` would do differently).
 */
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), "pulumi-cli-stand-in.mjs");
const ENGINE = path.join(path.dirname(fileURLToPath(import.meta.url)), "pulumi-engine.ts");

/** One stack as the stand-in's backend holds it. */
export interface StandInStack {
  config: Record<string, string>;
  /** deployed outputs ({} when not deployed) */
  outputs: Record<string, unknown>;
  /** what `up` deploys: these outputs and this many resources */
  deploy?: { outputs: Record<string, unknown>; resourceCount: number };
  lastUpdate?: string;
  updateInProgress?: boolean;
  resourceCount?: number;
  /** a lock left by an update (DIY backend lock file) */
  locked?: boolean;
  history?: unknown[];
  /** the `--config-file` of the last up: its path and its text as the harness wrote it */
  configFile?: { path: string; text: string };
}

/** The stand-in's state file. */
export interface StandInState {
  /** what `pulumi version` prints (without the "v") */
  version: string;
  current: string | null;
  stacks: Record<string, StandInStack>;
  /** what `stack init <name>` gives the new stack to deploy */
  deploy?: Record<string, { outputs: Record<string, unknown>; resourceCount: number }>;
  /** commands (first word) that fail with this stderr and exit code */
  fail?: Record<string, { stderr: string; exitCode?: number }>;
  /** commands (up, refresh, destroy) that wait for SIGINT, then fail as the CLI does when cancelled */
  hang?: string[];
  /** leave the stack locked when a hanging command is interrupted */
  lockOnInterrupt?: boolean;
  /**
   * ENGINE MODE: `up`/`destroy` run the Pulumi program of `projectDir` under Pulumi's mocks and create/destroy its
   * docker resources on the engine DOCKER_HOST names (test/helpers/pulumi-engine.ts); `deploy` is then not read
   */
  engine?: { projectDir: string; script?: string };
}

/** One recorded invocation. */
export interface StandInCall {
  argv: string[];
  cwd: string;
  /** PULUMI_* and IB_* variables it was run with */
  env: Record<string, string>;
  stdin: string;
  /** the text of its `--config-file`, when it had one */
  configFileText?: string;
}

export interface PulumiCliStandIn {
  dir: string;
  binDir: string;
  /** process.env with binDir first on PATH */
  env: NodeJS.ProcessEnv;
  calls(): StandInCall[];
  /** argv of each call, joined by spaces, without the `version` probe */
  commandLines(): string[];
  state(): StandInState;
  setState(update: (s: StandInState) => void): void;
  cleanup(): void;
}

/** Install the stand-in with an initial state (version defaults to 3.248.0, the SDK's own version). */
/** The sink passwords the stand-in's environment carries unless process.env has them (test values, never a product default). */
export const STAND_IN_PASSWORDS: Readonly<Record<string, string>> = {
  INGESTBENCH_POSTGRES_PASSWORD: "stand-in-pg-pw",
  INGESTBENCH_CLICKHOUSE_PASSWORD: "stand-in-ch-pw",
};

export function createPulumiCliStandIn(initial: Partial<StandInState> = {}): PulumiCliStandIn {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ib-pulumi-stand-in-"));
  const binDir = path.join(dir, "bin");
  mkdirSync(binDir);
  const bin = path.join(binDir, "pulumi");
  copyFileSync(SCRIPT, bin);
  chmodSync(bin, 0o755);
  const statePath = path.join(dir, "state.json");
  const callsPath = path.join(dir, "calls.jsonl");
  const engine = initial.engine ? { engine: { script: ENGINE, ...initial.engine } } : {};
  writeFileSync(
    statePath,
    JSON.stringify({ version: "3.248.0", current: null, stacks: {}, ...initial, ...engine }, null, 2),
  );
  writeFileSync(callsPath, "");
  const state = (): StandInState => JSON.parse(readFileSync(statePath, "utf8")) as StandInState;
  const calls = (): StandInCall[] =>
    readFileSync(callsPath, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as StandInCall);
  return {
    dir,
    binDir,
    // PostgreSQL and ClickHouse containers need a password (their catalog `secretEnv`, no default): a test one unless the
    // test's own environment sets it
    env: {
      ...STAND_IN_PASSWORDS,
      ...process.env,
      PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}`,
    },
    calls,
    commandLines: () =>
      calls()
        .map((c) => c.argv.join(" "))
        .filter((l) => l !== "version"),
    state,
    setState(update) {
      const s = state();
      update(s);
      writeFileSync(statePath, JSON.stringify(s, null, 2));
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
