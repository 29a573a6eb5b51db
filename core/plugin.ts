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
import type { ComponentFactory } from "./component.ts";
import type { CollectorRenderer } from "./render.ts";
import type { VerifierFactory } from "./verifier.ts";

/**
 * Reads one collector's own counts (its "claims": received, written, dropped, queued, ...) on a deployed stack.
 * `http`: from its metrics endpoint, from the harness; `shell`: with a command run inside its container (collectors
 * without an HTTP endpoint, e.g. syslog-ng's control socket).
 */
export type ClaimsSource =
  | {
      kind: "http";
      /**
       * The container ports that serve the metrics, given the endpoint's metrics port and the scenario's collector
       * block; absent: that one port. Their counts are summed (e.g. one port per Fluentd worker).
       */
      ports?(metricsPort: number, config: Record<string, unknown>): number[];
      /**
       * @param at the metrics endpoint as this machine reaches it
       * @throws IngestbenchError E_CLAIMS naming the collector and URL (refused, timeout, non-200, malformed body)
       */
      read(at: { host: string; port: number }, signal?: AbortSignal): Promise<Record<string, number>>;
    }
  | {
      kind: "shell";
      /**
       * @param run runs a command inside the collector's container and returns its stdout
       * @throws ProvisioningError E_REMOTE_EXEC when the command fails in the container
       */
      read(run: (cmd: string, args: readonly string[], opts?: { timeoutMs?: number }) => Promise<string>): Promise<Record<string, number>>;
    };

/** What every plugin descriptor has. */
interface PluginBase<C> {
  /** the name scenarios use (`sink: { <name>: {...} }`, `collector: { <name>: {...} }`) and the catalog's */
  readonly name: string;
  /** one line for people: what it is, at which pinned version */
  readonly about: string;
  /** strict zod schema of the scenario's block, in the component's own setting names; defaults filled */
  readonly schema: z.ZodType<C, z.ZodTypeDef, unknown>;
  /** the local platform's component (cgroups + netns); absent: the plugin runs on container platforms only */
  readonly local?: ComponentFactory<C>;
  /** the container platforms' image entry (docker, azure); absent: local only */
  readonly image?: CatalogImage;
}

/** A sink: a store the ledger counts in. */
export interface SinkPlugin<C = any> extends PluginBase<C> {
  readonly kind: "sink";
  /** the sink-side half: creates the table/index, counts, computes the ledger */
  readonly verifier: VerifierFactory;
}

/** A collector: receives a generator's protocol and writes into a sink. */
export interface CollectorPlugin<C = any> extends PluginBase<C> {
  readonly kind: "collector";
  /** the container platforms' config renderer, for every sink it writes into (the N×M cases live here) */
  readonly render?: CollectorRenderer<C>;
  /** the collector's own counts on deployed stacks */
  readonly claims?: ClaimsSource;
}

export type Plugin = SinkPlugin | CollectorPlugin;
