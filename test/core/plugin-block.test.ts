/** core/plugin-block.ts: the one plugin-block validator, with a caller's wording (pure; no plugin involved). */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { pluginBlock, type PluginBlockWording } from "../../core/plugin-block.ts";
import { parseYamlText, validate } from "../../core/yaml.ts";

const wording: PluginBlockWording = {
  shape: (known) => `one key please (${known.join(", ")})`,
  unknown: (name, known, near, form) =>
    `no "${name}" here; try ${known.join(", ")}${near ? ` (${form}: ${near}?)` : ""}`,
  notAMap: (name) => `${name} takes a map`,
  absentIsRequired: true,
};
const schemas: Record<string, z.ZodTypeAny> = {
  alpha: z.object({ size: z.number().int().default(3) }).strict(),
  beta: z.object({}).strict(),
};
const block = (keep: "parsed" | "raw", allowNone = false) =>
  z
    .object({
      sink: pluginBlock({ known: ["beta", "alpha"], schemaOf: (n) => schemas[n]!, allowNone, keep, wording }),
    })
    .strict();

/** Validate `yaml` with `schema`, returning the value or the error message (file:line:col: field: message). */
function check(schema: z.ZodTypeAny, yaml: string): unknown {
  try {
    return validate(schema, parseYamlText(yaml, "t.yaml"));
  } catch (e) {
    return (e as Error).message;
  }
}

describe("pluginBlock (one validator, the caller's wording)", () => {
  it("keeps the schema's output (defaults filled) or the block as written", () => {
    expect(check(block("parsed"), "sink: { alpha: {} }\n")).toEqual({
      sink: { name: "alpha", config: { size: 3 } },
    });
    expect(check(block("raw"), "sink: { alpha: {} }\n")).toEqual({ sink: { name: "alpha", config: {} } });
    expect(check(block("raw"), "sink: { alpha: }\n")).toEqual({ sink: { name: "alpha", config: {} } });
  });

  it('"none" is no plugin only where allowed', () => {
    expect(check(block("parsed", true), "sink: none\n")).toEqual({ sink: null });
    expect(check(block("parsed"), "sink: none\n")).toMatch(
      /t\.yaml:1:7: sink: one key please \(beta, alpha\)/,
    );
  });

  it("reports the shape, an unknown name at its key, a non-map block and a bad setting at its own line, in the caller's words", () => {
    expect(check(block("parsed"), "sink: { alpha: {}, beta: {} }\n")).toMatch(
      /:1:7: sink: one key please \(beta, alpha\)$/,
    );
    expect(check(block("parsed"), "sink:\n  gamma: {}\n")).toMatch(
      /:2:3: sink\.gamma: no "gamma" here; try beta, alpha$/,
    );
    expect(check(block("parsed"), "sink: { alpha: 5 }\n")).toMatch(/sink\.alpha: alpha takes a map$/);
    expect(check(block("parsed"), "sink:\n  alpha:\n    size: 1.5\n")).toMatch(/:3:11: sink\.alpha\.size: /);
    expect(check(block("parsed"), "other: 1\n")).toMatch(/sink: required/i);
  });

  it("a misspelt name, bare or as the key, is unknown, with the known one (or none, where allowed) within a typo's reach", () => {
    // bare: reported at the value, as an unknown name rather than as the block's shape
    expect(check(block("parsed", true), "sink: nonne\n")).toMatch(
      /^t\.yaml:1:7: sink: no "nonne" here; try beta, alpha \(bare: none\?\)$/,
    );
    expect(check(block("parsed"), "sink: alpah\n")).toMatch(
      /^t\.yaml:1:7: sink: no "alpah" here; try beta, alpha \(bare: alpha\?\)$/,
    );
    // as the key: at the key
    expect(check(block("parsed"), "sink:\n  betta: {}\n")).toMatch(
      /^t\.yaml:2:3: sink\.betta: no "betta" here; try beta, alpha \(key: beta\?\)$/,
    );
    // "none" is offered only where it is allowed; nothing near: no suggestion
    expect(check(block("parsed"), "sink: nonne\n")).toMatch(/sink: no "nonne" here; try beta, alpha$/);
    expect(check(block("parsed"), "sink: { mongodb: {} }\n")).toMatch(
      /sink\.mongodb: no "mongodb" here; try beta, alpha$/,
    );
  });
});
