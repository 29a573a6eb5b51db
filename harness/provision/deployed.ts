/**
 * Docker and azure stacks, deployed with Pulumi's Automation API (./provisioner.ts), as the CLI's commands use them
 * (harness/cli/commands/up.ts, run.ts, down.ts, bench.ts):
 *
 *   deployStack        `ingestbench up --stack S [--scenario F [--cell C]]`: deploy S; it stays up
 *   pulumiStacks       `ingestbench run --stack S SCENARIO` (with `keep`): run on S, which stays up afterwards;
 *                      `ingestbench bench --stack S SCENARIO`: up → run → down, destroyed on success, error and Ctrl-C
 *   destroyStack       `ingestbench down --stack S [--cancel]`: destroy S (--cancel: first release a stale lock)
 *
 * (`ingestbench gc` collects Pulumi stacks past their expiry with ./gc.ts.)
 *
 * Each cell runs as a BenchRun on the deployed stack (harness/remote/site.ts): generators inside the loadgen host's
 * container (docker exec on docker, SSH + docker exec on azure), the verifier from this machine against the sink's
 * published port (docker) or VM address (azure), observers reading each container's cgroup counters. A cell whose
 * components or settings differ from what is deployed is re-deployed in place first (`pulumi up` with the cell's
 * `ingestbench:cell` config).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { StackOutputs } from "../../core/outputs.ts";
import type { StackSpec } from "../../core/limits.ts";
import { loadPulumiStack, loadStack } from "../../infra/stack/schema.ts";
import { ConfigurationError, ProvisioningError } from "../../core/errors.ts";
import { registerDeployment, type DeploymentHandle } from "./deployments.ts";
import { RemoteSite } from "../remote/site.ts";
import { requireShellClient, shellsFor, type ShellSource } from "../remote/hosts.ts";
import { requirePulumiCli } from "./pulumi-cli.ts";
import type { LockWait, RunRecord } from "../results/types.ts";
import { driveRuns, lockStacks, type DeployedStacks, type DriveResult } from "../runner/drive.ts";
import { loadScenarioFile, planCells } from "../runner/plan.ts";
import { Progress } from "../runner/progress.ts";
import type { CellPlan } from "../runner/cell-plan.ts";
import { BenchRun } from "../runner/run.ts";
import { cellConfig, openWorkspace, PulumiProvisioner, withPulumiStack } from "./provisioner.ts";
import { cellImages, requireImages } from "./images.ts";
import { requireSinkPasswords } from "./passwords.ts";
import { resolveImage, type ResolvedImage } from "../../infra/docker/images.ts";
import { checkSteps } from "../runner/step-checks.ts";
import { hostRoles } from "../runner/site.ts";
import { allowFromConfig, errorOf, placeholderFindings, platformFindings } from "../runner/pair-check.ts";

const defaultProjectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** What a CellRunner gets: the deployed stack and its outputs, the cell, and where to report. */
export interface CellRunContext {
  stack: StackSpec;
  plan: CellPlan;
  outputs: StackOutputs;
  signal: AbortSignal;
  resultsRoot: string;
  invocation: string;
  projectRoot: string;
  /** the invocation's progress display: the runner reports cellStart and samples; the caller reports cellEnd */
  progress: Progress;
  /** the deployment's registry (./deployments.ts) when it goes away with this process: each run's run.json is added */
  deployment?: DeploymentHandle;
  /** the invocation's wait for the stack's lock, given to the first run on it (RunRecord.lockWait) */
  lockWait?: LockWait;
}

/** Runs one cell's load on a deployed stack and returns its record (generators on the loadgen host, verifiers on the sink). */
export type CellRunner = (ctx: CellRunContext) => Promise<RunRecord>;

/**
 * The CellRunner of deployed stacks: a BenchRun on a RemoteSite whose shells come from `source` (the CLIs'
 * environment; on azure the VMs' admin user from the stack file's `ingestbench:azure.adminUsername`).
 */
