/**
 * Reading stored documents back from Elasticsearch (and OpenSearch, through the same verifier) for the content check
 * (core/fidelity.ts): `POST /<index>/_search` with a `bool` filter on the `gen` term and a `seq` range (or `terms`),
 * `_source` limited to the declared fields plus gen and seq ("Retrieve selected fields from a search"), sorted by seq,
 * `track_total_hits: true`; a range with more hits than one page (ES_PAGE, the default `index.max_result_window`) is
 * split in halves and read again.
 *
 * What is compared is the document's `_source`: the JSON the sink was sent, kept as is (the mapping indexes it but
 * does not rewrite it; Elasticsearch reference 8.15, "_source field"). So: timestamps (date fields, millisecond
 * resolution) compared to the millisecond, parsed from the ISO 8601 text or epoch-ms number in _source; text as
 * the decoded JSON string, byte for byte (no analyzer output is compared); long, double and boolean exact as JSON.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import type { EventField } from "../../../core/events/types.ts";
import { jsonValues, type FieldRule, type StoredRow, type StoredRowReader } from "../../../core/fidelity.ts";
import type { HttpJsonApi } from "../../../core/http.ts";

/** Hits per search page (Elasticsearch's default index.max_result_window). */
export const ES_ROWS_PAGE = 10_000;

const RULES: Readonly<Record<EventField["type"], Omit<FieldRule, "name" | "readable">>> = {
  timestamp: {
    unit: "ms",
    rule: "date from _source (ISO 8601 or epoch ms as sent): compared to the millisecond",
  },
  string: { rule: "text, _source as sent: the decoded JSON string byte for byte, no normalisation" },
  int: { rule: "long, _source JSON number, exact" },
  float: { rule: "double, _source JSON number, exact" },
  bool: { rule: "boolean, _source JSON, exact" },
};

/** One search answer (the fields read here). */
interface SearchAnswer {
  hits?: {
    total?: { value?: unknown; relation?: unknown };
    hits?: Array<{ _source?: Record<string, unknown> }>;
  };
}

/** The reader over `api` for the index at `path` ("/<index>"); `label` names the server in errors. */
export function esRowReader(
  api: HttpJsonApi,
  path: string,
  fields: readonly EventField[],
  label: string,
): StoredRowReader {
  const source = [...fields.map((f) => f.name), "gen", "seq"];
  const search = async (filter: unknown[]): Promise<{ total: number; rows: StoredRow[] }> => {
    const body = {
      size: ES_ROWS_PAGE,
      track_total_hits: true,
      _source: source,
      sort: [{ seq: "asc" }],
      query: { bool: { filter } },
    };
    const r = await api.call("POST", `${path}/_search?filter_path=hits.total,hits.hits._source`, body);
    const a = r.json as SearchAnswer | null;
    const total = Number(a?.hits?.total?.value ?? a?.hits?.hits?.length ?? 0);
    if (!Number.isFinite(total))
      throw new IngestbenchError(
        "E_ES_ANSWER",
        `${label} search answered without hits.total: ${r.body.slice(0, 200)}`,
      );
    const rows = (a?.hits?.hits ?? []).map((h) => ({
      gen: Number(h._source?.gen),
      seq: Number(h._source?.seq),
      values: jsonValues(fields, h._source),
    }));
    return { total, rows };
  };
  const range = async (gen: number, from: number, to: number): Promise<StoredRow[]> => {
    const r = await search([{ term: { gen } }, { range: { seq: { gte: from, lt: to } } }]);
    if (r.total <= ES_ROWS_PAGE) return r.rows;
    if (to - from <= 1)
      throw new IngestbenchError(
        "E_ES_ANSWER",
        `${label} holds ${r.total} documents of gen ${gen} seq ${from}: more than one search page`,
      );
    const mid = from + Math.floor((to - from) / 2);
    return [...(await range(gen, from, mid)), ...(await range(gen, mid, to))];
  };
  return {
    rules: () => fields.map((f) => ({ name: f.name, readable: true, ...RULES[f.type] })),
    readRange: range,
    readSeqs: async (gen, seqs) => {
      const r = await search([{ term: { gen } }, { terms: { seq: seqs } }]);
      if (r.total <= ES_ROWS_PAGE) return r.rows;
      const half = Math.floor(seqs.length / 2);
      if (half === 0)
        throw new IngestbenchError(
          "E_ES_ANSWER",
          `${label} holds ${r.total} documents of gen ${gen} seq ${seqs[0]}: more than one search page`,
        );
      const out: StoredRow[] = [];
      for (const part of [seqs.slice(0, half), seqs.slice(half)])
        out.push(...(await range(gen, part[0]!, part.at(-1)! + 1)).filter((x) => part.includes(x.seq)));
      return out;
    },
  };
}
