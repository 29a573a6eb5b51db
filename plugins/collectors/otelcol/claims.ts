/**
 * The OpenTelemetry Collector's own counts ("claims") on deployed stacks: Prometheus text from its internal telemetry
 * (./render.ts: a pull reader with the Prometheus exporter, GET /metrics on port 8888), metric names from the
 * Collector's documentation ("Internal telemetry", basic-level metrics) and exporterhelper / receiverhelper:
 *
 * | claim    | metric (summed over every sample)                                       |
 * |----------|-------------------------------------------------------------------------|
 * | received | otelcol_receiver_accepted_log_records                                   |
 * | refused  | otelcol_receiver_refused_log_records (the pipeline said no: the Forward client got no ack) |
 * | written  | otelcol_exporter_sent_log_records                                       |
 * | dropped  | otelcol_exporter_send_failed_log_records (after the retries) + otelcol_exporter_enqueue_failed_log_records when reported (a full sending queue) |
 * | queued   | otelcol_exporter_queue_size (a gauge, in the queue's sizer: requests unless `sending_queue.sizer` says items or bytes), when reported |
 *
 * Counters carry the `_total` suffix of the OTel Go Prometheus exporter in some releases
 * (`otelcol_exporter_sent_log_records_total`); others expose the bare names (0.165.0, read from the project's
 * build: `otelcol_exporter_sent_log_records{exporter=...,server_address=...}`). Either is read (the suffixed one
 * first). The exporter's series appear with its first send (sent with its first success, send_failed with its first
 * failure: absent = 0); the receiver's are required. Labels (receiver, exporter, transport, data_type, otel_scope_*,
 * service_*) are not filtered: the rendered config has one logs pipeline, one receiver and one exporter.
 */
import { prometheusClaims, withPresent, type HttpClaims, type PromSums } from "../../../core/claims.ts";
import { otelcolImage } from "./image.ts";

/** Sum of a counter under its `_total` name, else its bare name; undefined when neither is exposed. */
function counter(p: PromSums, bare: string): number | undefined {
  return p.some(`${bare}_total`) ?? p.some(bare);
}

/** Like counter, for a counter the Collector always exposes. @throws E_CLAIMS (as core/claims.ts) when absent */
function needCounter(p: PromSums, bare: string): number {
  return counter(p, bare) ?? p.need(`${bare}_total`);
}

/**
 * Map one parsed payload to the claims (table above).
 * @throws IngestbenchError E_CLAIMS when a receiver or exporter log-record counter is absent or a count is not finite
 */
export function otelcolCounts(p: PromSums): Record<string, number> {
  const enqueueFailed = counter(p, "otelcol_exporter_enqueue_failed_log_records");
  return withPresent(
    {
      received: needCounter(p, "otelcol_receiver_accepted_log_records"),
      refused: needCounter(p, "otelcol_receiver_refused_log_records"),
      written: counter(p, "otelcol_exporter_sent_log_records") ?? 0,
      // 0.165 exports a send-failed series only once a send has failed (read from the real build): absent = 0
      dropped: (counter(p, "otelcol_exporter_send_failed_log_records") ?? 0) + (enqueueFailed ?? 0),
    },
    { queued: p.some("otelcol_exporter_queue_size") },
  );
}

/** The claims reader of the otelcol plugin: GET http://<host>:<port>/metrics (the image's metrics path), Prometheus text. */
export const claims: HttpClaims = prometheusClaims(otelcolImage, otelcolCounts);
