// The scenario `app` and `variants` blocks (harness/scenario/app-schema.ts) through the real registries: what they
// yield, every mistake at file:line:col and field, and how the runner plans them (each variant a cell) or refuses them.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";

const dir = mkdtempSync(path.join(tmpdir(), "ingestbench-app-schema-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const head = [
  "name: app-ab",
  "event:",
  "  - { name: msg, type: string, size: 10 }",
  "generator: { clickhouse-http: { batch: 1000, connections: 1, rate: max, seed: 42 } }",
  'sink: { clickhouse: { version: "18.16.1" } }',
  "duration: 10s",
];
let n = 0;
const write = (lines: string[]): string => {
  const f = path.join(dir, `a${n++}.yaml`);
  writeFileSync(f, `${lines.join("\n")}\n`);
  return f;
};
const messageOf = (f: string): string => {
  try {
    loadScenarioFile(f);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${f} loaded`);
};

const good = [
  "app:",
  "  command: [node, examples/sample-app/server.ts]",
  "  ready: { http: { port: 8080, path: /health } }",
  "  results:",
  "    from: regex",
  '    pattern: "tx/s (?<tps>[0-9.]+) p99 (?<p99>[0-9.]+) dropped (?<drops>[0-9]+)"',
  "    map: { throughput: tps, latencyP99Ms: p99, dropped: drops }",
  "variants:",
  '  - { name: disabled, env: { EXPORT: "0" } }',
  '  - { name: enabled, env: { EXPORT: "1" }, args: [--queue, "64"] }',
];

describe("scenario app and variants", () => {
  it("validates an application with two variants (defaults filled in); without a sent figure the runner refuses to plan it", () => {
    const f = write([...head, ...good]);
    const s = loadScenarioFile(f);
    expect(s.app).toEqual({
      command: ["node", "examples/sample-app/server.ts"],
      host: "app",
      env: {},
      ready: { http: { port: 8080, path: "/health" }, timeout: 30_000 },
      results: {
        from: "regex",
        pattern: "tx/s (?<tps>[0-9.]+) p99 (?<p99>[0-9.]+) dropped (?<drops>[0-9]+)",
        map: { throughput: "tps", latencyP99Ms: "p99", dropped: "drops" },
      },
      timeout: 600_000,
    });
    expect(s.variants).toEqual([
      { name: "disabled", env: { EXPORT: "0" }, args: [] },
      { name: "enabled", env: { EXPORT: "1" }, args: ["--queue", "64"] },
    ]);
    // the ledger counts against what the app reports it sent: a map without `sent` is refused at its line
    expect(() => planCells(s, f, { replicates: 1 })).toThrow(
      expect.objectContaining({
        code: "E_APP_NOT_RUNNABLE",
        message: expect.stringMatching(/:\d+:\d+: .*map the sent figure/),
      }),
    );
  });

  it("plans each variant as a cell (variant=<name>) with the app and its variant, every replicate in a seeded order", () => {
    const withSent = good.map((l) =>
      l
        .replace("dropped (?<drops>[0-9]+)", "dropped (?<drops>[0-9]+) sent (?<sent>[0-9]+)")
        .replace("dropped: drops }", "dropped: drops, sent: sent }"),
    );
    const f = write([...head, ...withSent]);
    const plans = planCells(loadScenarioFile(f), f, { replicates: 2 });
    expect(plans.map((p) => p.cell).sort()).toEqual([
      "variant=disabled",
      "variant=disabled",
      "variant=enabled",
      "variant=enabled",
    ]);
    expect(plans.map((p) => p.replicate)).toEqual([1, 1, 2, 2]);
    const enabled = plans.find((p) => p.cell === "variant=enabled")!;
    expect(enabled.app?.variant).toEqual({ name: "enabled", env: { EXPORT: "1" }, args: ["--queue", "64"] });
    expect(enabled.app?.spec.results.map.sent).toBe("sent");
    expect((enabled.scenarioConfig as { variant?: unknown }).variant).toEqual(enabled.app?.variant);
  });

  it("refuses an app given as an image (no platform runs one yet), at its line", () => {
    const f = write([
      ...head,
      ...good.map((l) =>
        l
          .replace("command: [node, examples/sample-app/server.ts]", "image: ingestbench/sample-app:debian")
          .replace("dropped: drops }", "dropped: drops, sent: drops }"),
      ),
    ]);
    expect(() => planCells(loadScenarioFile(f), f, { replicates: 1 })).toThrow(
      expect.objectContaining({
        code: "E_APP_NOT_RUNNABLE",
        message: expect.stringMatching(/app\.image needs a container platform/),
      }),
    );
  });

  it("names file:line:col and field of each mistake", () => {
    const f = write([
      ...head,
      "app:",
      "  command: [node, x.ts]",
      "  image: sample:1",
      "  ready: { http: { port: 8080 }, log: up }",
      '  results: { from: regex, pattern: "(?<tps>[0-9]+)", map: { throughput: tps, latencyP99Ms: p99, speed: x } }',
      "variants:",
      "  - { name: same }",
      "  - { name: same, env: { 1BAD: x } }",
    ]);
    const m = messageOf(f);
    expect(m).toMatch(/:10:\d+: app\.ready: give exactly one of ready\.http/);
    expect(m).toContain(`${f}:11:104: app.results.map.speed: invalid enum value`);
    expect(m).toContain(`${f}:14:13: variants.1.name: duplicate variant "same" (also variants.0)`);
    // command and image together (checked once the block is otherwise valid)
    const both = write([...head, ...good.slice(0, 2), "  image: sample:1", ...good.slice(2)]);
    expect(messageOf(both)).toMatch(/:8:\d+: app: give exactly one of app\.command \(argv\) or app\.image/);
    expect(m).toMatch(/:14:\d+: variants\.1\.env\.1BAD: an environment variable name/);
    const g = write([
      ...head,
      ...good.slice(0, 4),
      "    from: file",
      "    map: { throughput: tps }",
      ...good.slice(7, 9),
      "  - { name: disabled }",
    ]);
    const mg = messageOf(g);
    expect(mg).toMatch(/:10:3: app\.results\.file: results\.from: file needs results\.file/);
    const h = write([
      ...head,
      ...good.slice(0, 4),
      "    from: regex",
      '    pattern: "(?<tps>[0-9]+)"',
      "    map: { throughput: tps, dropped: drops }",
      ...good.slice(7),
    ]);
    expect(messageOf(h)).toMatch(
      /:13:\d+: app\.results\.map\.dropped: the pattern has no named group "drops" \(it has: tps\)/,
    );
    const v = write([...head, ...good.slice(0, 7), "variants:", "  - { name: one }", "  - { name: one }"]);
    expect(messageOf(v)).toMatch(/:16:\d+: variants\.1\.name: duplicate variant "one" \(also variants\.0\)/);
  });

  it("refuses variants without an app, and a single variant", () => {
    expect(messageOf(write([...head, ...good.slice(7)]))).toMatch(
      /:8:3: variants: variants are sets of env and args for the application under test: declare app first/,
    );
    expect(messageOf(write([...head, ...good.slice(0, 9)]))).toMatch(
      /variants: declare at least two variants/,
    );
  });
});
