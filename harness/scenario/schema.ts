/**
 * The scenario schema: `scenarios/<name>.yaml` → Scenario (validated once, at the edge; errors name file:line and
 * the field). Plugin configs (generator, collector, sink) are validated against schemas from registries the caller
 * passes in, so this module imports no plugin.
 *
 * ```yaml
 * name: quickstart
 * description: one sequential client bulk-inserting log lines into PostgreSQL
 * event:                                   # ordered; gen, seq and sent_at are always appended
 *   - { name: ts,  type: timestamp }
 *   - { name: msg, type: string, size: 180 }
 * source: { file: /var/log/dpkg.log }      # optional: replay real lines into the last string field
 * generator: { pg-copy: { batch: 8000, connections: 1, rate: max, seed: 42 } }   # or none: the collector's own
 *                                          # load (its built-in generator, core/plugin.ts SelfLoad; selfLoadIssues)
 * collector: none                          # or { <collector>: { ... } }
 * sink: { postgres: { version: "18.4.0-beta.17" } }
 * warmup: 5s
 * duration: 30s
 * interval: 1s                             # default 1s, at least 100ms
 * drain: { timeout: 60s }                  # default 60s
 * replicates: 3                            # default 3
 * matrix: { generator.pg-copy.batch: [1000, 8000] }   # default {}: a cartesian product, or a list of cells:
 * # matrix: [ { generator.pg-copy.batch: 1000, generator.pg-copy.connections: 1 }, { generator.pg-copy.batch: 50000 } ]
 * checks: [ { ledger.lost: 0 }, { summary.lagP99Ms: { max: 1000 } } ]
 * fidelity: { all: 1000000, sample: 10000 }  # default: compare every stored row up to 1e6 rows, else 10 000 seeded seqs
 * query:                                   # optional: a query phase (clickhouse and postgres sinks; QueryPhase)
 *   statements: [ { name: count, sql: "SELECT count() FROM {table}", rows: 1, value: "{stored}" } ]
 *   cells: [ { concurrency: 10, count: 50 } ]
 *   timeout: 10s                           # per request; default 10s
 *   during: after                          # after (default: once the ingest is stored) or ingest (mixed mode)
 * steps: [ { at: 5s, kill: collector }, { at: 7s, restart: collector } ]   # default []: fault steps (./steps.ts)
 * ```
 */
import { statSync } from "node:fs";
import nodePath from "node:path";
import { z } from "zod";
import type { EventField } from "../../core/events/types.ts";
import { eventFieldSchema, stringSizeRequired } from "../../core/events/field-schema.ts";
import { pluginBlock, type PluginBlockWording, type PluginRef } from "../../core/plugin-block.ts";

/** The shortest `interval` a scenario may ask, ms (see the check in scenarioSchema). */
export const MIN_INTERVAL_MS = 100;
export type { PluginRef };
export { FIELD_NAME, MAX_STRING_SIZE, RESERVED_FIELDS } from "../../core/events/field-schema.ts";
import {
  addFlatIssue,
  addNestedIssues,
  flattenIssues,
  loadYamlFile,
  throwIssues,
  validate,
  type FieldPath,
  type FlatIssue,
} from "../../core/yaml.ts";
import { parseRunDuration, zUnit } from "../../core/units.ts";
import { DEFAULT_FIDELITY, type FidelityLimits } from "../../core/fidelity.ts";
import { appSchema, variantsSchema, type AppSpec, type Variant } from "./app-schema.ts";
import { stepsSchema, type Step } from "./steps.ts";

export type { Step };

/** A duration as written ("30s") and in milliseconds (30000), parsed by core/units.ts parseRunDuration. */
export interface Duration {
  ms: number;
  text: string;
}

/**
 * A check on the run result: `path` is a dotted path into run.json (e.g. "ledger.lost"); `equals` from
 * `{ ledger.lost: 0 }`, `min`/`max` (inclusive) from `{ summary.lagP99Ms: { max: 1000 } }`.
 */
export interface Check {
  path: string;
  equals?: number;
  min?: number;
  max?: number;
}

