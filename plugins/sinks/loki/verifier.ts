/**
 * Verifier "loki": the sink-side half for Grafana Loki, over its HTTP API (Loki docs, "Loki HTTP API":
 * `GET /loki/api/v1/query_range`, `GET /ready`) with undici (core/http.ts `HttpJsonApi`). Multi-tenant Loki
 * gets `X-Scope-OrgID: <params.tenant>`.
 *
 * Loki has no table to drop: a run's lines are those of the stream selector `{job="<params.job>"}` (default job
 * "ingestbench", the loki-push generator's and the collector renderers' label; `params.selector` overrides the whole
 * selector) whose entry timestamp lies in the run window, from `prepare` (which checks /ready) to the query. Entry
 * timestamps must therefore be send times (the loki-push generator's default `timestamp: "sent"`, or a collector's
 * arrival time); lines of earlier cells fall before the window.
 *
 * - sample, live (the load's samples): windowed, so that what it reads at the sink does not grow with the run. The
 *   window is cut into buckets of `LOKI_BUCKET_MS` (1 s) on an absolute grid (multiples of 1 s in epoch ms); one
 *   query_range `sum(count_over_time(<countRange>[1000ms]))`, step 1 (s), from the first bucket end past the frontier
 *   to the bucket end at or after now. Loki evaluates it at start, start + step, … ≤ end, each point t counting the
 *   entries of (t − 1 s, t] (Loki's range aggregations exclude a range's lower bound and include its upper), so the
 *   buckets neither overlap nor leave gaps; a bucket without entries has no point.
 *   Grid points stay put under a query frontend that aligns start and end to the step (`align_queries_with_step`);
 *   an answer off the grid is an error. The bucket holding the window's start is counted alone, while it is live,
 *   as `count_over_time(<countRange>[<its part of the window> ms])` at its end, so that no line before the window
 *   counts. Buckets that end at or before now − H are frozen at what the sample read of them and never read again:
 *   stored = frozen + the live buckets. (Buckets never read that are past the longest horizon, when samples are more
 *   than an hour apart, are counted once by one count_over_time over them and frozen.)
 *   The horizon H = 2 × the newest line's age (now − its send time; before any line, now − the window's start),
 *   at least `LIVE_HORIZON_MS` (60 s), at most `LIVE_HORIZON_MAX_MS` (1 h, 3601 points: below Loki's 11 000 per
 *   series). The age grows while delivery stalls, so the frontier waits for late lines; the margin also covers the
 *   generator's clock against the harness's (entry times are send times on the generator's clock). A sample reads H of
 *   entries (H × the rate, constant over the run, where the unwindowed count read the whole run). A line delivered
 *   after its bucket froze (more than H after it was sent, ahead of newer lines) is missing from the live figure,
 *   which is low by it, never high: a bucket's count only grows (also where a results cache answers a bucket from an
 *   earlier read). The `full` samples and the ledger count it. The newest line (log query, direction backward,
 *   limit 1) is looked for over [now − H, now] only: a line newer than the newest seen is younger than that line's
 *   age, so inside H; its sent_at is the line's JSON `sent_at`, else the entry time.
 * - sample, `full` (the drain): `sum(count_over_time(<countRange>[<window> ms]))` evaluated once at now (start = end =
 *   now) and the newest line, both over the whole window: exact, late lines included.
 * - ledger (definitions in core/ledger.ts): every entry of the window, paged forward by timestamp (limit `LOKI_PAGE`,
 *   Loki's default max_entries_limit_per_query; the next page starts at the last timestamp seen, and entries at that
 *   exact timestamp already counted are skipped). Each line is the event's JSON; gen comes from the line (or the
 *   stream's gen label), seq from the line; a line without them is unexpected. overwritten = 0: Loki keeps every
 *   entry, except that an entry identical to one already in its stream (same timestamp and line) is dropped at
 *   ingest, so a resend of the very same entry is invisible here (neither duplicated nor lost). deduplicated, from
 *   what was sent (core/ledger.ts SinkCollisions): 0, exactly, because no two sent seqs make identical entries (each
 *   line carries its own gen and seq); only deliberate repeats (`duplicateEvery`) are identical to their first copy,
 *   and those are not seqs. Lines of another run are `foreign` (SeqLedger with ctx.genBase).
 * - the sample counts this run's lines only when the run has its own generator-id space (ctx.genBase, core/ledger.ts
 *   GEN_STRIDE ids): the range aggregation gets a log pipeline, `count_over_time(<selector> | json ib_gen="gen" |
 *   ib_gen >= base and ib_gen < base + 256 [<range>])` (LogQL "Metric queries": log range aggregations over a
 *   pipeline; label filter expressions compare numbers). A label matcher cannot express a numeric range, and a
 *   previous run's late lines in the window would otherwise read as this run's throughput. A line that is not the
 *   event's JSON fails the filter; the ledger still counts it as unexpected.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import { HttpJsonApi } from "../../../core/http.ts";
import { GEN_STRIDE, SeqLedger } from "../../../core/ledger.ts";
import { sinkAuthHeaders, sinkLogin } from "../../../core/secrets.ts";
import {
  LIVE_HORIZON_MAX_MS,
  liveHorizonMs,
  type CountSample,
  type Ledger,
  type Verifier,
  type VerifierContext,
  type VerifierFactory,
} from "../../../core/verifier.ts";
import type { StoredRowReader } from "../../../core/fidelity.ts";
import { lokiRowReader } from "./rows.ts";

/** Entries per ledger page (Loki's default limits_config.max_entries_limit_per_query). */
export const LOKI_PAGE = 5000;

