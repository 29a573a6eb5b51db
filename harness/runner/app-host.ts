/**
 * The application under test on its host (docs/app-under-test.md; write-up 003, docs/write-ups.md): a scenario's
 * `app` (harness/scenario/app-schema.ts) started with one variant's env and args, in place of the generator
 * processes. `AppRun` has the generator group's shape (./generator-group.ts `LoadGroup`), so a run (./run.ts) samples
 * the sink, waits for completion and takes the ledger as for any load:
 *
 * 1. start: argv = `app.command` + the variant's `args`, in the project root, on the scenario's host (its cgroup and
 *    network namespace), env = the host's + `app.env` + the variant's `env` + what the exporter needs:
 *    INGESTBENCH_TARGET (host:port of the collector, or the sink without one), INGESTBENCH_PROTOCOL (the scenario's
 *    `generator` name: the protocol the exporter must speak), INGESTBENCH_GEN (the run's gen, core/ledger.ts),
 *    INGESTBENCH_SEED (the seed its records' content is filled from), INGESTBENCH_FIELDS (the scenario's event, JSON),
 *    INGESTBENCH_GENERATOR (the `generator` block, defaults filled in, JSON: how records are framed, ./app-bytes.ts)
 *    and INGESTBENCH_WARMUP_MS;
 * 2. ready: `ready.log` (a line of its stdout or stderr matching) or `ready.http` (an answer below 500 at the host's
 *    address), within `ready.timeout`, else E_APP_NOT_READY (E_APP_EXITED when it exits first);
 * 3. the app's own load runs until the run's load phase ends (or the app exits on its own: a fixed benchmark);
 * 4. stop: SIGTERM to its pid (its shutdown flushes its queues), SIGKILL after STOP_GRACE_MS; `app.timeout` bounds its
 *    whole life the same way; then its figures are read (`readAppResults`: its last JSON line, a file, or a regex).
 *
 * The final report handed to the ledger is one generator's (genId 0): `sent` = the app's `sent` figure (the seqs it
 * used, dropped ones included), `accepted` = sent − dropped; the ledger's `lost` must then equal the app's `dropped`
 * (`appLedger`), since a dropped record keeps its seq and is never stored.
 */
import { createInterface } from "node:readline";
import type { ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { IngestbenchError, ProvisioningError } from "../../core/errors.ts";
import type { Ledger } from "../../core/verifier.ts";
import type { SpawnFn } from "../generators/process.ts";
import type { GeneratorFinal, GeneratorProgress } from "../generators/types.ts";
import type { ClockOffset } from "../generators/clock.ts";
import { APP_FIGURES, type AppSpec, type Variant } from "../scenario/app-schema.ts";
import type { AppFigures, AppLedgerCheck, AppRecord } from "../results/types.ts";
import { appBytesLine } from "./app-bytes.ts";

/** How long the app may take to exit after SIGTERM before it is SIGKILLed, ms. */
export const STOP_GRACE_MS = 30_000;
/** Bytes of the app's stdout and stderr kept (the tail), each. */
const KEEP_BYTES = 1 << 20;

/** What a cell runs: the scenario's `app` and one of its `variants`. */
export interface AppPlan {
  spec: AppSpec;
  variant: Variant;
}

/** Compare the sink's ledger with what the app reports it sent and dropped. */
export function appLedger(figures: AppFigures, ledger: Pick<Ledger, "distinct" | "lost">): AppLedgerCheck {
  const sent = figures.sent ?? 0;
  const dropped = figures.dropped ?? 0;
  const unaccounted = ledger.lost - dropped;
  return {
    sent,
    dropped,
    expected: sent - dropped,
    stored: ledger.distinct,
    lost: ledger.lost,
    unaccounted,
    agrees: unaccounted === 0 && ledger.distinct === sent - dropped,
  };
}

/** A JSON value at a dotted path (`a.b.c`), undefined when absent. */
function at(obj: unknown, dotted: string): unknown {
  if (obj !== null && typeof obj === "object" && Object.hasOwn(obj, dotted))
    return (obj as Record<string, unknown>)[dotted];
  let cur: unknown = obj;
  for (const k of dotted.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** The last line of `text` that parses as a JSON object, or null. */
export function lastJsonLine(text: string): Record<string, unknown> | null {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith("{")) continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      /* not JSON: an earlier line may be */
    }
  }
  return null;
}