/** Everything a run needs from a scenario (one cell's view: matrix values already substituted). */
export interface ScenarioBody {
  name: string;
  description: string;
  /** declared event fields, in order (tracking fields gen, seq, sent_at are not listed here) */
  event: EventField[];
  /** replay the lines of this file into the last string field; a relative path is resolved against the scenario's directory */
  source?: { file: string };
  /** null for `generator: none`: the collector's built-in generator makes the load (selfLoadIssues) */
  generator: PluginRef | null;
  /** null for `collector: none` (the generator writes to the sink directly) */
  collector: PluginRef | null;
  sink: PluginRef;
  warmup: Duration;
  duration: Duration;
  /** verifier/observer sampling interval */
  interval: Duration;
  drain: { timeout: Duration };
  replicates: number;
  checks: Check[];
  /** the content check (core/fidelity.ts): every stored row when stored ≤ all, else `sample` seeded seqs */
  fidelity?: FidelityLimits;
  /** the query phase run against the sink once the ingest's ledger is exact (harness/runner/query-load.ts) */
  query?: QueryPhase;
  /** the application under test and its variants (./app-schema.ts; docs/app-under-test.md) */
  app?: AppSpec;
  variants?: Variant[];
  /** fault steps during the load, in file order (./steps.ts); [] when none */
  steps: Step[];
}

/**
 * One statement of a query phase. `sql` may name `{table}` (the run's table, database-qualified); the harness sends it
 * with " FORMAT TabSeparated" appended, so it must not carry a FORMAT clause. `rows` (rows the answer must have) and
 * `value` (what the first column of the first row must be: a number, or "{stored}" for the rows in the table) check
 * the answer against the known contents: a wrong answer is an error, not a fast query.
 */
export interface QueryStatement {
  name: string;
  sql: string;
  rows?: number;
  value?: number | "{stored}";
}

/**
 * A query phase: each statement at each concurrency × count cell (count = requests per closed-loop worker).
 * `during`: "after" (default) runs one pass once the ingest is stored, every acknowledged seq present; "ingest" runs
 * passes from the end of the warmup until the load ends (mixed mode: harness/runner/query-load.ts runQueryPhase).
 */
export interface QueryPhase {
  /**
   * statements run once, in order, before the first cell and off its clock (e.g. the index an audit table has:
   * `CREATE INDEX ON {table} (gen, seq)`); absent: none
   */
  prepare?: string[];
  statements: QueryStatement[];
  cells: Array<{ concurrency: number; count: number }>;
  /** per-request timeout */
  timeout: Duration;
  /** when the queries run: after the ingest (default) or during it; absent in older results ("after") */
  during?: QueryDuring;
}

/** When a query phase runs: "after" the ingest is stored, or "ingest" (while the load runs). */
export type QueryDuring = "after" | "ingest";

/** Sinks a query phase can run against (their SQL dialect and client: harness/runner/query-load.ts). */
export const QUERY_SINKS: readonly string[] = ["clickhouse", "postgres"];
/** Most requests one query cell may send (concurrency × count). */
export const MAX_QUERY_REQUESTS = 1_000_000;

/** One point of the matrix: `values` maps matrix keys to this cell's values; `id` is e.g. "batch=8000" ("default" without a matrix). */
export interface ScenarioCell {
  id: string;
  values: Record<string, unknown>;
  scenario: ScenarioBody;
}

/** A validated scenario file. The top-level fields are the base values (as written); `cells` the expanded matrix. */
export interface Scenario extends ScenarioBody {
  /** the file it was loaded from */
  file: string;
  /**
   * matrix key (dotted path into the scenario file, e.g. "generator.pg-copy.batch") → values, in file order; for the
   * list form, the distinct values each key takes over the listed cells, in first-seen order
   */
  matrix: Record<string, unknown[]>;
  /** "product": a map of keys to value lists (cartesian product); "list": an explicit list of cells */
  matrixForm: "product" | "list";
  /**
   * product form: the cartesian product in file order (the last key varies fastest); list form: the listed cells, in
   * order; one cell "default" when the matrix is empty
   */
  cells: ScenarioCell[];
}

/** A registry entry: a zod schema for the plugin's config, or anything with one (e.g. a GeneratorFactory). */
export type PluginSchemaEntry = z.ZodTypeAny | { schema: z.ZodTypeAny };

/** Plugin config schemas by plugin name, per role. */
export interface PluginRegistries {
  generators: Record<string, PluginSchemaEntry>;
  sinks: Record<string, PluginSchemaEntry>;
  collectors: Record<string, PluginSchemaEntry>;
  /** dotted run-result paths a check may name (the runner's CHECKABLE_PATHS); omitted = any well-formed path */
  checkPaths?: ReadonlySet<string>;
  /**
   * the collectors with a built-in load generator (core/plugin.ts SelfLoad), by name: what `generator: none` needs;
   * omitted = none has one
   */
  selfLoad?: Record<string, SelfLoadEntry>;
}

/** What the scenario schema knows of a collector's built-in generator (core/plugin.ts SelfLoad). */
export interface SelfLoadEntry {
  /** the input in the collector's words, e.g. "example-msg-generator()" */
  input: string;
  /** the dotted path under the collector block that selects it, e.g. "example-msg-generator" */
  setting: string;
  /** generator ids the config's own input uses; 0: the config does not select it */
  generators(config: unknown): number;
}

