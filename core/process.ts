/**
 * Process plumbing shared by the components (postgres, clickhouse, syslog-ng, rsyslog): the OS account a server runs as,
 * a bounded tail of a process's output, one-shot commands, a long-running server started through host.spawn with
 * an idempotent stop(), and the bounded readiness poll (of a TCP listener: waitListening, startListeningDaemon).
 *
 * Units: sizes in bytes, durations in milliseconds. Errors: only the ones the caller supplies (codes and messages
 * stay the component's own); nothing here throws on its own account except as documented per function.
 */
import { execFile, type ChildProcess } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync, type WriteStream } from "node:fs";
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { ProvisioningError } from "./errors.ts";
import type { LocalHost } from "./hosts.ts";
import type { RunningComponent } from "./component.ts";

/** Bytes of output a LogTail keeps (the tail quoted in error messages). */
const execFileP = promisify(execFile);

export const LOG_TAIL_BYTES = 16 * 1024;

/** How long stop() waits after SIGKILL for the process to be reaped, ms. */
const KILL_WAIT_MS = 5_000;

/** The OS account a server runs as, with its ids; `user` undefined means the current user. */
export interface ServerAccount {
  user?: string;
  uid: number;
  gid: number;
}

/**
 * The account to run a server as. As root (`uid` 0): the first of `candidates` that exists in `passwd` (the text of
 * /etc/passwd); as any other user: that user (`user` undefined, the current uid and gid).
 * @throws `missing()` when running as root and none of the candidates exists
 */
export function accountFor(
  candidates: readonly string[],
  missing: () => Error,
  passwd: string = readFileSync("/etc/passwd", "utf8"),
  uid: number = process.getuid?.() ?? 0,
): ServerAccount {
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? uid };
  const accounts = new Map(
    passwd
      .split("\n")
      .map((l) => l.split(":"))
      .filter((p) => p.length > 3)
      .map((p) => [p[0]!, p]),
  );
  for (const user of candidates) {
    const p = accounts.get(user);
    if (p) return { user, uid: Number(p[2]), gid: Number(p[3]) };
  }
  throw missing();
}

/** Keeps the last `max` bytes (as UTF-8 text: characters) of a process's output, and copies everything to `file`. */
export class LogTail {
  private chunks: Buffer[] = [];
  private size = 0;
  /** the log file's write error (e.g. ENOSPC when the component's own volume is full): the tail is then kept in memory only */
  fileError: Error | null = null;
  constructor(
    private readonly max: number = LOG_TAIL_BYTES,
    private readonly file?: WriteStream,
  ) {
    // a failed write (a full volume) must not end the harness with an unhandled 'error' event
    file?.on("error", (e) => {
      this.fileError ??= e;
    });
  }
  push(b: Buffer): void {
    if (!this.fileError) this.file?.write(b);
    this.chunks.push(b);
    this.size += b.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0]!.length >= this.max)
      this.size -= this.chunks.shift()!.length;
  }
  text(): string {
    const all = Buffer.concat(this.chunks).toString("utf8");
    return all.length > this.max ? all.slice(-this.max) : all;
  }
  /** closes the log file (when there is one) */
  end(): void {
    this.file?.end();
  }
}

/** pids whose parent is `ppid`, from /proc/<pid>/stat (empty when /proc is unreadable). */
export function childPids(ppid: number): number[] {
  const out: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const d of entries) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === ppid) out.push(Number(d));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** Has the process exited (with a code or by a signal)? */
export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves true once the process has exited, false after `ms` ms if it has not. */
export function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      child.off("exit", on);
      resolve(false);
    }, ms);
    const on = (): void => {
      clearTimeout(t);
      resolve(true);
    };
    child.once("exit", on);
  });
}

/**
 * Run `cmd args` to completion on `host` (as `user`; undefined: the current user) with env LC_ALL=C, LANG=C;
 * resolves with its output (stdout and stderr interleaved, last LOG_TAIL_BYTES).
 * @throws ProvisioningError `code` "<cmd> <args> (as <user>) failed (<exit code or signal or spawn error>):\n<output>"
 */