export function deployedCellRunner(source: ShellSource = {}): CellRunner {
  return async (ctx) => {
    const adminUsername =
      ctx.stack.platform === "azure"
        ? loadPulumiStack(ctx.stack.file).platform.azure?.adminUsername
        : undefined;
    const shell = shellsFor(ctx.outputs, { ...source, ...(adminUsername ? { adminUsername } : {}) });
    // the stack's shaper image (tc, ss) for fault steps on docker (harness/remote/docker-steps.ts)
    const shaperImage =
      ctx.stack.platform === "docker"
        ? resolveImage(
            "shaper",
            loadPulumiStack(ctx.stack.file).platform.docker.images ?? "upstream",
            undefined,
          ).ref
        : undefined;
    const run = new BenchRun({
      stack: ctx.stack,
      plan: ctx.plan,
      resultsRoot: ctx.resultsRoot,
      invocation: ctx.invocation,
      signal: ctx.signal,
      projectRoot: ctx.projectRoot,
      lockWait: ctx.lockWait,
      site: (c) => {
        ctx.deployment?.addRecord(path.join(c.dir, "run.json"));
        return new RemoteSite({
          stack: ctx.stack,
          plan: ctx.plan,
          outputs: ctx.outputs,
          shell,
          ...(shaperImage ? { shaperImage } : {}),
        });
      },
    });
    const loadgen = ctx.outputs.hosts.loadgen;
    ctx.progress.cellStart(
      run.runId,
      `on ${ctx.stack.platform} stack ${ctx.stack.name}${loadgen ? `, generators in ${loadgen.container}` : ""}`,
    );
    ctx.progress.follow(run);
    return run.run();
  };
}

/** Load a stack and require a Pulumi platform. @throws ConfigurationError E_PLATFORM for local stacks */
export function loadDeployableStack(name: string, projectRoot = defaultProjectRoot): StackSpec {
  const stack = loadStack(name, path.join(projectRoot, "stacks"));
  if (stack.platform === "local") {
    throw new ConfigurationError(
      "E_PLATFORM",
      `stack ${stack.name} is a local stack: it is provisioned per run, not deployed; use \`ingestbench bench --stack ${stack.name} <scenario>\``,
      { location: stack.file, field: "config.ingestbench:platform" },
    );
  }
  return stack;
}

/** Options of pulumiStacks. */
export interface PulumiStacksOptions {
  projectRoot?: string;
  /** no Pulumi progress output */
  quiet?: boolean;
  /** where the `pulumi`, `docker` and `ssh` CLIs are found and what they run with; default process.env */
  env?: NodeJS.ProcessEnv;
  /** runs each cell (default: deployedCellRunner with `env`) */
  runCell?: CellRunner;
  /**
   * `ingestbench run`: the stack is up already and stays up — it is selected, not created, re-deployed in place
   * when a cell needs other components or settings, and never destroyed
   */
  keep?: boolean;
}

/**
 * How the driver (harness/runner/drive.ts) runs docker and azure stacks: per group of consecutive runs on one
 * stack, deploy it with the first cell's components, run every cell (re-deploying in place when a cell needs other
 * components or settings, e.g. another chunk_limit_records), and destroy it after success, error and Ctrl-C (with
 * `keep`: select a stack that is up and leave it up). An interrupted group returns the runs made so far.
 * `check` refuses a local stack, and a cell needing hosts the stack lacks, before anything runs.
 * @throws (run) ProvisioningError when deploying fails (after the destroy)
 */
