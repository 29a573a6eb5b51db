/**
 * Parent side of a generator process (see child.ts): spawn it through a host's spawn function, parse its JSON
 * lines (robust to lines split across chunks and to stray non-JSON output), and stop it gracefully.
 */
import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { IngestbenchError } from "../../core/errors.ts";
import type { SpawnOptions } from "../../core/hosts.ts";
import type { GeneratorContext, GeneratorFinal, GeneratorProgress } from "./types.ts";
import { estimateOffset, type ClockExchange, type ClockOffset } from "./clock.ts";

/** What child.ts runs: the registry name, the raw `generator.<name>` config (validated in the child), the context. */
export interface GeneratorSpec {
  name: string;
  config: unknown;
  /** replayFile: a log file whose lines the generator replays (path as seen on the loadgen host) */
  ctx: GeneratorContext;
  /** working directory for the child (defaults to the project root this file lives in) */
  projectRoot?: string;
  /**
   * hold the load after "ready" and answer clock pings until `go()` (child.ts; the harness measures the clock offset
   * before load this way, ./clock.ts); default false: the load starts right after "ready"
   */
  clockSync?: boolean;
}

/** A host's spawn function (LocalHost.spawn, bound; or a deployed host's shell, harness/remote/shell.ts). */
export type SpawnFn = (command: string, args: string[], options?: SpawnOptions) => ChildProcess;

/**
 * The program that runs child.ts on a host; the spec JSON is appended as its last argument. Default (this machine):
 * `node --import tsx harness/generators/child.ts` in the project root; on a deployed stack's loadgen container,
 * `node /opt/ingestbench/generator-<sha>.mjs` (the bundled child, harness/remote/bundle.ts).
 */
export interface GeneratorProgram {
  command: string;
  args: string[];
  /** working directory on the host; default: the spec's projectRoot (local) */
  cwd?: string;
}

/** A progress line: running totals plus the child's epoch-ms clock `t`. */
export interface GeneratorProgressLine extends GeneratorProgress {
  t: number;
}

const DEFAULT_STOP_TIMEOUT_MS = 60_000;
/** clock pings per sync, and how long one pong may take before the sync gives up */
const CLOCK_EXCHANGES = 8;
const PONG_TIMEOUT_MS = 5_000;
const harnessNow = (): number => performance.timeOrigin + performance.now();
const TAIL = 4096;

/** Project root (two levels above harness/generators). */
const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CHILD = fileURLToPath(new URL("./child.ts", import.meta.url));

/** `--import` argument for tsx's ESM loader, as an absolute file URL so the child's cwd does not matter. */
function tsxImport(): string {
  try {
    return pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  } catch {
    return "tsx";
  }
}

/**
 * A running generator process. Events: "progress" (GeneratorProgressLine), "error" (Error; emitted only when
 * someone listens), "exit" (code, signal). `progress$` is the emitter itself.
 */
export class GeneratorProcess extends EventEmitter {
  readonly progress$: EventEmitter = this;
  /** the latest progress line, or null before the first */
  last: GeneratorProgressLine | null = null;
  /** resolves with the final report once the child has exited; rejects if it exited without one */
  readonly done: Promise<GeneratorFinal>;
  private stopping: Promise<GeneratorFinal> | null = null;
  /** resolves once the child has installed its stop handlers and is about to send (its "ready" line) or has exited */
  readonly ready: Promise<void>;
  private readyResolve: () => void = () => undefined;
  /** resolves as soon as the final report line arrives (the loop has ended; the process exits right after) or on exit */
  readonly finished: Promise<void>;
  private finishedResolve: () => void = () => undefined;
  private stderrTail = "";
  private otherTail = "";

