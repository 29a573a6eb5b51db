/**
 * The provisioner of docker and azure stacks: Pulumi's Automation API (`@pulumi/pulumi/automation`) on this
 * project's Pulumi.yaml (repo root, `stackConfigDir: stacks`, program infra/index.ts).
 *
 * Each operation is one `pulumi` child process, issued by the SDK (@pulumi/pulumi 3.248.0, automation/*.js), always
 * with `--non-interactive` appended:
 *
 * | operation            | command line |
 * |----------------------|--------------|
 * | open (select/create) | `pulumi stack select --stack S`; on "no stack named 'S' found": `pulumi stack init S` |
 * | up                   | `pulumi up --yes --skip-preview --exec-kind auto.local --config-file <tmp>/Pulumi.S.yaml --stack S`, then outputs and `stack history --json --show-secrets --page-size 1 --page 1` |
 * | outputs              | `pulumi stack output --json --stack S` and the same with `--show-secrets` |
 * | refresh              | `pulumi refresh --skip-preview --yes --exec-kind auto.local --stack S`, then the history entry |
 * | destroy              | `pulumi destroy --yes --skip-preview --exec-kind auto.local --stack S`, then the history entry |
 * | cancel (stale lock)  | `pulumi cancel --yes --stack S` |
 *
 * Per-cell config never goes into stacks/Pulumi.<S>.yaml, the user's tracked stack file: `up` writes a copy of that
 * file with the cell's keys added (`ingestbench:components.<host>`, `ingestbench:cell`; its `secure:` values and
 * encryption salt copied as they are) into a temporary directory, mode 0600, and passes it with `--config-file`
 * (the Automation API's `configFile`, automation/stack.js), so the CLI reads (and writes) that copy only. The copy
 * is removed after the update; a SIGKILLed run leaves only that temp dir (`ib-pulumi-config-<pid>-*`, removed by
 * `ingestbench gc`), never a modified stack file.
 *
 * Aborting the signal given to up/refresh makes the SDK send SIGINT to the CLI, which cancels the update
 * gracefully (https://www.pulumi.com/docs/iac/cli/commands/pulumi_cancel/ for locks left by a killed CLI).
 * withPulumiStack guarantees `destroy` after success, error and abort, like withLocalStack on the local platform.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ConfigMap, LocalWorkspace, Stack } from "@pulumi/pulumi/automation/index.js";
import { automation, automationIfLoaded } from "./automation.ts";
import type { StackOutputs } from "../../core/outputs.ts";
import type { StackSpec } from "../../core/limits.ts";
import { parseDocument } from "yaml";
import { stackFile } from "../../infra/stack/schema.ts";
import { writeSecretFile } from "../../core/secrets.ts";
import type { EventField } from "../../core/events/types.ts";
import { collectorHosts } from "../runner/versions.ts";
import { allowFromConfig } from "../runner/pair-check.ts";
import { ConfigurationError, IngestbenchError, ProvisioningError } from "../../core/errors.ts";
import { parseStackOutputs, type OutputMap } from "./outputs.ts";
import { pulumiCommand } from "./pulumi-cli.ts";

/** Options of PulumiProvisioner.open. */
export interface ProvisionerOptions {
  /** directory holding Pulumi.yaml (the repo root) */
  projectDir: string;
  /** environment the `pulumi` CLI is looked up in (PATH) and run with; default process.env */
  env?: NodeJS.ProcessEnv;
  /** the CLI's progress output (stdout and stderr text as it comes), e.g. to the terminal; default: dropped */
  onOutput?: (text: string) => void;
}

/** The components a cell deploys: host name → catalog component (sink, collector). */
export interface CellComponents {
  sink: string;
  collector: string | null;
}

/** A scenario cell as a stack needs it: the CellPlan's event fields, collector and sink blocks (validated). */
export interface StackCell {
  fields: readonly EventField[];
  collector: { name: string; config: unknown } | null;
  sink: { name: string; config: unknown };
}

