/**
 * Generator contract. A generator runs in its own process inside the loadgen host (see child.ts), so that its
 * CPU is capped and its traffic crosses the shaped link. It reports progress as JSON lines on stdout.
 */
import type { z } from "zod";
import type { ReplayIndexJson } from "../../core/events/replay-index.ts";
import type { EventField } from "../../core/events/types.ts";

/** Where to send: an address reachable from the loadgen host plus sink-specific target names. */
export interface GeneratorTarget {
  host: string;
  port: number;
  /** sink-side names: table, database, user, index, container... */
  params: Record<string, string>;
}

export interface GeneratorContext {
  target: GeneratorTarget;
  fields: EventField[];
  /** generator index within the run, 0..n-1 (seeds its rows) */
  genId: number;
  /** this run's first generator id (core/ledger.ts, "Run identity"): the `gen` column is genBase + genId; default 0 */
  genBase?: number;
  /** replay this log file's lines (path as seen on the loadgen host) into the last string field instead of seeded text */
  replayFile?: string;
}

/** Running totals, in events unless noted. sent = handed to the transport; accepted = acknowledged by the receiver. */
export interface GeneratorProgress {
  sent: number;
  accepted: number;
  rejected: number;
  /** encoded payload bytes handed to the transport (wire bytes: the protocol's framing and the tracking fields included) */
  bytes: number;
  /**
   * bytes of the log lines themselves in those payloads (core/events/source.ts EventSource.logBytes: the generated
   * text or the replayed file's line, not its encoding), deliberate repeats included as in `bytes`; absent from a
   * generator that does not count them (an older one, an application under test, events the collector makes)
   */
  logBytes?: number;
  /** requests (batches) handed to the transport, deliberate repeats included */
  requests: number;
  /** events sent a second time on purpose (`duplicateEvery` fault injection) and accepted again; not in `sent` */
  repeated?: number;
}

/** Final report. Seqs are 0..sent-1 for this genId; rejected seqs are listed as inclusive ranges. */
export interface GeneratorFinal extends GeneratorProgress {
  genId: number;
  rejectedRanges: Array<[number, number]>;
  /** per-request latency in milliseconds (HDR histogram percentiles) */
  latencyMs: { mean: number; p50: number; p99: number; max: number };
  errors: string[];
  /** the generator's index of its replay file (core/events/replay-index.ts), for the content check; not recorded */
  replayIndex?: ReplayIndexJson;
}

export interface Generator {
  /** Send until `signal` aborts, then finish the in-flight request and resolve with the final totals. */
  run(signal: AbortSignal, onProgress: (p: GeneratorProgress) => void): Promise<GeneratorFinal>;
}

export interface GeneratorFactory<C = unknown> {
  name: string;
  /** strict zod schema for the scenario's `generator.<name>` block */
  schema: z.ZodType<C, z.ZodTypeDef, unknown>;
  create(config: C, ctx: GeneratorContext): Generator;
}
