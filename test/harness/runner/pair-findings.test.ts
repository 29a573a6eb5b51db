// The pair check (harness/runner/pair-check.ts) over the real committed stacks and scenarios: every stack file ×
// every scenario file, each finding kind asserted on the pairs known to fail, known-good pairs passing, and the refusal
// hints naming only stacks that the same check accepts. Local stacks are checked against the programs installed on
// this machine (core/program.ts), as a run checks them; where a test needs a program to be missing it empties PATH.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pulumiStacks } from "../../../harness/provision/deployed.ts";
import { cellConfig, writeCellConfigFile } from "../../../harness/provision/provisioner.ts";
import { checkCellsOnStack, PairRefusedError } from "../../../harness/runner/drive.ts";
import type { CellPlan } from "../../../harness/runner/cell-plan.ts";
import {
  ALLOW_FROM_ENV,
  allowFromOf,
  checkPair,
  isDocumentationAddress,
  pairFindings,
  type PairFinding,
} from "../../../harness/runner/pair-check.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import { listStacks, loadStack } from "../../../infra/stack/schema.ts";
import type { StackSpec } from "../../../core/limits.ts";

const root = path.resolve(import.meta.dirname, "../../..");
const stacksDir = path.join(root, "stacks");
const scenariosDir = path.join(root, "scenarios");
const deployed = pulumiStacks({ projectRoot: root });
const NO_OVERRIDE = { ...process.env, [ALLOW_FROM_ENV]: "" };

const stackNames = listStacks(stacksDir);
const scenarioNames = readdirSync(scenariosDir)
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => f.replace(/\.yaml$/, ""));
const stacks = new Map<string, StackSpec>(stackNames.map((n) => [n, loadStack(n, stacksDir)]));
const plansOf = new Map<string, CellPlan[]>();
const plans = (scenario: string): CellPlan[] => {
  if (!plansOf.has(scenario)) {
    const file = path.join(scenariosDir, `${scenario}.yaml`);
    plansOf.set(scenario, planCells(loadScenarioFile(file), file));
  }
  return plansOf.get(scenario)!;
};
const check = (stack: string, scenario: string, env: NodeJS.ProcessEnv = NO_OVERRIDE) => {
  const s = stacks.get(stack)!;
  return checkPair(s, plans(scenario), { env, ...(s.platform === "local" ? {} : { deployed }) });
};

/** stack → scenario → findings, for every committed pair (one pass: the kinds below read it). */
const all = new Map<string, Map<string, PairFinding[]>>();
beforeAll(() => {
  for (const st of stackNames) {
    const row = new Map<string, PairFinding[]>();
    for (const sc of scenarioNames) row.set(sc, check(st, sc).findings);
    all.set(st, row);
  }
}, 120_000);

const platformOf = (st: string) => stacks.get(st)!.platform;
const codes = (st: string, sc: string) =>
  all
    .get(st)!
    .get(sc)!
    .map((f) => f.code);
const ofKind = (st: string, sc: string, kind: PairFinding["kind"]) =>
  all
    .get(st)!
    .get(sc)!
    .filter((f) => f.kind === kind);

