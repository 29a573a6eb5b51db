// The disk-full and drop-connections steps (harness/scenario/steps.ts): their forms parse, bad ones are refused at
// file:line:col with their field, and the stack checks (harness/runner/step-checks.ts) refuse, before anything is
// provisioned, a disk-full of a volume that is not size-capped and a peer the cell does not run on.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../../core/errors.ts";
import { loadScenarioFile } from "../../../harness/runner/plan.ts";
import { checkSteps } from "../../../harness/runner/step-checks.ts";
import { socketDestroyAvailable } from "../../../harness/runner/step-scripts.ts";
import { componentChildren, nextShaping } from "../../../harness/remote/docker-steps.ts";
import { loadStack } from "../../../infra/stack/schema.ts";

const tmp = mkdtempSync(path.join(tmpdir(), "ingestbench-fault-steps-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const stacks = path.join(import.meta.dirname, "../../../stacks");

function scenario(lines: string[]): string {
  const file = path.join(tmp, `s${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    [
      "name: fault-steps-test",
      "event: [{ name: msg, type: string, size: 20 }]",
      "generator: { syslog: { batch: 100, connections: 1, rate: 1000, seed: 1 } }",
      'collector: { syslog-ng: { version: "3.38" } }',
      'sink: { postgres: { version: "15" } }',
      "duration: 5s",
      "replicates: 1",
      "steps:",
      ...lines.map((l) => `  ${l}`),
    ].join("\n"),
  );
  return file;
}

describe("disk-full and drop-connections steps", () => {
  it("parse in their short and long forms, with default names, levels, peers and fault flags", () => {
    const s = loadScenarioFile(
      scenario([
        "- { at: 1s, disk-full: sink }",
        "- { at: 2s, disk-full: { host: sink, level: 90% } }",
        "- { at: 3s, drop-connections: collector }",
        "- { at: 4s, drop-connections: { host: sink, peer: collector } }",
      ]),
    );
    expect(s.steps.map((x) => [x.name, x.action, x.fault])).toEqual([
      ["disk-full sink (100%)", { kind: "disk-full", host: "sink", levelPercent: 100 }, true],
      ["disk-full sink (90%)", { kind: "disk-full", host: "sink", levelPercent: 90 }, true],
      ["drop-connections collector", { kind: "drop-connections", host: "collector", peer: null }, true],
      [
        "drop-connections sink ↔ collector",
        { kind: "drop-connections", host: "sink", peer: "collector" },
        true,
      ],
    ]);
  });

  it("refuses bad forms at file:line:col with the field", () => {
    const refusal = (line: string): string => {
      const file = scenario([line]);
      try {
        loadScenarioFile(file);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigurationError);
        return (e as Error).message.replaceAll(file, "F");
      }
      throw new Error("loaded");
    };
    expect(refusal("- { at: 1s, disk-full: { host: sink, level: 120% } }")).toMatch(
      /^F:9:\d+: steps\.0\.disk-full\.level: level: .*more than 100%/m,
    );
    expect(refusal("- { at: 1s, disk-full: loadgen }")).toMatch(
      /^F:9:\d+: steps\.0\.disk-full: disk-full: the loadgen host keeps no data volume/m,
    );
    expect(refusal("- { at: 1s, disk-full: { host: sink, size: 1GiB } }")).toMatch(
      /^F:9:\d+: steps\.0\.disk-full\.size: unknown key "size"/m,
    );
    expect(refusal("- { at: 1s, drop-connections: { host: sink, peer: sink } }")).toMatch(
      /^F:9:\d+: steps\.0\.drop-connections\.peer: peer must be another host/m,
    );
    expect(refusal("- { at: 1s, drop-connections: { host: sink, peer: db } }")).toMatch(
      /^F:9:\d+: steps\.0\.drop-connections\.peer: expected a host role/m,
    );
  });

  it("are checked against the stack before provisioning: a volume that is not size-capped, a peer the cell lacks", () => {
    const plan = (line: string) => ({ scenario: "t", steps: loadScenarioFile(scenario([line])).steps });
    const roles = ["loadgen", "collector", "sink"];
    // docker-debian-faults' sink is on a tmpfs: allowed; docker-debian-2-cores' is on the engine's data root: refused
    expect(() =>
      checkSteps(loadStack("docker-debian-faults", stacks), roles, plan("- { at: 1s, disk-full: sink }")),
    ).not.toThrow();
    expect(() =>
      checkSteps(loadStack("docker-debian-2-cores", stacks), roles, plan("- { at: 1s, disk-full: sink }")),
    ).toThrow(
      expect.objectContaining({
        code: "E_STEP_DISK",
        field: "steps.0",
        message: expect.stringContaining("disk: { tmpfs: 256MiB }"),
      }),
    );
    expect(() =>
      checkSteps(
        loadStack("local-pipeline", stacks),
        ["loadgen", "sink"],
        plan("- { at: 1s, drop-connections: { host: sink, peer: collector } }"),
      ),
    ).toThrow(expect.objectContaining({ code: "E_STEP_HOST" }));
    // this kernel's answer decides drop-connections (CONFIG_INET_DIAG_DESTROY): refused exactly when it says no
    const d = socketDestroyAvailable();
    const drop = () =>
      checkSteps(
        loadStack("local-pipeline", stacks),
        roles,
        plan("- { at: 1s, drop-connections: collector }"),
      );
    if (d.available === false)
      expect(drop).toThrow(expect.objectContaining({ code: "E_STEP_SOCKET_DESTROY" }));
    else expect(drop).not.toThrow();
  });

  it("docker: the component's process tree is pid 1's descendants (not the execs beside it); a link change keeps what it does not name", () => {
    // pid ppid, as the container's /proc says: 1 is the component, 7 and 9 its children, 12 a grandchild; 30 and 31
    // are `docker exec` processes (parent 0: outside the namespace)
    expect(componentChildren("1 0\n7 1\n9 1\n12 7\n30 0\n31 30\n")).toEqual([7, 9, 12]);
    expect(
      nextShaping(
        { tbfRateBytesPerSec: 12_000_000, cfsQuotaUs: 25_000 },
        { bandwidthBytesPerSec: 1_000_000 },
      ),
    ).toEqual({ rateBytesPerSec: 1_000_000 });
    expect(nextShaping({ tbfRateBytesPerSec: 12_000_000 }, { delayMs: 20 })).toEqual({
      rateBytesPerSec: 12_000_000,
      delayMs: 20,
    });
    expect(nextShaping(undefined, { lossPercent: 1 }, { rateBytesPerSec: 5 })).toEqual({
      rateBytesPerSec: 5,
      lossPercent: 1,
    });
  });
});
