/**
 * Generator "griddb-webapi": GridDB Web API row registration (griddb/webapi, "GridDB Web API Reference" → "Row
 * registration in a single container"): one `PUT /griddb/v2/<cluster>/dbs/<database>/containers/<container>/rows`
 * per batch with Basic authentication (RFC 7617) and Content-Type `application/json; charset=UTF-8`, the body a JSON
 * array of positional rows — the scenario's fields in order, then gen, seq, sent_at (encoder
 * ../events/griddb-webapi.ts) — over undici (./http.ts). The container must exist (the griddb verifier creates it
 * from the same fields in the same order, so a count or type mismatch fails before the run).
 *
 * Answers (parsed by `parseGridDbResponse`): 200 `{"count": n}` with n = the batch size accepts the batch. An error
 * answer `{"version":"v2","errorCode":..,"errorMessage":..}` — "Row data is invalid" (value count ≠ column count),
 * "The specified data cannot be converted to <TYPE> type", 401, 404, 500 — rejects the whole batch with GridDB's
 * message; so does a 200 whose count differs. Never resent: the reference warns that a failed registration may have
 * stored some rows, and a resend into a container without a row key would store them twice. The connection stays
 * open after an error answer.
 *
 * Target params: cluster (default "myCluster"), database (default "public"), container (default "ib_events"),
 * user (default "admin"); the password has no default: INGESTBENCH_GRIDDB_PASSWORD (core/secrets.ts), E_GRIDDB_PASSWORD without it.
 */
import { z } from "zod";
import type { StampedBatch } from "../../core/events/encoding.ts";
import {
  GRIDDB_CONTENT_TYPE,
  gridDbAuthorization,
  GridDbError,
  gridDbTarget,
  GridDbRowsEncoder,
  gridDbRowsPath,
  parseGridDbResponse,
} from "../../core/events/griddb-webapi.ts";
import { type HttpBatchRequest, httpLoopFields, httpSourceGenerator, refusalAnswer } from "./http.ts";
import type { GeneratorFactory } from "./types.ts";

/** Scenario block `generator.griddb-webapi`. */
export const griddbWebapiSchema = z
  .object({
    ...httpLoopFields,
    batch: httpLoopFields.batch.default(1000),
    /** per-request timeout, milliseconds */
    timeoutMs: z.number().int().positive().default(60_000),
  })
  .strict();

export type GriddbWebapiConfig = z.infer<typeof griddbWebapiSchema>;

/** The row-registration request of one batch: a refused request (GridDbError) rejects the batch and keeps the connection. */
function rowsRequest(params: Record<string, string>): HttpBatchRequest<StampedBatch> {
  const t = gridDbTarget(params);
  return {
    label: `PUT rows of ${t.container}`,
    method: "PUT",
    path: gridDbRowsPath(t.cluster, t.database, t.container),
    headers: { "Content-Type": GRIDDB_CONTENT_TYPE, Authorization: gridDbAuthorization(params) },
    answer: refusalAnswer(
      (r, b) => {
        parseGridDbResponse(r.status, r.body, b.count);
        return { accepted: b.count };
      },
      (err) => (err instanceof GridDbError ? err.message : undefined),
    ),
  };
}

/** Factory "griddb-webapi": ctx.target host and port of the GridDB Web API; params cluster, database, container, user, password. */
export const griddbWebapi: GeneratorFactory<GriddbWebapiConfig> = {
  name: "griddb-webapi",
  schema: griddbWebapiSchema,
  create: (config, ctx) =>
    httpSourceGenerator(config, ctx, (source) => new GridDbRowsEncoder(source), rowsRequest),
};
