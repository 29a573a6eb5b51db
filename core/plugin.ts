/**
 * The plugin contract: every sink and every collector lives in one folder (plugins/sinks/<name>/,
 * plugins/collectors/<name>/) whose index.ts exports one descriptor of the shape below, and is registered by one
 * line in plugins/registry.ts. Everything else (scenario validation, the local platform, the container platforms'
 * catalog and config rendering, the runner's verifier and claims) reads plugins only through that registry, so a
 * plugin is never named anywhere else (docs/decisions/0002-one-plugin-one-home.md).
 *
 * Layers (docs/design.md, "Layers"): core/ imports nothing of ours; plugins/ import core/ only; infra/ imports
 * core/ and the registry; harness/ imports all three. test/architecture/imports.test.ts fails on any other edge and
 * on any import circle.
 */
import type { z } from "zod";
import type { CatalogImage } from "./catalog.ts";
import type { ClaimsSource } from "./claims.ts";
import type { ComponentFactory } from "./component.ts";
import type { CollectorRenderer } from "./render.ts";
import type { VerifierFactory } from "./verifier.ts";

export type { ClaimsSource };

/** What every plugin descriptor has. */
interface PluginBase<C> {
  /**
   * the name scenarios use (`sink: { <name>: {...} }`, `collector: { <name>: {...} }`), the catalog's and the
   * plugin's folder name; `local.name` and `image.name` equal it (test/architecture/imports.test.ts checks)
   */
  readonly name: string;
  /** one line for people: what it is, at which pinned version */
  readonly about: string;
  /**
   * THE strict zod schema of the scenario's block, in the component's own setting names, defaults filled: scenario
   * validation (harness/runner/plan.ts), the stack's `ingestbench:cell` (infra/stack/schema.ts) and the container
   * renderer (infra/render/index.ts renderCollector) parse with it; the local component gets its output
   */
  readonly schema: z.ZodType<C, z.ZodTypeDef, unknown>;
  /** the local platform's component (cgroups + netns); absent: the plugin runs on container platforms only */
  readonly local?: ComponentFactory<C>;
  /** the container platforms' image entry (docker, azure); absent: local only */
  readonly image?: CatalogImage;
  /**
   * the smallest memory cap (bytes) of the host that runs the component under which it cannot start, and why: a
   * stack whose host caps memory below it is refused before provisioning (E_CAP_TOO_SMALL,
   * harness/runner/memory-floor.ts) and flagged by `validate`. A floor, not a recommendation: a cap above it that
   * squeezes the component still runs, and its OOM kill is reported by the run. Absent: no floor known.
   */
  readonly minMemory?: MinMemory;
  /**
   * how the plugin has been verified, so that a user sees what has really run before trusting a number
   * (`ingestbench plugins`); test/architecture/evidence.test.ts holds "real-ci" to a real test naming the plugin
   */
  readonly evidence: Evidence;
}

/**
 * How a plugin has been verified, strongest first:
 * - `real-ci`: a test runs the real program in CI (its title names the plugin and says "real"), at `version`;
 * - `run-once`: run under ingestbench once, by hand, at `version` on `machine` (e.g. `lscpu`'s model name) on
 *   `date` (YYYY-MM-DD), recorded in docs/measurements.md; CI checks it against vectors only;
 * - `vectors`: protocol vectors and golden files only (the program itself never ran under ingestbench).
 */
export type Evidence =
  | { readonly level: "real-ci"; readonly version: string }
  | { readonly level: "run-once"; readonly version: string; readonly machine: string; readonly date: string }
  | { readonly level: "vectors" };

/** A component's memory floor (PluginBase.minMemory). */
export interface MinMemory {
  /** bytes */
  readonly bytes: number;
  /** where the number comes from, for the refusal's message */
  readonly why: string;
}

/** A sink: a store the ledger counts in. */
export interface SinkPlugin<C = any> extends PluginBase<C> {
  readonly kind: "sink";
  /** the sink-side half: creates the table/index, counts, computes the ledger */
  readonly verifier: VerifierFactory;
  /**
   * the keys of the sink's block that reach the collectors' renderers and the verifier as connection params on the
   * container platforms (core/render.ts SinkEndpoint `params`, core/verifier.ts VerifierContext `params`), e.g.
   * Elasticsearch's `index`; string values only
   */
  readonly params: readonly string[];
}

