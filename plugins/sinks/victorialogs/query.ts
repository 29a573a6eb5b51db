/**
 * LogsQL over VictoriaLogs' query API (VictoriaLogs docs, "Querying": `GET /select/logsql/query?query=<LogsQL>&start=
 * <time>`, answered as JSON lines, one per entry or per stats row, every value a string), for the verifier
 * (./verifier.ts) and the row reader (./rows.ts).
 */
import { IngestbenchError } from "../../../core/errors.ts";
import type { HttpJsonApi } from "../../../core/http.ts";

/** One LogsQL query over a window: its answer lines, each a JSON object of strings. */
export type LogsQuery = (query: string) => Promise<Array<Record<string, string>>>;

/**
 * The query function over `api` for entries from `startMs()` (epoch ms) on; null: every entry the sink holds.
 * @throws IngestbenchError E_VL_ANSWER for an answer line that is not a JSON object; SinkHttpError for a refused query
 */
export function logsQuery(api: HttpJsonApi, startMs: () => number | null): LogsQuery {
  return async (query) => {
    const from = startMs();
    const q = new URLSearchParams({
      query,
      ...(from !== null ? { start: new Date(from).toISOString() } : {}),
    });
    const r = await api.call("GET", `/select/logsql/query?${q}`);
    const out: Array<Record<string, string>> = [];
    for (const line of r.body.split("\n")) {
      if (line.trim() === "") continue;
      let doc: unknown;
      try {
        doc = JSON.parse(line);
      } catch {
        doc = null;
      }
      if (doc === null || typeof doc !== "object" || Array.isArray(doc))
        throw new IngestbenchError(
          "E_VL_ANSWER",
          `VictoriaLogs answered ${query.slice(0, 200)} with a line that is not a JSON object: ${line.slice(0, 200)}`,
        );
      out.push(doc as Record<string, string>);
    }
    return out;
  };
}
