/**
 * What the collectors of a docker or azure stack are configured with: the scenario cell's collector and sink blocks
 * and event fields, rendered into each collector container's config file (infra/render/), plus the image build a
 * pairing needs (infra/catalog.ts `build`, e.g. Fluentd with fluent-plugin-griddb for a GridDB sink) or a component
 * always runs (`build.always`: GridDB with its Web API, images/griddb-webapi).
 *
 * The cell comes from the validated stack config (infra/stack/schema.ts `ingestbench:cell`, set per cell by the
 * provisioner, harness/provision/provisioner.ts cellConfig). Without one, a collector renders with its schema's
 * defaults and the quickstart's event (ts, msg of 180 bytes), and the host's output says `config.source: "defaults"`.
 * Both container platforms render here: the docker platform uploads the file into the container, the azure
 * platform's cloud-init writes it onto the VM and mounts it (infra/azure/host.ts).
 */
import { createHash } from "node:crypto";
import { ConfigurationError } from "../../core/errors.ts";
import type { EventField } from "../../core/events/types.ts";
import { catalogEntry, type CatalogBuild, type CatalogImage, type CatalogPort } from "../catalog.ts";
import { findSink, isSinkName } from "../../plugins/registry.ts";
import { renderCollector, rendererOf, type RenderedConfig, type SinkEndpoint } from "../render/index.ts";
import type { PlatformConfig } from "../stack/schema.ts";

/** The event rendered when the stack config carries none (the quickstart's). */
export const DEFAULT_EVENT: readonly EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
];

/** The cell as the program sees it. */
export interface CellPipeline {
  event: readonly EventField[];
  /** component name → its scenario block (raw; the renderer's schema validates it) */
  blocks: Record<string, unknown>;
  source: "stack config" | "defaults";
}

/** A host's rendered config and build, for DockerHost and AzureHost. */
export interface HostPipeline {
  config?: RenderedConfig & { source: CellPipeline["source"]; sha256: string };
  build?: CatalogBuild;
}

/**
 * The ports a host's container serves: its catalog entry's, plus the metrics ports its rendered config adds
 * (Fluentd's monitor_agent on port + worker id with several workers), so that both platforms publish them (docker
 * ports, azure NSG) and the harness can read every worker's counts.
 */
export function hostPorts(component: CatalogImage, pipeline?: HostPipeline): CatalogPort[] {
  const extra = (pipeline?.config?.listens.metricsPorts ?? []).filter(
    (port) => !component.ports.some((p) => p.port === port),
  );
  const scheme = component.ports.find((p) => p.role === "metrics")?.scheme ?? "http";
  return [
    ...component.ports,
    ...extra.map((port): CatalogPort => ({ port, role: "metrics", protocol: "tcp", scheme })),
  ];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The catalog name a host runs (`ingestbench:components[host]`); "loadgen" when absent. */
export function componentName(components: Readonly<Record<string, unknown>>, host: string): string {
  const v = components[host];
  return typeof v === "string" ? v : "loadgen";
}

/** The cell from the validated platform config (`ingestbench:cell`), else the defaults. */
export function pipelineOf(platform: Pick<PlatformConfig, "cell">): CellPipeline {
  const cell = platform.cell;
  if (!cell) return { event: DEFAULT_EVENT, blocks: {}, source: "defaults" };
  const blocks: Record<string, unknown> = { [cell.sink.name]: cell.sink.config };
  if (cell.collector) blocks[cell.collector.name] = cell.collector.config;
  return { event: cell.event, blocks, source: "stack config" };
}

/**
 * SinkEndpoint params from a sink's scenario block: the string values of the keys its plugin names (SinkPlugin
 * `params`, e.g. plugins/sinks/elasticsearch/index.ts); the harness's verifier reads the same ones on a deployed
 * stack, so both address one table or index. An unknown sink has none.
 */
export function sinkParams(sink: string, block: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(block)) return out;
  for (const key of findSink(sink)?.params ?? []) {
    const v = block[key];
    // params travel as text (Pulumi config, the verifier's context); numbers and booleans as JSON writes them
    if (typeof v === "string") out[key] = v;
    else if (typeof v === "number" || typeof v === "boolean") out[key] = String(v);
  }
  return out;
}

/**
 * Render every collector host's config against the stack's sink host, and pick the image builds the pairings need
 * (and those of components that always build, on any host).
 * @param hosts host name → [catalog entry, address on the stack network], in stack order
 * @throws ConfigurationError when a collector has no sink host to write into, or its block does not render
 */
export function hostPipelines(
  hosts: ReadonlyArray<[string, CatalogImage, string]>,
  cell: CellPipeline,
): Record<string, HostPipeline> {
  const out: Record<string, HostPipeline> = {};
  const sinks = hosts.filter(([, c]) => c.kind === "sink");
  let gen = 0;
  for (const [host, component] of hosts) {
    out[host] = {};
    // a component that always runs its build (GridDB with its Web API) gets it in every pairing, sinks included
    if (component.build?.always) out[host]!.build = component.build;
    const plugin = rendererOf(component.name);
    if (component.kind !== "collector" || !plugin) continue;
    const sink = sinks[0];
    if (!sink || sinks.length > 1 || !isSinkName(sink[1].name)) {
      throw new ConfigurationError(
        "E_STACK_FIELD",
        `host "${host}" runs collector ${component.name}, which needs exactly one sink host to write into (sinks: ${sinks.map(([h, c]) => `${h}=${c.name}`).join(", ") || "none"})`,
        { field: "ingestbench:components" },
      );
    }
    const [, sinkEntry, sinkAddress] = sink;
    const refusal = component.refuses?.[sinkEntry.name];
    if (refusal !== undefined) {
      throw new ConfigurationError(
        "E_STACK_FIELD",
        `host "${host}" runs ${component.name} into ${sinkEntry.name}: ${refusal}`,
        { field: "ingestbench:components" },
      );
    }
    const dataPort = sinkEntry.ports.find((p) => p.role === "data")!.port;
    const endpoint: SinkEndpoint = {
      name: sinkEntry.name,
      host: sinkAddress,
      port: dataPort,
      params: sinkParams(sinkEntry.name, cell.blocks[sinkEntry.name]),
    };
    const block = cell.blocks[component.name] ?? {};
    const made = plugin.render.generators?.(plugin.schema.parse(block)) ?? 0;
    // a collector that makes the load itself (generator: none) is deployed idle: each run uploads its config with
    // the generator and that run's gens, and restarts it (harness/remote/site.ts)
    const rendered = renderCollector(component.name, block, endpoint, cell.event, gen, { idle: made > 0 });
    gen += made;
    out[host]!.config = {
      ...rendered,
      source: cell.source,
      sha256: createHash("sha256").update(rendered.text).digest("hex"),
    };
    const build = catalogEntry(component.name).build;
    if (build && build.forSinks.includes(sinkEntry.name)) out[host]!.build = build;
  }
  return out;
}