/** A collector: receives a generator's protocol and writes into a sink. */
export interface CollectorPlugin<C = any> extends PluginBase<C> {
  readonly kind: "collector";
  /**
   * the container platforms' config renderer, for every sink it writes into (the N×M cases live here); required
   * when `image` is given
   */
  readonly render?: CollectorRenderer<C>;
  /** the collector's own counts on deployed stacks (core/claims.ts); absent: none are read */
  readonly claims?: ClaimsSource;
  /** the collector's built-in load generator, for a scenario with `generator: none` (SelfLoad); absent: it has none */
  readonly selfLoad?: SelfLoad<C>;
  /**
   * how its series signals (SeriesPoint.collector.hosts[host], the component's `signals`) say its outputs toward the
   * sink are flushing and queueing (harness/runner/collector-pressure.ts reads them for the saturation verdict);
   * absent: it reports none
   */
  readonly pressure?: (signals: Readonly<Record<string, number>>) => OutputPressure[];
}

/**
 * One collector output's flush and queue readings at one sample, in the collector's own counters (each absent when
 * the collector does not report it). Cumulative fields count since the collector started.
 */
export interface OutputPressure {
  /** the output in the collector's words: Fluentd's @id ("ib_sink"), otelcol's exporter id, Fluent Bit's instance */
  output: string;
  /** cumulative ms spent flushing (Fluentd flush_time_count) */
  flushTimeMs?: number;
  /** cumulative flushes (Fluentd write_count: chunks written) */
  flushes?: number;
  /** cumulative flushes the collector itself called slow (Fluentd slow_flush_count, over slow_flush_log_threshold) */
  slowFlushes?: number;
  /** queued toward the sink now, in `queuedUnit` (Fluentd buffer_total_queued_size; otelcol queue_size) */
  queued?: number;
  queuedUnit?: "bytes" | "items";
  /** share of the queue's limit in use now, 0–1 (Fluentd 1 − buffer_available_buffer_space_ratios / 100) */
  queueUsed?: number;
  /** cumulative retries (Fluentd retry_count, Fluent Bit retries) */
  retries?: number;
  /** cumulative sends that failed (otelcol send_failed) */
  sendFailures?: number;
}

/**
 * A collector input that makes the load itself (`generator: none`: syslog-ng's example-msg-generator(), Fluentd's
 * sample input), with a seq in every event. No generator process knows what was sent, so the ledger infers `sent`
 * from the collector's own counter of the events it made (its claims, core/claims.ts key `generated`) and the seq
 * range (seqs 0 .. generated − 1 per generator id; a stored seq outside it is `unexpected`), and says so
 * (core/verifier.ts Ledger `inferred`).
 */
export interface SelfLoad<C = any> {
  /** the input in the collector's own words, e.g. "example-msg-generator()" or "in_sample" */
  readonly input: string;
  /** where the collector block selects it, a dotted path under the block, e.g. "example-msg-generator", "source.sample" */
  readonly setting: string;
  /** generator ids (gen) the configured input uses on one collector host; 0 when the config does not select it */
  generators(config: C): number;
  /** where the collector's own count of the events it made comes from, for the record, e.g. "syslog-ng-ctl stats: source s_gen processed" */
  readonly counter: string;
  /**
   * the claims key of generator index k's made events on one host: `generated` when the input uses one gen (the
   * plugin's stats() and claims report it); with `perPort`, the key in the k-th port's own claims
   */
  counterKey(k: number, config: C): string;
  /**
   * generator index k's count is read from the k-th port the plugin's HTTP claims name (ClaimsSource ports), alone
   * (Fluentd: each worker serves its own monitor_agent and counts only its own events); absent: one read per host
   */
  readonly perPort?: boolean;
  /**
   * ms the count must stand still, with every made event stored, before the input has surely stopped making events
   * (longer than its pause between two events): the end of its load (harness/runner/self-load.ts)
   */
  quietMs(config: C): number;
}

export type Plugin = SinkPlugin | CollectorPlugin;
