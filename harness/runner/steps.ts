/**
 * Fault steps during a run (the scenario's `steps:`, harness/scenario/steps.ts): the StepRunner fires each step at
 * its offset from t0 (the start of load) or on the first load-phase sample that meets its condition, runs its action
 * through the site's StepTarget (./local-site.ts on the local platform, harness/remote/docker-steps.ts on docker), bounded by the step's timeout, and records
 * it as a TimelineEntry (start, end, exit status, output) for run.json `timeline`. Steps run concurrently when their
 * times overlap; a step whose time or condition does not come before the load ends is recorded as skipped.
 *
 * A `script` step imports a zx script (scenarios/steps/*.mjs) and calls its default export with a StepContext: the
 * hosts (address, pids, cgroup paths or container, data directory, the component's main pid), the platform's exec, zx's `$` (quiet), a log, the
 * seconds since t0, and an AbortSignal that fires at the step's timeout. What it logs and returns is its output; it
 * succeeds (exit 0) when it resolves and fails (exit 1) when it throws.
 */
import { pathToFileURL } from "node:url";
import { $ } from "zx";
import { conditionHolds, type NetworkChange, type SignalAction, type Step } from "../scenario/steps.ts";
import type { TimelineEntry } from "../results/types.ts";
import { dropPeers } from "./step-scripts.ts";

/** Most characters of a step's output kept in run.json. */
export const STEP_OUTPUT_MAX = 4000;

/** One host as a step sees it. */
export interface StepHost {
  /** the role: loadgen, collector, collector-N, sink */
  name: string;
  /** data-plane address (what the other hosts use) */
  address: string;
  /** the address the harness reaches it at */
  controlAddress: string;
  /** its network namespace on the local platform */
  netns?: string;
  /** its cgroup directories, by controller (v1) or "unified" (v2); {} when none */
  cgroup: Record<string, string>;
  /** the main pid of the host's component (collector or sink) as it runs now; null: none (loadgen) or dead */
  pid: number | null;
  /** the pids in the host now (its cgroup's processes; on docker, as this machine's kernel numbers them) */
  pids(): Promise<number[]>;
  /** the host's container on the docker platform (name), absent on the local platform */
  container?: string;
  /** where the host's component keeps its data (a tmpfs when the stack gives the host `disk: { tmpfs: … }`) */
  dataDir?: string;
}

/** A command's outcome: exit code (null when killed by a signal), and what it printed. */
export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** What a platform offers steps. Every method returns a line of output for the timeline or throws. */
export interface StepTarget {
  /** the cell's hosts by role, in data-flow order (loadgen, collector(s), sink) */
  hosts(): Record<string, StepHost> | Promise<Record<string, StepHost>>;
  /** SIGKILL, SIGSTOP or SIGCONT every process of the host's component */
  signal(host: string, action: Exclude<SignalAction, "restart">): Promise<string>;
  /** stop what is left of the host's component and start it again, with its config, host and downstream */
  restart(host: string, signal: AbortSignal): Promise<string>;
  /** run `sh -c command` in the host (on the local platform: in its network namespace and cgroup) */
  exec(host: string, command: string, signal: AbortSignal): Promise<ExecResult>;
  /** change the host's data-plane link */
  network(host: string, change: NetworkChange): Promise<string>;
  /** fill the host's data volume until `levelPercent` of it is used (./step-scripts.ts DISK_FILL_SCRIPT) */
  diskFull(host: string, levelPercent: number, signal: AbortSignal): Promise<string>;
  /** close the host's established TCP connections to each of `peers` (host roles; ./step-scripts.ts, ss -K) */
  dropConnections(host: string, peers: readonly string[], signal: AbortSignal): Promise<string>;
  /** undo what would hold up teardown (SIGCONT whatever a step stopped); never throws */
  release(): Promise<void>;
}

/** What a script step's default export receives. */
export interface StepContext {
  hosts: Record<string, StepHost>;
  /** the platform's exec: `sh -c command` in the host */
  exec(host: string, command: string): Promise<ExecResult>;
  /** zx's `$`, quiet (its output is not echoed; a non-zero exit throws, as in zx) */
  $: typeof $;
  /** a line into the step's recorded output */
  log(...parts: unknown[]): void;
  /** seconds since t0 (the start of load) */
  elapsedS(): number;
  /** aborted at the step's timeout */
  signal: AbortSignal;
  /** the step as validated */
  step: Step;
}

/** What the runner reads on each sample. */
export interface StepSample {
  t: number;
  stored: number;
  sent: number;
  elapsedS: number;
}

const now = (): number => performance.timeOrigin + performance.now();

function cut(text: string): string {
  return text.length > STEP_OUTPUT_MAX ? `${text.slice(0, STEP_OUTPUT_MAX - 1)}…` : text;
}

function triggerText(s: Step): string {
  return "atMs" in s.trigger ? `at ${s.trigger.text}` : `when ${s.trigger.when.text}`;
}

/** Runs a cell's steps (see the file comment). */
export class StepRunner {
  private t0 = 0;
  private loadEnd = 0;
  private readonly entries: TimelineEntry[];
  private readonly fired = new Set<number>();
  private readonly running = new Map<number, Promise<void>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;

  /** `target` null: the site offers no steps (the driver refused such a plan before provisioning). */
  constructor(
    private readonly steps: readonly Step[],
    private readonly target: StepTarget | null,
  ) {
    this.entries = steps.map((s) => ({
      index: s.index,
      name: s.name,
      action: s.action.kind,
      host: "host" in s.action ? s.action.host : null,
      trigger: triggerText(s),
      fault: s.fault,
      status: "skipped",
      startT: null,
      endT: null,
      startS: null,
      endS: null,
      exitCode: null,
      output: "",
    }));
  }