/**
 * A scenario cell's stack config, written into the cell's config file (writeCellConfigFile) with `--path` semantics:
 * - `ingestbench:components.<host>`: the sink on host `sink`, the collector on every collector host (`collector`,
 *   or `collector-1`, `collector-2`, … as harness/runner/versions.ts collectorHosts finds them);
 * - `ingestbench:cell`: `{ event, collector: { <name>: block } | "none", sink: { <name>: block } }` (the schema's
 *   `ingestbench:cell`, infra/stack/schema.ts), as JSON text: one top-level string, which Pulumi hands the program
 *   verbatim and the schema decodes (no YAML or `--path` typing of its leaves);
 * - on an azure stack, `ingestbench:azure.allowFrom` when INGESTBENCH_AZURE_ALLOW_FROM gives the caller's address for
 *   this run (harness/runner/pair-check.ts allowFromConfig; the stack file's other azure keys stay).
 * @throws ConfigurationError E_STACK_HOSTS when the stack lacks the host a component runs on; E_ALLOW_FROM when
 *   INGESTBENCH_AZURE_ALLOW_FROM is not an IPv4 CIDR of /24 or longer
 */
export function cellConfig(stack: StackSpec, cell: StackCell): ConfigMap {
  const hostNames = Object.keys(stack.hosts);
  const missing = (host: string, component: string) =>
    new ConfigurationError(
      "E_STACK_HOSTS",
      `${stack.file}: this scenario runs ${component} on host "${host}"; the stack has ${hostNames.join(", ")}`,
      { field: `config.ingestbench:hosts.${host}` },
    );
  const roles: Array<[string, string]> = [["sink", cell.sink.name]];
  if (!stack.hosts.sink) throw missing("sink", cell.sink.name);
  if (cell.collector !== null) {
    const hosts = collectorHosts(hostNames);
    if (hosts.length === 0) throw missing("collector", cell.collector.name);
    for (const h of hosts) roles.push([h, cell.collector.name]);
  }
  const config: ConfigMap = {};
  for (const [host, component] of roles)
    config[`ingestbench:components.${host}`] = { value: component, secret: false };
  const value = {
    event: cell.fields,
    collector: cell.collector ? { [cell.collector.name]: cell.collector.config } : "none",
    sink: { [cell.sink.name]: cell.sink.config },
  };
  config["ingestbench:cell"] = { value: JSON.stringify(value), secret: false };
  // the caller's address given for this run (INGESTBENCH_AZURE_ALLOW_FROM) is the one the network admits
  return { ...config, ...allowFromConfig(stack) };
}

/**
 * The CLI's own words of a failure: the SDK's CommandError carries the child's stderr (execa's message, whose first
 * line "Command failed with exit code N: <command line>" is dropped here); its last 12 lines.
 */
function cliFailure(err: unknown): string {
  const stderr = (err as { commandResult?: { stderr?: string } }).commandResult?.stderr;
  const text = stderr && stderr.trim().length > 0 ? stderr : err instanceof Error ? err.message : String(err);
  const lines = text
    .split("\n")
    .filter((l) => l.trim().length > 0 && !/^Command failed with exit code/.test(l));
  return lines.slice(-12).join("\n");
}

/**
 * A LocalWorkspace on the project directory with the CLI found on `opts.env.PATH` (version-checked).
 * @throws ProvisioningError E_PULUMI_CLI without a usable CLI (the message says how to install it), E_PULUMI_STACK
 *         when the workspace cannot be read (e.g. no Pulumi.yaml)
 */
export async function openWorkspace(opts: ProvisionerOptions): Promise<LocalWorkspace> {
  const env = opts.env ?? process.env;
  const cmd = await pulumiCommand(env);
  const envVars: Record<string, string> = { PULUMI_SKIP_UPDATE_CHECK: "true" };
  if (env !== process.env) {
    for (const [k, v] of Object.entries(env)) if (v !== undefined) envVars[k] = v;
  }
  try {
    return await (
      await automation()
    ).LocalWorkspace.create({ workDir: opts.projectDir, pulumiCommand: cmd, envVars });
  } catch (err) {
    throw new ProvisioningError(
      "E_PULUMI_STACK",
      `Pulumi project in ${opts.projectDir}: ${cliFailure(err)}`,
      { cause: err },
    );
  }
}

