/**
 * Flags of the bench scripts (bench/*.ts) through node:util parseArgs: `--help` or `-h` prints the script's usage and
 * exits 0; an unknown flag or a flag without its value prints the parser's message and the usage on stderr and exits
 * 2, as the CLI does for bad usage (harness/cli/context.ts EXIT), not a stack trace.
 */
import { cpus, loadavg, release } from "node:os";
import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * The values of `options` parsed from `args` (default: this process's arguments), or the process ends as above.
 * `usage`: what `--help` prints, e.g. the script's synopsis and what each flag does.
 */
export function benchArgs<O extends NonNullable<ParseArgsConfig["options"]>>(
  options: O,
  usage: string,
  args = process.argv.slice(2),
): ReturnType<typeof parseArgs<{ options: O; args: string[] }>>["values"] {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${usage.trim()}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({ options, args }).values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${usage.trim()}\n`);
    process.exit(2);
  }
}

/** Bad usage found after parsing (a value out of range, an unknown name): `message` and the usage on stderr, exit 2. */
export function usageError(message: string, usage: string): never {
  process.stderr.write(`${message}\n\n${usage.trim()}\n`);
  process.exit(2);
}

/**
 * This machine as the bench scripts' figures name it (docs/decisions/0007-every-number-names-its-machine.md): CPU
 * model, cores, kernel and the load average (1, 5, 15 min) now, e.g. "AMD EPYC, 2 cores, kernel 6.18.44, load average
 * 0.14 1.54 2.78".
 */
export function machineLine(): string {
  return `${cpus()[0]?.model.trim() ?? "?"}, ${cpus().length} cores, kernel ${release()}, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`;
}
