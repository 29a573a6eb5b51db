/**
 * Driving BenchRuns for a command: provision each stack, run each planned cell, report progress (progress.ts) and a
 * description of every run, stop cleanly on SIGINT/SIGTERM. Shared by `ingestbench bench`, `run`, `nightly` and `aa`.
 * Local stacks are provisioned per run here; docker and azure stacks are deployed once for their consecutive runs
 * by the `deployed` hook (harness/provision/deployed.ts pulumiStacks), so one invocation may mix both.
 */
import path from "node:path";
import type { StackSpec } from "../../core/limits.ts";
import { listStacks, loadStack } from "../../infra/stack/schema.ts";
import { displayPath } from "../../core/yaml.ts";
import { ConfigurationError, IngestbenchError, ProvisioningError } from "../../core/errors.ts";
import { parseRunDuration } from "../../core/units.ts";
import type { LockWait, RunRecord } from "../results/types.ts";
import { prepareResultsDir } from "../results/preflight.ts";
import { Progress, type ProgressMode } from "./progress.ts";
import { checkLocalPrivileges } from "./local-site.ts";
import { checkPair, pairFindings, type PairFinding } from "./pair-check.ts";
import { acceptingHintText, pairRefusalText, type Taker } from "../../ui/pair-check.ts";
import type { CellPlan } from "./cell-plan.ts";
import { BenchRun } from "./run.ts";
import { hostRoles } from "./site.ts";
import { acquireStackLock, describeHolder, StackLockedError, type StackLock } from "./stack-lock.ts";

/** Exit code per error kind recorded in run.json (see errors.ts). */
export const EXIT_BY_KIND: Record<string, number> = {
  configuration: 2,
  provisioning: 3,
  verification: 4,
  run: 3,
};

/** One unit of work: a stack and the cells planned for it. */
export interface StackWork {
  stack: StackSpec;
  plans: CellPlan[];
}

/** One run to make: a stack, a planned cell, and optionally its own invocation and group (A/A). */
export interface RunItem {
  stack: StackSpec;
  plan: CellPlan;
  /** the invocation this run belongs to (default: DriveOptions.invocation) */
  invocation?: string;
  /** a label shown in progress, e.g. "A" or "B" in an A/A invocation */
  group?: string;
}

/**
 * How docker and azure stacks run (harness/provision/deployed.ts pulumiStacks): `check` before anything starts,
 * `run` for consecutive items of one stack (deploy, run each, destroy), reporting each run through `progress`
 * (cellStart/sample/cellEnd) and returning the records made, also when `signal` aborts.
 */
export interface DeployedStacks {
  /** @throws ConfigurationError when a cell cannot run on the stack */
  check(stack: StackSpec, plans: readonly CellPlan[]): void;
  /** after every configuration check passed: the tools this stack's runs need are here (CLIs). @throws ProvisioningError */
  ready?(stack: StackSpec): void;
  /** `lockWait`: the invocation's wait for the stack's lock, for the first run's record (RunRecord.lockWait) */
  run(args: {
    stack: StackSpec;
    items: RunItem[];
    signal: AbortSignal;
    progress: Progress;
    resultsRoot: string;
    invocation: string;
    projectRoot: string;
    lockWait?: LockWait;
  }): Promise<RunRecord[]>;
}

export interface DriveOptions {
  resultsRoot: string;
  /** invocation timestamp shared by every run (ISO) */
  invocation: string;
  projectRoot: string;
  /** the progress display to report to (made from `progress` when absent) */
  reporter?: Progress;
  /** progress mode when no reporter is given (default auto) */
  progress?: ProgressMode;
  /** runs docker and azure stacks; without it they are refused (E_PLATFORM) */
  deployed?: DeployedStacks;
  /** aborts the runs too (besides SIGINT/SIGTERM of this process) */
  signal?: AbortSignal;
  /** the command named in the stacks' locks (./stack-lock.ts); default: the CLI's command word */
  command?: string;
  /** how long to wait for a stack another run holds, ms (default: lockWaitMs(), i.e. INGESTBENCH_LOCK_WAIT or 0) */
  lockWaitMs?: number;
}

/** The CLI's command word of this process (`bench` of `ingestbench --debug bench …`), for lock holders. */
function commandWord(): string {
  return process.argv.slice(2).find((a) => !a.startsWith("-")) ?? "bench";
}

