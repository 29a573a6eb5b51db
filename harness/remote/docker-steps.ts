/**
 * Fault steps on the docker platform: the StepTarget (harness/runner/steps.ts) of a deployed docker stack, so the
 * one StepRunner fires the same steps here as on the local platform. Everything goes through the Docker CLI of
 * this machine (the HostShell's `engine` and `run`, harness/remote/shell.ts; DOCKER_HOST honoured):
 *
 * - kill: `docker kill --signal KILL <container>`: the component is the container's main process, and its end
 *   ends the container (every process in its pid namespace dies with it);
 * - stop / cont: SIGSTOP / SIGCONT to the component's process tree: its main process through `docker kill --signal`
 *   (a signal sent from inside the container to its pid 1 is dropped: pid_namespaces(7)), the rest (the
 *   descendants of pid 1, read from /proc inside the container) with `kill` in a `docker exec`. Not `docker pause`:
 *   a paused container refuses `docker exec`, so nothing could read its counters or claims while it is frozen;
 * - restart: thaw, `docker restart` (a killed container is started again with its filesystem, uploads and volume),
 *   the host's shaper restarted into the new network namespace (and a link a step changed reshaped again), the
 *   container's published ports read again into the outputs (the engine may publish them at new host ports:
 *   ./published.ts), then wait until the component's data port listens (harness/remote/ready.ts);
 * - exec: `docker exec -i <container> sh -c <command>`;
 * - network: the tc script of infra/docker/shaper.ts reshapeScript (the current shaping with the change applied) in
 *   the host's shaper container, or, for a host without a network cap, in a `docker run --rm` of the shaper image
 *   with NET_ADMIN in the host's network namespace (`--network container:<name>`);
 * - disk-full: harness/runner/step-scripts.ts DISK_FILL_SCRIPT in the container, on the component's data directory
 *   (the catalog's `dataDir`, a tmpfs of the stack's size: harness/runner/step-checks.ts refuses any other);
 * - drop-connections: `ss -K` (step-scripts.ts) in a `docker run --rm` helper of the shaper image with NET_ADMIN in
 *   the host's network namespace.
 *
 * `onDisturb(host)` is called when a step kills, stops or restarts a host, so the observer may carry its last
 * reading over the seconds its container cannot be read (harness/observers/remote.ts `mayBeDown`).
 */
import type { StackOutputs } from "../../core/outputs.ts";
import type { AppliedLimits } from "../../core/limits.ts";
import { catalog } from "../../infra/catalog.ts";
import { reshapeScript, type Shaping } from "../../infra/docker/shaper.ts";
import type { NetworkChange } from "../scenario/steps.ts";
import type { ExecResult, StepHost, StepTarget } from "../runner/steps.ts";
import { describeDrop, describeFill, DISK_FILL_SCRIPT, dropConnectionsArgv } from "../runner/step-scripts.ts";
import { refreshPublished } from "./published.ts";
import { waitListening } from "./ready.ts";
import type { HostShell } from "./shell.ts";

/** What a docker StepTarget needs. */
export interface DockerStepsOptions {
  outputs: StackOutputs;
  /** the shell into a host's container (./hosts.ts shellsFor) */
  shell: (host: string) => HostShell;
  /** the cell's hosts, in data-flow order (harness/runner/site.ts hostRoles) */
  roles: readonly string[];
  /** the shaper image (tc, ss) the stack runs, e.g. "ingestbench/debian-shaper:bookworm" */
  shaperImage: string;
  /** each host's limits as read back (the shaping a network step starts from) */
  limits: Readonly<Record<string, AppliedLimits>>;
  /** a step killed, stopped or restarted `host` */
  onDisturb(host: string): void;
  /** the port a restart waits for on `host` (default its component's data port; a collector making its own load may listen on none) */
  readyPort?(host: string): number | undefined;
}

/** Prints `<pid> <ppid>` of every process in the container's pid namespace (POSIX sh, /proc only). */
const PROCESS_TABLE = `for d in /proc/[0-9]*; do ( while read -r k v; do if [ "$k" = "PPid:" ]; then echo "\${d#/proc/} $v"; break; fi; done < "$d/status" ) 2>/dev/null; done; true`;

/** The descendants of pid 1 in `table` (PROCESS_TABLE's output), pid 1 excluded: the component's other processes. */
export function componentChildren(table: string): number[] {
  const children = new Map<number, number[]>();
  for (const line of table.split("\n")) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (!Number.isInteger(pid) || !Number.isInteger(ppid)) continue;
    children.set(ppid!, [...(children.get(ppid!) ?? []), pid!]);
  }
  const out: number[] = [];
  const queue = [...(children.get(1) ?? [])];
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...(children.get(p) ?? []));
  }
  return out;
}