/** Most cells a matrix may expand to. */
export const MAX_CELLS = 10_000;
/** Replicates when a scenario gives none: 3, the fewest with which a comparison can reach a verdict (stats/compare.ts). */
export const DEFAULT_REPLICATES = 3;
/** The most replicates a scenario, a nightly plan entry or --replicates may ask for per cell (each is a whole run). */
export const MAX_REPLICATES = 1000;
const MATRIX_KEY = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const CHECK_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

function schemaOf(entry: PluginSchemaEntry): z.ZodTypeAny {
  return "safeParse" in entry ? entry : entry.schema;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A duration field (units.ts parseRunDuration: at most 7 days) kept as { ms, text }; `positive` rejects 0. */
const duration = (positive: boolean, what: string) =>
  z.unknown().transform((v, ctx): Duration => {
    if (v === undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.invalid_type, expected: "string", received: "undefined" });
      return z.NEVER;
    }
    const r = zUnit(parseRunDuration).safeParse(v);
    if (!r.success) {
      addNestedIssues(ctx, r.error, []);
      return z.NEVER;
    }
    if (positive && r.data <= 0) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `${what} must be more than 0` });
      return z.NEVER;
    }
    return { ms: r.data, text: String(v) };
  });

/** "; did you mean ..." for the nearest known name: a plugin written bare is shown as the block it must be. */
function didYouMean(near: string | undefined, form: "key" | "bare"): string {
  if (near === undefined) return "";
  return near === "none" || form === "key"
    ? `; did you mean "${near}"?`
    : `; did you mean { ${near}: { ... } }?`;
}

/** The scenario's wording of plugin-block errors (core/plugin-block.ts), for a scenario author: names sorted. */
function scenarioWording(role: "generator" | "collector" | "sink", allowNone: boolean): PluginBlockWording {
  const list = (names: readonly string[]) =>
    (names.length > 0 ? [...names].sort().join(", ") : "(none registered)") +
    (allowNone ? `, or "none"` : "");
  return {
    shape: (names) =>
      `${role} must be a map with exactly one key, the plugin name (${list(names)}), e.g. { ${[...names].sort()[0] ?? "name"}: { ... } }`,
    unknown: (name, names, near, form) =>
      `unknown ${role} "${name}"; known ${role}s: ${list(names)}${didYouMean(near, form)}`,
    bareName: (name) =>
      `write the ${role} as { ${name}: { ... } } (a map from the plugin name to its config)`,
    absentIsRequired: true,
  };
}

function rolePluginBlock(
  role: "generator" | "collector" | "sink",
  registry: Record<string, PluginSchemaEntry>,
  allowNone: boolean,
) {
  return pluginBlock({
    known: Object.keys(registry),
    schemaOf: (name) => schemaOf(registry[name]!),
    allowNone,
    keep: "parsed",
    wording: scenarioWording(role, allowNone),
  });
}

/** The matrix as written: a map of keys to value lists (product), or a list of cells, each a map of keys to one value. */
export type MatrixSpec =
  | { form: "product"; keys: Record<string, unknown[]> }
  | { form: "list"; cells: Array<Record<string, unknown>> };

const MATRIX_SHAPE =
  "matrix is a map from dotted paths to lists of values (a cartesian product), e.g. { generator.pg-copy.batch: [1000, 8000] }, " +
  "or a list of cells, each a map from dotted paths to one value, e.g. [ { generator.pg-copy.batch: 1000 }, { generator.pg-copy.batch: 8000, generator.pg-copy.connections: 4 } ]";

const matrixSchema = z.unknown().transform((v, ctx): MatrixSpec => {
  if (v === undefined || v === null || (Array.isArray(v) && v.length === 0))
    return { form: "product", keys: {} };
  if (Array.isArray(v)) {
    let bad = false;
    v.forEach((entry, i) => {
      if (!isPlainObject(entry) || Object.keys(entry).length === 0) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [i],
          message:
            "a listed cell is a map from dotted paths to one value each, e.g. { generator.pg-copy.batch: 1000 }",
        });
        bad = true;
        return;
      }
      for (const [k, x] of Object.entries(entry)) {
        if (Array.isArray(x)) {
          addFlatIssue(ctx, {
            path: [i, k],
            at: "value",
            message:
              "a listed cell gives one value per path (list more cells for more values; a map of lists is the cartesian form)",
          });
          bad = true;
        }
      }
    });
    return bad ? z.NEVER : { form: "list", cells: v as Array<Record<string, unknown>> };
  }
  if (!isPlainObject(v)) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: MATRIX_SHAPE });
    return z.NEVER;
  }
  let bad = false;
  for (const [k, x] of Object.entries(v)) {
    if (!Array.isArray(x)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: [k],
        message: `expected a list of values, e.g. [1000, 8000]`,
      });
      bad = true;
    } else if (x.length === 0) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: [k],
        message: "a matrix key needs at least one value",
      });
      bad = true;
    }
  }
  return bad ? z.NEVER : { form: "product", keys: v as Record<string, unknown[]> };
});

