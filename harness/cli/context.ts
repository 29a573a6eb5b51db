/**
 * What every command of the `ingestbench` CLI shares: where the project, its stack files and the results live, the
 * output streams, the exit code the commands set, and the CLI's signal and pipe handling. One CliContext is made per
 * invocation by harness/cli/index.ts and handed to every command module (harness/cli/commands/<name>.ts).
 *
 * Output rule of the commands: with `--json` a command prints exactly one JSON document on stdout and nothing else
 * there (progress and notices go to stderr); files are written through `--out FILE` (and `--markdown FILE`).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Writable } from "node:stream";
import type { Command } from "commander";
import { ConfigurationError } from "../../core/errors.ts";
import { stackFile } from "../../infra/stack/schema.ts";
import { installInterruptHandlers, interruptedExitCode } from "../provision/interrupt.ts";

/** The repository root (package.json, stacks/, scenarios/), two levels above this file. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Exit codes of the CLI (docs/commands.md's exit code list is this one). IngestbenchError subclasses carry their own
 * (core/errors.ts: ConfigurationError 2, ProvisioningError 3, VerificationError 4); an exception that is not an
 * IngestbenchError is a bug and exits with EX_SOFTWARE (70) of sysexits(3), apart from 1 (a check failed or a
 * regression).
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  configuration: 2,
  provisioning: 3,
  verification: 4,
  unexpected: 70,
  sigint: 130,
  sigterm: 143,
} as const;

/** What a command module gets from the CLI. */
export interface CliContext {
  /** the repository root (stacks/, package.json) */
  projectRoot: string;
  /** where stack files are read from: <projectRoot>/stacks */
  stacksDir: string;
  /** the default of every `-r, --results <dir>` option, relative to the working directory */
  resultsDir: string;
  /** stdout: reports, tables and `--json` documents only */
  stdout: Pick<Writable, "write">;
  /** stderr: progress, notices and errors */
  stderr: Pick<Writable, "write">;
  /** the exit code the command set (0 until one does); index.ts hands it to the process */
  exitCode: number;
  /** print `value` as the one JSON document of a `--json` command (2-space indented, newline-terminated) */
  printJson(value: unknown): void;
  /** print human-readable text on stdout (newline-terminated) */
  print(text: string): void;
  /**
   * Wrap a command body as a commander action: the number it returns (if any) becomes the exit code.
   * Errors propagate to index.ts, which maps them to exit codes.
   */
  action<A extends unknown[]>(
    fn: (...args: A) => Promise<number | void> | number | void,
  ): (...args: A) => Promise<void>;
  /**
   * Run a command body that deploys or destroys (Pulumi) with SIGINT/SIGTERM aborting `signal`; an interrupted body
   * exits 130/143 instead of failing (its error is printed). Returns the exit code (0, or 130/143).
   */
  interruptible(fn: (signal: AbortSignal) => Promise<void>): Promise<number>;
}

/** A command module: adds its command (options, arguments, action) to the program. */
export type CommandModule = (program: Command, ctx: CliContext) => void;

/** Make the context of one invocation. `streams` default to the process's. */
export function createContext(
  streams: { stdout?: Pick<Writable, "write">; stderr?: Pick<Writable, "write"> } = {},
): CliContext {
  const stdout = streams.stdout ?? process.stdout;
  const stderr = streams.stderr ?? process.stderr;
  const ctx: CliContext = {
    projectRoot: PROJECT_ROOT,
    stacksDir: path.join(PROJECT_ROOT, "stacks"),
    resultsDir: "results",
    stdout,
    stderr,
    exitCode: 0,
    printJson: (value) => void stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    print: (text) => void stdout.write(`${text}\n`),
    action:
      (fn) =>
      async (...args) => {
        const code = await fn(...args);
        if (typeof code === "number") ctx.exitCode = code;
      },
    async interruptible(fn) {
      const handle = installInterruptHandlers();
      try {
        await fn(handle.signal);
      } catch (err) {
        if (!handle.signal.aborted) throw err;
        stderr.write(`ingestbench: ${(err as Error).message}\n`);
      } finally {
        handle.dispose();
      }
      const sig = handle.interrupted();
      return sig ? interruptedExitCode(sig) : EXIT.ok;
    },
  };
  return ctx;
}

/**
 * The names of a comma-separated list flag, trimmed, in order; empty ones (a trailing comma) dropped. Unless `repeats`,
 * a name given twice is refused: a stack named twice in --stacks would be run, or compared, against itself. `key`
 * says which names are the same thing (a stack's name and its file's path); default: the same text.
 * @throws ConfigurationError E_FLAG "<what> <name> is named twice in <flag>"
 */
export function listFlag(
  flag: string,
  raw: string,
  what: string,
  repeats = false,
  key: (name: string) => string = (n) => n,
): string[] {
  const names = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!repeats) {
    const keys = names.map(key);
    const at = keys.findIndex((k, i) => keys.indexOf(k) !== i);
    if (at >= 0) {
      const first = names[keys.indexOf(keys[at]!)]!;
      const same = first === names[at] ? first : `${first} (also as ${names[at]})`;
      throw new ConfigurationError("E_FLAG", `${what} ${same} is named twice in ${flag}`, {
        field: flag.replace(/^-+/, ""),
      });
    }
  }
  return names;
}

/**
 * The stacks a command runs or compares, from `--stack <name>` (one) or `--stacks <a,b,...>` (several, in order);
 * exactly one of the two. Returns the names. A stack named twice in --stacks is refused unless `repeats` (compare
 * --scenarios, where --stacks gives each scenario's stack in order).
 * @throws ConfigurationError E_FLAG when neither or both are given, `--stack` holds several names, or a stack is named
 *   twice in --stacks
 */
export function stackNames(flags: { stack?: string; stacks?: string }, repeats = false): string[] {
  if (flags.stack !== undefined && flags.stacks !== undefined)
    throw new ConfigurationError("E_FLAG", "give --stack <name> or --stacks <a,b,...>, not both");
  if (flags.stack !== undefined) {
    if (flags.stack.includes(","))
      throw new ConfigurationError(
        "E_FLAG",
        `--stack takes one stack name; for several use --stacks ${flags.stack}`,
      );
    const name = flags.stack.trim();
    if (!name) throw new ConfigurationError("E_FLAG", "--stack: empty stack name");
    return [name];
  }
  // a name and its stack file's path are the same stack (infra/stack/schema.ts stackFile)
  const names = listFlag("--stacks", flags.stacks ?? "", "stack", repeats, (n) => path.resolve(stackFile(n)));
  if (names.length === 0) throw new ConfigurationError("E_FLAG", "give --stack <name> or --stacks <a,b,...>");
  return names;
}

/**
 * Under `npm run` (npm sets npm_lifecycle_event) a signal sent to npm alone does not reach this process: npm exits on
 * SIGTERM and leaves it running without a parent, and waits on SIGINT. Once the parent is gone, stop as on SIGTERM
 * (tear down, keep what was measured, exit 143), so that a supervisor killing `npm run bench` leaves nothing behind.
 */
export function stopWhenNpmIsGone(): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.stderr.write("ingestbench: npm, which started this process, is gone: stopping as on SIGTERM\n");
    process.kill(process.pid, "SIGTERM");
  }, 500);
  timer.unref();
}

/**
 * A closed pipe (`ingestbench bench ... | head`) must not kill the harness mid-run: the run goes on, tears down and
 * writes its results; only the printing is lost. Other stream errors still throw.
 */
export function ignoreClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
    });
  }
}