/** The shaping `applied` records (./readback.ts keys), with `change` on top. */
export function nextShaping(
  applied: Readonly<Record<string, number | string>> | undefined,
  change: NetworkChange,
  current?: Shaping,
): Shaping {
  const num = (k: string): number | undefined =>
    typeof applied?.[k] === "number" ? (applied[k] as number) : undefined;
  const base: Shaping = current ?? {
    ...(num("tbfRateBytesPerSec") !== undefined ? { rateBytesPerSec: num("tbfRateBytesPerSec")! } : {}),
    ...(num("netemDelayMs") !== undefined ? { delayMs: num("netemDelayMs")! } : {}),
    ...(num("netemLossPercent") !== undefined ? { lossPercent: num("netemLossPercent")! } : {}),
  };
  return {
    ...base,
    ...(change.bandwidthBytesPerSec !== undefined ? { rateBytesPerSec: change.bandwidthBytesPerSec } : {}),
    ...(change.delayMs !== undefined ? { delayMs: change.delayMs } : {}),
    ...(change.lossPercent !== undefined ? { lossPercent: change.lossPercent } : {}),
  };
}

/** The StepTarget of a deployed docker stack (see the file comment). */
export function dockerStepTarget(o: DockerStepsOptions): StepTarget {
  const stopped = new Set<string>();
  /** the shaping a network step left on a host (re-applied after a restart) */
  const shapes = new Map<string, Shaping>();
  const host = (role: string) => o.outputs.hosts[role]!;
  const sh = (role: string) => o.shell(role);
  const engine = (role: string, args: string[], timeoutMs = 60_000) => sh(role).engine(args, { timeoutMs });
  const componentOf = (role: string) => host(role).component;

  const inspect = async (
    role: string,
    container = host(role).container,
  ): Promise<{ running: boolean; pid: number } | null> => {
    try {
      const [running, pid] = (
        await engine(role, [
          "inspect",
          "--type",
          "container",
          "--format",
          "{{.State.Running}} {{.State.Pid}}",
          container,
        ])
      )
        .trim()
        .split(" ");
      return { running: running === "true", pid: Number(pid) };
    } catch {
      return null;
    }
  };

  /** A NET_ADMIN helper of the shaper image in the host's network namespace, removed when it ends. */
  const helper = async (role: string, argv: string[], signal: AbortSignal): Promise<string> => {
    const c = host(role).container;
    const run = engine(role, [
      "run",
      "--rm",
      "-i",
      "--network",
      `container:${c}`,
      "--cap-add",
      "NET_ADMIN",
      "--label",
      `ingestbench.stack=${o.outputs.stack}`,
      "--label",
      "ingestbench.role=step",
      "--entrypoint",
      argv[0]!,
      o.shaperImage,
      ...argv.slice(1),
    ]);
    signal.throwIfAborted();
    return run;
  };

  const signalTree = async (role: string, sig: "STOP" | "CONT"): Promise<number[]> => {
    const c = host(role).container;
    const children = componentChildren(await sh(role).run("sh", ["-c", PROCESS_TABLE]));
    if (sig === "CONT") await engine(role, ["kill", "--signal", sig, c]);
    if (children.length)
      await sh(role).run("sh", ["-c", `kill -s ${sig} ${children.join(" ")} 2>/dev/null || true`]);
    if (sig === "STOP") await engine(role, ["kill", "--signal", sig, c]);
    return [1, ...children];
  };

  const shapeLink = async (role: string, shaping: Shaping, signal: AbortSignal): Promise<string> => {
    const c = host(role).container;
    const script = reshapeScript(shaping);
    const shaper = await inspect(role, `${c}-shaper`);
    const out = shaper?.running
      ? await engine(role, ["exec", "-i", `${c}-shaper`, "sh", "-c", script])
      : await helper(role, ["sh", "-c", script], signal);
    const qdiscs = out
      .split("\n")
      .filter((l) => /^qdisc /.test(l))
      .map((l) => l.replace(/ refcnt \d+/, "").trim());
    return `tc in ${role}'s network namespace (${shaper?.running ? `${c}-shaper` : "a shaper helper"}): ${qdiscs.join("; ") || "no qdisc"}`;
  };

  const exec = (role: string, command: string, signal: AbortSignal): Promise<ExecResult> => {
    const child = sh(role).spawn("sh", ["-c", command]);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (b: Buffer) => {
      if (stdout.length < 65536) stdout += b.toString("utf8");
    });
    child.stderr?.on("data", (b: Buffer) => {
      if (stderr.length < 65536) stderr += b.toString("utf8");
    });
    // the client closes stdin at once (the command reads none) and is SIGKILLed at the step's timeout
    child.stdin?.end();
    const onAbort = (): void => {
      if (child.exitCode === null) child.kill("SIGKILL");
    };
    signal.addEventListener("abort", onAbort, { once: true });
    return new Promise((resolve, reject) => {
      child.once("error", (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      });
      child.once("close", (code) => {
        signal.removeEventListener("abort", onAbort);
        resolve({ exitCode: code, stdout, stderr });
      });
    });
  };

  const stepHost = (role: string): StepHost => {
    const h = host(role);
    return {
      name: role,
      address: h.address,
      controlAddress: "127.0.0.1",
      cgroup: {},
      pid: null,
      container: h.container,
      dataDir: catalog[h.component]?.dataDir ?? "/var/lib/ingestbench",
      pids: async () =>
        (await engine(role, ["top", h.container, "-eo", "pid"]))
          .split("\n")
          .map((l) => Number(l.trim()))
          .filter((n) => Number.isInteger(n) && n > 0),
    };
  };

  return {
    hosts: async () => {
      const out: Record<string, StepHost> = {};
      for (const r of o.roles) {
        const hh = stepHost(r);
        const state = await inspect(r);
        out[r] = { ...hh, pid: state?.running && state.pid > 0 ? state.pid : null };
      }
      return out;
    },
    signal: async (role, action) => {
      const c = host(role).container;
      o.onDisturb(role);
      if (action === "kill") {
        const before = await inspect(role);
        await engine(role, ["kill", "--signal", "KILL", c]);
        stopped.delete(role);
        return `SIGKILL to ${c} (${componentOf(role)} on ${role}${before?.pid ? `, pid ${before.pid} on this machine` : ""}): the container ended`;
      }
      const sig = action === "stop" ? "STOP" : "CONT";
      const pids = await signalTree(role, sig);
      if (action === "stop") stopped.add(role);
      else stopped.delete(role);
      return `SIG${sig} to ${pids.length} process(es) of ${componentOf(role)} in ${c} on ${role} (pids in the container: ${pids.join(", ")})`;
    },
    restart: async (role, signal) => {
      const c = host(role).container;
      o.onDisturb(role);
      const t = performance.now();
      if ((await inspect(role))?.running) await signalTree(role, "CONT").catch(() => []);
      stopped.delete(role);
      await engine(role, ["restart", "--time", "10", c], 120_000);
      const notes: string[] = [];
      const shaper = await inspect(role, `${c}-shaper`);
      if (shaper) {
        // the shaper shares the container's network namespace, which the restart replaced: it joins the new one and
        // shapes it again; a link a network step changed is changed again
        await engine(role, ["restart", "--time", "1", `${c}-shaper`]);
        notes.push("shaper restarted");
        const s = shapes.get(role);
        if (s) notes.push(await shapeLink(role, s, signal));
      }
      // the engine publishes the container's ports anew on each start, maybe at other host ports: the outputs
      // (what the verifier and the claims readers reach) follow (./published.ts)
      notes.push(...(await refreshPublished(o.outputs, role, sh(role))));
      const port = o.readyPort
        ? o.readyPort(role)
        : (o.outputs.endpoints[componentOf(role)] ?? []).find((e) => e.host === role)?.data?.port;
      if (port !== undefined) await waitListening(sh(role), port, 120_000, signal);
      const pid = (await inspect(role))?.pid;
      return `restarted ${c} (${componentOf(role)} on ${role}${pid ? `, pid ${pid} on this machine` : ""}${port !== undefined ? `, port ${port} listening` : ""}) in ${((performance.now() - t) / 1000).toFixed(2)} s${notes.length ? `; ${notes.join("; ")}` : ""}`;
    },
    exec: (role, command, signal) => exec(role, command, signal),
    network: async (role, change) => {
      const next = nextShaping(o.limits[role]?.applied, change, shapes.get(role));
      const line = await shapeLink(role, next, new AbortController().signal);
      shapes.set(role, next);
      return line;
    },
    diskFull: async (role, level, signal) => {
      const dir = stepHost(role).dataDir!;
      signal.throwIfAborted();
      return describeFill(
        await sh(role).run("sh", ["-c", DISK_FILL_SCRIPT, "sh", dir, String(level)], { timeoutMs: 120_000 }),
      );
    },
    dropConnections: async (role, peers, signal) => {
      const lines: string[] = [];
      for (const peer of peers) {
        const address = host(peer).address;
        lines.push(
          describeDrop(role, peer, address, await helper(role, dropConnectionsArgv(address), signal)),
        );
      }
      return lines.join("\n");
    },
    release: async () => {
      for (const role of [...stopped]) {
        await signalTree(role, "CONT").catch(() => []);
        stopped.delete(role);
      }
    },
  };
}
