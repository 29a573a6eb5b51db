/**
 * Verifier "victorialogs": the sink-side half for VictoriaLogs, over its query API (LogsQL over
 * `/select/logsql/query`: ./query.ts) with undici (core/http.ts `HttpJsonApi`).
 *
 * VictoriaLogs has no table to drop. A run with its own generator-id space (ctx.genBase, which the runner always
 * sets: core/ledger.ts "Run identity") is told apart by gen alone, over everything the sink holds (no time bound):
 * `_time` is the send time on the paths the component hands out (./component.ts: `_time_field=sent_at` for JSON
 * lines and Elasticsearch bulk, the entry timestamp of a Loki push), but an OTLP record's is whatever the collector
 * set (a Fluent Forward event time becomes it: the seeded `ts` of 2024, stored when the scenario's `retentionPeriod`
 * reaches back to it, dropped by VictoriaLogs at ingestion otherwise). Without a genBase (gens 0..n-1, the tests'),
 * the run's entries are those whose `_time` lies in the window from `prepare` on (`start=<prepare's time>`).
 * `prepare` checks `GET /health`. gen and seq are read as fields (numbers in text).
 *
 * Visibility: VictoriaLogs makes ingested entries searchable about a second after it took them (its in-memory parts
 * are flushed to searchable ones; measured here: 1.0 s). The live samples read what it shows, so they lag by that
 * second; a `full` sample (the drain), the ledger and the content check first call `GET /internal/force_flush`, its
 * documented way to make everything it has taken searchable now ("Forced flush"), so that they are exact.
 *
 * - sample: `gen:range[base, base+256) | stats count() n, max(sent_at) s, max(_time) t`, timed: this run's entries
 *   (core/ledger.ts, "Run identity"), and the newest send time (the sent_at field where it is kept: Loki and OTLP
 *   paths; else `_time`, which is the send time on the others).
 * - ledger (definitions in core/ledger.ts): `* | stats by (gen) count() n` (in the window) gives every entry, by
 *   gen; a gen that is no integer is unexpected (unkeyed); outside the run's space, foreign. Each sent gen's seqs are
 *   then read in pages of VL_SEQ_PAGE seqs (`gen:=G seq:range[a, b) | fields seq`, a line per stored entry, so a
 *   seq stored twice is two lines: duplicated), and the entries of the gen outside [0, sent) (`gen:=G
 *   -seq:range[0, sent)`) as unexpected. A page count that differs from the group's count means the store changed
 *   under the ledger: an error. overwritten 0: VictoriaLogs keeps every entry it took (no key, no update; an
 *   Elasticsearch bulk `_id` is ignored). deduplicated 0, from what was sent: it drops no entry for being equal to
 *   another.
 * - storage (core/verifier.ts Verifier.storage): after `GET /internal/force_flush`, VictoriaLogs' own `/metrics`
 *   (./storage.ts): `vl_data_size_bytes{type="storage"}` (the entries' compressed parts, in memory and on disk
 *   alike), `vl_uncompressed_data_size_bytes` (the entries uncompressed).
 *   Those are the whole instance's, not a run's: they are the run's only where the instance holds nothing else, as
 *   the local platform's does (./component.ts starts one per run on a fresh -storageDataPath). So the figure is
 *   refused unless the entries the instance holds (Σ `vl_storage_rows`) are this run's entries, counted by LogsQL.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import type { StoredRowReader } from "../../../core/fidelity.ts";
import { HttpJsonApi } from "../../../core/http.ts";
import { GEN_STRIDE, inRunSpace, SeqLedger } from "../../../core/ledger.ts";
import type {
  CountSample,
  Ledger,
  StorageFootprint,
  Verifier,
  VerifierContext,
  VerifierFactory,
} from "../../../core/verifier.ts";
import { logsQuery, type LogsQuery } from "./query.ts";
import { storageFromMetrics } from "./storage.ts";
import { vlRowReader } from "./rows.ts";

/** Seqs per page of the ledger's read of one gen. */
export const VL_SEQ_PAGE = 200_000;

const now = (): number => performance.timeOrigin + performance.now();

/** A LogsQL filter of gen range [from, to) (numbers as VictoriaLogs compares them). */
export const genRange = (from: number, to: number): string => `gen:range[${from}, ${to})`;