/** The environment variable giving the default of DriveOptions.lockWaitMs, a duration ("10m"; default 0: refuse). */
export const LOCK_WAIT_ENV = "INGESTBENCH_LOCK_WAIT";

/**
 * How long to wait for a stack another run holds: `--lock-wait`, else INGESTBENCH_LOCK_WAIT, else 0 (refuse at once).
 * @throws ConfigurationError E_FLAG for an unreadable duration, naming where it came from
 */
export function lockWaitMs(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): number {
  // an empty --lock-wait is a mistake (it would silently override INGESTBENCH_LOCK_WAIT); an empty variable is unset
  if (flag !== undefined && flag.trim() === "")
    throw new ConfigurationError(
      "E_FLAG",
      `--lock-wait "${flag}": give a duration, e.g. 10m (0s: do not wait)`,
    );
  const raw = flag ?? env[LOCK_WAIT_ENV];
  if (raw === undefined || raw === "") return 0;
  try {
    return parseRunDuration(raw);
  } catch (err) {
    throw new ConfigurationError(
      "E_FLAG",
      `${flag !== undefined ? "--lock-wait" : LOCK_WAIT_ENV}: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** A stack lock taken by lockStacks: `waited` when another run held it first. */
export type HeldStackLock = StackLock & { readonly waited?: LockWait };

/** "waited 42 s for stack local-2-cores (held by pid 1234)": the line said when a wait for a stack's lock ended. */
export function lockWaitLine(stack: string, w: LockWait): string {
  const by = w.holders.length > 0 ? w.holders.map((h) => `pid ${h.pid}`).join(", then ") : "another run";
  return `waited ${Math.round(w.waitedMs / 1000)} s for stack ${stack} (held by ${by})`;
}

/**
 * Lock every stack of the items, in name order (two invocations over the same stacks never wait on each other in a
 * circle), before anything is provisioned. A stack another live run holds is waited for, polling each second, up to
 * `waitMs` (saying whom it waits for), then refused; a wait that ends with the lock is said in one line (lockWaitLine)
 * and kept in the lock's `waited`, for run.json. On a refusal the locks already taken are released. `signal`
 * (Ctrl-C) ends a wait at once: the locks already taken are released and null is returned (nothing is held).
 * @throws ProvisioningError E_STACK_LOCKED naming the holder of a lock (./stack-lock.ts)
 */
export async function lockStacks(
  names: string[],
  command: string,
  progress: Pick<Progress, "notice">,
  waitMs: number,
  signal?: AbortSignal,
): Promise<HeldStackLock[] | null> {
  const locks: HeldStackLock[] = [];
  const deadline = Date.now() + waitMs;
  try {
    for (const name of [...new Set(names)].sort()) {
      let lock: StackLock | undefined;
      let told = false;
      const waitStart = Date.now();
      const holders: LockWait["holders"] = [];
      while (!lock) {
        try {
          lock = acquireStackLock(name, command);
        } catch (err) {
          if (!(err instanceof IngestbenchError && err.code === "E_STACK_LOCKED")) throw err;
          if (err instanceof StackLockedError) {
            const h = err.holder;
            const last = holders.at(-1);
            if (!last || last.pid !== h.ownerPid || last.startedAt !== h.startedAt)
              holders.push({ pid: h.ownerPid, command: h.command, startedAt: h.startedAt });
          }
          if (Date.now() >= deadline) {
            if (!told) throw err;
            // the wait ran out: say so, with the holder, rather than repeat the refusal as if nothing had been waited for
            throw new ProvisioningError(
              "E_STACK_LOCKED",
              `waited ${Math.round(waitMs / 1000)} s for stack ${name}, which is still in use: ${err.message.replace(/^stack \S+ is in use by another run: /, "")}`,
            );
          }
          if (!told)
            progress.notice(
              `${err.message.split(";")[0]}; waiting up to ${Math.ceil((deadline - Date.now()) / 1000)} s for it`,
            );
          told = true;
          if (await aborted(signal, 1000)) {
            progress.notice(
              `${String(signal!.reason ?? "SIGINT")}: stopped waiting for stack ${name}; nothing was provisioned and no lock is held`,
            );
            for (const l of locks) l.release();
            return null;
          }
        }
      }
      if (told) {
        const waited: LockWait = { waitedMs: Date.now() - waitStart, holders };
        progress.notice(lockWaitLine(name, waited));
        locks.push(Object.assign(lock, { waited }));
      } else locks.push(lock);
      if (lock.tookOver)
        progress.notice(
          `stack ${name}: took over the stale lock of ${describeHolder(lock.tookOver)}, which is gone`,
        );
    }
  } catch (err) {
    for (const l of locks) l.release();
    throw err;
  }
  return locks;
}

/** Wait `ms`; true as soon as `signal` is aborted (at once when it already is), false when the time passed. */
function aborted(signal: AbortSignal | undefined, ms: number): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value: boolean): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(value);
    };
    const onAbort = (): void => done(true);
    const timer = setTimeout(() => done(false), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export interface DriveResult {
  records: RunRecord[];
  /** the signal that interrupted the runs, or null */
  interrupted: NodeJS.Signals | null;
}

/** Every stack's plans, stack by stack, as run items. */
export function runItems(work: StackWork[]): RunItem[] {
  return work.flatMap(({ stack, plans }) => plans.map((plan) => ({ stack, plan })));
}

/**
 * Whether these cells can run on this stack, checked before anything is provisioned (by the driver for every planned
 * run, and by `ingestbench validate STACK SCENARIO`): the pair check (./pair-check.ts: memory floors, what the
 * platform runs, pins against the stack's images or installed programs, placeholders left in the stack, and the
 * site's own checks — `deployed` for docker and azure, harness/provision/deployed.ts). Without `deployed`, a deployed
 * stack is refused as checkRunnableLocally refuses it (naming the command that runs it). With `stacksDir`, a refusal
 * that says where the scenario cannot run carries a hint naming the stacks that take it (acceptingHint).
 * @throws PairRefusedError (a ConfigurationError with every finding; its code, field and location the first one's:
 *         E_CAP_TOO_SMALL, E_SINK, E_VERSION, E_PLACEHOLDER, E_STACK_HOSTS, E_APP_NOT_RUNNABLE, …)
 */
export function checkCellsOnStack(
  stack: StackSpec,
  plans: readonly CellPlan[],
  deployed?: Pick<DeployedStacks, "check">,
  stacksDir?: string,
): void {
  const findings = pairFindings(stack, plans, deployed ? { deployed } : {});
  if (findings.length === 0) return;
  const hint =
    stacksDir !== undefined && findings.some((f) => ELSEWHERE.has(f.code))
      ? acceptingHint(stack, plans, deployed, stacksDir)
      : undefined;
  throw new PairRefusedError(stack.name, plans[0]?.scenario ?? "", findings, hint);
}

/** A stack's refusal of a scenario: every finding of the pair check (ui/pair-check.ts says it). */
export class PairRefusedError extends ConfigurationError {
  readonly findings: readonly PairFinding[];
  constructor(stack: string, scenario: string, findings: readonly PairFinding[], hint?: string) {
    const first = findings[0]!;
    super(first.code, pairRefusalText(stack, scenario, findings, hint), {
      ...(first.field !== undefined ? { field: first.field } : {}),
      ...(first.location !== undefined ? { location: first.location } : {}),
    });
    this.findings = findings;
  }
}

/** Refusals that say where a scenario cannot run (not what is wrong with it): their hint names where it can. */
const ELSEWHERE = new Set([
  "E_SINK",
  "E_COLLECTOR",
  "E_STEP_PLATFORM",
  "E_GENERATOR_NONE",
  "E_APP_NOT_RUNNABLE",
  "E_VERSION",
  "E_STACK_FIELD",
  "E_PROGRAM_MISSING",
  "E_PROGRAM_VERSION",
  "E_CAP_TOO_SMALL",
  "E_PLACEHOLDER",
]);

/**
 * "stacks that take it, checked now: a, b (accepted if …)": the other stacks of `stacksDir` whose pair check finds
 * nothing, or only what this machine or the user can lift (a program to install, allowFrom to set: said in the hint);
 * at most three, those that take it now first, then local, docker, azure. A local stack's answer depends on the
 * programs installed here: the hint names them. Docker and azure stacks are checked only with `deployed`.
 */
export function acceptingHint(
  stack: StackSpec,
  plans: readonly CellPlan[],
  deployed: Pick<DeployedStacks, "check"> | undefined,
  stacksDir: string,
): string {
  const takers: Taker[] = [];
  for (const name of listStacks(stacksDir)) {
    if (name === stack.name) continue;
    try {
      const other = loadStack(name, stacksDir);
      if (other.platform !== "local" && !deployed) continue;
      const r = checkPair(other, plans, other.platform === "local" ? {} : { deployed: deployed! });
      if (!r.findings.every((f) => f.unless !== undefined)) continue;
      takers.push({
        name: other.name,
        platform: other.platform,
        conditions: [...new Set(r.findings.map((f) => f.unless!))],
        programs: r.programs,
        unchecked: r.unchecked,
      });
    } catch {
      // a stack that cannot be loaded or checked (a hint's search must not fail the run that asked for it)
    }
  }
  // a newcomer's order: what takes it now, then this machine first, then its Docker engine, then the cloud
  const order = ["local", "docker", "azure"];
  const rank = (t: Taker) => (t.conditions.length > 0 ? 3 : 0) + order.indexOf(t.platform);
  takers.sort((a, b) => rank(a) - rank(b));
  return acceptingHintText(takers.slice(0, 3), displayPath(stacksDir), Math.max(0, takers.length - 3));
}

/**
 * Run every planned cell of every stack in order (one BenchRun each). Same as driveItems(runItems(work), options).
 */
export async function driveRuns(work: StackWork[], options: DriveOptions): Promise<DriveResult> {
  return driveItems(runItems(work), options);
}

/**
 * Run the items in order (one BenchRun each), reporting progress and a description of each run through the progress
 * display. SIGINT/SIGTERM stop after the current run has torn down; the runs not started are not made. Every stack
 * is locked for the whole invocation (lockStacks) and released however it ends.
 * @throws ProvisioningError E_STACK_LOCKED when another live process runs on one of the stacks
 */
export async function driveItems(items: RunItem[], options: DriveOptions): Promise<DriveResult> {
  const groups = checkedGroups(items, options);
  const progress = options.reporter ?? new Progress(options.progress);
  const controller = new AbortController();
  const onSignal = stopOnSignal(progress, controller);
  const onExternal = (): void => controller.abort(options.signal?.reason ?? "SIGINT");
  if (options.signal?.aborted) onExternal();
  options.signal?.addEventListener("abort", onExternal, { once: true });
  // Ctrl-C while waiting for a stack lock ends the wait at once (lockStacks), exit 130 with nothing held
  const onWaitSignal = (sig: NodeJS.Signals): void => controller.abort(sig);
  const handlers = (on: boolean, h: (sig: NodeJS.Signals) => void): void => {
    for (const sig of ["SIGINT", "SIGTERM"] as const) (on ? process.on : process.off).call(process, sig, h);
  };
  const detach = (): void => options.signal?.removeEventListener("abort", onExternal);
  handlers(true, onWaitSignal);
  let locks: HeldStackLock[] | null;
  try {
    locks = await lockAndPrepare(groups, options, progress, controller.signal);
  } catch (err) {
    detach();
    throw err;
  } finally {
    handlers(false, onWaitSignal);
  }
  if (locks === null) {
    detach();
    return { records: [], interrupted: controller.signal.reason as NodeJS.Signals };
  }
  const waitOf = lockWaits(locks);
  handlers(true, onSignal);
  const records: RunRecord[] = [];
  progress.start(
    items.map((i) => ({ stack: i.stack.name, plan: i.plan, group: i.group, platform: i.stack.platform })),
  );
  try {
    for (const g of groups) {
      if (controller.signal.aborted) break;
      if (g.stack.platform !== "local") {
        records.push(...(await runDeployed(g, options, progress, controller.signal, waitOf(g.stack.name))));
        continue;
      }
      for (const { stack, plan, invocation } of g.items) {
        if (controller.signal.aborted) break;
        const run = new BenchRun({
          stack,
          plan,
          resultsRoot: options.resultsRoot,
          invocation: invocation ?? options.invocation,
          signal: controller.signal,
          projectRoot: options.projectRoot,
          lockWait: waitOf(stack.name),
        });
        progress.cellStart(
          run.runId,
          `provisioning ${stack.platform} hosts ${hostRoles(Object.keys(stack.hosts), plan).join(", ")}`,
        );
        progress.follow(run);
        const record = await run.run();
        progress.runEnded(record, options.resultsRoot);
        records.push(record);
      }
    }
  } finally {
    for (const l of locks) l.release();
    handlers(false, onSignal);
    detach();
    progress.end(controller.signal.aborted ? String(controller.signal.reason) : null);
  }
  return {
    records,
    interrupted: controller.signal.aborted ? (controller.signal.reason as NodeJS.Signals) : null,
  };
}

/**
 * The items grouped by stack, every planned run checked before the first one provisions anything: a bad pairing
 * fails at once, exit 2; configuration first (exit 2 names the file and field whatever the stack order), then what
 * this machine lacks. @throws ConfigurationError, ProvisioningError
 */
function checkedGroups(
  items: RunItem[],
  options: DriveOptions,
): Array<{ stack: StackSpec; items: RunItem[] }> {
  const groups = stackGroups(items);
  for (const g of groups)
    checkCellsOnStack(
      g.stack,
      g.items.map((i) => i.plan),
      options.deployed,
      path.join(options.projectRoot, "stacks"),
    );
  if (groups.some((g) => g.stack.platform === "local")) checkLocalPrivileges();
  for (const g of groups) if (g.stack.platform !== "local") options.deployed?.ready?.(g.stack);
  return groups;
}

/**
 * Lock every stack (one run per stack at a time: the second invocation on a stack is refused, naming the first,
 * E_STACK_LOCKED), then make the results directory: only now, when no stack, scenario or lock refused the runs (the
 * commands checked it without creating it: checkResultsDir), so a refused invocation leaves nothing behind.
 * Null when `signal` ended the wait for a lock. @throws ProvisioningError E_STACK_LOCKED; the directory's error
 */
async function lockAndPrepare(
  groups: ReadonlyArray<{ stack: StackSpec }>,
  options: DriveOptions,
  progress: Pick<Progress, "notice">,
  signal: AbortSignal,
): Promise<HeldStackLock[] | null> {
  const locks = await lockStacks(
    groups.map((g) => g.stack.name),
    options.command ?? commandWord(),
    progress,
    options.lockWaitMs ?? lockWaitMs(undefined),
    signal,
  );
  if (locks === null) return null;
  try {
    prepareResultsDir(options.resultsRoot);
  } catch (err) {
    for (const l of locks) l.release();
    throw err;
  }
  return locks;
}

/** A wait for a stack's lock goes into the first run on the stack (its run.json `lockWait`): taken once per stack. */
function lockWaits(locks: readonly HeldStackLock[]): (stack: string) => LockWait | undefined {
  const waits = new Map(locks.flatMap((l) => (l.waited ? [[l.holder.stack, l.waited] as const] : [])));
  return (stack) => {
    const w = waits.get(stack);
    waits.delete(stack);
    return w;
  };
}

/** The runs of a deployed stack's group of items, deployed once for them (DeployedStacks.run). */
function runDeployed(
  g: { stack: StackSpec; items: RunItem[] },
  options: DriveOptions,
  progress: Progress,
  signal: AbortSignal,
  lockWait: LockWait | undefined,
): Promise<RunRecord[]> {
  return options.deployed!.run({
    stack: g.stack,
    items: g.items,
    signal,
    progress,
    resultsRoot: options.resultsRoot,
    invocation: options.invocation,
    projectRoot: options.projectRoot,
    lockWait,
  });
}

/** SIGINT/SIGTERM during the runs: stop after the current run has torn down (said once; a second signal waits). */
function stopOnSignal(
  progress: Pick<Progress, "notice">,
  controller: AbortController,
): (sig: NodeJS.Signals) => void {
  return (sig) => {
    if (controller.signal.aborted) {
      progress.notice(`${sig} again: still tearing down, please wait`);
      return;
    }
    progress.notice(`${sig}: stopping; tearing down and keeping what was measured`);
    controller.abort(sig);
  };
}

/** Consecutive items of one stack, in order (a deployed stack is deployed once per group). */
function stackGroups(items: RunItem[]): Array<{ stack: StackSpec; items: RunItem[] }> {
  const out: Array<{ stack: StackSpec; items: RunItem[] }> = [];
  for (const item of items) {
    const last = out.at(-1);
    if (last && last.stack.name === item.stack.name) last.items.push(item);
    else out.push({ stack: item.stack, items: [item] });
  }
  return out;
}

/** The exit code of a set of runs: 130/143 when interrupted, the worst error kind, 1 on failed checks, else 0. */
export function runsExitCode(result: DriveResult): number {
  if (result.interrupted) return result.interrupted === "SIGTERM" ? 143 : 130;
  const errors = result.records.filter((r) => r.status === "error");
  if (errors.length > 0) return Math.max(...errors.map((r) => EXIT_BY_KIND[r.error?.kind ?? "run"] ?? 3));
  if (result.records.some((r) => r.status === "failed")) return 1;
  return 0;
}
