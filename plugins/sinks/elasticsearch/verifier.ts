/**
 * Verifier "elasticsearch": the sink-side half for Elasticsearch 8.x, over its REST API (undici, through
 * core/http.ts `HttpJsonApi`), Basic auth (RFC 7617) when INGESTBENCH_ELASTICSEARCH_PASSWORD (OpenSearch: INGESTBENCH_OPENSEARCH_PASSWORD) is set, as
 * params.user (default `elastic`, OpenSearch `admin`: core/secrets.ts); a 401 names the variable.
 *
 * Index `params.index` (default "ib_events"), dropped and created by `prepare` with an explicit mapping (Elasticsearch
 * reference 8.15, "Explicit mapping"): the scenario's fields (string → text, timestamp → date, int → long,
 * float → double, bool → boolean), then gen integer, seq long, sent_at date; `dynamic: false`, so fields a collector
 * adds (@timestamp, tag) are kept in _source without changing the mapping; one shard (`params.shards`), no replica
 * (a single-node sink would stay yellow with one).
 *
 * - sample: `POST /<index>/_refresh` then `POST /<index>/_count` with a `range` query on gen over this run's
 *   generator-id space (core/ledger.ts, "Run identity": documents of another run are not counted; `_count` sees
 *   refreshed documents only), timed around both; then a `max` aggregation on sent_at for the ingest lag.
 * - ledger (definitions in core/ledger.ts): after a refresh, `_count` gives stored; a composite aggregation over the
 *   terms of gen and seq ("Composite aggregation", paged by `after_key`, 10 000 buckets a page) gives each stored
 *   (gen, seq) and its doc_count: a doc_count of 2 is the same event stored twice under different _ids (duplicated);
 *   documents without a gen or seq are unexpected. overwritten = Σ(_version − 1) over all documents, read by a
 *   point-in-time search sorted by `_shard_doc` with `version: true` and no _source ("Paginate search results →
 *   search_after"): with `_id` = "<gen>-<seq>" (the es-bulk generator's `ids: true`) a re-sent event replaces its
 *   document and raises its `_version` instead of adding one; with generated _ids every _version is 1. No two sent
 *   seqs share an _id (it is their (gen, seq)), so collisions computed from what was sent are none: deduplicated 0.
 *   Documents of another run are the ledger's `foreign` (SeqLedger with ctx.genBase).
 *
 * - storage (core/verifier.ts Verifier.storage): `POST /<index>/_refresh` and `POST /<index>/_flush` (every operation
 *   of the translog committed to Lucene segments, so the figure is the segments, not a translog still to replay),
 *   then `GET /<index>/_stats/store` ("Index stats API", metric `store`): `indices.<index>.primaries.store
 *   .size_in_bytes`, the primary shards' files. Primaries, not `total` (primaries and replicas): the index has no
 *   replica (number_of_replicas 0), so the two agree here, and a replica's copy is not what the rows take once. The
 *   whole index, which `prepare` created for this run. No uncompressed figure: neither server keeps one for an index
 *   (the `_source` it keeps is compressed in the stored fields).
 *
 * Servers that speak this REST API with their own quirks (OpenSearch 2.x, plugins/sinks/opensearch/verifier.ts) get
 * this verifier through `esCompatibleVerifier(flavour)`: an `EsFlavour` names the server, checks it before the index
 * is made, adds index settings and replaces the `_version` pass; the defaults are Elasticsearch's.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import type { EventField, FieldType } from "../../../core/events/types.ts";
import { authHeader } from "../../../core/events/es-bulk.ts";
import { sinkLogin } from "../../../core/secrets.ts";
import { HttpJsonApi } from "../../../core/http.ts";
import { GEN_STRIDE, SeqLedger } from "../../../core/ledger.ts";
import type {
  CountSample,
  Ledger,
  StorageFootprint,
  Verifier,
  VerifierContext,
  VerifierFactory,
} from "../../../core/verifier.ts";
import type { StoredRowReader } from "../../../core/fidelity.ts";
import { esRowReader } from "./rows.ts";

/** Elasticsearch field type of each event field type. */
export const ES_TYPES: Readonly<Record<FieldType, string>> = {
  string: "text",
  timestamp: "date",
  int: "long",
  float: "double",
  bool: "boolean",
};

