/**
 * The one zod schema of a declared event field (`{ name: msg, type: string, size: 180 }`), read wherever fields are
 * written: a scenario's `event` (harness/scenario/schema.ts) and a stack's `ingestbench:cell.event`
 * (infra/stack/schema.ts, the scenario's fields handed to the collectors' renderers). Issues are flat (core/yaml.ts),
 * at the field they concern.
 *
 * A scenario further requires `size` on every string field (the generators need a length to make one):
 * `stringSizeRequired` below; a cell's renderers do not read it.
 */
import { z } from "zod";
import { addFlatIssue } from "../yaml.ts";
import { TRACKING_FIELDS, type FieldType } from "./types.ts";

/** Event field names: lowercase identifiers usable as SQL columns and JSON keys. */
export const FIELD_NAME = /^[a-z_][a-z0-9_]*$/;
/** Names of the columns every event carries (reserved). */
export const RESERVED_FIELDS: readonly string[] = TRACKING_FIELDS.map((f) => f.name);
/** The field types (core/events/types.ts FieldType). */
export const FIELD_TYPES = [
  "timestamp",
  "string",
  "int",
  "float",
  "bool",
] as const satisfies readonly FieldType[];
/** Largest string field, bytes. */
export const MAX_STRING_SIZE = 65536;

/** One declared field: a lowercase name that is not a tracking column, a type, and `size` (bytes) on strings only. */
export const eventFieldSchema = z
  .object({
    name: z
      .string()
      .regex(FIELD_NAME, { message: `field names must match ${FIELD_NAME} (lowercase, digits, "_")` }),
    type: z.enum(FIELD_TYPES),
    size: z.number().int().min(1).max(MAX_STRING_SIZE).optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    if (RESERVED_FIELDS.includes(f.name)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["name"],
        message: `"${f.name}" is reserved: ${RESERVED_FIELDS.join(", ")} are tracking columns every event carries`,
      });
    }
    if (f.type !== "string" && f.size !== undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["size"],
        message: `size applies to string fields only, not ${f.type}`,
      });
    }
  });

/** The scenario's rule on top of eventFieldSchema: a string field needs its `size` (reported at the field, "size" key absent). */
export function stringSizeRequired(f: z.infer<typeof eventFieldSchema>, ctx: z.RefinementCtx): void {
  if (f.type === "string" && f.size === undefined) {
    addFlatIssue(ctx, {
      path: ["size"],
      at: "parent",
      message: `a string field needs size: its length in bytes (1..${MAX_STRING_SIZE})`,
    });
  }
}