/** Width of a live sample's buckets, ms (the query_range step; see the file comment). */
export const LOKI_BUCKET_MS = 1000;

const now = (): number => performance.timeOrigin + performance.now();

/** Epoch ms → Loki's nanosecond epoch string. */
const ns = (ms: number): string => `${BigInt(Math.floor(ms)) * 1_000_000n}`;

/** A query_range answer ("Matrix, vector, and streams"). */
interface QueryRangeAnswer {
  status?: string;
  data?: {
    resultType?: string;
    result?: Array<{
      metric?: Record<string, string>;
      stream?: Record<string, string>;
      values?: Array<[unknown, unknown]>;
    }>;
  };
}

/**
 * The headers of every Loki call: `X-Scope-OrgID: <params.tenant>` when given (Loki with auth_enabled: true is
 * multi-tenant and needs it: Grafana's Loki docs, "Authentication"), and, when INGESTBENCH_LOKI_PASSWORD is set,
 * `Authorization: Basic base64(<params.user, default "ingestbench">:<password>)` (RFC 7617) for the authenticating
 * reverse proxy those docs put in front of Loki, which has no users of its own.
 */
export function lokiHeaders(
  params: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  return {
    ...(params.tenant ? { "X-Scope-OrgID": params.tenant } : {}),
    ...sinkAuthHeaders("loki", params, env),
  };
}

/** `{job="<job>"}` with the value escaped as a LogQL string. */
export function lokiSelector(params: Record<string, string>): string {
  if (params.selector) return params.selector;
  return `{job=${JSON.stringify(params.job ?? "ingestbench")}}`;
}

class LokiVerifier implements Verifier {
  /** no delivery latency (core/verifier.ts Verifier.deliveryUnavailable) */
  readonly deliveryUnavailable =
    "Loki's push API keeps each entry's own timestamp (the writer's) and its line; its query API returns no receive time";
  private readonly api: HttpJsonApi;
  private readonly selector: string;
  /** the log range of the sample's count: the selector, narrowed to this run's gens when it has its own id space */
  private readonly countRange: string;
  private windowStartMs = 0;
  private newest: number | null = null;
  /** live sample state (see the file comment): lines of the frozen buckets, all of which end at or before `frontierMs` */
  private frozen = 0;
  private frontierMs = 0;
  /** end of the bucket that holds the window's start while it is live (counted on its own), else null */
  private headEndMs: number | null = null;
  /** stored lines read back for the content check (./rows.ts) */
  readonly rows: StoredRowReader;

  constructor(private readonly ctx: VerifierContext) {
    this.selector = lokiSelector(ctx.params);
    const base = ctx.genBase;
    this.countRange =
      base === undefined
        ? this.selector
        : `${this.selector} | json ib_gen="gen" | ib_gen >= ${base} and ib_gen < ${base + GEN_STRIDE} `;
    this.api = new HttpJsonApi(
      "Loki",
      ctx.host,
      ctx.port,
      lokiHeaders(ctx.params),
      undefined,
      sinkLogin("loki", ctx.params),
    );
    this.rows = lokiRowReader(this.api, this.selector, () => this.windowStartMs, ctx.fields);
  }