/** One Pulumi stack of this project, selected (or created) and ready for up/outputs/refresh/destroy/cancel. */
export class PulumiProvisioner {
  private constructor(
    readonly name: string,
    private readonly stack: Stack,
    private readonly projectDir: string,
    private readonly onOutput: ((text: string) => void) | undefined,
  ) {}

  /**
   * Select the stack `name` of the project in `opts.projectDir`, creating it when the backend has none.
   * @throws ProvisioningError E_PULUMI_CLI without a usable CLI (the message says how to install it),
   *         E_PULUMI_STACK when the stack can be neither selected nor created (e.g. not logged in to a backend)
   */
  static async open(name: string, opts: ProvisionerOptions): Promise<PulumiProvisioner> {
    return PulumiProvisioner.inWorkspace(await openWorkspace(opts), name, opts, "createOrSelect");
  }

  /**
   * The stack `name` in an open workspace: "select" (it must exist) or "createOrSelect".
   * @throws ProvisioningError E_PULUMI_STACK
   */
  static async inWorkspace(
    ws: LocalWorkspace,
    name: string,
    opts: Pick<ProvisionerOptions, "projectDir" | "onOutput">,
    how: "select" | "createOrSelect",
  ): Promise<PulumiProvisioner> {
    let stack: Stack;
    try {
      const { Stack } = await automation();
      stack = how === "select" ? await Stack.select(name, ws) : await Stack.createOrSelect(name, ws);
    } catch (err) {
      throw new ProvisioningError(
        "E_PULUMI_STACK",
        `stack ${name}: cannot ${how === "select" ? "select" : "select or create"} it: ${cliFailure(err)}`,
        { cause: err },
      );
    }
    return new PulumiProvisioner(name, stack, opts.projectDir, opts.onOutput);
  }

  /** The stack's file in the project's stackConfigDir (stacks/Pulumi.<name>.yaml). */
  get stackFile(): string {
    return stackFile(this.name, path.join(this.projectDir, "stacks"));
  }

  /**
   * Deploy (create or update) the stack, optionally with a cell's config (through a temporary `--config-file`, see
   * writeCellConfigFile: the tracked stack file is never written), and return its outputs checked against the
   * contract.
   * @throws ProvisioningError E_PULUMI_UP (the CLI's last lines), E_INTERRUPTED when `signal` aborted it,
   *         E_STACK_OUTPUTS when the outputs break the contract
   */
  async up(opts: { config?: ConfigMap; signal?: AbortSignal } = {}): Promise<StackOutputs> {
    const { config, signal } = opts;
    if (signal?.aborted) throw interrupted(signal);
    const withCell =
      config && Object.keys(config).length > 0
        ? writeCellConfigFile(this.name, readText(this.stackFile), config)
        : undefined;
    let outputs: OutputMap;
    try {
      const onOutput = this.onOutput;
      // UpResult.outputs: the SDK reads them right after the update (`stack output --json [--show-secrets]`)
      outputs = (
        await this.stack.up({
          ...(withCell ? { configFile: withCell.file } : {}),
          ...(onOutput ? { onOutput, onError: onOutput } : {}),
          ...(signal ? { signal } : {}),
        })
      ).outputs;
    } catch (err) {
      if (signal?.aborted) throw interrupted(signal, err);
      throw new ProvisioningError(
        "E_PULUMI_UP",
        `stack ${this.name}: pulumi up failed:\n${cliFailure(err)}`,
        { cause: err },
      );
    } finally {
      if (withCell) rmSync(withCell.dir, { recursive: true, force: true });
    }
    return parseStackOutputs(this.name, outputs);
  }

