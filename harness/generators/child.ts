/**
 * Process entry that runs one generator in its own process (inside the loadgen host's cgroup and namespace):
 *
 *   node --import tsx harness/generators/child.ts '<spec json>'
 *
 * The spec ({ name, config, ctx }, see GeneratorSpec in process.ts) comes from argv[2] or, if absent, from the
 * environment variable INGESTBENCH_GENERATOR_SPEC. Output: JSON lines on stdout —
 *   {"type":"progress", ...GeneratorProgress, "t": epochMs}   at least every 250 ms
 *   {"type":"final", ...GeneratorFinal}                        once, then exit 0
 *   {"type":"error", "message": "..."}                         on a fatal error, then exit 1
 *   {"type":"ready"}                                           once its stop handlers are installed (before that,
 *                                                             SIGTERM would kill it without a report)
 * It stops gracefully (no new batches, in-flight requests finished) on SIGTERM, SIGINT, or when stdin (a pipe)
 * closes — so a parent that dies takes its generator with it.
 */
import { fstatSync } from "node:fs";
import { ConfigurationError } from "../../core/errors.ts";
import { generators } from "./index.ts";
import type { GeneratorSpec } from "./process.ts";

function writeLine(obj: unknown): Promise<void> {
  return new Promise((resolve) => {
    process.stdout.write(`${JSON.stringify(obj)}\n`, () => resolve());
  });
}

function parseSpec(): GeneratorSpec {
  const raw = process.argv[2] ?? process.env.INGESTBENCH_GENERATOR_SPEC;
  if (!raw) throw new ConfigurationError("E_GENERATOR_SPEC", "no generator spec: pass it as argv[2] or INGESTBENCH_GENERATOR_SPEC");
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
  if (!factory) throw new ConfigurationError("E_GENERATOR", `unknown generator "${spec.name}" (known: ${Object.keys(generators).join(", ")})`, { field: "generator" });
  const parsed = factory.schema.safeParse(spec.config ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ["generator", spec.name, ...issue.path].join(".");
    throw new ConfigurationError("E_GENERATOR_CONFIG", `${field}: ${issue.message}`, { field, cause: parsed.error });
  }
  const generator = factory.create(parsed.data, spec.ctx);

  const ac = new AbortController();
  const stop = (): void => ac.abort();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  try {
    const st = fstatSync(0);
    if (st.isFIFO() || st.isSocket()) {
      process.stdin.on("end", stop);
      process.stdin.on("close", stop);
      process.stdin.on("error", stop);
      process.stdin.resume();
    }
  } catch {
    /* no stdin */
  }
  await writeLine({ type: "ready" });

  const final = await generator.run(ac.signal, (p) => {
    process.stdout.write(`${JSON.stringify({ type: "progress", ...p, t: performance.timeOrigin + performance.now() })}\n`);
  });
  await writeLine({ type: "final", ...final });
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    const e = err as Error & { code?: string };
    await writeLine({ type: "error", message: e?.message ?? String(err), code: e?.code });
    process.exit(1);
  },
);
