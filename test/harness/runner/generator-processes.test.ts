import { describe, expect, it } from "vitest";
import { httpJsonSchema } from "../../../harness/generators/http-json.ts";
import { processesOf, splitConfig } from "../../../harness/runner/generator-group.ts";

describe("generator processes per entry point: the load split (harness/runner/generator-group.ts)", () => {
  it("divides a numeric rate and a fixed requests workload, the total unchanged; other fields as given", () => {
    const parts = splitConfig({ batch: 500, rate: 30_000, requests: 10, seed: 7 }, 3);
    expect(parts.map((p) => p.rate)).toEqual([10_000, 10_000, 10_000]);
    expect(parts.map((p) => p.requests)).toEqual([4, 3, 3]);
    expect(parts.every((p) => p.batch === 500 && p.seed === 7)).toBe(true);
    expect(splitConfig({ rate: "max" }, 2)).toEqual([{ rate: "max" }, { rate: "max" }]);
    const one = { rate: 5, requests: 1 };
    expect(splitConfig(one, 1)[0]).toBe(one);
  });

  it("refuses more processes than requests (E_GENERATOR_PROCESSES), and defaults to 1 process", () => {
    expect(() => splitConfig({ requests: 2 }, 3)).toThrow(
      expect.objectContaining({ code: "E_GENERATOR_PROCESSES", field: "generator.processes" }),
    );
    expect(processesOf({})).toBe(1);
    expect(processesOf(httpJsonSchema.parse({}))).toBe(1);
    expect(processesOf(httpJsonSchema.parse({ processes: 2 }))).toBe(2);
    expect(() => httpJsonSchema.parse({ processes: 0 })).toThrow();
  });
});
