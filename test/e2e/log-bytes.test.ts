// Log MiB/s on a real PostgreSQL run (local-2-cores: real cgroups, namespaces, tc): quickstart's pg-copy generator
// replays a log file through `source: { file }` (plan.replayFile) and the run reports the bytes of the log lines
// themselves (Summary.logBytesPerRow, logMibPerSecond, SeriesPoint.logMibPerSec) apart from the COPY text it sent
// (bytesPerRow, mibPerSecond: tab separators, the timestamp and the tracking columns gen, seq and sent_at). The file
// is written here (CR LF and LF ends, UTF-8 of 2 and 3 bytes, an empty line, lines of 0 to 200 bytes) rather than
// taken from ../shared/logs, which the project's tests do not depend on (its README); whole passes over it
// (requests × batch = a multiple of its lines) make the run's mean exactly the file's.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { newBenchRun, scenarioPlan } from "../helpers/bench.ts";
import { leftovers } from "../helpers/leftovers.ts";
import type { SeriesPoint } from "../../harness/results/types.ts";

const MiB = 2 ** 20;
const LINES = 1000;
const PASSES = 20;

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-log-bytes-e2e-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Line i of the replay file: log-like text of varied length, some of it multi-byte UTF-8, one empty line. */
function line(i: number): string {
  if (i === 500) return "";
  const words = [
    "sshd[2412]: Accepted publickey for",
    "réseau coupé",
    "connexion — reprise",
    "ok",
    "GET /a?b=c 200",
  ];
  const head = `Dec  7 23:${String(i % 60).padStart(2, "0")}:${String((i * 7) % 60).padStart(2, "0")} host${i % 13}`;
  return [head, ...Array.from({ length: i % 9 }, (_, k) => words[(i + k) % words.length])].join(" ");
}

/** The mean UTF-8 byte length of a file's lines as a reader splitting at LF, CR LF or a lone CR gives them. */
function meanLineBytes(file: string): { mean: number; lines: number; bytes: number } {
  const text = readFileSync(file, "utf8");
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.at(-1) === "") lines.pop(); // the end of the last line, not a line
  const bytes = lines.reduce((s, l) => s + Buffer.byteLength(l, "utf8"), 0);
  return { mean: bytes / lines.length, lines: lines.length, bytes };
}

describe("log MiB/s apart from wire MiB/s on a real PostgreSQL replay", () => {
  it("real PostgreSQL: logBytesPerRow is the replayed file's mean line bytes; the COPY text sent per row is more", async () => {
    const replay = path.join(tmp, "replay.log");
    const text = Array.from({ length: LINES }, (_, i) => `${line(i)}${i % 3 === 0 ? "\r\n" : "\n"}`).join("");
    writeFileSync(replay, text);
    const file = meanLineBytes(replay);
    expect(file.lines).toBe(LINES);
    const plan = scenarioPlan("quickstart.yaml", {
      warmup: "0s",
      duration: "60s",
      drainTimeoutMs: 30_000,
      generator: { batch: LINES, requests: PASSES },
    });
    plan.intervalMs = 100;
    plan.replayFile = replay;
    const record = await run(plan);
    const s = record.summary!;
    expect(record.error).toBeNull();
    expect(record.generator).toMatchObject({
      sent: LINES * PASSES,
      accepted: LINES * PASSES,
      requests: PASSES,
    });
    expect(record.ledger).toMatchObject({ stored: LINES * PASSES, lost: 0, duplicated: 0, altered: 0 });
    // every row carried a whole line of the file, PASSES times over: the mean is the file's, to rounding
    expect(s.logBytesPerRow).toBeCloseTo(file.mean, 9);
    expect(record.generator!.logBytes).toBe(file.bytes * PASSES);
    expect(s.bytesPerRow!).toBeGreaterThan(s.logBytesPerRow!);
    expect(s.logMibPerSecond).toBeCloseTo((s.rowsPerSecond * s.logBytesPerRow!) / MiB, 9);
    expect(s.mibPerSecond!).toBeGreaterThan(s.logMibPerSecond!);
    // every sample with a rate from the first the generators' progress covered (a sample before their first
    // progress line cannot know the lines' bytes: null, never a guess): log MiB/s below wire MiB/s, its log bytes
    // per row one of the file's means so far
    const withRate = record.series.filter((p) => p.rowsPerSec !== null && p.rowsPerSec > 0);
    const firstKnown = withRate.findIndex((p) => p.logMibPerSec !== null && p.logMibPerSec !== undefined);
    expect(firstKnown).toBeGreaterThanOrEqual(0);
    const rated = withRate.slice(firstKnown);
    for (const p of rated) {
      expect(p.logMibPerSec).not.toBeNull();
      expect(p.logMibPerSec!).toBeLessThan(p.mibPerSec!);
      const perRow = (p.logMibPerSec! * MiB) / p.rowsPerSec!;
      expect(perRow).toBeGreaterThan(0);
      expect(perRow).toBeLessThan(200);
    }
    expect(leftovers(record.runId.slice(-6))).toEqual([]);
    console.log(
      `log bytes on local-2-cores: ${Math.round(s.rowsPerSecond)} rows/s, ${s.logMibPerSecond!.toFixed(2)} log MiB/s ` +
        `(${s.logBytesPerRow!.toFixed(2)} B/row), ${s.mibPerSecond!.toFixed(2)} wire MiB/s (${s.bytesPerRow!.toFixed(2)} B/row)`,
    );
  }, 300_000);
});

/** Run `plan` on local-2-cores; the record with its series.jsonl points. */
async function run(plan: ReturnType<typeof scenarioPlan>) {
  const bench = newBenchRun("local-2-cores", plan);
  const record = await bench.run();
  const dir = bench.dir;
  const series = readFileSync(path.join(dir, "series.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SeriesPoint);
  return { ...record, series };
}