/** One check; with `paths`, the path must be one of them (reported at the key's line, listing them). */
const checkSchema = (paths?: ReadonlySet<string>) =>
  z.unknown().transform((v, ctx): Check => {
    const example = `e.g. { ledger.lost: 0 } or { summary.lagP99Ms: { max: 1000 } }`;
    if (!isPlainObject(v) || Object.keys(v).length !== 1) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `a check is a map with one key, a dotted result path, ${example}`,
      });
      return z.NEVER;
    }
    const [path, cond] = Object.entries(v)[0]!;
    if (!CHECK_PATH.test(path)) {
      addFlatIssue(ctx, {
        path: [path],
        at: "key",
        message: `"${path}" is not a dotted result path, ${example}`,
      });
      return z.NEVER;
    }
    if (paths && !paths.has(path)) {
      addFlatIssue(ctx, {
        path: [path],
        at: "key",
        message: `"${path}" is not a number in the run result; use one of ${[...paths].join(", ")}`,
      });
      return z.NEVER;
    }
    if (typeof cond === "number" && Number.isFinite(cond)) return { path, equals: cond };
    if (isPlainObject(cond)) {
      const extra = Object.keys(cond).filter((k) => k !== "min" && k !== "max");
      for (const k of extra)
        addFlatIssue(ctx, {
          path: [path, k],
          at: "key",
          message: `unknown key "${k}"; allowed keys: min, max`,
        });
      const { min, max } = cond;
      let bad = extra.length > 0;
      for (const [k, n] of [
        ["min", min],
        ["max", max],
      ] as const) {
        if (n !== undefined && !(typeof n === "number" && Number.isFinite(n))) {
          ctx.addIssue({ code: z.ZodIssueCode.custom, path: [path, k], message: `${k} must be a number` });
          bad = true;
        }
      }
      if (min === undefined && max === undefined && extra.length === 0) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [path],
          message: `give min, max or both, ${example}`,
        });
      }
      if (typeof min === "number" && typeof max === "number" && min > max) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [path],
          message: `min ${min} is above max ${max}`,
        });
      }
      if (bad) return z.NEVER;
      const out: Check = { path };
      if (typeof min === "number") out.min = min;
      if (typeof max === "number") out.max = max;
      return out;
    }
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: [path],
      message: `expected a number (exact) or { min: n } / { max: n }, ${example}`,
    });
    return z.NEVER;
  });

/** Largest `fidelity.sample`: the sample's seqs are held in memory while drawn (8 bytes each). */
export const MAX_FIDELITY_SAMPLE = 1_000_000;

/** `fidelity: { all, sample }`: whole numbers, all ≥ 0 (0: always sample), 1 ≤ sample ≤ MAX_FIDELITY_SAMPLE. */
const fidelitySchema = z
  .object({
    all: z
      .number()
      .int({ message: "fidelity.all is a whole number of stored rows" })
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .default(DEFAULT_FIDELITY.all),
    sample: z
      .number()
      .int({ message: "fidelity.sample is a whole number of seqs" })
      .min(1)
      .max(MAX_FIDELITY_SAMPLE)
      .default(DEFAULT_FIDELITY.sample),
  })
  .strict();

