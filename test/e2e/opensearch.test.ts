// Real runs of write-up 004's shape (scenarios/opensearch-bulk-8000.yaml) on the local platform: one sequential
// es-bulk client sending 8000-document `_bulk` requests from the loadgen namespace, over the shaped link, into a real
// OpenSearch 2.19.6 node (the project's build of its Maven Central modules, scripts/build-opensearch.sh) in the sink's
// cgroup and namespace with 004's caps (stacks/Pulumi.local-quarter-core.yaml: a quarter core, 2 GiB so a 1 GiB heap,
// 3000 IOPS / 120 MiB/s of disk, 12000 KB/s of network). Short runs (seconds): the ledger, the content check and the
// node's own merge counters are asserted, not rates.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunStorage } from "../../harness/results/types.ts";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import { readSeries } from "../helpers/pipeline-ledger.ts";

const STACK = "local-quarter-core";
/** the node's start (~1 min on a busy 2-core machine), the run, then the ledger and content check at a quarter core */
const TIMEOUT_MS = 420_000;
const tmp = mkdtempSync(path.join(os.tmpdir(), "ibtest-opensearch-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("opensearch-bulk-8000 on local-quarter-core (real OpenSearch 2.19.6 from Maven Central, real cgroups, namespaces and tc)", () => {
  it(
    "real OpenSearch: 8000-document bulks from one sequential client are stored exactly, and the node's merges reach every sample",
    async () => {
      const plan = scenarioPlan("opensearch-bulk-8000.yaml", {
        warmup: "1s",
        duration: "6s",
        // a cold node at a quarter core takes 7-17 s over its first 8000 documents on a busy 2-core machine
        generator: { timeoutMs: 180_000 },
      });
      const run = newBenchRun(STACK, plan);
      const record = await run.run();
      const series = readSeries(run);
      expect(record.error).toBeNull();
      expect(record.status).toBe("ok");
      expect(record.versions.opensearch).toEqual({ pinned: "2.19.6", running: "2.19.6" });
      const ledger = record.ledger!;
      expect(ledger).toMatchObject({
        lost: 0,
        duplicated: 0,
        rejected: 0,
        unexpected: 0,
        overwritten: 0,
        missingRanges: [],
      });
      expect(ledger.sent).toBeGreaterThan(0);
      expect(ledger.sent % 8000).toBe(0);
      expect(ledger.stored).toBe(ledger.sent);
      expect(ledger.distinct).toBe(ledger.sent);
      expect(record.generator!.requests).toBe(ledger.sent / 8000);
      expect(record.checks.every((c) => c.ok)).toBe(true);
      // the sink host ran with 004's caps
      expect(record.limits.sink!.applied).toMatchObject({
        cfsQuotaUs: 25_000,
        cfsPeriodUs: 100_000,
        memoryLimitBytes: 2 * 1024 ** 3,
        readIops: 3000,
        writeIops: 3000,
        readBps: 120 * 1024 ** 2,
        tbfRateBytesPerSec: 12_000_000,
      });
      // every sample carries the node's merges from _nodes/stats (current, total, total_time_in_millis)
      expect(series.length).toBeGreaterThan(0);
      for (const p of series) {
        expect(p.sink?.name).toBe("opensearch");
        expect(p.sink?.error).toBeUndefined();
        for (const k of ["merges.current", "merges.total", "merges.total_time_in_millis"])
          expect(typeof p.sink!.values![k]).toBe("number");
      }
      // the index's store after _refresh and _flush (_stats/store primaries), per million stored documents
      const st = record.storage as RunStorage;
      expect(st.rows).toBe(ledger.distinct);
      expect(st.bytes).toBeGreaterThan(0);
      expect(st.bytesPerMillionRows).toBe(Math.round((st.bytes / st.rows) * 1e6));
      expect(st.uncompressedBytes).toBeUndefined();
      expect(st.source).toMatch(
        /_stats\/store after _refresh and _flush: indices\.[^.]+\.primaries\.store\.size_in_bytes/,
      );
      const last = series.at(-1)!.sink!.values!;
      expect(last["merges.total"]).toBeGreaterThanOrEqual(series[0]!.sink!.values!["merges.total"]!);
      expect(leftovers(record.runId.slice(-6))).toEqual([]);
      console.log(
        `opensearch-bulk-8000 on ${STACK}: ${ledger.stored} stored in ${record.generator!.requests} bulks, ` +
          `merges total ${last["merges.total"]} (${last["merges.total_time_in_millis"]} ms); store ${st.bytes} bytes; overhead ${JSON.stringify(record.instrument?.overhead ?? null)}`,
      );
    },
    TIMEOUT_MS,
  );

  it(
    "real OpenSearch: a field whose values conflict with the index mapping for some documents gives exactly those seqs rejected in the ledger",
    async () => {
      // `status` is the last string field, so each seq takes a line of the replay file (seq k: line k mod 10); the
      // index maps it `long`, so the three lines that are no number are refused item by item (400
      // mapper_parsing_exception in a 200 `_bulk` answer with "errors": true), and only those
      const lines = ["200", "200", "404", "n/a", "500", "200", "timeout", "301", "200", "unknown"];
      const bad = new Set([3, 6, 9]);
      const replay = path.join(tmp, "status.log");
      writeFileSync(replay, lines.join("\n") + "\n");
      const plan = scenarioPlan("opensearch-bulk-8000.yaml", {
        warmup: "1s",
        duration: "4s",
        generator: { timeoutMs: 180_000 },
      });
      plan.fields = [
        { name: "ts", type: "timestamp" },
        { name: "msg", type: "string", size: 180 },
        { name: "status", type: "string", size: 16 },
      ];
      plan.replayFile = replay;
      let stored: { total: number; bad: number } | undefined;
      const run = newBenchRun(STACK, plan, undefined, {
        beforeLedger: async ({ host, port, params }) => {
          const post = async (p: string, body: unknown): Promise<any> =>
            (
              await fetch(`http://${host}:${port}/${params.index}${p}`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify(body),
              })
            ).json();
          await post("/_refresh", {});
          const total = (await post("/_count", { query: { match_all: {} } })).count as number;
          // painless (the lang-painless module): stored documents whose seq is one of the refused lines
          const badCount = (
            await post("/_count", {
              query: {
                script: { script: { source: "long r = doc['seq'].value % 10; r == 3 || r == 6 || r == 9" } },
              },
            })
          ).count as number;
          stored = { total, bad: badCount };
        },
      });
      run.on("sink", (s: { host: string; port: number; params: Record<string, string> }) => {
        // between the verifier's index and the first bulk (the runner emits "sink" synchronously there): the same
        // index, with `status` mapped long instead of text
        const url = `http://${s.host}:${s.port}/${s.params.index}`;
        const body = JSON.stringify({
          settings: { number_of_shards: 1, number_of_replicas: 0 },
          mappings: {
            dynamic: false,
            properties: {
              ts: { type: "date" },
              msg: { type: "text" },
              status: { type: "long" },
              gen: { type: "integer" },
              seq: { type: "long" },
              sent_at: { type: "date" },
            },
          },
        });
        execFileSync("curl", ["-sf", "-X", "DELETE", url]);
        execFileSync("curl", ["-sf", "-X", "PUT", url, "-H", "content-type: application/json", "-d", body]);
      });
      const record = await run.run();
      const ledger = record.ledger!;
      expect(ledger.sent).toBeGreaterThan(0);
      expect(ledger.sent % 8000).toBe(0);
      // seqs 0..sent-1, 3 in every 10 refused: (sent / 10) × 3 (8000 is a multiple of 10)
      const expected = (ledger.sent / 10) * bad.size;
      expect(ledger).toMatchObject({
        rejected: expected,
        accepted: ledger.sent - expected,
        lost: 0,
        duplicated: 0,
        unexpected: 0,
        rejectedStored: 0,
      });
      expect(ledger.stored).toBe(ledger.sent - expected);
      // what the node holds: the other seqs, none of the refused ones (so the rejected seqs are exactly 3, 6, 9 mod 10)
      expect(stored).toEqual({ total: ledger.sent - expected, bad: 0 });
      expect(record.checks.find((c) => c.check === "ledger.rejected")).toMatchObject({
        ok: false,
        actual: expected,
      });
      expect(record.status).toBe("failed");
      expect(leftovers(record.runId.slice(-6))).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