  /**
   * The deployed stack's outputs, checked against core/outputs.ts.
   * @throws ProvisioningError E_PULUMI_OUTPUTS (CLI failure), E_NOT_DEPLOYED (no outputs: never deployed or destroyed),
   *         E_STACK_OUTPUTS (contract)
   */
  async outputs(): Promise<StackOutputs> {
    let map;
    try {
      map = await this.stack.outputs();
    } catch (err) {
      throw new ProvisioningError(
        "E_PULUMI_OUTPUTS",
        `stack ${this.name}: reading outputs failed:\n${cliFailure(err)}`,
        { cause: err },
      );
    }
    if (Object.keys(map).length === 0) {
      throw new ProvisioningError(
        "E_NOT_DEPLOYED",
        `stack ${this.name} has no outputs: it is not deployed; run \`ingestbench up --stack ${this.name}\` first`,
      );
    }
    return parseStackOutputs(this.name, map);
  }

  /**
   * Read the real state of the stack's resources back into its state (`pulumi refresh`), e.g. after an engine
   * restart or a VM stopped by its auto-shutdown schedule.
   * @throws ProvisioningError E_PULUMI_REFRESH
   */
  async refresh(signal?: AbortSignal): Promise<void> {
    try {
      await this.stack.refresh({
        ...(this.onOutput ? { onOutput: this.onOutput, onError: this.onOutput } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw interrupted(signal, err);
      throw new ProvisioningError(
        "E_PULUMI_REFRESH",
        `stack ${this.name}: pulumi refresh failed:\n${cliFailure(err)}`,
        { cause: err },
      );
    }
  }

  /**
   * Delete every resource of the stack (`pulumi destroy`); the stack itself (its history) is kept. With
   * `cancelStaleLock`, a stack locked by an update that is no longer running (a killed CLI) is unlocked with
   * `pulumi cancel` and the destroy retried once. Never takes a signal: a teardown is not interruptible.
   * @throws ProvisioningError E_PULUMI_LOCKED (locked, without cancelStaleLock), E_PULUMI_DESTROY
   */
  async destroy(opts: { cancelStaleLock?: boolean } = {}): Promise<void> {
    const run = () =>
      this.stack.destroy(this.onOutput ? { onOutput: this.onOutput, onError: this.onOutput } : {});
    try {
      await run();
      return;
    } catch (err) {
      if (!(err instanceof (await automation()).ConcurrentUpdateError)) {
        throw new ProvisioningError(
          "E_PULUMI_DESTROY",
          `stack ${this.name}: pulumi destroy failed:\n${cliFailure(err)}`,
          { cause: err },
        );
      }
      if (!opts.cancelStaleLock) {
        throw new ProvisioningError(
          "E_PULUMI_LOCKED",
          `stack ${this.name} is locked by another update; if no update is running (a killed run), \`ingestbench down --stack ${this.name} --cancel\` unlocks it (pulumi cancel) and destroys it:\n${cliFailure(err)}`,
          { cause: err },
        );
      }
    }
    await this.cancel();
    try {
      await run();
    } catch (err) {
      throw new ProvisioningError(
        "E_PULUMI_DESTROY",
        `stack ${this.name}: pulumi destroy failed after pulumi cancel:\n${cliFailure(err)}`,
        { cause: err },
      );
    }
  }

  /**
   * Cancel the stack's running update and release its lock (`pulumi cancel --yes`). Only for locks whose update is
   * gone: it also stops an update another process is running.
   * @throws ProvisioningError E_PULUMI_CANCEL
   */
  async cancel(): Promise<void> {
    try {
      await this.stack.cancel();
    } catch (err) {
      throw new ProvisioningError(
        "E_PULUMI_CANCEL",
        `stack ${this.name}: pulumi cancel failed:\n${cliFailure(err)}`,
        { cause: err },
      );
    }
  }
}

/** Prefix of the temporary directories holding a cell's config file (`ingestbench gc` removes those a killed run left). */
export const CELL_CONFIG_DIR_PREFIX = "ib-pulumi-config-";

/**
 * The config file of one cell: the stack file's text (`original`; none: an empty `config:`) with `config` added, as
 * `pulumi config set --path` would (a key `ns:top.sub` sets `sub` inside the map `ns:top`; the cell's keys replace
 * the file's map `ns:top` as a whole), written with mode 0600 as
 * `<tmp>/ib-pulumi-config-<pid>-XXXXXX/Pulumi.<stack>.yaml` (`ingestbench gc` removes those of dead processes). Everything else in the file (comments, `secure:` values,
 * `encryptionsalt`, `secretsprovider`) is kept, so that the stack's secrets still decrypt.
 * @throws ProvisioningError E_PULUMI_CONFIG for a secret value in `config` (it would be written in plain text)
 */
export function writeCellConfigFile(
  stack: string,
  original: string | undefined,
  config: ConfigMap,
): { dir: string; file: string } {
  const doc = parseDocument(original ?? "config: {}\n");
  if (!doc.has("config") || doc.get("config") === null) doc.set("config", doc.createNode({}));
  const replaced = new Set<string>();
  for (const [key, { value, secret }] of Object.entries(config)) {
    if (secret)
      throw new ProvisioningError(
        "E_PULUMI_CONFIG",
        `stack ${stack}: ${key} is a secret; per-cell config carries none (secrets: \`pulumi config set --secret\`, docs/design.md "Secrets")`,
      );
    const colon = key.indexOf(":");
    const [top, ...rest] = key.slice(colon + 1).split(".");
    const name = `${key.slice(0, colon + 1)}${top}`;
    // the cell's components replace the file's (a cell without a collector must not inherit the file's collector
    // host); other maps keep the file's keys (`ingestbench:azure.allowFrom` replaces allowFrom only)
    if (rest.length > 0 && name === "ingestbench:components" && !replaced.has(name)) {
      doc.setIn(["config", name], doc.createNode({}));
      replaced.add(name);
    }
    doc.setIn(["config", name, ...rest], value);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), `${CELL_CONFIG_DIR_PREFIX}${process.pid}-`));
  const file = path.join(dir, `Pulumi.${stack}.yaml`);
  writeSecretFile(file, doc.toString({ lineWidth: 0 }));
  return { dir, file };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function interrupted(signal: AbortSignal, cause?: unknown): IngestbenchError {
  return new IngestbenchError(
    "E_INTERRUPTED",
    `interrupted (${String(signal.reason ?? "signal")}); the stack is being destroyed`,
    { cause },
  );
}

/** True for the SDK's "no stack named 'S' found". */
export function isStackNotFound(err: unknown): boolean {
  // before the SDK is loaded no stack operation ran, so nothing can be its StackNotFoundError
  const sdk = automationIfLoaded();
  return sdk !== undefined && err instanceof sdk.StackNotFoundError;
}

/**
 * Deploy a stack with a cell's config, run `fn` on its outputs, and destroy it whatever happens: after success,
 * after an error of up or fn, and after `signal` aborted (Ctrl-C). An up interrupted by us may leave the stack
 * locked; its teardown cancels that lock (it is ours). When fn (or up) failed and the teardown fails too, the
 * teardown error goes to stderr and the first error is rethrown.
 */
export async function withPulumiStack<T>(
  provisioner: PulumiProvisioner,
  opts: { config?: ConfigMap; signal?: AbortSignal },
  fn: (outputs: StackOutputs) => Promise<T>,
): Promise<T> {
  let failed = false;
  try {
    const outputs = await provisioner.up(opts);
    return await fn(outputs);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    try {
      await provisioner.destroy({ cancelStaleLock: Boolean(opts.signal?.aborted) });
    } catch (err) {
      if (!failed) throw err;
      process.stderr.write(
        `ingestbench: destroying stack ${provisioner.name} failed: ${(err as Error).message}\n`,
      );
    }
  }
}
