import { defineConfig } from "vitest/config";

// Real servers, cgroups, namespaces and a real Docker engine on a 2-core machine. Two lanes, each one file at a time
// (`fileParallelism: false`); `npm test` (scripts/test-lanes.sh) runs them as two vitest processes side by side,
// since one process puts every such project into one sequential group:
// - "engine": what deploys stacks (the Docker engine's containers, the Pulumi and Docker CLI stand-ins) and the CLI's
//   spawned commands; the docker tests compare the engine's whole container/network/volume lists before and after,
//   so nothing else in the suite may touch the engine.
// - "local": everything else (unit tests, local-platform runs).
// Runs on the same stack in both lanes take turns through the stack lock (harness/runner/stack-lock.ts): the tests'
// runs wait for it (INGESTBENCH_LOCK_WAIT, harness/runner/drive.ts lockWaitMs) instead of being refused.
// Both lanes must pass with a CPU hog beside them (scripts/test-beside-hog.sh); they are one another's load.
const ENGINE = [
  "test/e2e/docker-engine.test.ts",
  "test/e2e/docker-engine-network.test.ts",
  "test/e2e/docker-faults.test.ts",
  "test/e2e/docker-steps.test.ts",
  "test/e2e/deployed-stacks.test.ts",
  "test/harness/cli.test.ts",
  "test/harness/provision/**/*.test.ts",
  "test/harness/remote/**/*.test.ts",
];

export default defineConfig({
  test: {
    env: { INGESTBENCH_LOCK_WAIT: "10m" },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ["default"],
    projects: [
      { extends: true, test: { name: "engine", include: ENGINE, fileParallelism: false } },
      {
        extends: true,
        test: {
          name: "local",
          include: ["test/**/*.test.ts", "plugins/**/*.test.ts"],
          exclude: ENGINE,
          fileParallelism: false,
        },
      },
    ],
  },
});
