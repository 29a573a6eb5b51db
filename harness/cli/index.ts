/**
 * The `ingestbench` command line (commander). Makes the invocation's context (./context.ts), registers every command
 * (./commands/<name>.ts, one line each in COMMANDS), and is the only place that turns errors into exit codes (EXIT
 * in ./context.ts): an IngestbenchError exits with its own code (ConfigurationError 2, ProvisioningError 3,
 * VerificationError 4; usage errors are configuration errors, 2); an exception that is anything else is a bug and
 * exits 70, printing one line `ingestbench: unexpected error: <message>` (its stack trace too with --debug or
 * INGESTBENCH_DEBUG=1). A command's own code (1 a failed check or a regression, 130/143 interrupted) is what its
 * action returned.
 */
import { setFlagsFromString } from "node:v8";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import { IngestbenchError } from "../../core/errors.ts";
import { registerAa } from "./commands/aa.ts";
import { registerBench } from "./commands/bench.ts";
import { registerCapacity } from "./commands/capacity.ts";
import { registerCompare } from "./commands/compare.ts";
import { registerDown } from "./commands/down.ts";
import { registerGc } from "./commands/gc.ts";
import { registerNightly } from "./commands/nightly.ts";
import { registerPlugins } from "./commands/plugins.ts";
import { registerReport } from "./commands/report.ts";
import { registerResults } from "./commands/results.ts";
import { registerRun } from "./commands/run.ts";
import { registerShow } from "./commands/show.ts";
import { registerStacks } from "./commands/stacks.ts";
import { registerUp } from "./commands/up.ts";
import { registerValidate } from "./commands/validate.ts";
import {
  createContext,
  EXIT,
  ignoreClosedPipes,
  stopWhenNpmIsGone,
  type CliContext,
  type CommandModule,
} from "./context.ts";
import { redact } from "../../core/secrets.ts";

/** Every command, in help order; a command is registered by one line here. */
const COMMANDS: CommandModule[] = [
  registerBench,
  registerCompare,
  registerShow,
  registerReport,
  registerResults,
  registerValidate,
  registerStacks,
  registerPlugins,
  registerCapacity,
  registerAa,
  registerNightly,
  registerGc,
  registerUp,
  registerRun,
  registerDown,
];

/**
 * The environment variable that makes every command fail with a plain Error before its action runs: the test hook
 * of the exit code of unexpected errors (70), exercised through the real entry point (test/harness/cli.test.ts).
 */
export const CRASH_HOOK_ENV = "INGESTBENCH_TEST_CRASH";

function packageVersion(projectRoot: string): string {
  return (JSON.parse(readFileSync(path.join(projectRoot, "package.json"), "utf8")) as { version: string })
    .version;
}

/**
 * The Examples section of `ingestbench --help`: the commands a newcomer runs first (test/harness/help.test.ts keeps
 * the whole help within 40 lines). The prose behind each command: docs/commands.md.
 */
export const EXAMPLES = `
Examples:
  npm run bench                     # the quickstart on two local stacks
  ingestbench bench --stack local-2-cores scenarios/quickstart.yaml
  ingestbench compare --scenario quickstart --stacks local-quarter-core,local-2-cores
  ingestbench report --scenario quickstart --out report.html
  ingestbench validate scenarios/*.yaml stacks/*.yaml
  ingestbench stacks
  ingestbench plugins
  ingestbench gc --dry-run

More: ingestbench <command> --help, docs/commands.md, docs/output.md (the output).
`;

/** Commander's own end of an invocation (--version, --help, a usage error), carried to runCli as its exit code. */
class CommanderExit extends Error {
  constructor(readonly code: number) {
    super(`commander exit ${code}`);
  }
}