export async function runOnce(
  host: LocalHost,
  cmd: string,
  args: string[],
  user: string | undefined,
  code: string,
): Promise<string> {
  const child = host.spawn(cmd, args, {
    user,
    stdio: ["ignore", "pipe", "pipe"],
    env: { LC_ALL: "C", LANG: "C" },
  });
  const tail = new LogTail(LOG_TAIL_BYTES);
  child.stdout?.on("data", (b: Buffer) => tail.push(b));
  child.stderr?.on("data", (b: Buffer) => tail.push(b));
  const result = await new Promise<number | string>((resolve) => {
    child.once("error", (e) => resolve(e.message));
    child.once("close", (c, sig) => resolve(c ?? String(sig)));
  });
  if (result !== 0) {
    throw new ProvisioningError(
      code,
      `${cmd} ${args.join(" ")} (as ${user}) failed (${result}):\n${tail.text()}`,
    );
  }
  return tail.text();
}

/** How stop() ends a server: `signal`, up to `graceMs` ms, then SIGKILL (and a further wait of ≤ 5 s). */
export interface StopPolicy {
  /** the graceful signal, e.g. "SIGTERM" */
  signal: NodeJS.Signals;
  graceMs: number;
  /** send SIGCONT first (a SIGSTOPped process cannot act on the graceful signal) */
  continueFirst?: boolean;
  /** on SIGKILL, kill the direct children as well (e.g. PostgreSQL backends, which outlive a killed postmaster) */
  killChildren?: boolean;
  /**
   * the graceful signal of Server.discard(), for a server whose data is thrown away right after (teardown) and so
   * need not be saved first (PostgreSQL: SIGQUIT, immediate shutdown without the shutdown checkpoint); absent:
   * discard() is stop()
   */
  discardSignal?: NodeJS.Signals;
}

export interface ServerSpec {
  /** run as this user; undefined: the current user */
  user?: string;
  env: Record<string, string>;
  /** all output is appended to this file and its last LOG_TAIL_BYTES kept in `log` */
  logFile: string;
  stop: StopPolicy;
}

/** A long-running server process started by startServer. */
export interface Server {
  child: ChildProcess;
  log: LogTail;
  /** the spawn error (e.g. ENOENT), once there is one */
  spawnError(): Error | undefined;
  /** the exit code, else the signal name, as the "code …" of error messages */
  exitCode(): number | string | null;
  /** idempotent: the StopPolicy, once; later calls return the same promise */
  stop(): Promise<void>;
  /**
   * stop() with the policy's discardSignal in place of its signal (also sent when a stop() is under way); shares
   * stop()'s promise
   */
  discard(): Promise<void>;
  /** stop(), then throw `err` */
  fail(err: Error): Promise<never>;
}

/** Start `cmd args` on `host` through host.spawn (stdin ignored, stdout and stderr piped into the log). Does not throw. */
export function startServer(host: LocalHost, cmd: string, args: string[], spec: ServerSpec): Server {
  const child = host.spawn(cmd, args, { user: spec.user, stdio: ["ignore", "pipe", "pipe"], env: spec.env });
  const log = new LogTail(LOG_TAIL_BYTES, createWriteStream(spec.logFile, { flags: "a" }));
  child.stdout?.on("data", (b: Buffer) => log.push(b));
  child.stderr?.on("data", (b: Buffer) => log.push(b));
  let spawnError: Error | undefined;
  child.once("error", (e) => {
    spawnError = e;
  });
  child.once("close", () => log.end());

  const policy = spec.stop;
  let stopping: Promise<void> | undefined;
  const end = (signal: NodeJS.Signals): Promise<void> => {
    stopping ??= (async () => {
      if (exited(child) || child.pid === undefined) return;
      if (policy.continueFirst) {
        try {
          process.kill(child.pid, "SIGCONT");
        } catch {
          /* gone */
        }
      }
      child.kill(signal);
      if (await waitExit(child, policy.graceMs)) return;
      const children = policy.killChildren ? childPids(child.pid) : [];
      child.kill("SIGKILL");
      for (const pid of children) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone */
        }
      }
      await waitExit(child, KILL_WAIT_MS);
    })();
    return stopping;
  };
  const stop = (): Promise<void> => end(policy.signal);
  const discard = (): Promise<void> => {
    const signal = policy.discardSignal ?? policy.signal;
    if (stopping && !exited(child)) child.kill(signal); // a stop under way: hurry it
    return end(signal);
  };
  return {
    child,
    log,
    spawnError: () => spawnError,
    exitCode: () => child.exitCode ?? child.signalCode,
    stop,
    discard,
    async fail(err: Error): Promise<never> {
      await stop();
      throw err;
    },
  };
}