/** Buckets per composite aggregation page and hits per point-in-time page. */
export const ES_PAGE = 10_000;

/** keep_alive of the ledger's point in time. */
const PIT_KEEP_ALIVE = "2m";

const now = (): number => performance.timeOrigin + performance.now();

/** The body of `PUT /<index>`: settings and the explicit mapping (see the file comment). */
export function indexDefinition(
  fields: readonly EventField[],
  shards = 1,
): { settings: Record<string, unknown>; mappings: Record<string, unknown> } {
  const properties: Record<string, { type: string }> = {};
  for (const f of fields) properties[f.name] = { type: ES_TYPES[f.type] };
  properties.gen = { type: "integer" };
  properties.seq = { type: "long" };
  properties.sent_at = { type: "date" };
  return {
    settings: { number_of_shards: shards, number_of_replicas: 0 },
    mappings: { dynamic: false, properties },
  };
}

/** One page of a composite aggregation named `seqs`, as the search API answers it. */
interface CompositePage {
  aggregations?: {
    seqs?: {
      after_key?: Record<string, unknown>;
      buckets?: Array<{ key?: { gen?: unknown; seq?: unknown }; doc_count?: unknown }>;
    };
  };
}

/** `GET /<index>/_stats/store` as Elasticsearch 8 and OpenSearch 2 answer it (the fields read here). */
interface StoreStats {
  indices?: Record<
    string,
    {
      primaries?: { store?: { size_in_bytes?: unknown } };
      total?: { store?: { size_in_bytes?: unknown } };
    }
  >;
}

/**
 * The store size of `index` from a `_stats/store` answer: primaries (what the storage figure is) and total (with
 * replicas), bytes.
 * @throws IngestbenchError E_ES_ANSWER when the answer has no primaries.store.size_in_bytes for the index
 */
export function storeSizeOf(
  answer: unknown,
  index: string,
  label: string,
): { primaries: number; total: number | null } {
  const stats = (answer as StoreStats | null)?.indices?.[index];
  const primaries = stats?.primaries?.store?.size_in_bytes;
  if (typeof primaries !== "number" || !Number.isFinite(primaries) || primaries < 0)
    throw new IngestbenchError(
      "E_ES_ANSWER",
      `${label} _stats/store answered without indices.${index}.primaries.store.size_in_bytes: ${JSON.stringify(answer).slice(0, 200)}`,
    );
  const total = stats?.total?.store?.size_in_bytes;
  return { primaries, total: typeof total === "number" && Number.isFinite(total) ? total : null };
}

/** One page of a point-in-time search with `version: true`. */
interface VersionPage {
  pit_id?: string;
  hits?: { hits?: Array<{ _version?: unknown; sort?: unknown[] }> };
}

/**
 * What differs between servers that speak Elasticsearch's REST API (`_bulk`, `_count`, `_refresh`, composite
 * aggregations). Every member but `name` and `label` is optional; absent, the verifier does what Elasticsearch 8
 * needs (see the file comment).
 */
export interface EsFlavour {
  /** the verifier factory's name (the sink's catalog name) */
  readonly name: string;
  /** the server's name in messages, e.g. "Elasticsearch" */
  readonly label: string;
  /** checks the server before the index is dropped and made (e.g. `GET /`'s version); throws to refuse it */
  check?(api: HttpJsonApi, params: Record<string, string>): Promise<void>;
  /** index settings added to (or replacing) `indexDefinition`'s, from the sink params; throws on a bad param */
  settings?(params: Record<string, string>): Record<string, unknown>;
  /** Σ(_version − 1) over the index at `path` ("/<index>"), replacing the point-in-time pass over `_shard_doc` */
  overwrites?(api: HttpJsonApi, path: string): Promise<number>;
}

const ELASTICSEARCH: EsFlavour = { name: "elasticsearch", label: "Elasticsearch" };

class ElasticsearchVerifier implements Verifier {
  /** no delivery latency (core/verifier.ts Verifier.deliveryUnavailable) */
  readonly deliveryUnavailable: string;
  private readonly api: HttpJsonApi;
  private readonly index: string;
  private readonly path: string;
  private newest: number | null = null;
  /** stored documents read back for the content check (./rows.ts) */
  readonly rows: StoredRowReader;