/**
 * Read the app's figures as `results` says:
 * - `stdout-json`: its last stdout line that is a JSON object; each mapped key may be a dotted path (`load.p99`);
 * - `file`: the JSON object in `output.file` (the file's text), or its last JSON-object line (NDJSON);
 * - `regex`: the last match of `pattern` over stdout then stderr; each mapped name is a named group.
 * A value must be a finite number or a numeric string.
 * @throws IngestbenchError E_APP_RESULTS naming the figure, its key and what was found instead
 */
export function readAppResults(
  results: AppSpec["results"],
  output: { stdout: string; stderr: string; file?: string },
): { figures: AppFigures; raw: Record<string, unknown> } {
  let raw: Record<string, unknown> | null;
  let where: string;
  if (results.from === "regex") {
    const re = new RegExp(results.pattern!, "gm");
    const matches = [...`${output.stdout}\n${output.stderr}`.matchAll(re)];
    raw = matches.length ? { ...matches.at(-1)!.groups } : null;
    where = `no match of /${results.pattern}/ in its output`;
  } else if (results.from === "file") {
    const text = output.file;
    if (text === undefined)
      throw new IngestbenchError("E_APP_RESULTS", `app results file ${results.file} was not written`);
    try {
      const v = JSON.parse(text) as unknown;
      raw = v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch {
      raw = lastJsonLine(text);
    }
    where = `no JSON object in ${results.file}`;
  } else {
    raw = lastJsonLine(output.stdout);
    where = "no JSON-object line on its stdout";
  }
  if (!raw) throw new IngestbenchError("E_APP_RESULTS", `app results: ${where}${tailNote(output.stderr)}`);
  const figures: AppFigures = {};
  for (const figure of APP_FIGURES) {
    const key = results.map[figure];
    if (key === undefined) continue;
    const v = at(raw, key);
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
    if (!Number.isFinite(n)) {
      throw new IngestbenchError(
        "E_APP_RESULTS",
        `app results: figure ${figure} maps to "${key}", which is ${v === undefined ? "absent" : JSON.stringify(v)} in ${JSON.stringify(raw).slice(0, 300)}`,
      );
    }
    figures[figure] = n;
  }
  return { figures, raw };
}

/**
 * The run's app line for the terminal: "app tiny-queue: 812.5 tx/s, mean 4.9 ms, p50 4.1 / p99 12.0 ms; records
 * 9,000 sent, 17 dropped, 8,983 stored (the ledger agrees)".
 */
export function appLine(a: AppRecord): string {
  const f = a.figures;
  const n = (x: number | undefined, d: number): string =>
    x !== undefined && Number.isFinite(x)
      ? x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d })
      : "–";
  const l = a.ledger;
  const ledger = l
    ? `; records ${n(l.sent, 0)} sent, ${n(l.dropped, 0)} dropped, ${n(l.stored, 0)} stored (${l.agrees ? "the ledger agrees" : `the ledger DISAGREES: ${l.unaccounted} unaccounted`})`
    : "";
  const bytes = l?.bytes ? `; ${appBytesLine(l.bytes)}` : "";
  return `  app ${a.variant}: ${n(f.throughput, 1)} tx/s, mean ${n(f.latencyMeanMs, 1)} ms, p50 ${n(f.latencyP50Ms, 1)} / p99 ${n(f.latencyP99Ms, 1)} ms${ledger}${bytes}`;
}

/** An address as the host part of a URL: IPv6 in brackets. */
function hostPart(address: string): string {
  return address.includes(":") ? `[${address}]` : address;
}

function tailNote(stderr: string): string {
  const t = stderr.trim().split("\n").slice(-3).join(" | ");
  return t ? ` (its stderr ends: ${t})` : "";
}

/** Options of an AppRun. */
export interface AppRunOptions {
  plan: AppPlan;
  /** the app host's launcher (its cgroup and namespace) */
  spawn: SpawnFn;
  /** where the harness reaches the app host (ready.http) */
  controlAddress: string;
  /** the exporter's env (INGESTBENCH_*), set on top of app.env and the variant's */
  exporterEnv: Record<string, string>;
  /** the project root: the app's working directory */
  cwd: string;
}

