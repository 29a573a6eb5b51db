/**
 * The local platform's component contract (a plugin's `local`, core/plugin.ts): a collector or sink at a pinned
 * version, started inside a local host's cgroup and namespace, with its readiness and version probes. Its config is
 * the output of the plugin's one scenario schema (core/plugin.ts `schema`).
 */
import type { EventField } from "./events/types.ts";
import type { LocalHost } from "./hosts.ts";
import type { ProgramSpec } from "./program.ts";

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
  /** the main server process id, when there is one (tests stop or kill it to simulate a failure) */
  pid?: number;
  /** stop gracefully, then hard; idempotent */
  stop(): Promise<void>;
  /**
   * stop for good when the component's data is thrown away right after (the site's teardown): as fast as it can end
   * without saving that data (PostgreSQL: immediate shutdown, no shutdown checkpoint), then hard as stop(); one
   * promise with stop(). Absent: the site calls stop()
   */
  discard?(): Promise<void>;
  /** the component's own claimed counters (e.g. a collector's received/written/dropped), when it keeps any */
  stats?(): Promise<Record<string, number>>;
  /**
   * the component's own signals now, for a series read every sample interval (a collector's counters and queue
   * gauges per destination or queue, named as it names them); cheap and never waiting for the component to write
   */
  signals?(): Promise<Record<string, number>>;
}

/**
 * Where a collector sends what it receives: the running sink (a collector connects to `sink.data`, the shaped
 * data-plane endpoint), the sink's connection params plus the `table` the verifier created, and the scenario's
 * event fields (the collector maps each field, then gen, seq and sent_at, from the message to a column).
 */
export interface Downstream {
  sink: RunningComponent;
  params: Record<string, string>;
  fields: readonly EventField[];
  /**
   * the first generator id of this collector host's own load (core/ledger.ts "Run identity"), for a collector that
   * makes the load itself (`generator: none`, core/plugin.ts SelfLoad); absent otherwise
   */
  genBase?: number;
}

export interface ComponentFactory<C = unknown> {
  /** the plugin's name */
  name: string;
  kind: "sink" | "collector";
  /** does the running version satisfy the pin? (e.g. pin "18.4.0-beta.17" is PostgreSQL server "18.4") */
  matchesPin(pinned: string, running: string): boolean;
  /** collectors: the generators whose protocol it receives (e.g. ["syslog"]); the plan refuses other pairings */
  accepts?: readonly string[];
  /** collectors: the sinks it can write into (e.g. ["postgres"]) */
  writesTo?: readonly string[];
  /**
   * the installed program it runs (core/program.ts), when it runs one the user may bring: resolved and its version
   * checked against `pin(config)` before anything is provisioned; the component resolves it again at start with
   * `host.programs` (the stack host's `programs` map)
   */
  program?: { spec: ProgramSpec; pin(config: C): string };
  /**
   * Start on a local host (inside its cgroup and namespace), wait until ready, read back the version.
   * Collectors get `downstream` (required for kind "collector", ignored by sinks): the sink they write into.
   */
  startLocal(
    host: LocalHost,
    config: C,
    signal?: AbortSignal,
    downstream?: Downstream,
  ): Promise<RunningComponent>;
}