export function pulumiStacks(opts: PulumiStacksOptions = {}): DeployedStacks {
  const projectRoot = opts.projectRoot ?? defaultProjectRoot;
  const runCell = opts.runCell ?? deployedCellRunner(opts.env ? { env: opts.env } : {});
  const images = new Map<string, ResolvedImage[]>();
  /** stack → the components its cells run (check), for ready's password check */
  const componentsOf = new Map<string, string[]>();
  return {
    check(stack, plans) {
      if (stack.platform === "local")
        throw new ConfigurationError(
          "E_PLATFORM",
          `stack ${stack.name}: a local stack is provisioned per run, not deployed with Pulumi`,
        );
      // what the platform runs (images, steps, generator: none) and the pins against the images are the pair check's
      // (harness/runner/pair-check.ts), which calls this for what only a deployment knows: hosts, steps' targets
      const unsupported = plans.flatMap((p) => platformFindings(stack, p))[0];
      if (unsupported) throw errorOf(unsupported);
      const components: string[] = [];
      for (const plan of plans) {
        const config = cellConfig(stack, plan);
        for (const [k, v] of Object.entries(config))
          if (k.startsWith("ingestbench:components.")) components.push(v.value);
      }
      componentsOf.set(stack.name, components);
      for (const p of plans)
        if (p.steps?.length) checkSteps(stack, hostRoles(Object.keys(stack.hosts), p), p);
      // the images the cells run (a version without a Debian-built image is refused here, exit 2)
      if (stack.platform === "docker") images.set(stack.name, cellImages(loadPulumiStack(stack.file), plans));
    },
    ready(stack) {
      // the CLIs a deployment and its runs need, before anything is deployed (and paid for)
      const env = opts.env ?? process.env;
      requirePulumiCli(env);
      if (!opts.runCell) requireShellClient(stack.platform, env);
      // Debian-built images come from no registry: the engine must have them (./images.ts)
      if (stack.platform === "docker") requireImages(stack.name, images.get(stack.name) ?? [], env);
      // sink passwords have no default: refused before anything is deployed (./passwords.ts)
      requireSinkPasswords(stack.name, componentsOf.get(stack.name) ?? [], env);
    },
    async run({ stack, items, signal, progress, resultsRoot, invocation, lockWait }) {
      const records: RunRecord[] = [];
      const configs = items.map(({ plan }) => cellConfig(stack, plan));
      const log = opts.quiet ? undefined : (t: string) => void process.stderr.write(t);
      const popts = {
        projectDir: projectRoot,
        ...(opts.env ? { env: opts.env } : {}),
        ...(log ? { onOutput: log } : {}),
      };
      // a cell whose stack config differs (components or blocks) is re-deployed
      const key = (i: number) => JSON.stringify(configs[i]);
      let deployed = key(0);
      const cells = async (first: StackOutputs): Promise<void> => {
        let outputs = first;
        for (const [i, item] of items.entries()) {
          if (signal.aborted) break;
          if (key(i) !== deployed) {
            outputs = await provisioner.up({ config: configs[i]!, signal });
            deployed = key(i);
          }
          const record = await runCell({
            stack,
            plan: item.plan,
            outputs,
            signal,
            resultsRoot,
            invocation: item.invocation ?? invocation,
            projectRoot,
            progress,
            ...(deployment ? { deployment } : {}),
            ...(i === 0 && lockWait ? { lockWait } : {}),
          });
          progress.runEnded(record, resultsRoot);
          records.push(record);
        }
      };
      // a stack destroyed at the end belongs to this process until then: `ingestbench gc` removes it if we are killed
      const deployment = opts.keep
        ? undefined
        : registerDeployment(stack.name, stack.platform, "bench", opts.env);
      let provisioner: PulumiProvisioner;
      try {
        provisioner = opts.keep
          ? await PulumiProvisioner.inWorkspace(await openWorkspace(popts), stack.name, popts, "select")
          : await PulumiProvisioner.open(stack.name, popts);
      } catch (err) {
        await deployment?.release();
        throw err;
      }
      let destroyed = false;
      try {
        if (opts.keep) {
          await provisioner.outputs(); // a stack that is not up is refused ("run `ingestbench up` first"), not deployed here
          await cells(await provisioner.up({ config: configs[0]!, signal }));
        } else {
          await withPulumiStack(provisioner, { config: configs[0]!, signal }, cells);
          destroyed = true;
        }
      } catch (err) {
        // withPulumiStack destroyed the stack unless the destroy itself failed (then the registry stays for gc)
        destroyed = !(err instanceof ProvisioningError && /^E_PULUMI_(DESTROY|LOCKED)$/.test(err.code));
        if (!signal.aborted) throw err;
      } finally {
        if (destroyed) await deployment?.release();
      }
      return records;
    },
  };
}

/** Options of benchOnPulumiStack. */
export interface PulumiBenchOptions extends PulumiStacksOptions {
  /** a docker or azure stack */
  stack: StackSpec;
  plans: CellPlan[];
  resultsRoot: string;
  invocation: string;
  /** aborts the bench (besides SIGINT/SIGTERM of this process) */
  signal?: AbortSignal;
  /** the progress display (default: auto, or quiet with `quiet`) */
  reporter?: Progress;
  /** how long to wait for the stack when another run holds it, ms (harness/runner/drive.ts lockWaitMs) */
  lockWaitMs?: number;
}