/** The errors of waitReady, built by the component (its own codes and messages). */
export interface ReadyErrors {
  aborted(): Error;
  spawnFailed(err: Error): Error;
  /** `code`: the exit code, else the signal name */
  exited(code: number | string | null): Error;
  /** `lastError`: the message of the probe's last failure ("" when it never threw) */
  timedOut(lastError: string): Error;
}

/**
 * Poll `probe` until it resolves with a value other than undefined, checking before each try, in this order: the
 * abort `signal`, a spawn error, an exited server, `timeoutMs` (ms, from the call). A probe that throws records its
 * message as the last error; after a try that is not ready, sleep `intervalMs` ms.
 * @throws on any of those checks: the matching ReadyErrors error, after server.stop()
 */
export async function waitReady<T>(
  server: Server,
  opts: {
    signal?: AbortSignal;
    timeoutMs: number;
    intervalMs: number;
    probe: () => Promise<T | undefined>;
    errors: ReadyErrors;
  },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError = "";
  for (;;) {
    if (opts.signal?.aborted) return server.fail(opts.errors.aborted());
    const spawnError = server.spawnError();
    if (spawnError) return server.fail(opts.errors.spawnFailed(spawnError));
    if (exited(server.child)) return server.fail(opts.errors.exited(server.exitCode()));
    if (Date.now() > deadline) return server.fail(opts.errors.timedOut(lastError));
    try {
      const value = await opts.probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = (err as Error).message;
    }
    await sleep(opts.intervalMs);
  }
}

/** Does a TCP connect to `host`:`port` succeed within `timeoutMs` ms (default 1000)? Never throws. For the readiness
 *  probe of a server whose only sign of life is its listening socket (e.g. a syslog collector's TCP input). */
export function tcpAccepts(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const t = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, timeoutMs);
    s.once("connect", () => {
      clearTimeout(t);
      s.destroy();
      resolve(true);
    });
    s.once("error", () => {
      clearTimeout(t);
      resolve(false);
    });
  });
}

/**
 * waitReady for a server whose only sign of life is its TCP listener (a syslog collector's input): poll
 * tcpAccepts(`host`, `port`) every 100 ms for up to `timeoutMs` ms. The errors carry the caller's `code` prefix and
 * name the `daemon` (e.g. "rsyslogd"): `<code>_ABORTED` (the signal), `<code>_START` (spawn failed, or exited during
 * startup, with its output) and `<code>_READY` (not accepting in time, with its output), all ProvisioningErrors.
 * @throws those errors, after server.stop()
 */
export async function waitListening(
  server: Server,
  o: { daemon: string; code: string; host: string; port: number; timeoutMs: number; signal?: AbortSignal },
): Promise<void> {
  await waitReady(server, {
    signal: o.signal,
    timeoutMs: o.timeoutMs,
    intervalMs: 100,
    probe: async () => ((await tcpAccepts(o.host, o.port)) ? true : undefined),
    errors: {
      aborted: () =>
        new ProvisioningError(`${o.code}_ABORTED`, `aborted while waiting for ${o.daemon} to start`),
      spawnFailed: (e) =>
        new ProvisioningError(`${o.code}_START`, `cannot start ${o.daemon}: ${e.message}`, { cause: e }),
      exited: (code) =>
        new ProvisioningError(
          `${o.code}_START`,
          `${o.daemon} exited during startup (code ${code}); output:\n${server.log.text()}`,
        ),
      timedOut: () =>
        new ProvisioningError(
          `${o.code}_READY`,
          `${o.daemon} not accepting on ${o.host}:${o.port} after ${o.timeoutMs / 1000} s; output:\n${server.log.text()}`,
        ),
    },
  });
}

