// A scenario checked against a stack before anything starts (harness/runner/drive.ts checkCellsOnStack, as `validate
// <scenario> --stack S`, bench, run and nightly check it): a component's pin against the image the stack deploys
// (harness/provision/images.ts checkImagePin), and refusal hints that name stacks found by checking them.
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  crossCheck,
  validateExitCode,
  validateFile,
  withCrossChecks,
} from "../../../harness/cli/commands/validate.ts";
import { pulumiStacks } from "../../../harness/provision/deployed.ts";
import { checkCellsOnStack } from "../../../harness/runner/drive.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import { loadStack } from "../../../infra/stack/schema.ts";

const root = path.resolve(import.meta.dirname, "../../..");
const stacksDir = path.join(root, "stacks");
const scenario = (name: string) => path.join(root, "scenarios", `${name}.yaml`);

function validatePair(stack: string, scenarioName: string) {
  const checked = [path.join(stacksDir, `Pulumi.${stack}.yaml`), scenario(scenarioName)].map(validateFile);
  return withCrossChecks(checked, crossCheck(checked, pulumiStacks({ projectRoot: root }), stacksDir));
}

describe("pairs validated before anything starts", () => {
  it("clickhouse-query-load on docker-4c4g: exit 2 naming both ClickHouse versions and stacks that take it", () => {
    const results = validatePair("docker-4c4g", "clickhouse-query-load");
    expect(validateExitCode(results)).toBe(2);
    const refused = results.find((r) => !r.ok)!;
    expect(refused.errors[0]!.code).toBe("E_VERSION");
    expect(refused.text).toMatch(/pins clickhouse 18\.16\.1, but stack docker-4c4g deploys clickhouse 25\.8/);
    // the hint's stacks are checked, not written down: each one it names passes the same check
    const named = [...refused.text!.matchAll(/--stack ([\w-]+)/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(0);
    const plans = planCells(
      loadScenarioFile(scenario("clickhouse-query-load")),
      scenario("clickhouse-query-load"),
    );
    for (const name of named)
      expect(() =>
        checkCellsOnStack(loadStack(name, stacksDir), plans, pulumiStacks({ projectRoot: root })),
      ).not.toThrow();
  });

  it("a pin the stack's image meets passes; a container-only sink on a local stack names a docker stack that takes it", () => {
    expect(validateExitCode(validatePair("docker-4c4g", "opensearch-bulk-8000"))).toBe(0);
    const results = validatePair("local-2-cores", "fluentd-griddb-sample");
    const refused = results.find((r) => !r.ok)!;
    expect(refused.errors[0]!.code).toBe("E_SINK");
    const named = [...refused.text!.matchAll(/--stack ([\w-]+)/g)].map((m) => m[1]!);
    expect(named).toContain("docker-4c4g");
    expect(named.every((n) => !n.startsWith("local-"))).toBe(true);
  });
});
