// `generator: none` in the scenario schema with the registered plugins (harness/runner/plan.ts scenarioRegistries):
// which collectors have a built-in generator (core/plugin.ts SelfLoad), the combinations that cannot run
// (E_GENERATOR_NONE at the block that must change), syslog-ng's example-msg-generator options in its own names, and
// the plan of a cell whose collector makes the load.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import {
  loadScenarioFile,
  NO_GENERATOR,
  planCells,
  scenarioRegistries,
} from "../../../harness/runner/plan.ts";
import { selfLoadIssues } from "../../../harness/scenario/schema.ts";
import { pulumiStacks } from "../../../harness/provision/deployed.ts";
import { loadStack } from "../../../infra/stack/schema.ts";

const tmp = mkdtempSync(path.join(tmpdir(), "ib-generator-none-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const scenariosDir = path.resolve(import.meta.dirname, "../../../scenarios");

let n = 0;
/** A scenario file (line 4 the generator, line 5 the collector, line 6 the sink). */
function scenario(
  generator: string,
  collector: string,
  sink = 'postgres: { version: "18.4.0-beta.17" }',
  extra: string[] = [],
): string {
  const file = path.join(tmp, `g${n++}.yaml`);
  writeFileSync(
    file,
    [
      `name: gen-none-${n}`, //                            1
      "event: [{ name: msg, type: string, size: 20 }]", // 2
      "duration: 3s", //                                   3
      `generator: ${generator}`, //                        4
      `collector: ${collector}`, //                        5
      `sink: { ${sink} }`, //                              6
      ...extra,
    ].join("\n") + "\n",
  );
  return file;
}

/** The ConfigurationError loadScenarioFile throws for `file`. */
function refusal(file: string): ConfigurationError {
  try {
    loadScenarioFile(file);
  } catch (e) {
    if (e instanceof ConfigurationError) return e;
    throw e;
  }
  throw new Error(`${file} loaded`);
}

const GEN = "{ example-msg-generator: { num: 100, freq: 0.001 } }";

describe("generator: none (the collector's built-in generator makes the load)", () => {
  it("knows the collectors with a built-in generator from their plugins: syslog-ng's example-msg-generator(), Fluentd's in_sample", () => {
    const r = scenarioRegistries().selfLoad!;
    expect(Object.keys(r).sort()).toEqual(["fluentd", "syslog-ng"]);
    expect(r["syslog-ng"]).toMatchObject({
      input: "example-msg-generator()",
      setting: "example-msg-generator",
    });
    expect(r.fluentd).toMatchObject({ input: "in_sample", setting: "source.sample" });
  });

  it("plans scenarios/syslog-ng-example-msg-generator.yaml: no generator process, the collector's load described", () => {
    const file = path.join(scenariosDir, "syslog-ng-example-msg-generator.yaml");
    const s = loadScenarioFile(file);
    expect(s.generator).toBeNull();
    expect(s.collector?.config).toMatchObject({ "example-msg-generator": { num: 6000, freq: 0.001 } });
    const [plan] = planCells(s, file);
    expect(plan!.generator).toEqual({ name: NO_GENERATOR, config: {} });
    expect(plan!.seed).toBeNull();
    expect(plan!.selfLoad).toEqual({
      collector: "syslog-ng",
      input: "example-msg-generator()",
      counter: "syslog-ng-ctl stats: source s_gen processed (the messages example-msg-generator() made)",
      generatorsPerHost: 1,
      quietMs: 1000,
    });
  });

  it("refuses generator: none without a collector, or with one that has no built-in generator, at the generator's line (E_GENERATOR_NONE)", () => {
    const none = refusal(scenario("none", "none"));
    expect(none.code).toBe("E_GENERATOR_NONE");
    expect(none.message).toMatch(
      /g\d+\.yaml:4:12: generator: none means the collector makes the load itself, but this scenario has collector: none; collectors with a built-in generator: fluentd \(in_sample: collector\.fluentd\.source\.sample\), syslog-ng \(example-msg-generator\(\): collector\.syslog-ng\.example-msg-generator\)/,
    );
    const rsyslog = refusal(scenario("none", "{ rsyslog: {} }"));
    expect(rsyslog.code).toBe("E_GENERATOR_NONE");
    expect(rsyslog.message).toMatch(
      /:4:12: generator: none: collector "rsyslog" has no built-in generator to make the load; collectors that have one: fluentd/,
    );
  });

  it("refuses generator: none with a collector config that does not select its generator, at the collector's name", () => {
    const e = refusal(scenario("none", '{ syslog-ng: { version: "3.38" } }'));
    expect(e.code).toBe("E_GENERATOR_NONE");
    expect(e.message).toMatch(
      /:5:14: collector\.syslog-ng: generator: none: collector "syslog-ng" makes no load as configured: set its built-in generator, collector\.syslog-ng\.example-msg-generator \(example-msg-generator\(\)\)/,
    );
  });

  it("refuses a generator beside a collector input that makes the load itself, at the setting (syslog-ng; Fluentd's in_sample)", () => {
    const e = refusal(scenario("{ syslog: { rate: 100 } }", `{ syslog-ng: ${GEN} }`));
    expect(e.code).toBe("E_GENERATOR_NONE");
    expect(e.message).toMatch(
      /:5:\d+: collector\.syslog-ng\.example-msg-generator: collector\.syslog-ng\.example-msg-generator \(example-msg-generator\(\)\) makes the load itself: write generator: none instead of generator "syslog"/,
    );
    const f = refusal(
      scenario(
        "{ fluent-forward: {} }",
        "{ fluentd: { source: { sample: { events_per_second: 1000 } } } }",
        'griddb: { version: "5.6.0" }',
      ),
    );
    expect(f.message).toMatch(
      /collector\.fluentd\.source\.sample \(in_sample\) makes the load itself: write generator: none/,
    );
  });

  it("names the cell of a matrix that switches the generator off", () => {
    const withBatch =
      "{ syslog-ng: { example-msg-generator: { num: 100, freq: 0.001 }, batch-lines: 1000 } }";
    const file = scenario("none", withBatch, 'postgres: { version: "18.4.0-beta.17" }', [
      "matrix: [ { collector.syslog-ng.example-msg-generator: { num: 10 } }, { collector.syslog-ng.batch-lines: 10 } ]",
    ]);
    // both cells select it: valid, ids from the values
    expect(
      loadScenarioFile(file)
        .cells.map((c) => c.id)
        .sort(),
    ).toEqual(["batch-lines=10", "example-msg-generator=num"]);
    // a cell whose block leaves the generator out is named
    const off = scenario("none", withBatch, 'postgres: { version: "18.4.0-beta.17" }', [
      "matrix: [ { collector.syslog-ng.batch-lines: 10 }, { collector.syslog-ng: { batch-lines: 20 } } ]",
    ]);
    expect(refusal(off).message).toMatch(
      /makes no load as configured: set its built-in generator, collector\.syslog-ng\.example-msg-generator \(example-msg-generator\(\)\) \(cell syslog-ng=batch-lines\)/,
    );
    const direct = selfLoadIssues(
      { generator: null, collector: { name: "syslog-ng", config: {} } },
      scenarioRegistries().selfLoad,
    );
    expect(direct).toEqual([
      {
        path: ["collector", "syslog-ng"],
        at: "key",
        message: expect.stringMatching(/makes no load as configured/),
      },
    ]);
    expect(
      selfLoadIssues(
        { generator: { name: "syslog", config: {} }, collector: { name: "syslog-ng", config: {} } },
        scenarioRegistries().selfLoad,
      ),
    ).toEqual([]);
  });

  it("is refused on azure stacks before anything is deployed (their sites cannot restart the collector with a run's gens), and passes the check on a docker stack", () => {
    const file = path.join(scenariosDir, "fluentd-griddb-sample.yaml");
    const plans = planCells(loadScenarioFile(file), file, { replicates: 1 });
    const stacks = path.resolve(import.meta.dirname, "../../../stacks");
    let err: unknown;
    try {
      pulumiStacks().check(loadStack("azure-d2s-v5", stacks), plans);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as ConfigurationError).code).toBe("E_GENERATOR_NONE");
    expect((err as Error).message).toMatch(
      /generator: none runs on local and docker stacks; stack azure-d2s-v5 \(platform azure\) runs on a site that cannot start fluentd's in_sample with a run's own generator ids/,
    );
    // docker: each run uploads the collector's config with its gens and restarts it (harness/remote/site.ts)
    const pg = scenario(
      "none",
      '{ syslog-ng: { version: "3.38", example-msg-generator: { num: 10, freq: 0.001 } } }',
      'postgres: { version: "15" }',
    );
    expect(() =>
      pulumiStacks().check(
        loadStack("docker-debian-2-cores", stacks),
        planCells(loadScenarioFile(pg), pg, { replicates: 1 }),
      ),
    ).not.toThrow();
  });

  it("takes example-msg-generator in syslog-ng's own names: num required, freq in whole milliseconds, nothing else", () => {
    const noNum = refusal(scenario("none", "{ syslog-ng: { example-msg-generator: { freq: 0.001 } } }"));
    expect(noNum.code).toBe("E_SCENARIO_FIELD");
    expect(noNum.message).toMatch(/collector\.syslog-ng\.example-msg-generator\.num: required, but missing/);
    const frac = refusal(
      scenario("none", "{ syslog-ng: { example-msg-generator: { num: 10, freq: 0.0015 } } }"),
    );
    expect(frac.message).toMatch(
      /collector\.syslog-ng\.example-msg-generator\.freq: syslog-ng keeps freq in whole milliseconds/,
    );
    const unknown = refusal(
      scenario("none", "{ syslog-ng: { example-msg-generator: { num: 10, rate: 5 } } }"),
    );
    expect(unknown.message).toMatch(
      /collector\.syslog-ng\.example-msg-generator: Unrecognized key.*rate|unknown key "rate"/,
    );
    // syslog-ng's default freq (1 s) when not given
    const s = loadScenarioFile(scenario("none", "{ syslog-ng: { example-msg-generator: { num: 10 } } }"));
    expect(s.collector?.config).toMatchObject({ "example-msg-generator": { num: 10, freq: 1 } });
  });
});