/**
 * Start a daemon in the foreground whose only sign of life is its TCP input (a syslog collector: rsyslogd -n,
 * syslog-ng -F) and wait until that input accepts: startServer with LC_ALL=C, its output appended to `logFile`, stopped
 * by SIGCONT then SIGTERM (a frozen collector must still stop) and SIGKILL after `graceMs` ms; then waitListening on
 * `host`:`port` for up to `timeoutMs` ms.
 * @throws waitListening's errors (`<code>_ABORTED`, `<code>_START`, `<code>_READY`), after stopping the daemon
 */
export async function startListeningDaemon(
  host: LocalHost,
  cmd: string,
  args: string[],
  o: {
    daemon: string;
    code: string;
    logFile: string;
    port: number;
    graceMs: number;
    timeoutMs: number;
    signal?: AbortSignal;
  },
): Promise<Server> {
  const server = startServer(host, cmd, args, {
    env: { LC_ALL: "C" },
    logFile: o.logFile,
    stop: { signal: "SIGTERM", graceMs: o.graceMs, continueFirst: true },
  });
  await waitListening(server, {
    daemon: o.daemon,
    code: o.code,
    host: host.controlAddress,
    port: o.port,
    timeoutMs: o.timeoutMs,
    signal: o.signal,
  });
  return server;
}

/** The Debian packages' pin rule: "3.38" is satisfied by "3.38" and "3.38.1"; a full version only by itself. */
export function matchesVersionPrefix(pinned: string, running: string): boolean {
  return running === pinned || running.startsWith(`${pinned}.`);
}

/** How to read a binary's version: `binary args`, the first pattern whose group 1 matches stdout. */
export interface VersionProbe {
  binary: string;
  args: string[];
  patterns: RegExp[];
  /** error code prefix, e.g. "E_RSYSLOG" (→ E_RSYSLOG_NOT_INSTALLED, E_RSYSLOG_VERSION) */
  code: string;
  /** what to install when the binary cannot run, e.g. "install the Debian package syslog-ng-core" */
  installHint: string;
}

/**
 * Run a version command (LC_ALL=C) and return the version it prints, e.g. "3.38.1".
 * @throws ProvisioningError `<code>_NOT_INSTALLED` (with the install hint) when it cannot run, `<code>_VERSION` when
 *   no pattern matches its output
 */
export async function probeVersion(p: VersionProbe): Promise<string> {
  const cmd = `\`${p.binary} ${p.args.join(" ")}\``;
  let out: string;
  try {
    out = (await execFileP(p.binary, p.args, { env: { ...process.env, LC_ALL: "C" } })).stdout;
  } catch (err) {
    throw new ProvisioningError(
      `${p.code}_NOT_INSTALLED`,
      `cannot run ${cmd} (${p.installHint}): ${(err as Error).message}`,
      { cause: err },
    );
  }
  for (const re of p.patterns) {
    const m = re.exec(out);
    if (m?.[1]) return m[1];
  }
  throw new ProvisioningError(`${p.code}_VERSION`, `cannot read a version from ${cmd}: ${out.slice(0, 200)}`);
}

/**
 * The RunningComponent of a collector daemon started by startListeningDaemon (or core/collector.ts startCollector): it receives on `port` at the host's
 * data and control addresses, forwards the downstream's connection params, and is stopped by the server's stop.
 * `stats` reads the collector's own counts (its claims), in the collector's own way; `signals`, when given, its
 * counters and gauges for the per-interval series (RunningComponent.signals).
 */
export function listeningCollector(o: {
  name: string;
  pinned: string;
  running: string;
  host: LocalHost;
  port: number;
  server: Server;
  params: Record<string, string>;
  stats: () => Promise<Record<string, number>>;
  signals?: () => Promise<Record<string, number>>;
}): RunningComponent {
  const { child, stop } = o.server;
  return {
    name: o.name,
    pinned: o.pinned,
    running: o.running,
    data: { host: o.host.address, port: o.port },
    control: { host: o.host.controlAddress, port: o.port },
    params: { ...o.params },
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    stop,
    stats: o.stats,
    ...(o.signals ? { signals: o.signals } : {}),
  };
}