/** `query:`: strict; statement names unique and safe as ids; no FORMAT clause (the harness appends its own). */
const querySchema = z
  .object({
    prepare: z
      .array(z.string().min(1))
      .min(1, { message: "leave out prepare, or give it a statement" })
      .optional(),
    statements: z
      .array(
        z
          .object({
            name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, {
              message: 'a statement name is letters, digits, "_" and "-" (at most 64), e.g. "count"',
            }),
            sql: z
              .string()
              .min(1)
              .refine((q) => !/\bFORMAT\s+\w+\s*;?\s*$/i.test(q), {
                message:
                  "leave out the FORMAT clause: the harness appends FORMAT TabSeparated to read the answer",
              }),
            rows: z.number().int().min(0).optional(),
            value: z.union([z.number(), z.literal("{stored}")]).optional(),
          })
          .strict(),
      )
      .min(1, { message: "declare at least one statement" }),
    cells: z
      .array(
        z
          .object({
            concurrency: z.number().int().min(1).max(1000),
            count: z.number().int().min(1),
          })
          .strict()
          .refine((c) => c.concurrency * c.count <= MAX_QUERY_REQUESTS, {
            message: `concurrency × count is at most ${MAX_QUERY_REQUESTS} requests`,
          }),
      )
      .min(1, {
        message: "declare at least one concurrency × count cell, e.g. { concurrency: 10, count: 50 }",
      }),
    timeout: duration(true, "query timeout").default("10s"),
    during: z
      .enum(["after", "ingest"], {
        errorMap: () => ({
          message: 'during is "after" (once the ingest is stored; default) or "ingest" (while the load runs)',
        }),
      })
      .default("after"),
  })
  .strict()
  .superRefine((q, ctx) => {
    const seen = new Map<string, number>();
    q.statements.forEach((st, i) => {
      const prev = seen.get(st.name);
      if (prev !== undefined)
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["statements", i, "name"],
          message: `duplicate statement "${st.name}" (also statements.${prev})`,
        });
      seen.set(st.name, i);
    });
  });

/**
 * The strict zod schema for a scenario file's body (without matrix expansion), given plugin registries.
 * Output: ScenarioBody plus the raw `matrix` map (validated for shape only).
 */
export function scenarioSchema(registries: PluginRegistries, options: { baseDir?: string } = {}) {
  return z
    .object({
      name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, {
        message:
          'scenario names are lowercase letters, digits, ".", "_" and "-" (at most 64), e.g. "quickstart"',
      }),
      description: z.string().default(""),
      event: z
        .array(eventFieldSchema.superRefine(stringSizeRequired))
        .min(1, { message: "declare at least one event field" }),
      source: z
        .object({ file: z.string().min(1) })
        .strict()
        .optional(),
      generator: rolePluginBlock("generator", registries.generators, true),
      collector: rolePluginBlock("collector", registries.collectors, true).default("none"),
      sink: rolePluginBlock("sink", registries.sinks, false),
      warmup: duration(false, "warmup").default("0s"),
      duration: duration(true, "duration"),
      interval: duration(true, "interval").default("1s"),
      drain: z
        .object({ timeout: duration(false, "drain timeout") })
        .strict()
        .default({ timeout: "60s" }),
      replicates: z.number().int().min(1).max(MAX_REPLICATES).default(DEFAULT_REPLICATES),
      matrix: matrixSchema,
      checks: z
        .array(checkSchema(registries.checkPaths))
        .nullable()
        .default([])
        .transform((c) => c ?? []),
      fidelity: fidelitySchema.default(DEFAULT_FIDELITY),
      query: querySchema.optional(),
      app: appSchema.optional(),
      variants: variantsSchema.optional(),
      steps: stepsSchema(options.baseDir),
    })
    .strict()
    .superRefine((s, ctx) => {
      const seen = new Map<string, number>();
      s.event.forEach((f, i) => {
        const prev = seen.get(f.name);
        if (prev !== undefined) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ["event", i, "name"],
            message: `duplicate field "${f.name}" (also event.${prev})`,
          });
        }
        seen.set(f.name, i);
      });
      if (s.source && !s.event.some((f) => f.type === "string")) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["source"],
          message: "source replays lines into the last string field, but the event has none",
        });
      }
      if (s.source && options.baseDir !== undefined) {
        const file = nodePath.resolve(options.baseDir, s.source.file);
        const st = statSync(file, { throwIfNoEntry: false });
        // an empty file has no line to replay: say so now rather than from the generator after provisioning
        const problem = !st
          ? "does not exist (a relative path is relative to the scenario file)"
          : st.isDirectory()
            ? "is a directory, not a file of lines"
            : st.isFile() && st.size === 0
              ? "is empty: a replay file needs at least one line"
              : null;
        if (problem)
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ["source", "file"],
            message: `${file} ${problem}`,
          });
      }
      if (s.variants && !s.app) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["variants"],
          message: "variants are sets of env and args for the application under test: declare app first",
        });
      }
      if (s.query && !QUERY_SINKS.includes((s.sink as PluginRef).name)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["query"],
          message: `a query phase runs against ${QUERY_SINKS.join(", ")} sinks; this scenario's sink is "${(s.sink as PluginRef).name}"`,
        });
      }
      if (s.interval.ms > s.duration.ms) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["interval"],
          message: `interval ${s.interval.text} is longer than duration ${s.duration.text}`,
        });
      }
      // a sample reads the sink's count, every host's cgroups and the collectors' metrics: taken more often than this,
      // the samples would be the load (a newcomer's `interval: 1us` kept the harness busy and growing)
      if (s.interval.ms < MIN_INTERVAL_MS) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["interval"],
          message: `interval ${s.interval.text} is shorter than ${MIN_INTERVAL_MS} ms, the shortest sampling interval (each sample queries the sink and reads every host's counters)`,
        });
      }
    })
    .transform((s) => {
      const body: ScenarioBody & { matrix: MatrixSpec } = {
        name: s.name,
        description: s.description,
        event: s.event.map((f) =>
          f.size === undefined
            ? { name: f.name, type: f.type }
            : { name: f.name, type: f.type, size: f.size },
        ),
        generator: s.generator,
        collector: s.collector,
        sink: s.sink as PluginRef,
        warmup: s.warmup,
        duration: s.duration,
        interval: s.interval,
        drain: s.drain,
        replicates: s.replicates,
        checks: s.checks,
        fidelity: s.fidelity,
        steps: s.steps,
        matrix: s.matrix,
      };
      if (s.query) body.query = s.query as QueryPhase;
      if (s.app) body.app = s.app;
      if (s.variants) body.variants = s.variants;
      if (s.source) {
        body.source = {
          file: options.baseDir ? nodePath.resolve(options.baseDir, s.source.file) : s.source.file,
        };
      }
      return body;
    });
}