const ZERO: GeneratorProgress = { sent: 0, accepted: 0, rejected: 0, bytes: 0, requests: 0, repeated: 0 };

/** One run of the application under test (see the file comment). Starts the app in the constructor. */
export class AppRun {
  readonly argv: string[];
  private readonly child: ChildProcess;
  private stdout = "";
  private stderr = "";
  private exitCode: number | null = null;
  private exited = false;
  private readonly exit: Promise<void>;
  private readonly lifeTimer: NodeJS.Timeout;
  private timedOut = false;
  private outcome: { figures: AppFigures; raw: Record<string, unknown> } | null = null;
  private readonly listeners = new Set<(line: string) => void>();

  constructor(private readonly opts: AppRunOptions) {
    const { spec, variant } = opts.plan;
    if (!spec.command)
      throw new ProvisioningError(
        "E_APP_NOT_RUNNABLE",
        "app.image runs on container platforms; a local stack runs app.command",
      );
    this.argv = [...spec.command, ...variant.args];
    this.child = opts.spawn(this.argv[0]!, this.argv.slice(1), {
      env: { ...spec.env, ...variant.env, ...opts.exporterEnv },
      cwd: opts.cwd,
    });
    const keep = (prev: string, chunk: Buffer): string => {
      const s = prev + chunk.toString("utf8");
      return s.length > KEEP_BYTES ? s.slice(-KEEP_BYTES) : s;
    };
    this.child.stdout?.on("data", (b: Buffer) => {
      this.stdout = keep(this.stdout, b);
    });
    this.child.stderr?.on("data", (b: Buffer) => {
      this.stderr = keep(this.stderr, b);
    });
    // each stream's lines on their own (node:readline), so a line cut between chunks is never joined to the other's
    for (const input of [this.child.stdout, this.child.stderr])
      if (input)
        createInterface({ input, crlfDelay: Infinity }).on("line", (l) => {
          for (const f of this.listeners) f(l);
        });
    this.exit = new Promise((resolve) => {
      this.child.once("error", (e) => {
        this.stderr += `\n${e.message}`;
        this.exited = true;
        resolve();
      });
      this.child.once("close", (code) => {
        this.exitCode = code;
        this.exited = true;
        resolve();
      });
    });
    this.lifeTimer = setTimeout(() => {
      this.timedOut = true;
      this.signal("SIGTERM");
    }, spec.timeout);
    this.lifeTimer.unref();
  }

  /**
   * Resolves once the app is ready (ready.log or ready.http), or when `signal` aborts.
   * @throws ProvisioningError E_APP_EXITED when it exits first, E_APP_NOT_READY after ready.timeout
   */
  async ready(signal?: AbortSignal): Promise<void> {
    const { ready } = this.opts.plan.spec;
    let done = false;
    const readyNow = new Promise<void>((resolve) => {
      if (ready.log !== undefined) {
        const re = new RegExp(ready.log);
        const f = (line: string): void => {
          if (re.test(line)) {
            this.listeners.delete(f);
            resolve();
          }
        };
        if (`${this.stdout}\n${this.stderr}`.split("\n").some((l) => re.test(l))) resolve();
        else this.listeners.add(f);
      } else {
        const { port, path: p } = ready.http!;
        const poll = async (): Promise<void> => {
          while (!done) {
            try {
              const r = await fetch(`http://${hostPart(this.opts.controlAddress)}:${port}${p}`, {
                signal: AbortSignal.timeout(1000),
              });
              await r.arrayBuffer();
              if (r.status < 500) return resolve();
            } catch {
              /* not listening yet */
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        };
        void poll();
      }
    });
    const aborted = new Promise<"aborted">((resolve) => {
      if (signal?.aborted) resolve("aborted");
      signal?.addEventListener("abort", () => resolve("aborted"), { once: true });
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), ready.timeout);
    });
    const r = await Promise.race([
      readyNow.then(() => "ready" as const),
      this.exit.then(() => "exited" as const),
      timeout,
      aborted,
    ]);
    done = true;
    clearTimeout(timer);
    if (r === "exited")
      throw new ProvisioningError(
        "E_APP_EXITED",
        `app ${this.argv.join(" ")} exited (code ${this.exitCode}) before it was ready${tailNote(this.stderr)}`,
      );
    if (r === "timeout") {
      const how =
        ready.log !== undefined
          ? `no output line matched /${ready.log}/`
          : `http://${hostPart(this.opts.controlAddress)}:${ready.http!.port}${ready.http!.path} gave no answer below 500`;
      throw new ProvisioningError(
        "E_APP_NOT_READY",
        `app ${this.argv.join(" ")} was not ready within ${ready.timeout} ms: ${how}${tailNote(this.stderr)}`,
      );
    }
  }

