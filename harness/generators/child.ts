/**
 * Process entry that runs one generator in its own process (inside the loadgen host's cgroup and namespace):
 *
 *   node --import tsx harness/generators/child.ts '<spec json>'
 *
 * The spec ({ name, config, ctx }, see GeneratorSpec in process.ts) comes from argv[2] or, if absent, from the
 * environment variable INGESTBENCH_GENERATOR_SPEC. Output: JSON lines on stdout —
 *   {"type":"progress", ...GeneratorProgress, "t": epochMs}   at least every 250 ms
 *   {"type":"final", ...GeneratorFinal}                        once, then exit 0 (with replayIndex after a replay)
 *   {"type":"error", "message": "..."}                         on a fatal error, then exit 1
 *   {"type":"ready"}                                           once its stop handlers are installed (before that,
 *                                                             SIGTERM would kill it without a report)
 *   {"type":"pong","id":n,"t0":x,"t1":ms,"t2":ms}              the answer to a clock ping (below)
 * With `clockSync: true` in the spec and stdin a pipe, the child answers clock pings before it sends anything and
 * starts the load on a go line (the exchange of harness/generators/clock.ts), both on stdin:
 *   {"type":"ping","id":n,"t0":x}   answered with t1 (receipt) and t2 (reply) read from Date.now(), the clock that
 *                                   stamps sent_at (harness/generators/loop.ts)
 *   {"type":"go"}                   start the load
 * It stops gracefully (no new batches, in-flight requests finished) on SIGTERM, SIGINT, or when stdin (a pipe)
 * closes — so a parent that dies takes its generator with it.
 */
import { fstatSync } from "node:fs";
import { createInterface } from "node:readline";
import { ConfigurationError } from "../../core/errors.ts";
import { replayIndexOf } from "../../core/events/replay-index.ts";
import { generators } from "./index.ts";
import type { GeneratorSpec } from "./process.ts";

function writeLine(obj: unknown): Promise<void> {
  return new Promise((resolve) => {
    process.stdout.write(`${JSON.stringify(obj)}\n`, () => resolve());
  });
}

function parseSpec(): GeneratorSpec {
  const raw = process.argv[2] ?? process.env.INGESTBENCH_GENERATOR_SPEC;
  if (!raw)
    throw new ConfigurationError(
      "E_GENERATOR_SPEC",
      "no generator spec: pass it as argv[2] or INGESTBENCH_GENERATOR_SPEC",
    );
  let spec: GeneratorSpec;
  try {
    spec = JSON.parse(raw) as GeneratorSpec;
  } catch (err) {
    throw new ConfigurationError("E_GENERATOR_SPEC", `generator spec is not JSON: ${(err as Error).message}`);
  }
  if (!spec || typeof spec.name !== "string" || typeof spec.ctx !== "object" || spec.ctx === null) {
    throw new ConfigurationError("E_GENERATOR_SPEC", "generator spec needs { name, config, ctx }");
  }
  return spec;
}

async function main(): Promise<void> {
  const spec = parseSpec();
  const factory = generators[spec.name];
  if (!factory)
    throw new ConfigurationError(
      "E_GENERATOR",
      `unknown generator "${spec.name}" (known: ${Object.keys(generators).join(", ")})`,
      { field: "generator" },
    );
  const parsed = factory.schema.safeParse(spec.config ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ["generator", spec.name, ...issue.path].join(".");
    throw new ConfigurationError("E_GENERATOR_CONFIG", `${field}: ${issue.message}`, {
      field,
      cause: parsed.error,
    });
  }
  const generator = factory.create(parsed.data, spec.ctx);

  const ac = new AbortController();
  const stop = (): void => ac.abort();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  let piped = false;
  try {
    const st = fstatSync(0);
    piped = st.isFIFO() || st.isSocket();
  } catch {
    /* no stdin */
  }
  // without a pipe to answer on, a clock sync cannot happen: the load starts at once
  let go: Promise<void> = Promise.resolve();
  if (piped) {
    process.stdin.on("end", stop);
    process.stdin.on("close", stop);
    process.stdin.on("error", stop);
    if (spec.clockSync) go = answerClockPings(ac.signal);
    else process.stdin.resume();
  }
  await writeLine({ type: "ready" });
  await go;

  const final = await generator.run(ac.signal, (p) => {
    process.stdout.write(
      `${JSON.stringify({ type: "progress", ...p, t: performance.timeOrigin + performance.now() })}\n`,
    );
  });
  // the lines this process read of its replay file, indexed (core/events/replay-index.ts): the content check's seeks
  await writeLine({ type: "final", ...final, replayIndex: replayIndexOf(spec.ctx.replayFile) });
}

/**
 * Answer `ping` lines on stdin with `pong` (t1 at receipt, t2 at reply, Date.now(): the sent_at clock) until a `go`
 * line arrives or `signal` aborts; resolves then. Pings after go are still answered. Other lines are ignored.
 */
function answerClockPings(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    signal.addEventListener("abort", () => resolve(), { once: true });
    createInterface({ input: process.stdin, crlfDelay: Infinity }).on("line", (line) => {
      const t1 = Date.now(); // lines are emitted as their chunk arrives (node:readline)
      let msg: { type?: unknown; id?: unknown; t0?: unknown };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return;
      }
      if (msg.type === "ping")
        process.stdout.write(
          `${JSON.stringify({ type: "pong", id: msg.id, t0: msg.t0, t1, t2: Date.now() })}\n`,
        );
      else if (msg.type === "go") resolve();
    });
  });
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    const e = err as Error & { code?: string };
    await writeLine({ type: "error", message: e?.message ?? String(err), code: e?.code });
    process.exit(1);
  },
);
