/**
 * Verifier "opensearch": the sink-side half for OpenSearch 2.x, over its REST API. OpenSearch is Elasticsearch
 * 7.10.2's fork and kept that REST API, so this is the Elasticsearch verifier (plugins/sinks/elasticsearch/verifier.ts:
 * index created with the explicit mapping, `_refresh` then `_count` per sample, the seq ledger from composite
 * aggregation pages of (gen, seq)) with OpenSearch's differences as its `EsFlavour`:
 *
 * - `check`, before the index is made: `GET /` must answer `version.distribution` "opensearch" (Elasticsearch's
 *   answer has no `distribution`; OpenSearch documentation, "Quickstart" → `curl http://localhost:9200`) and a 2.x
 *   `version.number` — equal to params.version when that is given. Anything else is refused (E_VERSION) before
 *   the index is dropped: an Elasticsearch at the sink's address would answer every later request alike.
 * - `settings`: params.number_of_shards (default 1) and, when given, params.refresh_interval, under OpenSearch's own
 *   setting names (./schema.ts); number_of_replicas stays 0.
 * - `overwrites` (Σ(_version − 1), what an `_id` = "<gen>-<seq>" re-send leaves): a scroll ("Scroll" API:
 *   `POST /<index>/_search?scroll=2m` sorted by `_doc`, then `POST /_search/scroll` with `scroll_id` until a page
 *   has no hits, `DELETE /_search/scroll`), `version: true`, no _source. Elasticsearch's pass, a point in time
 *   paged by `search_after` over `_shard_doc`, cannot run here: OpenSearch added `_shard_doc` in 3.3.0
 *   (opensearch-project/OpenSearch pull request 18924), and `_doc` alone is no tiebreaker across shards. A scroll
 *   takes no `track_total_hits: false` ("not allowed in a scroll context"), so totals are counted as usual.
 *
 * Answers that are the same as Elasticsearch 8's (opensearch.test.ts sends them byte for byte): `PUT /<index>`
 * `{"acknowledged":true,"shards_acknowledged":true,"index":…}`, `_refresh` `{"_shards":{…}}`, `_count`
 * `{"count":N,"_shards":{…}}`, the composite aggregation's `after_key` and `buckets`. `_bulk` (the es-bulk generator)
 * differs only in error types: OpenSearch names a full write queue `rejected_execution_exception` (its
 * OpenSearchException.getExceptionName strips the "OpenSearch" class prefix) where Elasticsearch says
 * `es_rejected_execution_exception`; core/events/es-bulk.ts decides by each item's status (429), not by its type.
 */
import { ConfigurationError, IngestbenchError, VerificationError } from "../../../core/errors.ts";
import type { VerifierFactory } from "../../../core/verifier.ts";
import { ES_PAGE, esCompatibleVerifier, type EsFlavour } from "../elasticsearch/verifier.ts";
import { REFRESH_INTERVAL } from "./schema.ts";

/** The JSON API the Elasticsearch verifier hands its flavour (harness/generators/http.ts HttpJsonApi). */
type Api = Parameters<NonNullable<EsFlavour["overwrites"]>>[0];

/** keep_alive of the ledger's scroll. */
const SCROLL_KEEP_ALIVE = "2m";

/** Only the fields the `_version` pass reads ("Common options → Response filtering"). */
const SCROLL_FILTER = "filter_path=_scroll_id,hits.hits._version";

/** `GET /` as OpenSearch answers it (the fields read here). */
interface RootAnswer {
  version?: { distribution?: unknown; number?: unknown };
}

/** One scroll page with `version: true`. */
interface ScrollPage {
  _scroll_id?: unknown;
  hits?: { hits?: Array<{ _version?: unknown }> };
}

/**
 * Refuse anything but OpenSearch 2.x at the sink's address (see the file comment).
 * @throws VerificationError E_VERSION naming the address and what `GET /` answered
 */