  /** Check that Loki is ready and open the run window now. */
  async prepare(): Promise<void> {
    await this.api.call("GET", "/ready");
    this.windowStartMs = Date.now();
    this.newest = null;
    this.frozen = 0;
    const first = Math.ceil(this.windowStartMs / LOKI_BUCKET_MS) * LOKI_BUCKET_MS;
    this.frontierMs = first;
    this.headEndMs = first > this.windowStartMs ? first : null;
  }

  private async queryRange(params: Record<string, string>): Promise<QueryRangeAnswer> {
    const r = await this.api.call("GET", `/loki/api/v1/query_range?${new URLSearchParams(params)}`);
    const a = r.json as QueryRangeAnswer | null;
    if (a?.status !== "success" || !Array.isArray(a.data?.result))
      throw new IngestbenchError("E_LOKI_ANSWER", `Loki query_range answered ${r.body.slice(0, 200)}`);
    return a;
  }

  /**
   * `sum(count_over_time(<countRange>[<rangeMs> ms]))` evaluated once, at `atMs`: the lines of (atMs − rangeMs, atMs].
   */
  private async countAt(atMs: number, rangeMs: number): Promise<number> {
    const a = await this.queryRange({
      query: `sum(count_over_time(${this.countRange}[${rangeMs}ms]))`,
      start: ns(atMs),
      end: ns(atMs),
      step: "1",
    });
    let n = 0;
    for (const [, v] of matrixPoints(a)) n += v;
    return n;
  }

  /** Stored lines of the whole window at `endMs` (a `full` sample). */
  private count(endMs: number): Promise<number> {
    return this.countAt(endMs, Math.max(1, Math.ceil(endMs - this.windowStartMs)));
  }

  /**
   * Stored lines of the window at `t`, windowed: frozen buckets plus the live ones re-read, then the buckets older
   * than the horizon frozen (see the file comment).
   */
  private async countWindowed(t: number, horizonMs: number): Promise<number> {
    const step = LOKI_BUCKET_MS;
    const cut = Math.floor((t - horizonMs) / step) * step; // buckets ending at or before it freeze
    const end = Math.ceil(t / step) * step;
    let live = 0;
    let freezing = 0;
    if (this.headEndMs !== null) {
      const n = await this.countAt(this.headEndMs, this.headEndMs - this.windowStartMs);
      live += n;
      if (this.headEndMs <= cut) {
        freezing += n;
        this.headEndMs = null;
      }
    }
    // buckets never read that fell out of the longest horizon (samples over LIVE_HORIZON_MAX_MS apart): one count
    const oldest = Math.floor((t - LIVE_HORIZON_MAX_MS) / step) * step;
    if (this.frontierMs < oldest) {
      this.frozen += await this.countAt(oldest, oldest - this.frontierMs);
      this.frontierMs = oldest;
    }
    const from = this.frontierMs + step;
    if (from <= end) {
      const a = await this.queryRange({
        query: `sum(count_over_time(${this.countRange}[${step}ms]))`,
        start: ns(from),
        end: ns(end),
        step: String(step / 1000),
      });
      for (const [at, n] of matrixPoints(a)) {
        if (at % step !== 0 || at < from || at > end)
          throw new IngestbenchError(
            "E_LOKI_ANSWER",
            `Loki answered a point at ${at} ms to a query of the ${step} ms steps ${from}..${end} ms: not one of them`,
          );
        live += n;
        if (at <= cut) freezing += n;
      }
    }
    const stored = this.frozen + live;
    this.frozen += freezing;
    this.frontierMs = Math.max(this.frontierMs, cut);
    return stored;
  }

  /**
   * A timed count: live, windowed over the recent horizon; `full` (the drain), over the whole window (see the file
   * comment). Then the newest line's sent_at, over the same span.
   */
  async sample(options: { full?: boolean; tag?: string } = {}): Promise<CountSample> {
    const tBefore = now();
    const t = Date.now();
    const horizonMs = liveHorizonMs(t - (this.newest ?? this.windowStartMs));
    const stored = options.full ? await this.count(t) : await this.countWindowed(t, horizonMs);
    const tAfter = now();
    const from = options.full ? this.windowStartMs : Math.max(this.windowStartMs, t - horizonMs);
    const a = await this.queryRange({
      query: this.selector,
      start: ns(from),
      end: ns(Date.now() + 1),
      limit: "1",
      direction: "backward",
    });
    for (const s of a.data?.result ?? []) {
      for (const [ts, line] of s.values ?? []) {
        const sent = sentAtMs(line) ?? Number(BigInt(String(ts)) / 1_000_000n);
        if (Number.isFinite(sent)) this.newest = Math.max(this.newest ?? 0, sent);
      }
    }
    return { tBefore, tAfter, stored, newestSentAtMs: this.newest };
  }

