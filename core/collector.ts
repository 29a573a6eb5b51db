/**
 * The steps the local collector components (plugins/collectors/<name>/component.ts) share: parse the scenario block,
 * require the sink it writes into, find the program at the pinned version (core/program.ts), and start it and wait
 * until it is ready with the E_COLLECTOR_* errors. What "ready" means stays the component's own (its probe).
 */
import { join } from "node:path";
import type { z } from "zod";
import type { Downstream } from "./component.ts";
import { ConfigurationError, ProvisioningError, VerificationError } from "./errors.ts";
import type { LocalHost } from "./hosts.ts";
import { startServer, waitReady, type Server } from "./process.ts";
import { hostProgram, type Program, type ProgramSpec } from "./program.ts";

/**
 * Collector `name`'s scenario block `raw`, parsed by its zod `schema` (defaults filled).
 * @throws ConfigurationError E_COLLECTOR_CONFIG at the first issue's field, `collector.<name>.<path>`
 */
export function parseCollectorConfig<S extends z.ZodTypeAny>(
  name: string,
  schema: S,
  raw: unknown,
): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = `collector.${name}.${issue.path.join(".")}`;
    throw new ConfigurationError("E_COLLECTOR_CONFIG", `${at}: ${issue.message}`, {
      field: at,
      cause: parsed.error,
    });
  }
  return parsed.data;
}

/**
 * The sink collector `name` writes into.
 * @throws ConfigurationError E_COLLECTOR_DOWNSTREAM when there is none
 */
export function requireDownstream(name: string, downstream: Downstream | undefined): Downstream {
  if (!downstream)
    throw new ConfigurationError(
      "E_COLLECTOR_DOWNSTREAM",
      `collector ${name} needs the sink it writes into (downstream)`,
    );
  return downstream;
}

/**
 * The program of `spec` on `host` (core/program.ts hostProgram), held against the scenario's `pinned` version by
 * `matches(pinned, running)` (default: equal).
 * @throws hostProgram's ConfigurationErrors; VerificationError E_VERSION naming the program and both versions
 */
export function pinnedProgram(
  host: LocalHost,
  spec: ProgramSpec,
  pinned: string,
  matches: (pinned: string, running: string) => boolean = (p, r) => p === r,
): Program {
  const program = hostProgram(host, spec);
  if (!matches(pinned, program.version))
    throw new VerificationError(
      "E_VERSION",
      `${spec.plugin} at ${program.argv.join(" ")} reports version ${program.version}, but collector.${spec.plugin}.version pins ${pinned}; refusing to start`,
    );
  return program;
}

/**
 * Start collector `name` (`argv`: program then arguments) on `host` and wait until `probe` resolves with a value other
 * than undefined (core/process.ts waitReady, every `intervalMs` ms for up to `timeoutMs` ms). Output is appended to
 * `<dataDir>/<name>.log`; stop: SIGCONT, SIGTERM, SIGKILL after `graceMs` ms (and the children's, `killChildren`).
 * @throws ProvisioningError E_COLLECTOR_ABORTED (the signal), E_COLLECTOR_START (spawn failed, or exited during
 *   startup, with its output), E_COLLECTOR_READY (`notReady(lastProbeError)`, then its output), after stopping it
 */
export async function startCollector(
  host: LocalHost,
  name: string,
  argv: readonly string[],
  o: {
    env: Record<string, string>;
    graceMs: number;
    killChildren?: boolean;
    timeoutMs: number;
    intervalMs: number;
    signal?: AbortSignal;
    probe: () => Promise<true | undefined>;
    notReady: (lastError: string) => string;
  },
): Promise<Server> {
  const [cmd, ...args] = argv;
  const server = startServer(host, cmd!, args, {
    env: o.env,
    logFile: join(host.dataDir, `${name}.log`),
    stop: {
      signal: "SIGTERM",
      graceMs: o.graceMs,
      continueFirst: true,
      ...(o.killChildren ? { killChildren: true } : {}),
    },
  });
  await waitReady(server, {
    signal: o.signal,
    timeoutMs: o.timeoutMs,
    intervalMs: o.intervalMs,
    probe: o.probe,
    errors: {
      aborted: () =>
        new ProvisioningError("E_COLLECTOR_ABORTED", `aborted while waiting for ${name} to start`),
      spawnFailed: (e) =>
        new ProvisioningError("E_COLLECTOR_START", `cannot start ${name}: ${e.message}`, { cause: e }),
      exited: (code) =>
        new ProvisioningError(
          "E_COLLECTOR_START",
          `${name} exited during startup (code ${code}); output:\n${server.log.text()}`,
        ),
      timedOut: (last) =>
        new ProvisioningError("E_COLLECTOR_READY", `${o.notReady(last)}; output:\n${server.log.text()}`),
    },
  });
  return server;
}
