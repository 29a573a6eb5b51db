/**
 * The one validator of a plugin block, `{ <plugin name>: { <its settings> } }`: a scenario's `generator`, `collector`
 * and `sink` (harness/scenario/schema.ts) and a stack's `ingestbench:cell.collector` / `.sink` (infra/stack/schema.ts)
 * are all read by pluginBlock. The name must be one of `known`; the settings are parsed by that plugin's schema,
 * and a bad setting is reported at its own key (`sink.postgres.port`), with core/yaml.ts's positions.
 *
 * The two callers word their errors for their readers (a scenario author; the provisioner's stack config), so the
 * messages are the caller's (`PluginBlockWording`); what is checked, and in which order, is this function's.
 */
import { z } from "zod";
import { addFlatIssue, addNestedIssues, closestKey } from "./yaml.ts";

/** A validated block: the plugin's name and its config (the schema's output, or the block as written: `keep`). */
export interface PluginRef<C = unknown> {
  name: string;
  config: C;
}

/** The messages of one caller; `known` is PluginBlockOptions.known. */
export interface PluginBlockWording {
  /** the block is not a map with exactly one key */
  shape(known: readonly string[]): string;
  /**
   * the name is not a plugin of the role: the key of a block (reported at the key), or a bare name (`collector: nonne`,
   * reported at the value; `form` "bare"). `near` is the known name (or "none", where allowed) within a typo's reach
   * (core/yaml.ts closestKey), undefined when none is
   */
  unknown(name: string, known: readonly string[], near: string | undefined, form: "key" | "bare"): string;
  /** a bare known name instead of a block (`sink: postgres`); absent: reported as `shape` */
  bareName?(name: string): string;
  /** the settings under the name are not a map (reported at the name); absent: the plugin's schema reports it */
  notAMap?(name: string): string;
  /** an absent block is zod's "Required" (true) or `shape` (false) */
  absentIsRequired: boolean;
}

export interface PluginBlockOptions {
  /** the known plugins of the role, in the order messages list them */
  known: readonly string[];
  /** the scenario schema of a known plugin (core/plugin.ts `schema`; a generator's) */
  schemaOf(name: string): z.ZodTypeAny;
  /** `"none"` is a valid block meaning no plugin (a scenario's or a cell's collector): the output is null */
  allowNone: boolean;
  /** "parsed": config is the schema's output (defaults filled); "raw": the block as written, once it parses */
  keep: "parsed" | "raw";
  wording: PluginBlockWording;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A zod schema of one plugin block (input unknown, output PluginRef, or null for "none" when `allowNone`). Issues
 * are flat (core/yaml.ts addFlatIssue), so validate() reports them at the block, the key or the setting.
 */
export function pluginBlock(
  o: PluginBlockOptions,
): z.ZodType<PluginRef<unknown> | null, z.ZodTypeDef, unknown> {
  const known = new Set(o.known);
  const near = (name: string): string | undefined =>
    closestKey(name, o.allowNone ? [...o.known, "none"] : o.known);
  return z.unknown().transform((v, ctx): PluginRef | null => {
    if (o.allowNone && v === "none") return null;
    if (v === undefined && o.wording.absentIsRequired) {
      ctx.addIssue({ code: z.ZodIssueCode.invalid_type, expected: "object", received: "undefined" });
      return z.NEVER;
    }
    if (typeof v === "string" && known.has(v) && o.wording.bareName) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: o.wording.bareName(v) });
      return z.NEVER;
    }
    if (typeof v === "string" && v.trim() !== "" && v !== "none" && !known.has(v)) {
      // a misspelt name written bare (`collector: nonne`): say the name is unknown, not that the block has the wrong
      // shape ("none" where it is not allowed keeps the shape's message: it is no misspelling)
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: o.wording.unknown(v, o.known, near(v), "bare") });
      return z.NEVER;
    }
    if (!isPlainObject(v) || Object.keys(v).length !== 1) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: o.wording.shape(o.known) });
      return z.NEVER;
    }
    const [name, inner] = Object.entries(v)[0]!;
    if (!known.has(name)) {
      addFlatIssue(ctx, {
        path: [name],
        at: "key",
        message: o.wording.unknown(name, o.known, near(name), "key"),
      });
      return z.NEVER;
    }
    const block = inner ?? {};
    if (o.wording.notAMap && !isPlainObject(block)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: [name], message: o.wording.notAMap(name) });
      return z.NEVER;
    }
    const schema = o.schemaOf(name);
    const r = schema.safeParse(block);
    if (!r.success) {
      addNestedIssues(ctx, r.error, [name], schema);
      return z.NEVER;
    }
    return { name, config: o.keep === "parsed" ? (r.data as unknown) : block };
  });
}