  constructor(readonly child: ChildProcess) {
    super();
    this.ready = new Promise<void>((resolve) => {
      this.readyResolve = resolve;
    });
    this.finished = new Promise<void>((resolve) => {
      this.finishedResolve = resolve;
    });
    child.once("close", () => {
      this.readyResolve();
      this.finishedResolve();
    });
    let final: GeneratorFinal | null = null;
    let errorMessage: string | null = null;
    const onLine = (line: string): void => {
      if (!line.trim()) return;
      let msg: { type?: string; [k: string]: unknown };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        this.otherTail = (this.otherTail + line + "\n").slice(-TAIL);
        return;
      }
      if (msg.type === "progress") {
        const { type: _t, ...p } = msg;
        this.last = p as unknown as GeneratorProgressLine;
        this.emit("progress", this.last);
      } else if (msg.type === "final") {
        const { type: _t, ...f } = msg;
        final = f as unknown as GeneratorFinal;
        this.last = { ...final, t: performance.timeOrigin + performance.now() };
        this.emit("progress", this.last);
        this.finishedResolve();
      } else if (msg.type === "pong") {
        this.emit("pong", msg);
      } else if (msg.type === "ready") {
        this.readyResolve();
      } else if (msg.type === "error") {
        errorMessage = String(msg.message ?? "unknown error");
        if (this.listenerCount("error") > 0)
          this.emit("error", new IngestbenchError("E_GENERATOR", errorMessage));
      } else {
        this.otherTail = (this.otherTail + line + "\n").slice(-TAIL);
      }
    };
    // node:readline searches each chunk once: the final report's line (a 60 GiB replay's index, 6.5 MB) arrives in
    // ~100 chunks, and `buf += chunk; buf.indexOf("\n")` copied the whole line on each, which left about 100 MB more
    // resident in the harness at the end of that replay
    if (child.stdout) createInterface({ input: child.stdout, crlfDelay: Infinity }).on("line", onLine);
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-TAIL);
    });
    child.stdin?.on("error", () => undefined); // EPIPE when the child is gone

    this.done = new Promise<GeneratorFinal>((resolveDone, reject) => {
      let spawnError: Error | null = null;
      child.once("error", (e) => {
        spawnError = e;
      });
      child.once("close", (code, signal) => {
        this.emit("exit", code, signal);
        if (final) return resolveDone(final);
        const why =
          errorMessage ??
          spawnError?.message ??
          `exited with ${code ?? signal} before reporting a final result`;
        const tail = [this.stderrTail.trim(), this.otherTail.trim()].filter(Boolean).join("\n");
        reject(new IngestbenchError("E_GENERATOR", `generator process: ${why}${tail ? `\n${tail}` : ""}`));
      });
    });
    this.done.catch(() => undefined); // surfaced through stop()/done
  }

  /**
   * Ask for a graceful stop (stdin closed + SIGTERM); SIGKILL after `timeoutMs`. Resolves with the final report. A
   * child still starting up (node + tsx take about a second) is signalled only once it is ready, so that a very
   * short run still gets its report instead of a process killed by the default SIGTERM action.
   */
  stop(timeoutMs = DEFAULT_STOP_TIMEOUT_MS): Promise<GeneratorFinal> {
    this.stopping ??= (async () => {
      await Promise.race([this.ready, sleep(timeoutMs, undefined, { ref: false })]);
      if (this.child.exitCode === null && this.child.signalCode === null) {
        this.child.stdin?.end();
        this.child.kill("SIGTERM");
        const t = setTimeout(() => this.kill(), timeoutMs);
        t.unref?.();
        void this.done.finally(() => clearTimeout(t)).catch(() => undefined);
      }
      return await this.done;
    })();
    return this.stopping;
  }

  /**
   * Measure the child's clock offset (child − harness, ms) with `exchanges` sequential ping/pongs (./clock.ts), once
   * it is ready and before `go()`; the child must have been started with `clockSync: true`. A child that does not
   * answer within `timeoutMs` per ping (e.g. one that exited) gives `{ measured: false, reason }`, never an error.
   */
  async syncClock(exchanges = CLOCK_EXCHANGES, timeoutMs = PONG_TIMEOUT_MS): Promise<ClockOffset> {
    const stdin = this.child.stdin;
    if (this.child.exitCode !== null || this.child.signalCode !== null)
      return { measured: false, offsetMs: 0, reason: "the generator exited before the clock sync" };
    if (!stdin || stdin.destroyed)
      return { measured: false, offsetMs: 0, reason: "the generator's stdin is not a pipe" };
    const got: ClockExchange[] = [];
    for (let id = 0; id < exchanges; id++) {
      const pong = new Promise<{ t1: number; t2: number; t3: number } | null>((resolve) => {
        const timer = setTimeout(() => {
          this.off("pong", on);
          this.off("exit", gone);
          resolve(null);
        }, timeoutMs);
        const gone = (): void => {
          clearTimeout(timer);
          this.off("pong", on);
          resolve(null);
        };
        const on = (m: { id?: unknown; t1?: unknown; t2?: unknown }): void => {
          if (m.id !== id || typeof m.t1 !== "number" || typeof m.t2 !== "number") return;
          const t3 = harnessNow();
          clearTimeout(timer);
          this.off("pong", on);
          this.off("exit", gone);
          resolve({ t1: m.t1, t2: m.t2, t3 });
        };
        this.on("pong", on);
        this.once("exit", gone);
      });
      const t0 = harnessNow();
      stdin.write(`${JSON.stringify({ type: "ping", id, t0 })}\n`);
      const r = await pong;
      if (!r) {
        return got.length > 0
          ? estimateOffset(got)
          : {
              measured: false,
              offsetMs: 0,
              reason: `the generator did not answer a clock ping within ${timeoutMs} ms`,
            };
      }
      got.push({ t0, ...r });
    }
    return estimateOffset(got);
  }

  /** Start the load of a child held by `clockSync: true` (a no-op line for any other child). */
  go(): void {
    const stdin = this.child.stdin;
    if (stdin && !stdin.destroyed) stdin.write(`${JSON.stringify({ type: "go" })}\n`);
  }

  /** SIGKILL the child now (no final report). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

/**
 * Spawn `<program> <spec json>` with `spawnFn` (e.g. the loadgen host's spawn), stdio piped; the program defaults to
 * `node --import <tsx> harness/generators/child.ts` on this machine. The child validates the config; errors arrive
 * through `stop()`/`done`.
 */
export function startGeneratorProcess(
  spawnFn: SpawnFn,
  spec: GeneratorSpec,
  program?: GeneratorProgram,
): GeneratorProcess {
  const { projectRoot, ...childSpec } = spec;
  const p = program ?? { command: process.execPath, args: ["--import", tsxImport(), CHILD] };
  const cwd = p.cwd ?? (program ? undefined : (projectRoot ?? PROJECT_ROOT));
  const child = spawnFn(p.command, [...p.args, JSON.stringify(childSpec)], {
    ...(cwd !== undefined ? { cwd } : {}),
    stdio: ["pipe", "pipe", "pipe"],
  });
  return new GeneratorProcess(child);
}
