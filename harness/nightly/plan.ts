/**
 * Nightly plan files: a list of stacks × scenarios to run each night, validated with zod through
 * core/yaml.ts so that errors name file:line:col and the field.
 *
 *   window: 7        # optional: baseline nights per cell (default 7)
 *   entries:
 *     - { stack: local-quarter-core, scenario: scenarios/quickstart.yaml, replicates: 3, duration: 10s, warmup: 2s }
 *
 * `scenario` is a scenario file, relative to the working directory (as with `ingestbench bench`).
 */
import { z } from "zod";
import { parseRunDuration } from "../../core/units.ts";
import { MAX_REPLICATES } from "../scenario/schema.ts";
import { addFlatIssue, loadYamlFile, validate } from "../../core/yaml.ts";

const duration = z.string().superRefine((v, ctx) => {
  try {
    parseRunDuration(v);
  } catch (e) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: (e as Error).message });
  }
});

export const nightlyEntrySchema = z
  .object({
    stack: z.string().min(1, "a stack name, e.g. local-quarter-core"),
    scenario: z.string().min(1, "a scenario file, e.g. scenarios/quickstart.yaml"),
    replicates: z.number().int().min(1).max(MAX_REPLICATES).optional(),
    duration: duration.optional(),
    warmup: duration.optional(),
  })
  .strict();

export const nightlyPlanSchema = z
  .object({
    /** baseline nights K per cell (harness/nightly/window.ts; default 7); `nightly --window` overrides it */
    window: z.number().int().min(1, "at least 1 night").optional(),
    entries: z.array(nightlyEntrySchema).min(1, "at least one entry { stack, scenario }"),
  })
  .strict()
  .superRefine((plan, ctx) => {
    const seen = new Map<string, number>();
    plan.entries.forEach((e, i) => {
      const key = `${e.stack}\u0000${e.scenario}`;
      const first = seen.get(key);
      if (first !== undefined) {
        addFlatIssue(ctx, {
          path: ["entries", i],
          message: `stack ${e.stack} with scenario ${e.scenario} is already entry ${first}: each (stack, scenario) once per night`,
          at: "value",
        });
      } else {
        seen.set(key, i);
      }
    });
  });

export type NightlyEntry = z.infer<typeof nightlyEntrySchema>;
export type NightlyPlan = z.infer<typeof nightlyPlanSchema>;

/** Read and validate a plan file. @throws ConfigurationError naming file:line:col and the field */
export function loadNightlyPlan(file: string): NightlyPlan {
  return validate(nightlyPlanSchema, loadYamlFile(file), file);
}
