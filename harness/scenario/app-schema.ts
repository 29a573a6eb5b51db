/**
 * The application under test (write-up 003, docs/write-ups.md): a scenario's `app` and `variants` blocks, strict zod
 * schemas validated with the rest of the scenario (harness/scenario/schema.ts), errors at file:line:col and field.
 * The design, and what runs today, are in docs/app-under-test.md: the schema is settled, the runner refuses a scenario
 * with `app` (E_APP_NOT_RUNNABLE, harness/runner/plan.ts) until the application host exists, so nothing is silently
 * ignored.
 *
 * ```yaml
 * app:
 *   command: [node, examples/sample-app/server.ts, --workers, "4"]   # or image: ingestbench/sample-app:debian
 *   host: app                        # the stack host it runs on (its caps apply); default "app"
 *   env: { PORT: "8080" }            # for every variant
 *   ready: { http: { port: 8080, path: /health }, timeout: 30s }     # or { log: "listening on" }
 *   results:                         # how its own figures are read once it exits or is stopped
 *     from: stdout-json              # the last JSON line it prints; or file (path) or regex (pattern, named groups)
 *     map: { throughput: txPerSecond, latencyMeanMs: meanMs, latencyP50Ms: p50Ms, latencyP99Ms: p99Ms, sent: exported, dropped: dropped }
 * variants:                          # each a cell; ratios of every variant to the first
 *   - { name: disabled, env: { EXPORT: "0" } }
 *   - { name: enabled,  env: { EXPORT: "1" } }
 * ```
 */
import { z } from "zod";
import { parseRunDuration, zUnit } from "../../core/units.ts";

/**
 * Figures an application reports that ingestbench knows how to show (003's table: docs/app-under-test.md). `sentBytes`
 * is all the exporter wrote; `recordBytes` the part of it that is the records' own encodings (per protocol:
 * harness/runner/app-bytes.ts), checked against the records the sink holds.
 */
export const APP_FIGURES = [
  "throughput",
  "latencyMeanMs",
  "latencyP50Ms",
  "latencyP99Ms",
  "latencyMaxMs",
  "sent",
  "sentBytes",
  "recordBytes",
  "dropped",
  "elapsedMs",
] as const;
export type AppFigure = (typeof APP_FIGURES)[number];

const NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const env = z.record(
  z.string().regex(ENV_NAME, {
    message: "an environment variable name is letters, digits and _, not starting with a digit",
  }),
  z.string(),
);
const seconds = zUnit(parseRunDuration);

/** How readiness is told: an HTTP answer below 500 on the app's port and path, or a line of its output matching. */
const readySchema = z
  .object({
    http: z
      .object({ port: z.number().int().min(1).max(65535), path: z.string().startsWith("/").default("/") })
      .strict()
      .optional(),
    log: z.string().min(1).optional(),
    timeout: seconds.default("30s"),
  })
  .strict()
  .superRefine((r, ctx) => {
    if ((r.http === undefined) === (r.log === undefined))
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: "give exactly one of ready.http { port, path } or ready.log (a regex over the app's output)",
      });
  });

/** Where the app's own figures come from, and which of its keys (or named groups) are which figure. */
const resultsSchema = z
  .object({
    from: z.enum(["stdout-json", "file", "regex"]),
    file: z.string().min(1).optional(),
    pattern: z.string().min(1).optional(),
    map: z.record(z.enum(APP_FIGURES), z.string().min(1)).refine((m) => Object.keys(m).length > 0, {
      message: "map at least one figure, e.g. { throughput: txPerSecond }",
    }),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.from === "file" && r.file === undefined)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["file"],
        message: "results.from: file needs results.file (a path the app writes its JSON to)",
      });
    if (r.from !== "file" && r.file !== undefined)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["file"],
        message: `results.file is for from: file, not ${r.from}`,
      });
    if (r.from === "regex") {
      if (r.pattern === undefined) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["pattern"],
          message: "results.from: regex needs results.pattern with named groups",
        });
        return;
      }
      let re: RegExp;
      try {
        re = new RegExp(r.pattern);
      } catch (e) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["pattern"],
          message: `not a regular expression: ${(e as Error).message}`,
        });
        return;
      }
      const groups = new Set([...re.source.matchAll(/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((m) => m[1]!));
      for (const [figure, group] of Object.entries(r.map)) {
        if (!groups.has(group))
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ["map", figure],
            message: `the pattern has no named group "${group}" (it has: ${[...groups].join(", ") || "none"})`,
          });
      }
    } else if (r.pattern !== undefined)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["pattern"],
        message: `results.pattern is for from: regex, not ${r.from}`,
      });
  });

/** `app:` — the application under test. Exactly one of `command` (argv, run on the host) and `image` (a container). */
export const appSchema = z
  .object({
    command: z.array(z.string().min(1)).min(1).optional(),
    image: z.string().min(1).optional(),
    host: z
      .string()
      .regex(NAME, { message: 'a host name is lowercase letters, digits, "_" and "-", e.g. "app"' })
      .default("app"),
    env: env.default({}),
    ready: readySchema,
    results: resultsSchema,
    /** how long the app's own benchmark may run before it is stopped (its results are then read) */
    timeout: seconds.default("10m"),
  })
  .strict()
  .superRefine((a, ctx) => {
    if ((a.command === undefined) === (a.image === undefined))
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: "give exactly one of app.command (argv) or app.image (a container image)",
      });
  });

/** `variants:` — named sets of env and extra args; each is a cell, the first the baseline of the ratios. */
export const variantsSchema = z
  .array(
    z
      .object({
        name: z.string().regex(NAME, {
          message: 'a variant name is lowercase letters, digits, "_" and "-", e.g. "enabled"',
        }),
        env: env.default({}),
        args: z.array(z.string()).default([]),
      })
      .strict(),
  )
  .min(2, { message: "declare at least two variants (the first is the baseline), e.g. disabled and enabled" })
  .superRefine((vs, ctx) => {
    const seen = new Map<string, number>();
    vs.forEach((v, i) => {
      const prev = seen.get(v.name);
      if (prev !== undefined)
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [i, "name"],
          message: `duplicate variant "${v.name}" (also variants.${prev})`,
        });
      seen.set(v.name, i);
    });
  });

/** A validated `app` block (durations in milliseconds). */
export type AppSpec = z.output<typeof appSchema>;
/** A validated `variants` list. */
export type Variant = z.output<typeof variantsSchema>[number];
