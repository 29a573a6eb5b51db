/**
 * core/yaml.ts on YAML the parser accepts but cannot resolve: an alias whose anchor is missing or defined later
 * (YAML 1.2 §3.2.2.2) is a syntax error naming file:line:col of that alias, never an unexpected error.
 */
import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../core/errors.ts";
import { closestKey, parseYamlText } from "../../core/yaml.ts";

function errorOf(text: string): ConfigurationError {
  try {
    parseYamlText(text, "/tmp/x.yaml");
  } catch (e) {
    if (e instanceof ConfigurationError) return e;
    throw new Error(`not a ConfigurationError: ${String(e)}`);
  }
  throw new Error("parsed without an error");
}

describe("YAML aliases (core/yaml.ts)", () => {
  it("an alias without an anchor is E_YAML_SYNTAX at the alias's line and column", () => {
    const e = errorOf("name: x\ncollector: *nope\n");
    expect(e.code).toBe("E_YAML_SYNTAX");
    expect(e.message).toBe(
      "/tmp/x.yaml:2:12: YAML syntax error: Unresolved alias (the anchor must be set before the alias): nope",
    );
  });

  it("an alias before its anchor is reported at the alias, not at the anchor", () => {
    const e = errorOf("a: &x 1\nb: *x\nc:\n  d: *y\ne: &y 2\n");
    expect(e.message).toMatch(/^\/tmp\/x\.yaml:4:6: YAML syntax error: .*: y$/);
  });

  it("anchors and aliases that resolve still load", () => {
    expect(parseYamlText("a: &x { b: 1 }\nc: *x\n", "/tmp/x.yaml").data).toEqual({
      a: { b: 1 },
      c: { b: 1 },
    });
  });
});

describe("a file of several YAML documents (core/yaml.ts)", () => {
  it("is E_YAML_SYNTAX at the second document's start, said for someone writing a config file", () => {
    for (const [text, line] of [
      ["name: a\n---\nname: b\n", 2],
      ["---\nname: a\n---\n", 3],
    ] as const) {
      let err: unknown;
      try {
        parseYamlText(text, "two.yaml");
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigurationError);
      expect((err as ConfigurationError).message).toBe(
        `two.yaml:${line}:1: YAML syntax error: a second YAML document starts here: a file holds one (remove the extra \`---\` line or split the file)`,
      );
    }
  });
});

describe("closestKey (the 'did you mean' of an unknown key)", () => {
  it("names the one allowed key within 2 edits and under half the key's length; none when two tie or none is near", () => {
    expect(closestKey("duraton", ["duration", "warmup", "replicates"])).toBe("duration");
    expect(closestKey("warmpu", ["duration", "warmup"])).toBe("warmup"); // a swap is 2 edits
    expect(closestKey("Batch", ["batch", "rate"])).toBe("batch");
    expect(closestKey("size", ["batch", "connections", "rate", "seed"])).toBeUndefined(); // seed is 3 edits away
    expect(closestKey("ab", ["ac", "xb"])).toBeUndefined(); // 1 edit is not under half of 2 (and they tie)
    expect(closestKey("rates", ["rate", "rated"])).toBeUndefined(); // a tie
    expect(closestKey("x", [])).toBeUndefined();
  });
});
