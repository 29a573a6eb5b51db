/**
 * Shapes shared by the local platform (cgroups + network namespaces + tc) and the harness.
 */
import type { ChildProcess } from "node:child_process";
import type { AppliedLimits, StackSpec } from "./limits.ts";

/** Where a host's cgroup lives, per controller, so observers can read usage. */
export interface CgroupPaths {
  version: "v1" | "v2";
  /** v1: one directory per controller, e.g. { cpu: "/sys/fs/cgroup/cpu/ingestbench/<run>/sink", cpuacct: ..., memory: ..., blkio: ... }.
   *  v2: a single directory under key "unified". Empty when no cgroup could be created (enforced: false). */
  dirs: Record<string, string>;
}

export interface SpawnOptions {
  /** run as this user (e.g. "postgres"); default: the current user */
  user?: string;
  env?: Record<string, string>;
  cwd?: string;
  /** stdio as in child_process.spawn; default ["ignore", "pipe", "pipe"] */
  stdio?: Array<"ignore" | "pipe" | "inherit">;
}

/** One role of a stack (loadgen, collector, sink) made real on this machine. */
export interface LocalHost {
  name: string;
  /** network namespace name, e.g. "ib-3f9a2c-sink"; undefined when namespaces are not available */
  netns?: string;
  /** this host's address on the shaped data-plane link (what other hosts use to reach it) */
  address: string;
  /** the address the harness (root namespace) uses to reach this host over the unshaped control link */
  controlAddress: string;
  /** data-plane interface name inside the namespace (for observers) */
  interface?: string;
  /** the other end of the data-plane link (a bridge port, or the peer host's end) and its namespace, for reshaping it */
  peerInterface?: string;
  peerNetns?: string;
  cgroup: CgroupPaths;
  /** run-scoped, writable data directory (on the throttled device or a tmpfs), removed at teardown */
  dataDir: string;
  /** block device "major:minor" that holds dataDir, when IO caps apply */
  blockDevice?: string;
  /** the stack host's `programs` map: plugin name → a path, a name on PATH or a command line (core/program.ts) */
  programs?: Readonly<Record<string, string>>;
  /** Spawn a process inside this host's cgroup and namespace. It is killed at teardown if still alive. */
  spawn(command: string, args: string[], options?: SpawnOptions): ChildProcess;
}

/** A provisioned local stack. `teardown` is idempotent and removes every process, cgroup, namespace and temp dir. */
export interface LocalStack {
  stack: StackSpec;
  runId: string;
  hosts: Record<string, LocalHost>;
  limits: Record<string, AppliedLimits>;
  teardown(): Promise<void>;
}