describe("the pair check over every committed stack × scenario", () => {
  it("reads every stack and scenario of the repository (19 stacks of three platforms, every scenario planned)", () => {
    expect(stackNames.length).toBeGreaterThanOrEqual(19);
    expect(new Set(stackNames.map(platformOf))).toEqual(new Set(["local", "docker", "azure"]));
    expect(all.size).toBe(stackNames.length);
    for (const row of all.values()) expect(row.size).toBe(scenarioNames.length);
  });

  it("known-good pairs pass: quickstart on docker-4c4g and local-2-cores, clickhouse-query-load on docker-debian-2-cores", () => {
    expect(codes("docker-4c4g", "quickstart")).toEqual([]);
    expect(codes("local-2-cores", "quickstart")).toEqual([]);
    expect(codes("docker-debian-2-cores", "clickhouse-query-load")).toEqual([]);
    expect(codes("docker-4c4g", "opensearch-bulk-8000")).toEqual([]);
  });

  it("version: ClickHouse 18.16.1 pins against the upstream 25.8 image, on every docker and azure stack that deploys it", () => {
    for (const sc of ["clickhouse-query-load", "http-json-batch-count"]) {
      for (const st of stackNames.filter((n) => platformOf(n) !== "local")) {
        const upstream = !/debian/.test(st);
        const v = ofKind(st, sc, "version");
        if (!upstream) {
          expect(v, `${st} × ${sc}`).toEqual([]);
          continue;
        }
        expect(
          v.map((f) => f.code),
          `${st} × ${sc}`,
        ).toEqual(["E_VERSION"]);
        expect(v[0]!.message).toMatch(
          new RegExp(`pins clickhouse 18\\.16\\.1, but stack ${st} deploys clickhouse 25\\.8`),
        );
        expect(v[0]!.unless).toBeUndefined();
      }
    }
  });

  it("version: a version with no Debian-built image is refused on the Debian-image stacks (E_STACK_FIELD), not on docker-4c4g", () => {
    const debian = stackNames.filter((n) => n.startsWith("docker-debian-"));
    expect(debian.length).toBeGreaterThan(0);
    for (const st of debian) {
      const v = ofKind(st, "quickstart", "version");
      expect(
        v.map((f) => f.code),
        st,
      ).toEqual(["E_STACK_FIELD"]);
      expect(v[0]!.message).toMatch(/has no Debian-built image/);
    }
    expect(ofKind("docker-4c4g", "quickstart", "version")).toEqual([]);
  });

  it("platform: local-only sinks are refused on every docker and azure stack, container-only ones on every local stack", () => {
    for (const st of stackNames) {
      const local = platformOf(st) === "local";
      for (const sc of ["victorialogs-jsonline", "victorialogs-loki-push", "victorialogs-es-bulk"]) {
        const p = ofKind(st, sc, "platform").map((f) => f.code);
        expect(p, `${st} × ${sc}`).toEqual(local ? [] : ["E_SINK"]);
      }
      const es = ofKind(st, "elasticsearch-bulk-8000", "platform");
      expect(
        es.map((f) => f.code),
        st,
      ).toEqual(local ? ["E_SINK"] : []);
      if (local) expect(es[0]!.message).toMatch(/sink "elasticsearch" has no local component/);
      expect(ofKind(st, "rsyslog-postgres", "platform").map((f) => f.code)).toEqual(
        local ? [] : ["E_COLLECTOR"],
      );
    }
  });

  it("platform: an application under test runs on local stacks only; fault steps and generator: none not on azure", () => {
    for (const st of stackNames) {
      const p = platformOf(st);
      expect(
        ofKind(st, "app-export-ab", "platform").map((f) => f.code),
        st,
      ).toEqual(p === "local" ? [] : ["E_APP_NOT_RUNNABLE"]);
      expect(
        ofKind(st, "bandwidth-drop", "platform").map((f) => f.code),
        st,
      ).toEqual(p === "azure" ? ["E_STEP_PLATFORM"] : []);
      expect(
        ofKind(st, "syslog-ng-example-msg-generator", "platform").map((f) => f.code),
        st,
      ).toEqual(p === "azure" ? ["E_GENERATOR_NONE"] : []);
    }
  });

  it("placeholder: every azure stack carries the RFC 5737 allowFrom and is refused with every scenario; no other stack is", () => {
    for (const st of stackNames) {
      for (const sc of scenarioNames) {
        const ph = ofKind(st, sc, "placeholder");
        if (platformOf(st) !== "azure") {
          expect(ph, `${st} × ${sc}`).toEqual([]);
          continue;
        }
        expect(
          ph.map((f) => f.code),
          `${st} × ${sc}`,
        ).toEqual(["E_PLACEHOLDER"]);
        expect(ph[0]!.message).toMatch(
          new RegExp(
            `Pulumi\\.${st}\\.yaml:\\d+:\\d+: config\\.ingestbench:azure\\.allowFrom: allowFrom 203\\.0\\.113\\.10/32 is a documentation address`,
          ),
        );
        expect(ph[0]!.unless).toBe("allowFrom is your address");
      }
    }
  });

  it("placeholder: the caller's address for the run lifts it (and reaches the deployment's config); a documentation or wide one does not", () => {
    const az = stacks.get("azure-d2s-v5")!;
    const env = { ...process.env, [ALLOW_FROM_ENV]: "100.64.12.34/32" };
    expect(check("azure-d2s-v5", "quickstart", env).findings).toEqual([]);
    expect(allowFromOf(az, env)).toEqual({ value: "100.64.12.34/32", from: "env" });
    for (const doc of ["192.0.2.1/32", "198.51.100.7/32", "203.0.113.99/32"]) {
      expect(isDocumentationAddress(doc)).toBe(true);
      const f = check("azure-d2s-v5", "quickstart", { ...process.env, [ALLOW_FROM_ENV]: doc }).findings;
      expect(f.map((x) => x.code)).toEqual(["E_PLACEHOLDER"]);
      expect(f[0]!.message).toMatch(new RegExp(`^${ALLOW_FROM_ENV}: allowFrom ${doc.replace(/\./g, "\\.")}`));
    }
    expect(isDocumentationAddress("100.64.12.34/32")).toBe(false);
    expect(() =>
      check("azure-d2s-v5", "quickstart", { ...process.env, [ALLOW_FROM_ENV]: "10.0.0.0/8" }),
    ).toThrow(/INGESTBENCH_AZURE_ALLOW_FROM: "10\.0\.0\.0\/8" opens the stack to \/8/);
    // the deployment gets it: the cell's config file keeps the stack file's other azure keys
    const prev = process.env[ALLOW_FROM_ENV];
    process.env[ALLOW_FROM_ENV] = "100.64.12.34/32";
    try {
      const config = cellConfig(az, plans("quickstart")[0]!);
      expect(config["ingestbench:azure.allowFrom"]).toEqual({ value: "100.64.12.34/32", secret: false });
      const written = writeCellConfigFile(az.name, readFileSync(az.file, "utf8"), config);
      try {
        const text = readFileSync(written.file, "utf8");
        expect(text).toMatch(/allowFrom: 100\.64\.12\.34\/32/);
        expect(text).toMatch(/location: westeurope/);
        expect(text).toMatch(/collector: Standard_D2s_v5/);
        expect(text).not.toMatch(/203\.0\.113\.10/);
      } finally {
        rmSync(written.dir, { recursive: true, force: true });
      }
    } finally {
      if (prev === undefined) delete process.env[ALLOW_FROM_ENV];
      else process.env[ALLOW_FROM_ENV] = prev;
    }
    // a docker stack's deployment carries no allowFrom
    expect(Object.keys(cellConfig(stacks.get("docker-4c4g")!, plans("quickstart")[0]!))).not.toContain(
      "ingestbench:azure.allowFrom",
    );
  });

  it("site: a scenario needing hosts the stack lacks (two collectors on a one-collector stack, a collector on a sink-only stack)", () => {
    const hosts = ofKind("local-quarter-core-cpu-only", "syslog-ng-postgres", "site");
    expect(hosts.map((f) => f.code)).toEqual(["E_STACK_HOSTS"]);
    expect(hosts[0]!.message).toMatch(/needs hosts "loadgen", "collector", "sink"/);
    expect(
      ofKind("docker-debian-two-collectors", "collector-kill-restart-debian", "site").map((f) => f.code),
    ).toEqual(["E_STEP_HOST"]);
  });

  it("program: a local stack refuses a component whose program is missing, saying what would lift it", () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "ib-pair-path-"));
    try {
      const r = check("local-2-cores", "fluent-bit-clickhouse-batch-count-local", {
        ...NO_OVERRIDE,
        PATH: empty,
      });
      const p = r.findings.filter((f) => f.kind === "program");
      expect(p.map((f) => f.code)).toEqual(["E_PROGRAM_MISSING"]);
      expect(p[0]!.message).toMatch(
        /Pulumi\.local-2-cores\.yaml:\d+:\d+: config\.ingestbench:hosts\.collector: fluent-bit needs a program/,
      );
      expect(p[0]!.unless).toMatch(/^fluent-bit \S+ is installed$/);
      // ClickHouse's version is read only when it starts: the pair says so rather than claim it was checked
      expect(r.unchecked).toEqual(["clickhouse 18.16.1"]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("memory: a cap below the sink's floor is one finding among the others, all in one refusal", () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-pair-mem-"));
    try {
      writeFileSync(
        path.join(tmp, "Pulumi.azure-tiny.yaml"),
        readFileSync(path.join(stacksDir, "Pulumi.azure-quarter-core.yaml"), "utf8").replace(
          /(\n {4}sink:\n(?: {6}.*\n)*? {6}memory: )\S+/,
          "$18MiB",
        ),
      );
      const tiny = loadStack("azure-tiny", tmp);
      expect(tiny.hosts.sink!.limits.memoryBytes).toBe(8 * 2 ** 20);
      const f = pairFindings(tiny, plans("app-export-ab"), { env: NO_OVERRIDE, deployed });
      const kinds = new Set(f.map((x) => x.kind));
      for (const k of ["memory", "placeholder", "platform", "version"] as const) expect(kinds).toContain(k);
      expect(f.find((x) => x.kind === "memory")!.code).toBe("E_CAP_TOO_SMALL");
      // the refusal carries every finding; its code is the first one's
      let err: unknown;
      try {
        checkCellsOnStack(tiny, plans("app-export-ab"), deployed, stacksDir);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(PairRefusedError);
      const refusal = err as PairRefusedError;
      expect(refusal.code).toBe("E_CAP_TOO_SMALL");
      expect(refusal.findings.length).toBe(f.length);
      const lines = refusal.message.split("\n");
      expect(lines[0]).toMatch(
        new RegExp(`^stack azure-tiny refuses scenario app-export-ab: ${f.length} findings`),
      );
      for (const x of f) expect(lines).toContain(`${x.kind}: ${x.message}`);
      expect(lines.at(-1)).toMatch(/^stacks that take it, checked now: --stack local-/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe("refusal hints name stacks that take the scenario, found by checking", () => {
  /** The stacks a refusal's hint names, and the refusal's text. */
  function hinted(stack: string, scenario: string): { names: string[]; text: string } {
    try {
      checkCellsOnStack(stacks.get(stack)!, plans(scenario), deployed, stacksDir);
    } catch (err) {
      const text = (err as Error).message;
      // the hint comes last (a finding's own text may name its stack: `pulumi config set … --stack S`)
      const hint = text.slice(text.lastIndexOf("stacks that take it, checked now: "));
      return { names: [...hint.matchAll(/--stack ([\w-]+)/g)].map((m) => m[1]!), text };
    }
    throw new Error(`${stack} × ${scenario} was not refused`);
  }

  it("every stack a hint names passes the check, or fails only on what the hint says it is accepted if", () => {
    const refused: Array<[string, string]> = [
      ["docker-4c4g", "clickhouse-query-load"],
      ["azure-d2s-v5", "fluentd-griddb-sample"],
      ["local-2-cores", "fluentd-griddb-sample"],
      ["docker-4c4g", "otelcol-victorialogs"],
      ["azure-d4s-v5", "bandwidth-drop"],
    ];
    for (const [st, sc] of refused) {
      const { names, text } = hinted(st, sc);
      expect(names.length, `${st} × ${sc}: ${text}`).toBeGreaterThan(0);
      expect(names).not.toContain(st);
      for (const n of names) {
        const r = check(n, sc, process.env);
        const conditions = r.findings.map((f) => f.unless);
        expect(
          conditions.every((c) => c !== undefined),
          `${n} for ${sc}`,
        ).toBe(true);
        for (const c of conditions) expect(text).toContain(c!);
      }
    }
  });

  it("fluentd's sample load on azure names docker-4c4g, never a stack without a Fluentd image (docker-debian-2-cores)", () => {
    const { names } = hinted("azure-d2s-v5", "fluentd-griddb-sample");
    expect(names).toContain("docker-4c4g");
    expect(names).not.toContain("docker-debian-2-cores");
  });

  it("a local stack's answer names the installed programs it depends on: found here, or accepted if installed", () => {
    const ch = hinted("docker-4c4g", "clickhouse-query-load");
    // ClickHouse's local component reads its version when it starts: accepted if that version is installed
    // (said once after the list when every stack named shares it)
    expect(ch.text).toMatch(
      /--stack local-[\w-]+ \(accepted if clickhouse 18\.16\.1 is installed\)|--stack local-[\w-]+.*; each if clickhouse 18\.16\.1 is installed$/,
    );
    const vl = hinted("docker-4c4g", "otelcol-victorialogs");
    // VictoriaLogs and the OpenTelemetry Collector are found and their versions read now (core/program.ts)
    expect(vl.text).toMatch(/--stack local-[\w-]+ \(victorialogs \S+ and otelcol \S+ found here\)/);
    expect(vl.names.every((n) => n.startsWith("local-"))).toBe(true);
  });

  it("an azure stack's placeholder alone: the hint names stacks that take the scenario now before other azure stacks", () => {
    const { names, text } = hinted("azure-d2s-v5", "quickstart");
    expect(text).toMatch(/^stacks\/Pulumi\.azure-d2s-v5\.yaml:\d+:\d+: config\.ingestbench:azure\.allowFrom/);
    expect(names.length).toBe(3);
    expect(names.some((n) => n.startsWith("azure-"))).toBe(false);
  });
});

afterAll(() => {
  plansOf.clear();
});