/**
 * The combinations of `generator: none` and a collector's built-in generator that cannot run (code E_GENERATOR_NONE):
 * `generator: none` with no collector, with a collector that has no built-in generator, or with one whose config
 * does not select it; and a generator beside a collector config whose own input makes the load (two loads, and a
 * collector input that receives none of the generator's events). Issues at the block that must change.
 */
export function selfLoadIssues(
  body: Pick<ScenarioBody, "generator" | "collector">,
  selfLoad: Readonly<Record<string, SelfLoadEntry>> = {},
): FlatIssue[] {
  const having =
    Object.entries(selfLoad)
      .map(([name, e]) => `${name} (${e.input}: collector.${name}.${e.setting})`)
      .sort()
      .join(", ") || "(none registered)";
  const c = body.collector;
  if (body.generator === null) {
    if (!c)
      return [
        {
          path: ["generator"],
          at: "value",
          message: `none means the collector makes the load itself, but this scenario has collector: none; collectors with a built-in generator: ${having}`,
        },
      ];
    const e = Object.hasOwn(selfLoad, c.name) ? selfLoad[c.name] : undefined;
    if (!e)
      return [
        {
          path: ["generator"],
          at: "value",
          message: `none: collector "${c.name}" has no built-in generator to make the load; collectors that have one: ${having}`,
        },
      ];
    if (e.generators(c.config) === 0) {
      return [
        {
          path: ["collector", c.name],
          at: "key",
          message: `generator: none: collector "${c.name}" makes no load as configured: set its built-in generator, collector.${c.name}.${e.setting} (${e.input})`,
        },
      ];
    }
    return [];
  }
  const e = c && Object.hasOwn(selfLoad, c.name) ? selfLoad[c.name] : undefined;
  if (c && e && e.generators(c.config) > 0) {
    const at = [c.name, ...e.setting.split(".")];
    return [
      {
        path: ["collector", ...at],
        at: "key",
        message: `collector.${c.name}.${e.setting} (${e.input}) makes the load itself: write generator: none instead of generator "${body.generator.name}" (its events would reach no input of the collector)`,
      },
    ];
  }
  return [];
}

/**
 * Split a dotted matrix key into the path it names in `data`: at each level the longest run of the remaining dotted
 * parts that is a key there wins, so settings whose own names contain dots (rsyslog's `queue.workerThreads`) can be
 * varied as `collector.rsyslog.queue.workerThreads`; numeric parts index arrays.
 * @returns the path's segments, or the node where the walk stopped (for the error message)
 */
function resolveKey(data: unknown, key: string): { segs: string[] } | { segs: null; parent: unknown } {
  const parts = key.split(".");
  const segs: string[] = [];
  let node = data;
  for (let i = 0; i < parts.length;) {
    let taken = 0;
    if (isPlainObject(node)) {
      for (let j = parts.length; j > i; j--) {
        if (Object.hasOwn(node, parts.slice(i, j).join("."))) {
          taken = j - i;
          break;
        }
      }
    }
    if (taken > 0) {
      const seg = parts.slice(i, i + taken).join(".");
      node = (node as Record<string, unknown>)[seg];
      segs.push(seg);
      i += taken;
    } else if (Array.isArray(node) && /^\d+$/.test(parts[i]!) && Number(parts[i]) < node.length) {
      node = node[Number(parts[i])];
      segs.push(parts[i]!);
      i++;
    } else {
      return { segs: null, parent: node };
    }
  }
  return { segs };
}

