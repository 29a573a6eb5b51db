/**
 * Component contract (the catalog shared by all platforms): a deployable collector or sink at a pinned version,
 * with its config renderer, ports, readiness probe and version probe.
 */
import type { z } from "zod";
import type { LocalHost } from "../local/types.ts";

export interface Endpoint {
  host: string;
  port: number;
}

export interface RunningComponent {
  name: string;
  /** the pin from the scenario/catalog, e.g. "18.4.0-beta.17" */
  pinned: string;
  /** the version the running server reports, e.g. "18.4" */
  running: string;
  /** reachable from other hosts over the shaped data-plane link */
  data: Endpoint;
  /** reachable from the harness over the unshaped control link */
  control: Endpoint;
  /** sink/collector-specific names (database, user, ...) for generators and verifiers */
  params: Record<string, string>;
  /** stop gracefully, then hard; idempotent */
  stop(): Promise<void>;
}

export interface ComponentFactory<C = unknown> {
  name: string;
  kind: "sink" | "collector";
  /** strict zod schema of the scenario's `sink.<name>` / `collector.<name>` block */
  schema: z.ZodType<C, z.ZodTypeDef, unknown>;
  /** does the running version satisfy the pin? (e.g. pin "18.4.0-beta.17" is PostgreSQL server "18.4") */
  matchesPin(pinned: string, running: string): boolean;
  /** start on a local host (inside its cgroup and namespace), wait until ready, read back the version */
  startLocal(host: LocalHost, config: C, signal?: AbortSignal): Promise<RunningComponent>;
}
