/**
 * A collector's own counts ("claims": received, written, dropped, queued, ...) on deployed docker and azure stacks:
 * the contract a collector plugin's `claims` fulfils (core/plugin.ts), and the HTTP reading every metrics-endpoint
 * reader shares. The claims are what the collector *says*, kept beside the ledger (RunRecord.collectorClaims), never
 * in place of it; harness/remote/claims.ts reads them at each collector host's published port and sums them.
 *
 * Keys, where a collector reports what they mean (each plugin's claims.ts says which it reports):
 *
 * | key            | meaning (unit: records/events unless said) |
 * |----------------|--------------------------------------------|
 * | received       | accepted by the input(s)                   |
 * | written        | delivered by the output(s)                 |
 * | emitted        | handed to the output(s), not yet delivered |
 * | dropped        | given up by the output(s)                  |
 * | filtered       | discarded on purpose (a filter)            |
 * | retries        | retry requests (chunks, not records)       |
 * | retriedRecords | records in chunks marked for retry         |
 * | retriesFailed  | chunks whose retries expired               |
 * | errors         | error occurrences (not records)            |
 * | queued         | buffered now (a gauge)                     |
 * | queuedChunks   | chunks queued for flushing now (a gauge)   |
 * | queuedBytes    | bytes buffered now (a gauge)               |
 * | writes, rollbacks | chunk writes, chunk write rollbacks     |
 *
 * Counters are totals since the collector started: on a stack whose collector outlives one cell they include the
 * earlier cells' events.
 */
import { request } from "undici";
import type { CatalogImage } from "./catalog.ts";
import { IngestbenchError } from "./errors.ts";
import {
  parsePrometheusText,
  PrometheusTextError,
  requiredSum,
  sumOf,
  type PromSamples,
} from "./prometheus.ts";

/** How long one read of a metrics endpoint may take (connect, answer and body), in milliseconds. */
export const CLAIMS_TIMEOUT_MS = 5_000;

/**
 * How a collector's claims are read. `http`: from its metrics endpoint, from the harness; `shell`: with a command run
 * inside its container (collectors without an HTTP endpoint, e.g. syslog-ng's control socket).
 */
export type ClaimsSource = HttpClaims | ShellClaims;

/** Claims from the collector's HTTP metrics endpoint (its catalog image's `metrics`). */
export interface HttpClaims {
  kind: "http";
  /**
   * The container ports that serve the metrics, given the endpoint's metrics port (the stack outputs' `metrics`) and
   * the scenario's collector block; absent: that one port. Their counts are summed (e.g. one port per Fluentd worker).
   */
  ports?(metricsPort: number, config: Record<string, unknown>): number[];
  /**
   * Counts with the keys of the table above.
   * @param at the metrics endpoint as this machine reaches it
   * @throws IngestbenchError E_CLAIMS naming the collector and URL: refused connection, no answer within
   *         CLAIMS_TIMEOUT_MS, an HTTP status other than 200, or a body that is not the documented format
   */
  read(at: { host: string; port: number }, signal?: AbortSignal): Promise<Record<string, number>>;
}

/** Claims read inside the collector's container. */
export interface ShellClaims {
  kind: "shell";
  /**
   * @param run runs a command inside the collector's container and returns its stdout
   * @throws ProvisioningError E_REMOTE_EXEC when the command fails in the container
   */
  read(
    run: (cmd: string, args: readonly string[], opts?: { timeoutMs?: number }) => Promise<string>,
  ): Promise<Record<string, number>>;
}

/** A claims read that failed: IngestbenchError E_CLAIMS, the message `<collector> metrics at <url>: <why>`. */
export function claimsError(name: string, url: string, why: string, cause?: unknown): IngestbenchError {
  return new IngestbenchError(
    "E_CLAIMS",
    `${name} metrics at ${url}: ${why}`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * GET `url` and return its body, with undici; 200 only, within CLAIMS_TIMEOUT_MS.
 * @throws IngestbenchError E_CLAIMS (claimsError) for a refused connection, a timeout or another status
 */
export async function fetchClaimsText(name: string, url: string, signal?: AbortSignal): Promise<string> {
  const timeout = AbortSignal.timeout(CLAIMS_TIMEOUT_MS);
  try {
    // reset: one read per run, so no idle keep-alive socket outlives it
    const res = await request(url, {
      method: "GET",
      reset: true,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const body = await res.body.text();
    if (res.statusCode !== 200)
      throw claimsError(name, url, `HTTP ${res.statusCode}: ${body.slice(0, 200).trim()}`);
    return body;
  } catch (e) {
    if (e instanceof IngestbenchError) throw e;
    if (timeout.aborted && !signal?.aborted)
      throw claimsError(name, url, `no answer within ${CLAIMS_TIMEOUT_MS / 1000} s`, e);
    const err = e as Error & { code?: string };
    throw claimsError(
      name,
      url,
      err.code && !err.message.includes(err.code) ? `${err.code}: ${err.message}` : err.message,
      e,
    );
  }
}

/**
 * The metrics URL of a collector image at `at` (the image's `metrics.path`; IPv6 literals in brackets).
 * @throws IngestbenchError E_CLAIMS when the image has no metrics endpoint
 */
export function metricsUrl(image: CatalogImage, at: { host: string; port: number }): string {
  const path = image.metrics?.path;
  if (!path)
    throw new IngestbenchError("E_CLAIMS", `${image.name}: no metrics endpoint in its catalog image`);
  return `http://${at.host.includes(":") ? `[${at.host}]` : at.host}:${at.port}${path}`;
}

/** `counts` plus the entries of `maybe` that are defined. */
export function withPresent(
  counts: Record<string, number>,
  maybe: Record<string, number | undefined>,
): Record<string, number> {
  for (const [k, v] of Object.entries(maybe)) if (v !== undefined) counts[k] = v;
  return counts;
}

/** Sums over one parsed Prometheus payload (core/prometheus.ts sumOf and requiredSum). */
export interface PromSums {
  /** the sum of a family the collector always exports (its absence is an error) */
  need(metric: string, keep?: (labels: Record<string, string>) => boolean): number;
  /** the sum of a family, undefined when absent */
  some(metric: string, keep?: (labels: Record<string, string>) => boolean): number | undefined;
  samples: PromSamples;
}

/**
 * The claims of a collector whose metrics endpoint serves Prometheus text: `counts` maps the payload's sums to the
 * claim keys. Format errors become claimsError naming the collector and URL.
 */
export function prometheusClaims(
  image: CatalogImage,
  counts: (p: PromSums) => Record<string, number>,
): HttpClaims {
  return {
    kind: "http",
    async read(at, signal) {
      const url = metricsUrl(image, at);
      const text = await fetchClaimsText(image.name, url, signal);
      try {
        const samples = parsePrometheusText(text);
        return counts({
          samples,
          need: (m, keep) => requiredSum(samples, m, keep),
          some: (m, keep) => sumOf(samples, m, keep),
        });
      } catch (e) {
        if (e instanceof PrometheusTextError) throw claimsError(image.name, url, e.message, e.cause);
        throw e;
      }
    },
  };
}