  async ledger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Ledger> {
    const acc = new SeqLedger(sent, rejected, this.ctx.genBase ?? 0);
    const end = ns(Date.now() + 1);
    let start = BigInt(ns(this.windowStartMs));
    let boundary = new Set<string>(); // entries at timestamp `start` already counted
    for (;;) {
      const a = await this.queryRange({
        query: this.selector,
        start: `${start}`,
        end,
        limit: String(LOKI_PAGE),
        direction: "forward",
      });
      const entries: Array<{ ts: bigint; key: string; line: unknown; labels: Record<string, string> }> = [];
      for (const s of a.data?.result ?? []) {
        const labels = s.stream ?? {};
        const streamKey = JSON.stringify(labels);
        for (const [ts, line] of s.values ?? [])
          entries.push({
            ts: BigInt(String(ts)),
            key: `${streamKey}\u0000${String(ts)}\u0000${String(line)}`,
            line,
            labels,
          });
      }
      let maxTs = start;
      let added = 0;
      for (const e of entries) {
        if (e.ts === start && boundary.has(e.key)) continue;
        added++;
        if (e.ts > maxTs) maxTs = e.ts;
        const doc = parseLine(e.line);
        const gen = doc?.gen ?? (e.labels.gen !== undefined ? Number(e.labels.gen) : undefined);
        if (gen === undefined || doc?.seq === undefined) acc.addUnkeyed(1);
        else acc.add(gen, doc.seq);
      }
      if (entries.length < LOKI_PAGE) break;
      if (added === 0)
        throw new IngestbenchError(
          "E_LOKI_PAGE",
          `more than ${LOKI_PAGE} entries share timestamp ${start} ns: raise Loki's max_entries_limit_per_query and LOKI_PAGE`,
        );
      const next = new Set(maxTs === start ? boundary : []);
      for (const e of entries) if (e.ts === maxTs) next.add(e.key);
      boundary = next;
      start = maxTs;
    }
    return acc.result(0);
  }

  /** Verifier.retarget: the API's later calls go to `at`. */
  retarget(at: { host: string; port: number }): void {
    this.api.retarget(at.host, at.port);
  }

  async close(): Promise<void> {
    await this.api.close();
  }
}

/** The points of a metric query's matrix answer, [epoch ms, value], every series'; no series: none. */
function matrixPoints(a: QueryRangeAnswer): Array<[number, number]> {
  if (a.data?.resultType !== "matrix")
    throw new IngestbenchError(
      "E_LOKI_ANSWER",
      `Loki answered a ${a.data?.resultType} to a metric query, expected a matrix`,
    );
  const out: Array<[number, number]> = [];
  for (const series of a.data.result ?? []) {
    for (const [ts, v] of series.values ?? []) {
      const at = Math.round(Number(ts) * 1000);
      const n = Number(v);
      if (!Number.isFinite(at) || !Number.isFinite(n))
        throw new IngestbenchError(
          "E_LOKI_ANSWER",
          `Loki's count_over_time point [${String(ts)}, ${String(v)}] is not a number`,
        );
      out.push([at, n]);
    }
  }
  return out;
}

/** gen and seq of a line holding the event's JSON, or null. */
function parseLine(line: unknown): { gen?: number; seq?: number } | null {
  if (typeof line !== "string") return null;
  try {
    const d = JSON.parse(line) as { gen?: unknown; seq?: unknown };
    return {
      gen: typeof d.gen === "number" ? d.gen : undefined,
      seq: typeof d.seq === "number" ? d.seq : undefined,
    };
  } catch {
    return null;
  }
}

/** The line's sent_at (ISO 8601 or epoch ms) in epoch ms, or null. */
function sentAtMs(line: unknown): number | null {
  if (typeof line !== "string") return null;
  try {
    const v = (JSON.parse(line) as { sent_at?: unknown }).sent_at;
    const t = typeof v === "number" ? v : typeof v === "string" ? Date.parse(v) : Number.NaN;
    return Number.isFinite(t) ? t : null;
  } catch {
    return null;
  }
}

/** Factory "loki": ctx.params.job (default "ingestbench") or selector, tenant. */
export const lokiVerifier: VerifierFactory = {
  name: "loki",
  create: (ctx) => new LokiVerifier(ctx),
};