/**
 * `ingestbench bench` (or, with `keep`, `run`) of one docker or azure stack: driveRuns with pulumiStacks. Returns
 * what driveRuns returns, for runsExitCode.
 * @throws ConfigurationError for a local stack or a cell needing hosts the stack lacks; ProvisioningError when
 *         deploying fails (after the destroy) or the deployed stack's outputs do not serve the cell
 */
export async function benchOnPulumiStack(opts: PulumiBenchOptions): Promise<DriveResult> {
  const { stack, plans } = opts;
  if (stack.platform === "local")
    throw new ConfigurationError(
      "E_PLATFORM",
      `stack ${stack.name}: benchOnPulumiStack is for docker and azure stacks`,
    );
  const projectRoot = opts.projectRoot ?? defaultProjectRoot;
  return driveRuns([{ stack, plans }], {
    resultsRoot: opts.resultsRoot,
    invocation: opts.invocation,
    projectRoot,
    reporter: opts.reporter ?? new Progress(opts.quiet ? "quiet" : undefined),
    deployed: pulumiStacks({ ...opts, projectRoot }),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {}),
  });
}

/** Pick one cell of a scenario for `up --scenario`: by id, else the first. @throws ConfigurationError E_CELL */
export function pickCell(plans: CellPlan[], file: string, cell: string | undefined): CellPlan {
  const found = cell === undefined ? plans[0] : plans.find((p) => p.cell === cell);
  if (!found) {
    const cells = [...new Set(plans.map((p) => p.cell))];
    throw new ConfigurationError("E_CELL", `${file}: no cell "${cell}"; cells: ${cells.join(", ")}`, {
      location: file,
    });
  }
  return found;
}

/** A deployed stack's outputs in short, as `up` prints them: hosts with their applied limits, endpoints. */
export function describeOutputs(o: StackOutputs): string {
  const lines = [`stack ${o.stack} (${o.platform}) is up`];
  for (const [name, h] of Object.entries(o.hosts)) {
    lines.push(
      `  ${name}: ${h.component} ${h.image} at ${h.address}; applied ${JSON.stringify(h.limits.applied)}${h.limits.enforced ? "" : `; NOT enforced: ${h.limits.notes.join("; ")}`}`,
    );
  }
  for (const [component, eps] of Object.entries(o.endpoints)) {
    for (const ep of eps) {
      const pub = ep.published
        .filter((p) => p.external !== null)
        .map((p) => `${p.internal}→${p.ip}:${p.external}`)
        .join(", ");
      lines.push(
        `  ${component} on ${ep.host}: data ${ep.data ? `${ep.data.host}:${ep.data.port}` : "–"}${ep.metrics ? `, metrics ${ep.metrics.host}:${ep.metrics.port}` : ""}${pub ? `, published ${pub}` : ""}`,
      );
    }
  }
  return lines.join("\n");
}

/** Options of deployStack (`ingestbench up`). */
export interface DeployOptions {
  /** a docker or azure stack name (stacks/Pulumi.<name>.yaml) */
  stack: string;
  projectRoot?: string;
  /** deploy the components of this scenario file's cell (`cell`, else the first) */
  scenario?: string;
  cell?: string;
  /** aborts the deployment (the caller's SIGINT/SIGTERM handling) */
  signal: AbortSignal;
  /** Pulumi's progress output (default: none) */
  onOutput?: (text: string) => void;
  /** where the notice of a failed deployment goes (default: stderr) */
  notice?: (text: string) => void;
  /** how long to wait for the stack's lock when another run, `up` or `down` holds it, ms (default 0: refuse) */
  lockWaitMs?: number;
}

/**
 * Run `fn` holding the stack lock of `stack` (harness/runner/stack-lock.ts, as `bench` takes it in
 * harness/runner/drive.ts lockStacks), so that `up` and `down` never deploy or destroy a stack under a running
 * bench, or under each other: waited for up to `waitMs`, saying whom it waits for, then refused. Released however
 * `fn` ends; a stale lock of a dead process is taken over. `signal` (Ctrl-C) ends the wait at once.
 * @throws ProvisioningError E_STACK_LOCKED naming the holder's pid, command and start time; E_INTERRUPTED when
 *         `signal` ended the wait (nothing deployed or destroyed, no lock held)
 */