  /** The app runs on this machine's kernel clock: no offset to measure. */
  async syncClock(): Promise<ClockOffset> {
    return {
      measured: false,
      offsetMs: 0,
      reason: "the application under test runs on this machine's clock",
    };
  }

  /** The app's load starts by itself once it is ready. */
  go(): void {}

  /** The app reports no running totals; its figures are read at the end. */
  get progress(): GeneratorProgress {
    return { ...ZERO };
  }

  /** No acknowledgements are seen while it runs, so no backlog bound. */
  backlog(): null {
    return null;
  }

  whenFinished(): Promise<void> {
    return this.exit;
  }

  /** true once the app exited (its own benchmark ended, or it failed) */
  get finished(): boolean {
    return this.exited;
  }

  /** The figures read at stop (null before). */
  get figures(): { figures: AppFigures; raw: Record<string, unknown> } | null {
    return this.outcome;
  }

  /** record fields known once it stopped */
  get info(): Pick<AppRecord, "variant" | "host" | "argv" | "exitCode" | "stderrTail"> {
    return {
      variant: this.opts.plan.variant.name,
      host: this.opts.plan.spec.host,
      argv: this.argv,
      exitCode: this.exitCode,
      stderrTail: this.stderr.trim().split("\n").slice(-5),
    };
  }

  private signal(sig: NodeJS.Signals): void {
    if (!this.exited && this.child.pid !== undefined) {
      try {
        process.kill(this.child.pid, sig);
      } catch {
        /* gone */
      }
    }
  }

  /**
   * Stop the app (SIGTERM, SIGKILL after STOP_GRACE_MS), read its figures and return its report as one generator's
   * (see the file comment). Idempotent.
   * @throws IngestbenchError E_APP_EXITED for an exit code other than 0 (or a kill), E_APP_RESULTS as readAppResults
   */
  async stop(): Promise<GeneratorFinal[]> {
    clearTimeout(this.lifeTimer);
    this.signal("SIGTERM");
    const grace = setTimeout(() => this.signal("SIGKILL"), STOP_GRACE_MS);
    await this.exit;
    clearTimeout(grace);
    if (this.exitCode !== 0) {
      throw new IngestbenchError(
        "E_APP_EXITED",
        `app ${this.argv.join(" ")} exited with code ${this.exitCode}${this.timedOut ? ` after its timeout of ${this.opts.plan.spec.timeout} ms` : ""}${tailNote(this.stderr)}`,
      );
    }
    const { results } = this.opts.plan.spec;
    let file: string | undefined;
    if (results.from === "file")
      file = await readFile(path.resolve(this.opts.cwd, results.file!), "utf8").catch(() => undefined);
    this.outcome ??= readAppResults(results, { stdout: this.stdout, stderr: this.stderr, file });
    const f = this.outcome.figures;
    const sent = f.sent ?? 0;
    const dropped = f.dropped ?? 0;
    return [
      {
        genId: 0,
        sent,
        accepted: sent - dropped,
        rejected: 0,
        bytes: f.sentBytes ?? 0,
        requests: sent,
        repeated: 0,
        rejectedRanges: [],
        latencyMs: {
          mean: f.latencyMeanMs ?? Number.NaN,
          p50: f.latencyP50Ms ?? Number.NaN,
          p99: f.latencyP99Ms ?? Number.NaN,
          max: f.latencyMaxMs ?? Number.NaN,
        },
        errors: [],
      },
    ];
  }
}