  constructor(
    private readonly ctx: VerifierContext,
    private readonly flavour: EsFlavour = ELASTICSEARCH,
  ) {
    this.index = ctx.params.index ?? "ib_events";
    this.path = `/${encodeURIComponent(this.index)}`;
    // a document carries no ingest time unless an ingest pipeline stamps one, and the verifier creates none
    this.deliveryUnavailable = `${flavour.label} keeps no ingest time in a document unless an ingest pipeline stamps one (a \`set\` processor writing {{_ingest.timestamp}}, e.g. as the index's default_pipeline); the verifier creates none`;
    const sink = flavour.name === "opensearch" ? "opensearch" : "elasticsearch";
    this.api = new HttpJsonApi(
      flavour.label,
      ctx.host,
      ctx.port,
      authHeader(sink, ctx.params),
      undefined,
      sinkLogin(sink, ctx.params),
    );
    this.rows = esRowReader(this.api, this.path, ctx.fields, flavour.label);
  }

  /** Drop the index if it exists (a previous cell's documents would corrupt the ledger) and create it with the mapping. */
  async prepare(): Promise<void> {
    await this.flavour.check?.(this.api, this.ctx.params);
    const extra = this.flavour.settings?.(this.ctx.params) ?? {};
    await this.api.call("DELETE", this.path, undefined, [404]);
    const shards = this.ctx.params.shards !== undefined ? Number(this.ctx.params.shards) : 1;
    if (!Number.isInteger(shards) || shards < 1)
      throw new IngestbenchError(
        "E_ES_SHARDS",
        `sink param shards must be a positive integer, got "${this.ctx.params.shards}"`,
      );
    const definition = indexDefinition(this.ctx.fields, shards);
    await this.api.call("PUT", this.path, { ...definition, settings: { ...definition.settings, ...extra } });
    this.newest = null;
  }

  /** `_count` of every document, or with `ours` of this run's (a range query on gen) only. */
  private async count(ours = false): Promise<number> {
    const base = this.ctx.genBase ?? 0;
    const r = ours
      ? await this.api.call("POST", `${this.path}/_count`, {
          query: { range: { gen: { gte: base, lt: base + GEN_STRIDE } } },
        })
      : await this.api.call("GET", `${this.path}/_count`);
    const c = (r.json as { count?: unknown } | null)?.count;
    if (typeof c !== "number")
      throw new IngestbenchError(
        "E_ES_ANSWER",
        `${this.flavour.label} _count answered without a count: ${r.body.slice(0, 200)}`,
      );
    return c;
  }

  /** `_refresh` then `_count`, timed around both; then the newest sent_at (max aggregation). */
  async sample(): Promise<CountSample> {
    const tBefore = now();
    await this.api.call("POST", `${this.path}/_refresh`);
    const stored = await this.count(true);
    const tAfter = now();
    const r = await this.api.call("POST", `${this.path}/_search?filter_path=aggregations`, {
      size: 0,
      aggs: { newest: { max: { field: "sent_at" } } },
    });
    const v = (r.json as { aggregations?: { newest?: { value?: unknown } } } | null)?.aggregations?.newest
      ?.value;
    if (typeof v === "number" && Number.isFinite(v)) this.newest = Math.max(this.newest ?? 0, v);
    return { tBefore, tAfter, stored, newestSentAtMs: this.newest };
  }

