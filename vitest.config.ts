import { defineConfig } from "vitest/config";

// Real servers, cgroups and namespaces on a 2-core machine: run test files one at a time, with generous timeouts.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "plugins/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ["default"],
  },
});