  /** The load started at `t0` and ends at `loadEnd` (epoch ms): arm the timed steps. */
  start(t0: number, loadEnd: number): void {
    this.t0 = t0;
    this.loadEnd = loadEnd;
    for (const s of this.steps) {
      if (!("atMs" in s.trigger)) continue;
      const due = t0 + s.trigger.atMs;
      if (due > loadEnd) continue; // after the load: skipped
      this.armAt(due, () => this.fire(s));
    }
  }

  /**
   * Run `f` at `due` (epoch ms), never before: Node measures a timeout from the event loop's cached time, which lags
   * the clock by whatever ran since the loop last woke, so a timer can fire that much early (a busy CI machine fired
   * a 50 ms step at 48.7 ms); an early wake-up waits again for the rest.
   */
  private armAt(due: number, f: () => void): void {
    this.timers.push(
      setTimeout(
        () => {
          if (this.closed) return;
          if (now() < due) this.armAt(due, f);
          else f();
        },
        Math.max(0, Math.ceil(due - now())),
      ),
    );
  }

  /** A load-phase sample: fire the condition steps it satisfies. */
  onSample(p: StepSample): void {
    if (this.closed || p.t > this.loadEnd) return;
    for (const s of this.steps) {
      if (!("when" in s.trigger) || this.fired.has(s.index)) continue;
      const c = s.trigger.when;
      const x = c.metric === "stored" ? p.stored : c.metric === "sent" ? p.sent : p.elapsedS;
      if (conditionHolds(c, x)) this.fire(s);
    }
  }

  /** True while a step acts on `host`, or once a kill, stop or restart of it ran (its endpoint may come and go). */
  disturbed(host: string): boolean {
    return this.entries.some(
      (e) =>
        e.host === host &&
        e.startT !== null &&
        ["kill", "stop", "restart", "network", "disk-full", "drop-connections"].includes(e.action),
    );
  }

  /** Wait for the steps that are running (each is bounded by its timeout). */
  async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /** No more steps fire; wait for the running ones and undo what would hold up teardown. Returns the timeline. */
  async finish(): Promise<TimelineEntry[]> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    await this.settle();
    await this.target?.release();
    return this.timeline;
  }

  /** The timeline so far (a copy). */
  get timeline(): TimelineEntry[] {
    return this.entries.map((e) => ({ ...e }));
  }

  private fire(s: Step): void {
    if (this.closed || this.fired.has(s.index)) return;
    this.fired.add(s.index);
    const p = this.execute(s).finally(() => this.running.delete(s.index));
    this.running.set(s.index, p);
  }

  private async execute(s: Step): Promise<void> {
    const e = this.entries[s.index]!;
    e.startT = now();
    e.startS = (e.startT - this.t0) / 1000;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => {
        abort.abort(new Error(`step timeout ${s.timeoutMs} ms`));
        resolve("timeout");
      }, s.timeoutMs);
    });
    const lines: string[] = [];
    try {
      if (!this.target) throw new Error("this platform runs no steps");
      const r = await Promise.race([this.action(s, abort.signal, lines), timeout]);
      if (r === "timeout") {
        e.status = "timeout";
        lines.push(`timed out after ${s.timeoutMs} ms`);
      } else {
        e.exitCode = r;
        e.status = r === 0 ? "ok" : "failed";
      }
    } catch (err) {
      e.status = "failed";
      e.exitCode = 1;
      lines.push((err as Error).message);
    } finally {
      clearTimeout(timer);
      e.endT = now();
      e.endS = (e.endT - this.t0) / 1000;
      e.output = cut(lines.join("\n"));
    }
  }

  /** Run the action; returns its exit code, pushing its output into `lines`. */
  private async action(s: Step, signal: AbortSignal, lines: string[]): Promise<number> {
    const target = this.target!;
    const a = s.action;
    switch (a.kind) {
      case "kill":
      case "stop":
      case "cont":
        lines.push(await target.signal(a.host, a.kind));
        return 0;
      case "restart":
        lines.push(await target.restart(a.host, signal));
        return 0;
      case "network":
        lines.push(await target.network(a.host, a.change));
        return 0;
      case "disk-full":
        lines.push(await target.diskFull(a.host, a.levelPercent, signal));
        return 0;
      case "drop-connections":
        lines.push(
          await target.dropConnections(
            a.host,
            dropPeers(Object.keys(await target.hosts()), a.host, a.peer),
            signal,
          ),
        );
        return 0;
      case "exec": {
        const r = await target.exec(a.host, a.command, signal);
        if (r.stdout) lines.push(r.stdout.trimEnd());
        if (r.stderr) lines.push(r.stderr.trimEnd());
        return r.exitCode ?? 1;
      }
      case "script": {
        const mod = (await import(pathToFileURL(a.file).href)) as { default?: unknown };
        if (typeof mod.default !== "function")
          throw new Error(
            `${a.file} has no default export function (export default async function (ctx) { … })`,
          );
        const ctx: StepContext = {
          hosts: await target.hosts(),
          exec: (host, command) => target.exec(host, command, signal),
          $: $({ quiet: true, signal }) as unknown as typeof $,
          log: (...parts) =>
            lines.push(parts.map((x) => (typeof x === "string" ? x : JSON.stringify(x))).join(" ")),
          elapsedS: () => (now() - this.t0) / 1000,
          signal,
          step: s,
        };
        const out = await (mod.default as (c: StepContext) => unknown)(ctx);
        if (out !== undefined && out !== null)
          lines.push(typeof out === "string" ? out : JSON.stringify(out));
        return 0;
      }
    }
  }
}