/** A stats value as a number: VictoriaLogs answers them as strings; "" or absent is null. */
function num(v: string | undefined): number | null {
  if (v === undefined || v.trim() === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** An epoch-ms time from a stats answer (RFC 3339 text), or null. */
function timeMs(v: string | undefined): number | null {
  if (v === undefined || v === "") return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

class VictoriaLogsVerifier implements Verifier {
  /** no delivery latency (core/verifier.ts Verifier.deliveryUnavailable) */
  readonly deliveryUnavailable =
    "VictoriaLogs keeps one time per entry, _time, which the ingestion paths here set to the send time; it stores no receive time";
  private readonly api: HttpJsonApi;
  private readonly query: LogsQuery;
  private windowStartMs = 0;
  private newest: number | null = null;
  /** stored entries read back for the content check (./rows.ts) */
  readonly rows: StoredRowReader;

  constructor(private readonly ctx: VerifierContext) {
    this.api = new HttpJsonApi("VictoriaLogs", ctx.host, ctx.port);
    // no time bound where gen tells the run apart (see the file comment)
    this.query = logsQuery(this.api, () => (ctx.genBase === undefined ? this.windowStartMs : null));
    const flushed = (): Promise<void> => this.flush();
    this.rows = vlRowReader(this.query, ctx.fields, ctx.params.msgField ?? "msg", flushed);
  }

  /** Check that VictoriaLogs is up and open the run window now. */
  async prepare(): Promise<void> {
    await this.api.call("GET", "/health");
    this.windowStartMs = Date.now();
    this.newest = null;
  }

  /** `GET /internal/force_flush`: what VictoriaLogs has taken is searchable once it answers. */
  private async flush(): Promise<void> {
    await this.api.call("GET", "/internal/force_flush");
  }

  /** A timed count of this run's entries (flushed first when `full`), and the newest send time (file comment). */
  async sample(options: { full?: boolean; tag?: string } = {}): Promise<CountSample> {
    if (options.full) await this.flush();
    const base = this.ctx.genBase ?? 0;
    const tBefore = now();
    const rows = await this.query(
      `${genRange(base, base + GEN_STRIDE)} | stats count() n, max(sent_at) s, max(_time) t`,
    );
    const tAfter = now();
    const row = rows[0] ?? {};
    const stored = num(row.n);
    if (stored === null)
      throw new IngestbenchError(
        "E_VL_ANSWER",
        `VictoriaLogs answered a count without a number: ${JSON.stringify(row).slice(0, 200)}`,
      );
    const newest = timeMs(row.s) ?? timeMs(row.t);
    if (newest !== null) this.newest = Math.max(this.newest ?? 0, newest);
    return { tBefore, tAfter, stored, newestSentAtMs: this.newest };
  }

  async ledger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Ledger> {
    await this.flush();
    const base = this.ctx.genBase ?? 0;
    const acc = new SeqLedger(sent, rejected, base);
    const groups = await this.query("* | stats by (gen) count() n");
    for (const g of groups) {
      const n = num(g.n) ?? 0;
      const gen = /^\d+$/.test(g.gen ?? "") ? Number(g.gen) : NaN;
      if (!Number.isSafeInteger(gen)) {
        acc.addUnkeyed(n);
        continue;
      }
      if (!inRunSpace(gen, base)) {
        acc.add(gen, 0, n); // foreign
        continue;
      }
      const s = sent[gen - base] ?? 0;
      let read = 0;
      const take = (rows: Array<Record<string, string>>): void => {
        for (const r of rows) acc.add(gen, /^\d+$/.test(r.seq ?? "") ? Number(r.seq) : NaN);
        read += rows.length;
      };
      for (let a = 0; a < s; a += VL_SEQ_PAGE)
        take(await this.query(`gen:=${gen} seq:range[${a}, ${Math.min(s, a + VL_SEQ_PAGE)}) | fields seq`));
      if (read < n) take(await this.query(`gen:=${gen} ${s > 0 ? `-seq:range[0, ${s})` : ""} | fields seq`));
      if (read !== n)
        throw new IngestbenchError(
          "E_VL_ANSWER",
          `VictoriaLogs counted ${n} entries of gen ${gen} but ${read} were read back by seq: the store changed during the ledger`,
        );
    }
    return acc.result(0);
  }

  /**
   * The instance's storage from its /metrics after a forced flush, when every entry it holds is this run's (file
   * comment). @throws IngestbenchError E_VL_STORAGE when the instance holds other entries too
   */
  async storage(): Promise<StorageFootprint> {
    const ours = (await this.sample({ full: true })).stored;
    const r = await this.api.call("GET", "/metrics");
    return storageFromMetrics(r.body, ours);
  }

  /** Verifier.retarget: the API's later calls go to `at`. */
  retarget(at: { host: string; port: number }): void {
    this.api.retarget(at.host, at.port);
  }

  async close(): Promise<void> {
    await this.api.close();
  }
}

/** Factory "victorialogs": ctx.params.msgField (the `_msg_field` the component set, default "msg"). */
export const victoriaLogsVerifier: VerifierFactory = {
  name: "victorialogs",
  create: (ctx) => new VictoriaLogsVerifier(ctx),
};