  async ledger(sent: number[], rejected: Array<Array<[number, number]>>): Promise<Ledger> {
    await this.api.call("POST", `${this.path}/_refresh`);
    const stored = await this.count();
    const acc = new SeqLedger(sent, rejected, this.ctx.genBase ?? 0);
    let keyed = 0;
    let after: Record<string, unknown> | undefined;
    for (;;) {
      const body = {
        size: 0,
        aggs: {
          seqs: {
            composite: {
              size: ES_PAGE,
              sources: [{ gen: { terms: { field: "gen" } } }, { seq: { terms: { field: "seq" } } }],
              ...(after ? { after } : {}),
            },
          },
        },
      };
      const r = await this.api.call(
        "POST",
        `${this.path}/_search?filter_path=aggregations.seqs.after_key,aggregations.seqs.buckets`,
        body,
      );
      const seqs = (r.json as CompositePage | null)?.aggregations?.seqs;
      const buckets = seqs?.buckets ?? [];
      for (const b of buckets) {
        const n = Number(b.doc_count);
        acc.add(Number(b.key?.gen), Number(b.key?.seq), n);
        keyed += n;
      }
      if (buckets.length === 0 || !seqs?.after_key) break;
      after = seqs.after_key;
    }
    if (keyed > stored)
      throw new IngestbenchError(
        "E_ES_ANSWER",
        `${this.flavour.label}'s composite aggregation counted ${keyed} documents, _count ${stored}: the index changed during the ledger`,
      );
    acc.addUnkeyed(stored - keyed);
    if (stored === 0) return acc.result(0);
    return acc.result(
      this.flavour.overwrites ? await this.flavour.overwrites(this.api, this.path) : await this.overwrites(),
    );
  }

  /** Σ(_version − 1) over every document, by a point-in-time search (see the file comment). */
  private async overwrites(): Promise<number> {
    const open = await this.api.call("POST", `${this.path}/_pit?keep_alive=${PIT_KEEP_ALIVE}`);
    let pit = (open.json as { id?: unknown } | null)?.id;
    if (typeof pit !== "string")
      throw new IngestbenchError(
        "E_ES_ANSWER",
        `Elasticsearch opened no point in time: ${open.body.slice(0, 200)}`,
      );
    let total = 0;
    try {
      let searchAfter: unknown[] | undefined;
      for (;;) {
        const body = {
          size: ES_PAGE,
          _source: false,
          version: true,
          track_total_hits: false,
          pit: { id: pit, keep_alive: PIT_KEEP_ALIVE },
          sort: [{ _shard_doc: "asc" }],
          ...(searchAfter ? { search_after: searchAfter } : {}),
        };
        const r = await this.api.call(
          "POST",
          "/_search?filter_path=pit_id,hits.hits._version,hits.hits.sort",
          body,
        );
        const page = r.json as VersionPage | null;
        if (typeof page?.pit_id === "string") pit = page.pit_id;
        const hits = page?.hits?.hits ?? [];
        for (const h of hits) {
          const v = Number(h._version);
          if (Number.isFinite(v) && v > 1) total += v - 1;
        }
        if (hits.length < ES_PAGE) break;
        searchAfter = hits.at(-1)?.sort;
        if (!searchAfter)
          throw new IngestbenchError(
            "E_ES_ANSWER",
            "Elasticsearch answered a point-in-time page without sort values",
          );
      }
    } finally {
      await this.api.call("DELETE", "/_pit", { id: pit }, [404]).catch(() => undefined);
    }
    return total;
  }

  /** The index's store size after a refresh and a flush: its primary shards' files (see the file comment). */
  async storage(): Promise<StorageFootprint> {
    await this.api.call("POST", `${this.path}/_refresh`);
    await this.api.call("POST", `${this.path}/_flush`);
    const r = await this.api.call("GET", `${this.path}/_stats/store`);
    const size = storeSizeOf(r.json, this.index, this.flavour.label);
    const total = size.total === null ? "" : `; total with replicas ${size.total}`;
    return {
      bytes: size.primaries,
      source: `${this.flavour.label} GET ${this.path}/_stats/store after _refresh and _flush: indices.${this.index}.primaries.store.size_in_bytes (the primary shards' files${total})`,
    };
  }

  /** Verifier.retarget: the API's later calls go to `at`. */
  retarget(at: { host: string; port: number }): void {
    this.api.retarget(at.host, at.port);
  }

  async close(): Promise<void> {
    await this.api.close();
  }
}

/** The verifier of a server speaking this REST API with `flavour`'s differences (EsFlavour); params as below. */
export function esCompatibleVerifier(flavour: EsFlavour): VerifierFactory {
  return { name: flavour.name, create: (ctx) => new ElasticsearchVerifier(ctx, flavour) };
}

/** Factory "elasticsearch": ctx.params.index (default "ib_events"), shards (default 1), user (Basic auth with INGESTBENCH_ELASTICSEARCH_PASSWORD). */
export const elasticsearchVerifier: VerifierFactory = esCompatibleVerifier(ELASTICSEARCH);
