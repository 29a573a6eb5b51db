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
 * - sample: `sum(count_over_time(<selector>[<window> ms]))` evaluated once at now (query_range with start = end =
 *   now): a matrix with one series whose last value is the count (no series: 0); then the newest entry (log query,
 *   direction backward, limit 1) gives the newest sent_at (its line's JSON `sent_at`, else the entry time).
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
 *   ib_gen >= base and ib_gen < base + 256 [<window> ms])` (LogQL "Metric queries": log range aggregations over a
 *   pipeline; label filter expressions compare numbers). A label matcher cannot express a numeric range, and a
 *   previous run's late lines in the window would otherwise read as this run's throughput. A line that is not the
 *   event's JSON fails the filter; the ledger still counts it as unexpected.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import { HttpJsonApi } from "../../../core/http.ts";
import { GEN_STRIDE, SeqLedger } from "../../../core/ledger.ts";
import { sinkAuthHeaders, sinkLogin } from "../../../core/secrets.ts";
import type { CountSample, Ledger, Verifier, VerifierContext, VerifierFactory } from "../../../core/verifier.ts";
import type { StoredRowReader } from "../../../core/fidelity.ts";
import { lokiRowReader } from "./rows.ts";

/** Entries per ledger page (Loki's default limits_config.max_entries_limit_per_query). */
export const LOKI_PAGE = 5000;

const now = (): number => performance.timeOrigin + performance.now();

/** Epoch ms → Loki's nanosecond epoch string. */
const ns = (ms: number): string => `${BigInt(Math.floor(ms)) * 1_000_000n}`;

/** A query_range answer ("Matrix, vector, and streams"). */
interface QueryRangeAnswer {
  status?: string;
  data?: {
    resultType?: string;
    result?: Array<{ metric?: Record<string, string>; stream?: Record<string, string>; values?: Array<[unknown, unknown]> }>;
  };
}

/**
 * The headers of every Loki call: `X-Scope-OrgID: <params.tenant>` when given (Loki with auth_enabled: true is
 * multi-tenant and needs it: Grafana's Loki docs, "Authentication"), and, when INGESTBENCH_LOKI_PASSWORD is set,
 * `Authorization: Basic base64(<params.user, default "ingestbench">:<password>)` (RFC 7617) for the authenticating
 * reverse proxy those docs put in front of Loki, which has no users of its own.
 */
export function lokiHeaders(params: Record<string, string>, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return { ...(params.tenant ? { "X-Scope-OrgID": params.tenant } : {}), ...sinkAuthHeaders("loki", params, env) };
}

/** `{job="<job>"}` with the value escaped as a LogQL string. */
export function lokiSelector(params: Record<string, string>): string {
  if (params.selector) return params.selector;
  return `{job=${JSON.stringify(params.job ?? "ingestbench")}}`;
}

class LokiVerifier implements Verifier {
  /** no delivery latency (core/verifier.ts Verifier.deliveryUnavailable) */
  readonly deliveryUnavailable = "Loki's push API keeps each entry's own timestamp (the writer's) and its line; its query API returns no receive time";
  private readonly api: HttpJsonApi;
  private readonly selector: string;
  /** the log range of the sample's count: the selector, narrowed to this run's gens when it has its own id space */
  private readonly countRange: string;
  private windowStartMs = 0;
  private newest: number | null = null;
  /** stored lines read back for the content check (./rows.ts) */
  readonly rows: StoredRowReader;

  constructor(private readonly ctx: VerifierContext) {
    this.selector = lokiSelector(ctx.params);
    const base = ctx.genBase;
    this.countRange = base === undefined ? this.selector : `${this.selector} | json ib_gen="gen" | ib_gen >= ${base} and ib_gen < ${base + GEN_STRIDE} `;
    this.api = new HttpJsonApi("Loki", ctx.host, ctx.port, lokiHeaders(ctx.params), undefined, sinkLogin("loki", ctx.params));
    this.rows = lokiRowReader(this.api, this.selector, () => this.windowStartMs, ctx.fields);
  }

  /** Check that Loki is ready and open the run window now. */
  async prepare(): Promise<void> {
    await this.api.call("GET", "/ready");
    this.windowStartMs = Date.now();
    this.newest = null;
  }

  private async queryRange(params: Record<string, string>): Promise<QueryRangeAnswer> {
    const r = await this.api.call("GET", `/loki/api/v1/query_range?${new URLSearchParams(params)}`);
    const a = r.json as QueryRangeAnswer | null;
    if (a?.status !== "success" || !Array.isArray(a.data?.result)) throw new IngestbenchError("E_LOKI_ANSWER", `Loki query_range answered ${r.body.slice(0, 200)}`);
    return a;
  }

  /** Stored lines of the window, by count_over_time at the sink (see the file comment). */
  private async count(endMs: number): Promise<number> {
    const windowMs = Math.max(1, Math.ceil(endMs - this.windowStartMs));
    const a = await this.queryRange({ query: `sum(count_over_time(${this.countRange}[${windowMs}ms]))`, start: ns(endMs), end: ns(endMs), step: "1" });
    if (a.data?.resultType !== "matrix") throw new IngestbenchError("E_LOKI_ANSWER", `Loki answered a ${a.data?.resultType} to a metric query, expected a matrix`);
    let n = 0;
    for (const series of a.data.result ?? []) {
      const last = series.values?.at(-1);
      if (last) n += Number(last[1]);
    }
    if (!Number.isFinite(n)) throw new IngestbenchError("E_LOKI_ANSWER", "Loki's count_over_time value is not a number");
    return n;
  }

  async sample(): Promise<CountSample> {
    const tBefore = now();
    const stored = await this.count(Date.now());
    const tAfter = now();
    const a = await this.queryRange({ query: this.selector, start: ns(this.windowStartMs), end: ns(Date.now() + 1), limit: "1", direction: "backward" });
    for (const s of a.data?.result ?? []) {
      for (const [ts, line] of s.values ?? []) {
        const t = sentAtMs(line) ?? Number(BigInt(String(ts)) / 1_000_000n);
        if (Number.isFinite(t)) this.newest = Math.max(this.newest ?? 0, t);
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
      const a = await this.queryRange({ query: this.selector, start: `${start}`, end, limit: String(LOKI_PAGE), direction: "forward" });
      const entries: Array<{ ts: bigint; key: string; line: unknown; labels: Record<string, string> }> = [];
      for (const s of a.data?.result ?? []) {
        const labels = s.stream ?? {};
        const streamKey = JSON.stringify(labels);
        for (const [ts, line] of s.values ?? []) entries.push({ ts: BigInt(String(ts)), key: `${streamKey}\u0000${String(ts)}\u0000${String(line)}`, line, labels });
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
      if (added === 0) throw new IngestbenchError("E_LOKI_PAGE", `more than ${LOKI_PAGE} entries share timestamp ${start} ns: raise Loki's max_entries_limit_per_query and LOKI_PAGE`);
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

/** gen and seq of a line holding the event's JSON, or null. */
function parseLine(line: unknown): { gen?: number; seq?: number } | null {
  if (typeof line !== "string") return null;
  try {
    const d = JSON.parse(line) as { gen?: unknown; seq?: unknown };
    return { gen: typeof d.gen === "number" ? d.gen : undefined, seq: typeof d.seq === "number" ? d.seq : undefined };
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