/** Build the program on a context (exported for tests of --help and argument errors). */
export function program(ctx: CliContext = createContext()): Command {
  const cmd = new Command("ingestbench")
    .description("Benchmark log pipelines on capped hardware and count what the database kept.")
    .version(packageVersion(ctx.projectRoot), "-V, --version")
    .option("--debug", "print an unexpected error's stack (as INGESTBENCH_DEBUG=1 does)")
    // commander's version, help and usage errors go to the context's streams (the process's, unless a test's)
    .configureOutput({ writeOut: (s) => void ctx.stdout.write(s), writeErr: (s) => void ctx.stderr.write(s) })
    // one line per command in the list (its summary); each command's own --help has its usage and options
    .configureHelp({ subcommandTerm: (c) => c.name() })
    .addHelpText("after", EXAMPLES)
    .showHelpAfterError("(add --help for the usage and options)")
    // usage errors (unknown command or option, missing argument) are configuration errors: exit 2, not 1; nothing
    // has run yet, so runCli returns at once (commander would otherwise call process.exit)
    .exitOverride((err) => {
      throw new CommanderExit(err.exitCode === 0 ? EXIT.ok : EXIT.configuration);
    })
    .hook("preAction", () => {
      if (process.env[CRASH_HOOK_ENV] === "1")
        throw new Error(`${CRASH_HOOK_ENV}=1: a crash on purpose (test hook)`);
    });
  for (const register of COMMANDS) register(cmd, ctx);
  return cmd;
}

/** Whether an unexpected error's stack is printed: --debug anywhere before `--`, or INGESTBENCH_DEBUG=1. */
function debugWanted(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (
    process.env.INGESTBENCH_DEBUG === "1" || (end === -1 ? argv : argv.slice(0, end)).includes("--debug")
  );
}

/**
 * One invocation on `ctx` (argv as process.argv: node, script, then the arguments): parse, run the command, and
 * return its exit code (EXIT in ./context.ts), errors printed on ctx.stderr. Sets nothing on the process but
 * INGESTBENCH_DEBUG=1 under --debug; main() hands the code to the process (tests call this in-process for
 * invocations that start nothing: test/harness/cli.test.ts).
 */
export async function runCli(argv: string[], ctx: CliContext = createContext()): Promise<number> {
  // the runner prints an unexpected error's stack of a run (harness/runner/drive.ts) under the same switch
  if (debugWanted(argv)) process.env.INGESTBENCH_DEBUG = "1";
  try {
    await program(ctx).parseAsync(argv);
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderExit) return err.code;
    if (err instanceof IngestbenchError) {
      ctx.stderr.write(`ingestbench: ${redact(err.message)}\n`);
      return err.exitCode;
    }
    const message = err instanceof Error ? err.message : String(err);
    ctx.stderr.write(`ingestbench: unexpected error: ${redact(message.split("\n")[0]!)}\n`);
    // the stack's frames only: its first line(s) repeat the message just printed
    if (debugWanted(argv) && err instanceof Error && err.stack) {
      const frames = err.stack.split("\n").filter((l) => /^\s+at /.test(l));
      ctx.stderr.write(`${(frames.length > 0 ? frames : [redact(err.stack)]).join("\n")}\n`);
    }
    return EXIT.unexpected;
  }
}

/** CLI entry: parse argv, run the command, map its outcome to the process's exit code. */
export async function main(argv: string[]): Promise<void> {
  keepHeapSmall();
  stopWhenNpmIsGone();
  ignoreClosedPipes();
  process.exitCode = await runCli(argv, createContext());
}

/**
 * Keep V8's heap small in this process (not in the generators, harness/generators/child.ts, whose throughput needs
 * V8's defaults); both flags are read by V8 as it runs, so they take effect when set at run time:
 * - `--semi-space-growth-factor=1`: the young generation stays at its first size. The passes after the load (a
 *   PostgreSQL COPY of every (gen, seq) through pg-copy-streams, a row's slice per row) made V8 grow it to its
 *   2 × 16 MiB maximum: after a 4 GiB replay the harness's RSS grew by
 *   half after the load, against less than a tenth with a young generation that stays small, the ledger's pass no
 *   slower (docs/measurements.md, "Figures moved from code comments").
 * - `--heap-growing-percent=50`: after a full GC the old generation may grow by half its live size before the next
 *   (V8's own factor reaches 4). A content check that compares every row (up to a million: core/fidelity.ts) reads
 *   pages of 10,000 rows that outlive the small young generation; their garbage filled the old generation to three
 *   times the live data (`node --trace-gc`); with this flag the harness's RSS after a 1M-row content check fell by a
 *   third, the check about as fast (docs/measurements.md, "Figures moved from code comments").
 */
function keepHeapSmall(): void {
  setFlagsFromString("--semi-space-growth-factor=1");
  setFlagsFromString("--heap-growing-percent=50");
}
