// The nightly workflow keeps its history where it does not expire and fails without it: the step that runs
// `ingestbench nightly` passes --require-history whenever results were restored from the results branch, the only
// other way in is the explicit bootstrap input, and tonight's results are pushed back even after a regression.
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";

interface Step {
  name?: string;
  id?: string;
  run?: string;
  uses?: string;
  if?: string;
}
const wf = parse(readFileSync(".github/workflows/nightly.yml", "utf8")) as {
  on: { workflow_dispatch: { inputs: Record<string, { type: string; default: unknown }> } };
  permissions: Record<string, string>;
  env: Record<string, string>;
  jobs: { local: { steps: Step[] } };
};
const steps = wf.jobs.local.steps;
const step = (f: (s: Step) => boolean): Step => {
  const s = steps.find(f);
  expect(s).toBeDefined();
  return s!;
};

describe(".github/workflows/nightly.yml", () => {
  it("restores results from the results branch, not from a cache or artifact that expires", () => {
    expect(steps.some((s) => /actions\/cache|download-artifact/.test(s.uses ?? ""))).toBe(false);
    const restore = step((s) => s.id === "history");
    expect(restore.run).toMatch(/git ls-remote --exit-code --heads origin "\$RESULTS_BRANCH"/);
    expect(restore.run).toMatch(/git worktree add results "origin\/\$RESULTS_BRANCH"/);
    expect(wf.env.RESULTS_BRANCH).toBe("ingestbench-results");
    expect(wf.permissions.contents).toBe("write");
  });

  it("requires the history when it was restored, fails without it, and bootstraps only on the explicit input", () => {
    const restore = step((s) => s.id === "history");
    expect(restore.run).toMatch(/echo "require=--require-history" >> "\$GITHUB_OUTPUT"/);
    expect(restore.run).toMatch(/elif \[ "\$\{\{ inputs\.bootstrap \}\}" = "true" \]/);
    expect(restore.run).toMatch(/::error::no \$RESULTS_BRANCH branch[^\n]*\n\s*exit 1/);
    expect(wf.on.workflow_dispatch.inputs.bootstrap).toMatchObject({ type: "boolean", default: false });
    expect(step((s) => s.id === "nightly").run).toContain(
      "nightly nightly/local.yaml --quiet ${{ steps.history.outputs.require }}",
    );
  });

  it("pushes tonight's results back even when the night regressed", () => {
    const push = step((s) => /Push tonight's results/.test(s.name ?? ""));
    expect(push.if).toBe("always() && steps.history.outcome == 'success'");
    expect(push.run).toMatch(/git push origin "HEAD:refs\/heads\/\$RESULTS_BRANCH"/);
  });
});