async function checkOpensearch(api: Api, params: Record<string, string>): Promise<void> {
  const r = await api.call("GET", "/");
  const v = (r.json as RootAnswer | null)?.version;
  const at = `${api.host}:${api.port}`;
  if (v?.distribution !== "opensearch") {
    throw new VerificationError(
      "E_VERSION",
      `the sink at ${at} is not OpenSearch: GET / answered version.distribution ${JSON.stringify(v?.distribution)} (number ${JSON.stringify(v?.number)}), OpenSearch answers "opensearch"`,
    );
  }
  if (typeof v.number !== "string" || !/^2\.\d+\.\d+/.test(v.number)) {
    throw new VerificationError(
      "E_VERSION",
      `the sink at ${at} runs OpenSearch ${JSON.stringify(v.number)}; this verifier speaks OpenSearch 2.x's REST API`,
    );
  }
  if (params.version !== undefined && v.number !== params.version) {
    throw new VerificationError(
      "E_VERSION",
      `the sink at ${at} runs OpenSearch ${v.number}, the scenario pins ${params.version}`,
    );
  }
}

/**
 * Index settings from the sink params (names of ./schema.ts).
 * @throws ConfigurationError E_SINK_CONFIG naming the param when number_of_shards is not a positive integer or
 *   refresh_interval is not a time value
 */
function opensearchSettings(params: Record<string, string>): Record<string, unknown> {
  const shards = params.number_of_shards !== undefined ? Number(params.number_of_shards) : 1;
  if (!Number.isInteger(shards) || shards < 1) {
    throw new ConfigurationError(
      "E_SINK_CONFIG",
      `sink param number_of_shards must be a positive integer, got "${params.number_of_shards}"`,
      { field: "sink.opensearch.number_of_shards" },
    );
  }
  const out: Record<string, unknown> = { number_of_shards: shards };
  if (params.refresh_interval !== undefined) {
    if (!REFRESH_INTERVAL.test(params.refresh_interval)) {
      throw new ConfigurationError(
        "E_SINK_CONFIG",
        `sink param refresh_interval must be a time value such as "1s", or "-1", got "${params.refresh_interval}"`,
        { field: "sink.opensearch.refresh_interval" },
      );
    }
    out.refresh_interval = params.refresh_interval;
  }
  return out;
}

/**
 * Σ(_version − 1) over the index at `path`, by a scroll (see the file comment); the scroll is cleared in every case.
 * @throws IngestbenchError E_ES_ANSWER when OpenSearch opens no scroll
 */
async function scrollOverwrites(api: Api, path: string): Promise<number> {
  const body = { size: ES_PAGE, _source: false, version: true, sort: ["_doc"] };
  let page = await api.call("POST", `${path}/_search?scroll=${SCROLL_KEEP_ALIVE}&${SCROLL_FILTER}`, body);
  let id = (page.json as ScrollPage | null)?._scroll_id;
  if (typeof id !== "string")
    throw new IngestbenchError("E_ES_ANSWER", `OpenSearch opened no scroll: ${page.body.slice(0, 200)}`);
  let total = 0;
  try {
    for (;;) {
      const hits = (page.json as ScrollPage | null)?.hits?.hits ?? [];
      if (hits.length === 0) break;
      for (const h of hits) {
        const v = Number(h._version);
        if (Number.isFinite(v) && v > 1) total += v - 1;
      }
      page = await api.call("POST", `/_search/scroll?${SCROLL_FILTER}`, {
        scroll: SCROLL_KEEP_ALIVE,
        scroll_id: id,
      });
      const next = (page.json as ScrollPage | null)?._scroll_id;
      if (typeof next === "string") id = next;
    }
  } finally {
    await api.call("DELETE", "/_search/scroll", { scroll_id: [id] }, [404]).catch(() => undefined);
  }
  return total;
}

/** OpenSearch's differences from Elasticsearch (see the file comment). */
export const OPENSEARCH_FLAVOUR: EsFlavour = {
  name: "opensearch",
  label: "OpenSearch",
  check: checkOpensearch,
  settings: opensearchSettings,
  overwrites: scrollOverwrites,
};

/**
 * Factory "opensearch": ctx.params.index (default "ib_events"), number_of_shards (default 1), refresh_interval
 * (absent: OpenSearch's default), version (checked against `GET /` when given), user (Basic auth with INGESTBENCH_OPENSEARCH_PASSWORD).
 */
export const opensearchVerifier: VerifierFactory = esCompatibleVerifier(OPENSEARCH_FLAVOUR);