async function withDeployLock<T>(
  stack: string,
  command: "up" | "down",
  waitMs: number,
  notice: (text: string) => void,
  fn: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const locks = await lockStacks(
    [stack],
    command,
    { notice: (t) => notice(`ingestbench: ${t}\n`) },
    waitMs,
    signal,
  );
  if (!locks)
    throw new ProvisioningError(
      "E_INTERRUPTED",
      `interrupted while waiting for the lock of stack ${stack}: nothing was ${command === "up" ? "deployed" : "destroyed"}`,
    );
  const [lock] = locks;
  try {
    return await fn();
  } finally {
    lock!.release();
  }
}

/**
 * `ingestbench up`: deploy a docker or azure stack (with a scenario cell's components) and leave it up; a failed or
 * interrupted deployment destroys what was created. Returns the stack's outputs. Holds the stack's lock while it
 * deploys (withDeployLock).
 * @throws ConfigurationError for a local stack or an unknown cell; ProvisioningError when deploying fails, and
 *         E_STACK_LOCKED while another process (a bench, `up` or `down`) holds the stack past `lockWaitMs`
 */
export async function deployStack(opts: DeployOptions): Promise<StackOutputs> {
  const projectRoot = opts.projectRoot ?? defaultProjectRoot;
  const stack = loadDeployableStack(opts.stack, projectRoot);
  let config: ReturnType<typeof cellConfig> | undefined;
  if (opts.scenario) {
    const plan = pickCell(
      planCells(loadScenarioFile(opts.scenario), opts.scenario),
      opts.scenario,
      opts.cell,
    );
    config = cellConfig(stack, plan);
  } else if (Object.keys(allowFromConfig(stack)).length > 0) config = allowFromConfig(stack);
  // a placeholder left in the stack (azure's documentation allowFrom) is refused before anything is deployed
  const placeholder = placeholderFindings(stack)[0];
  if (placeholder) throw errorOf(placeholder);
  const notice = opts.notice ?? ((t: string) => void process.stderr.write(t));
  return withDeployLock(
    stack.name,
    "up",
    opts.lockWaitMs ?? 0,
    notice,
    async () => {
      // until the deployment succeeds it is this process's (gc removes it if we are killed); then the user's
      const deployment = registerDeployment(stack.name, stack.platform, "up");
      try {
        const p = await PulumiProvisioner.open(stack.name, {
          projectDir: projectRoot,
          ...(opts.onOutput ? { onOutput: opts.onOutput } : {}),
        });
        try {
          return await p.up({ ...(config ? { config } : {}), signal: opts.signal });
        } catch (err) {
          notice(`ingestbench: deploying ${stack.name} failed; destroying what was created\n`);
          await p.destroy({ cancelStaleLock: opts.signal.aborted });
          throw err;
        }
      } finally {
        await deployment.release();
      }
    },
    opts.signal,
  );
}

/**
 * `ingestbench down`: destroy a docker or azure stack's resources (pulumi destroy); `cancelStaleLock` first
 * releases a lock left by a killed update. Returns the stack's name. Holds the stack's lock while it destroys
 * (withDeployLock).
 * @throws ConfigurationError for a local stack; ProvisioningError when destroying fails, and E_STACK_LOCKED while
 *         another process (a bench, `up` or `down`) holds the stack past `lockWaitMs`
 */
export async function destroyStack(opts: {
  stack: string;
  projectRoot?: string;
  cancelStaleLock?: boolean;
  onOutput?: (text: string) => void;
  /** how long to wait for the stack's lock (a bench or `up` on it), ms (default 0: refuse) */
  lockWaitMs?: number;
  /** where the lock's waiting notice goes (default: stderr) */
  notice?: (text: string) => void;
}): Promise<string> {
  const projectRoot = opts.projectRoot ?? defaultProjectRoot;
  const stack = loadDeployableStack(opts.stack, projectRoot);
  return withDeployLock(
    stack.name,
    "down",
    opts.lockWaitMs ?? 0,
    opts.notice ?? ((t) => void process.stderr.write(t)),
    async () => {
      const ws = await openWorkspace({ projectDir: projectRoot });
      const p = await PulumiProvisioner.inWorkspace(
        ws,
        stack.name,
        { projectDir: projectRoot, ...(opts.onOutput ? { onOutput: opts.onOutput } : {}) },
        "select",
      );
      await p.destroy({ cancelStaleLock: Boolean(opts.cancelStaleLock) });
      return stack.name;
    },
  );
}
