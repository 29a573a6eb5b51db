// The local OpenSearch component: the project's build of OpenSearch 2.19.6 (scripts/build-opensearch.sh; absent, these
// tests fail) found and identified by core/program.ts, refused before provisioning when a stack's program drifts from
// the pin, and started for real in a host of the local platform (cgroup with a memory cap, network namespace).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunningComponent } from "../../../core/component.ts";
import type { LocalStack } from "../../../core/hosts.ts";
import { resolveProgram } from "../../../core/program.ts";
import { checkRunnableLocally } from "../../../harness/runner/local-site.ts";
import { loadScenarioFile, planCells } from "../../../harness/runner/plan.ts";
import { provisionLocal } from "../../../infra/local/platform.ts";
import { loadStack } from "../../../infra/stack/schema.ts";
import { HTTP_PORT, mergeSignals, OPENSEARCH_PROGRAM, opensearch, opensearchHeapMiB } from "./component.ts";

const REPO = path.resolve(import.meta.dirname, "../../..");
const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-os-component-"));
const stacks: LocalStack[] = [];
const servers: RunningComponent[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const s of stacks) await s.teardown().catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
});

/** A local stack file in `tmp` with one sink host, `extra` YAML lines under it. */
function stackFile(name: string, extra: string[]): string {
  const file = path.join(tmp, `Pulumi.${name}.yaml`);
  writeFileSync(
    file,
    [
      "config:",
      "  ingestbench:platform: local",
      "  ingestbench:hosts:",
      "    loadgen:",
      '      cpu: "1"',
      "    sink:",
      '      cpu: "1"',
      ...extra.map((l) => `      ${l}`),
      "",
    ].join("\n"),
  );
  return name;
}

function bulkPlan() {
  const file = path.join(REPO, "scenarios/opensearch-bulk-8000.yaml");
  return planCells(loadScenarioFile(file), file, { replicates: 1 })[0]!;
}

describe("opensearch component: the program", () => {
  it("real OpenSearch: the project's build is found and reports 2.19.6 itself (`opensearch --version`)", () => {
    const p = resolveProgram(OPENSEARCH_PROGRAM, undefined, "test");
    expect(p.from).toBe("built");
    expect(p.argv[0]).toMatch(/opensearch-launcher\/[0-9a-f]{32}\/bin\/opensearch$/);
    expect(p.version).toBe("2.19.6");
  });

  it("a stack's opensearch that reports another version is refused before provisioning, naming both", () => {
    const fake = path.join(tmp, "opensearch-2.19.5");
    writeFileSync(
      fake,
      '#!/bin/sh\necho "Version: 2.19.5, Build: tar/0000000/2025-10-01T10:00:00.000000000Z, JVM: 21.0.8"\n',
    );
    chmodSync(fake, 0o755);
    const stack = loadStack(stackFile("os-drift", [`programs: { opensearch: ${fake} }`]), tmp);
    expect(() => checkRunnableLocally(stack, bulkPlan())).toThrow(
      expect.objectContaining({
        code: "E_VERSION",
        message: expect.stringMatching(/reports version 2\.19\.5, but the scenario pins 2\.19\.6/),
      }),
    );
    const missing = loadStack(
      stackFile("os-missing", ["programs: { opensearch: /nonexistent/opensearch }"]),
      tmp,
    );
    expect(() => checkRunnableLocally(missing, bulkPlan())).toThrow(
      expect.objectContaining({
        code: "E_PROGRAM_MISSING",
        message: expect.stringMatching(/scripts\/build-opensearch\.sh/),
      }),
    );
  });

  it("the heap is half the memory cap (core/catalog.ts heapMiB), 1 GiB without a cap", () => {
    const GiB = 1024 ** 3;
    expect(opensearchHeapMiB(2 * GiB, 24 * GiB)).toBe(1024);
    expect(opensearchHeapMiB(GiB, 24 * GiB)).toBe(512);
    expect(opensearchHeapMiB(null, 24 * GiB)).toBe(1024);
    // cgroup v1's "no limit" (a page-rounded 2^63 - 1) is no cap
    expect(opensearchHeapMiB(9223372036854771712, 24 * GiB)).toBe(1024);
  });

  it("merge signals are the numbers of the node's merges object, named merges.<field>", () => {
    const answer = {
      _nodes: { total: 1, successful: 1, failed: 0 },
      cluster_name: "ingestbench",
      nodes: {
        x: {
          name: "sink",
          indices: {
            merges: {
              current: 1,
              current_docs: 8000,
              current_size_in_bytes: 1048576,
              total: 3,
              total_time_in_millis: 412,
              total_docs: 24000,
              total_size_in_bytes: 9000000,
              total_stopped_time_in_millis: 0,
              total_throttled_time_in_millis: 0,
              total_auto_throttle_in_bytes: 20971520,
            },
          },
        },
      },
    };
    expect(mergeSignals(answer)).toMatchObject({
      "merges.current": 1,
      "merges.total": 3,
      "merges.total_time_in_millis": 412,
    });
    expect(() => mergeSignals({ nodes: {} })).toThrow(/no nodes\.\*\.indices\.merges/);
  });
});

describe("opensearch component: a real node in a local host", () => {
  it("real OpenSearch: starts in a host capped at 1 GiB with a 512 MiB heap, answers on the data address, reads its merges, and stop leaves no process", async () => {
    const stack = loadStack(stackFile("os-1g", ["memory: 1GiB"]), tmp);
    const local = await provisionLocal({ ...stack, hosts: { sink: stack.hosts.sink! } });
    stacks.push(local);
    const host = local.hosts.sink!;
    const sink = await opensearch.startLocal(host, opensearch_config());
    servers.push(sink);
    expect(sink).toMatchObject({
      name: "opensearch",
      pinned: "2.19.6",
      running: "2.19.6",
      data: { host: host.address, port: HTTP_PORT },
      control: { host: host.controlAddress, port: HTTP_PORT },
      params: { version: "2.19.6", index: "ib_events", number_of_shards: "1" },
    });
    const base = `http://${host.controlAddress}:${HTTP_PORT}`;
    const jvm = (await (await fetch(`${base}/_nodes/_local/stats/jvm`)).json()) as any;
    const node = Object.values(jvm.nodes)[0] as any;
    expect(node.jvm.mem.heap_max_in_bytes).toBe(512 * 1024 ** 2);
    const info = (await (await fetch(`${base}/_nodes/_local/settings`)).json()) as any;
    const settings = (Object.values(info.nodes)[0] as any).settings;
    expect(settings.path.data).toEqual([path.join(host.dataDir, "opensearch", "data")]);
    expect(settings.discovery.type).toBe("single-node");
    const signals = await sink.signals!();
    expect(signals["merges.current"]).toBe(0);
    expect(typeof signals["merges.total_time_in_millis"]).toBe("number");
    const pid = sink.pid!;
    await sink.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    await local.teardown();
  }, 240_000);
});

function opensearch_config() {
  return { version: "2.19.6" as const, index: "ib_events", number_of_shards: 1 };
}