function setPath(data: unknown, segs: string[], value: unknown): void {
  let node = data as Record<string, unknown> | unknown[];
  for (let i = 0; i < segs.length - 1; i++)
    node = (node as Record<string, unknown>)[segs[i]!] as Record<string, unknown>;
  (node as Record<string, unknown>)[segs[segs.length - 1]!] = value;
}

function valueLabel(v: unknown): string {
  if (v === null || typeof v !== "object") return String(v);
  if (isPlainObject(v) && Object.keys(v).length === 1) return Object.keys(v)[0]!;
  return JSON.stringify(v);
}

/**
 * Load and validate a scenario file, expanding its matrix into cells (each cell's values are substituted into the
 * file's data and validated again, so a bad matrix value is reported at its line).
 * @throws ConfigurationError E_CONFIG_NOT_FOUND, E_YAML_SYNTAX, or E_SCENARIO_FIELD with one
 *         "file:line:col: field: problem" line per issue (unknown plugin names list the known ones); E_GENERATOR_NONE
 *         for a combination of `generator: none` and the collector that cannot run (selfLoadIssues), in any cell.
 */
export function loadScenario(path: string, registries: PluginRegistries): Scenario {
  const loaded = loadYamlFile(path);
  const schema = scenarioSchema(registries, { baseDir: nodePath.dirname(path) });
  const code = "E_SCENARIO_FIELD";
  const base = validate(schema, loaded, path, { code });
  const { matrix, ...body } = base;

  // Matrix keys must name existing fields; each value (product) or each listed cell (list) is validated in place.
  const issues: FlatIssue[] = [];
  /** Check one key's form and that it names a field; push an issue at `at` and return false otherwise. */
  const keyOk = (key: string, at: FieldPath): boolean => {
    const segs = key.split(".");
    if (!MATRIX_KEY.test(key)) {
      issues.push({
        path: at,
        at: "key",
        message: `"${key}" is not a dotted path into the scenario, e.g. "generator.pg-copy.batch"`,
      });
      return false;
    }
    if (segs[0] === "matrix" || segs[0] === "checks" || segs[0] === "name" || segs[0] === "steps") {
      issues.push({ path: at, at: "key", message: `"${segs[0]}" cannot be varied by the matrix` });
      return false;
    }
    const hit = resolveKey(loaded.data, key);
    if (!hit.segs) {
      const here = isPlainObject(hit.parent) ? `; there: ${Object.keys(hit.parent).join(", ")}` : "";
      issues.push({
        path: at,
        at: "key",
        message: `"${key}" names no field of this scenario (write the base value in the file first)${here}`,
      });
      return false;
    }
    return true;
  };
  /** The file's data with these values substituted, validated; issues for the values, or the cell's body. */
  const substitute = (
    values: Record<string, unknown>,
  ): { ok: true; body: ScenarioBody } | { ok: false; issues: FlatIssue[] } => {
    const data = structuredClone(loaded.data) as Record<string, unknown>;
    for (const [k, x] of Object.entries(values))
      setPath(data, resolveKey(loaded.data, k).segs ?? k.split("."), x);
    data.matrix = {};
    const r = schema.safeParse(data);
    if (r.success) {
      const { matrix: _m, ...cellBody } = r.data;
      return { ok: true, body: cellBody };
    }
    return { ok: false, issues: flattenIssues(r.error.issues, schema) };
  };

  let keys: string[];
  let entries: Array<Record<string, unknown>>;
  if (matrix.form === "product") {
    keys = Object.keys(matrix.keys);
    for (const key of keys) {
      const at: FieldPath = ["matrix", key];
      if (!keyOk(key, at)) continue;
      matrix.keys[key]!.forEach((value, i) => {
        const r = substitute({ [key]: value });
        if (r.ok) return;
        for (const f of r.issues) {
          const where = f.path.join(".") === key ? "" : ` (at ${f.path.join(".")})`;
          issues.push({
            path: [...at, i],
            at: "value",
            message: `matrix value ${JSON.stringify(value)}${where}: ${f.message}`,
          });
        }
      });
    }
    if (issues.length > 0) throwIssues(loaded, issues, { path, code });
    // Cartesian product, last key fastest.
    const count = keys.reduce((n, k) => n * matrix.keys[k]!.length, 1);
    if (count > MAX_CELLS) {
      throwIssues(
        loaded,
        [
          {
            path: ["matrix"],
            at: "value",
            message: `the matrix expands to ${count} cells, more than ${MAX_CELLS}`,
          },
        ],
        { path, code },
      );
    }
    entries = [];
    for (let n = 0; n < count; n++) {
      const values: Record<string, unknown> = {};
      let rest = n;
      for (let i = keys.length - 1; i >= 0; i--) {
        const vals = matrix.keys[keys[i]!]!;
        values[keys[i]!] = vals[rest % vals.length];
        rest = Math.floor(rest / vals.length);
      }
      entries.push(values);
    }
  } else {
    keys = [];
    // keys in path order, not first-seen order: reordering the list or a cell's keys must not rename cells
    for (const e of matrix.cells) for (const k of Object.keys(e)) if (!keys.includes(k)) keys.push(k);
    keys.sort();
    if (matrix.cells.length > MAX_CELLS) {
      issues.push({
        path: ["matrix"],
        at: "value",
        message: `the matrix lists ${matrix.cells.length} cells, more than ${MAX_CELLS}`,
      });
    }
    matrix.cells.forEach((entry, i) => {
      const good = Object.keys(entry).filter((k) => keyOk(k, ["matrix", i, k]));
      if (good.length !== Object.keys(entry).length) return;
      const r = substitute(entry);
      if (r.ok) return;
      for (const f of r.issues) {
        const key = Object.keys(entry).find((k) => f.path.join(".") === k);
        if (key !== undefined)
          issues.push({
            path: ["matrix", i, key],
            at: "value",
            message: `matrix value ${JSON.stringify(entry[key])}: ${f.message}`,
          });
        else
          issues.push({
            path: ["matrix", i],
            at: "value",
            message: `this cell (at ${f.path.join(".")}): ${f.message}`,
          });
      }
    });
    if (issues.length > 0) throwIssues(loaded, issues, { path, code });
    entries = matrix.cells;
  }

  // Cell ids name each key by its last path segment (the whole path when two keys share it), in key order; they
  // depend on the values only, never on a cell's position, so they stay stable across runs and edits of the list.
  const lastSegs = keys.map((k) => (resolveKey(loaded.data, k).segs ?? k.split(".")).at(-1)!);
  const labels = keys.map((k, i) =>
    lastSegs.indexOf(lastSegs[i]!) === lastSegs.lastIndexOf(lastSegs[i]!) ? lastSegs[i]! : k,
  );
  const cells: ScenarioCell[] = [];
  const usedIds = new Map<string, number>();
  entries.forEach((values, n) => {
    const ordered: Record<string, unknown> = {};
    for (const k of keys) if (Object.hasOwn(values, k)) ordered[k] = values[k];
    const present = keys.map((k, i) => [k, labels[i]!] as const).filter(([k]) => Object.hasOwn(ordered, k));
    let id =
      present.length === 0
        ? "default"
        : present.map(([k, label]) => `${label}=${valueLabel(ordered[k])}`).join(",");
    const seen = usedIds.get(id);
    if (seen !== undefined) {
      if (matrix.form === "list") {
        throwIssues(
          loaded,
          [
            {
              path: ["matrix", n],
              at: "value",
              message: `this cell repeats cell ${seen} (${id}); list each cell once (use replicates for repeats)`,
            },
          ],
          { path, code },
        );
      }
      id = `${id}#${n + 1}`;
    }
    usedIds.set(id, n);
    let scenario: ScenarioBody = body;
    if (keys.length > 0) {
      const r = substitute(ordered);
      if (!r.ok) {
        const why = r.issues.map((f) => `${f.path.join(".")}: ${f.message}`).join("; ");
        throwIssues(loaded, [{ path: ["matrix"], at: "value", message: `cell ${id} is invalid: ${why}` }], {
          path,
          code,
        });
      }
      scenario = (r as { body: ScenarioBody }).body;
    }
    cells.push({ id, values: ordered, scenario });
  });
  // generator: none and the collector's built-in generator, in every cell (a matrix may vary the collector's input)
  const selfLoadProblems = new Map<string, FlatIssue>();
  for (const c of cells) {
    for (const f of selfLoadIssues(c.scenario, registries.selfLoad)) {
      const message = cells.length > 1 ? `${f.message} (cell ${c.id})` : f.message;
      if (!selfLoadProblems.has(f.message)) selfLoadProblems.set(f.message, { ...f, message });
    }
  }
  if (selfLoadProblems.size > 0)
    throwIssues(loaded, [...selfLoadProblems.values()], { path, code: "E_GENERATOR_NONE" });
  const values: Record<string, unknown[]> = {};
  if (matrix.form === "product") Object.assign(values, matrix.keys);
  else
    for (const k of keys)
      values[k] = [...new Set(entries.filter((e) => Object.hasOwn(e, k)).map((e) => e[k]))];
  return { ...body, file: path, matrix: values, matrixForm: matrix.form, cells };
}
