/**
 * The ENGINE MODE of the Pulumi CLI stand-in (test/helpers/pulumi-cli-stand-in.mjs): `pulumi up` runs this
 * project's Pulumi program (infra/index.ts) under Pulumi's own mocks (`pulumi.runtime.setMocks`), and the mocks'
 * `newResource` creates each @pulumi/docker resource for real on the Docker engine DOCKER_HOST names, through the
 * Engine API (dockerode), following the provider's documented semantics field by field; it returns the state the
 * provider would (ids, the ports with their external port, ...), so the program's outputs are real. `destroy`
 * removes exactly what `up` created, in reverse order (the list is in the stand-in's state file, written after
 * every resource, so a killed `up` leaves a list to destroy).
 *
 * What a real `pulumi up` does differently: the Pulumi engine and the bridged Terraform provider
 * (terraform-provider-docker inside pulumi-docker) are not run; this table is their stand-in. A second `up` of a
 * stack (a cell with other config) destroys everything and creates it anew, where Pulumi would diff and replace
 * only what changed. Deletion runs as Pulumi orders it, dependents first, independent resources in parallel:
 * containers sharing another's network namespace, then the other containers, then volumes, networks and images.
 *
 * | @pulumi/docker input                          | Engine API (dockerode)                                             |
 * |-----------------------------------------------|--------------------------------------------------------------------|
 * | Network name, driver, internal, attachable     | POST /networks/create Name, Driver, Internal, Attachable           |
 * | Network ipamConfigs[{subnet,gateway,ipRange}]  | IPAM { Driver: ipamDriver ?? "default", Config[{Subnet,Gateway,IPRange}] } |
 * | Network labels[{label,value}], options         | Labels {label: value}, Options                                     |
 * | RemoteImage name, keepLocally                  | GET /images/{name}/json: must exist (no registry here); removed on destroy unless keepLocally |
 * | Image imageName, build{context,dockerfile,args}| POST /build (context as tar, t=imageName, dockerfile relative to it, buildargs); skipPush: nothing pushed; the image is removed on destroy |
 * | Volume name, driver, driverOpts, labels        | POST /volumes/create Name, Driver, DriverOpts, Labels              |
 * | Container name, hostname, image, user, workingDir | Name, Hostname, Image, User, WorkingDir                         |
 * | entrypoints / command / envs                   | Entrypoint / Cmd / Env ["K=V"]                                     |
 * | memory, memorySwap (MB: × 1024 × 1024)         | HostConfig.Memory, MemorySwap (-1 stays -1)                        |
 * | cpuShares; cpuPeriod, cpuQuota (µs); cpus      | CpuShares; CpuPeriod, CpuQuota; NanoCpus = cpus × 1e9 (then period/quota are ignored, as documented) |
 * | cpuSet                                         | CpusetCpus                                                         |
 * | deviceRead/WriteIops, deviceRead/WriteBps [{path,rate}] | BlkioDeviceReadIOps/WriteIOps/ReadBps/WriteBps [{Path,Rate}] |
 * | capabilities {adds, drops}                     | CapAdd, CapDrop                                                    |
 * | tmpfs {dir: options}                           | HostConfig.Tmpfs                                                   |
 * | mounts [{type,source,target,readOnly}]         | HostConfig.Mounts [{Type,Source,Target,ReadOnly}]                  |
 * | labels [{label,value}]                         | Labels                                                             |
 * | ports [{internal,external?,ip,protocol}]       | ExposedPorts "<internal>/<protocol>", PortBindings [{HostIp: ip ?? "0.0.0.0", HostPort: external ?? "" (engine picks)}] |
 * | networksAdvanced [{name,ipv4Address,aliases}]  | the first: NetworkingConfig.EndpointsConfig {IPAMConfig.IPv4Address, Aliases} + NetworkMode; others: POST /networks/{id}/connect before start |
 * | networkMode "container:<name>"                 | HostConfig.NetworkMode                                             |
 * | restart ("no" default), mustRun (true default) | RestartPolicy.Name; after start the container must be running, else the create fails with its log tail |
 * | uploads [{file, content / contentBase64, executable}] | PUT /containers/{id}/archive at "/" (a tar of the files, 0644 or 0755) before start |
 * | destroyGraceSeconds, removeVolumes (true)      | on destroy: POST /stop?t=, DELETE ?force=1&v=removeVolumes         |
 * | (state) ports[].external, networkData          | from GET /containers/{id}/json after start: NetworkSettings.Ports, Networks |
 *
 * Any other Container input the program sets is refused ("not translated"), so a new argument cannot be dropped
 * silently. Run as `node --import tsx test/helpers/pulumi-engine.ts up|destroy <state.json> <stack>`.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Docker from "dockerode";
import type * as PulumiSdk from "@pulumi/pulumi";
import { parse as parseYaml } from "yaml";

const MB = 1024 * 1024;

/** One resource the engine mode created, as its state file records it. */
export interface EngineResource {
  kind: "network" | "volume" | "container" | "image";
  /** the Pulumi resource name */
  name: string;
  /** engine id or name */
  id: string;
  /** containers: stop timeout (s) and whether to remove anonymous volumes; images: keep them */
  graceSeconds?: number;
  removeVolumes?: boolean;
  /** a container in another container's network namespace (networkMode container:<name>): removed before the others */
  sharesNetwork?: boolean;
  keep?: boolean;
}

type Inputs = Record<string, any>;

const labelsOf = (l: Array<{ label: string; value: string }> | undefined): Record<string, string> =>
  Object.fromEntries((l ?? []).map((x) => [x.label, x.value]));

const rates = (l: Array<{ path: string; rate: number }> | undefined) =>
  l?.map((d) => ({ Path: d.path, Rate: d.rate }));

/** A ustar archive of `files` (path without leading "/", content, mode): what PUT /archive extracts. */
export function tarOf(files: Array<{ path: string; content: Buffer; mode: number }>): Buffer {
  const blocks: Buffer[] = [];
  for (const f of files) {
    const h = Buffer.alloc(512);
    let name = f.path;
    let prefix = "";
    if (Buffer.byteLength(name) > 100) {
      const cut = name.lastIndexOf("/", 155);
      prefix = name.slice(0, cut);
      name = name.slice(cut + 1);
    }
    const put = (s: string, off: number, len: number) => h.write(s, off, len, "utf8");
    const oct = (n: number, len: number) => n.toString(8).padStart(len - 1, "0") + "\0";
    put(name, 0, 100);
    put(oct(f.mode, 8), 100, 8);
    put(oct(0, 8), 108, 8);
    put(oct(0, 8), 116, 8);
    put(oct(f.content.length, 12), 124, 12);
    put(oct(Math.floor(Date.now() / 1000), 12), 136, 12);
    put("        ", 148, 8);
    put("0", 156, 1);
    put("ustar\u000000", 257, 8);
    put(prefix, 345, 155);
    let sum = 0;
    for (const b of h) sum += b;
    put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
    blocks.push(h, f.content, Buffer.alloc((512 - (f.content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** How Pulumi's mocks hand a secret input: { [SECRET_SIG]: SECRET_VALUE, value } (@pulumi/pulumi runtime/rpc.js specialSigKey, specialSecretSig). */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270";

/** `v` with every secret-wrapped value replaced by its plain value (the engine gets what a real provider would send). */
export function unsecret(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unsecret);
  if (v === null || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  if (o[SECRET_SIG] === SECRET_VALUE) return unsecret(o.value);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, unsecret(x)]));
}

/** Container inputs this module translates (see the table), or that carry no engine setting (pulumi bookkeeping). */
const CONTAINER_KEYS = new Set([
  "name",
  "hostname",
  "image",
  "user",
  "workingDir",
  "entrypoints",
  "command",
  "envs",
  "memory",
  "memorySwap",
  "cpuShares",
  "cpuPeriod",
  "cpuQuota",
  "cpus",
  "cpuSet",
  "deviceReadIops",
  "deviceWriteIops",
  "deviceReadBps",
  "deviceWriteBps",
  "capabilities",
  "tmpfs",
  "mounts",
  "labels",
  "ports",
  "networksAdvanced",
  "networkMode",
  "restart",
  "mustRun",
  "uploads",
  "destroyGraceSeconds",
  "removeVolumes",
]);

/** The Engine API body of `docker.Container` inputs (the table's Container rows up to networkMode). */
export function containerBody(i: Inputs): Docker.ContainerCreateOptions {
  const unknown = Object.keys(i).filter((k) => !CONTAINER_KEYS.has(k) && i[k] !== undefined);
  if (unknown.length > 0)
    throw new Error(
      `container ${i.name}: inputs not translated by the engine stand-in: ${unknown.join(", ")}`,
    );
  const ports = (i.ports ?? []) as Array<{
    internal: number;
    external?: number;
    ip?: string;
    protocol?: string;
  }>;
  const nets = (i.networksAdvanced ?? []) as Array<{
    name: string;
    ipv4Address?: string;
    aliases?: string[];
  }>;
  const hc: Docker.HostConfig = {
    RestartPolicy: { Name: i.restart ?? "no" },
    PortBindings: Object.fromEntries(
      ports.map((p) => [
        `${p.internal}/${p.protocol ?? "tcp"}`,
        [{ HostIp: p.ip ?? "0.0.0.0", HostPort: p.external === undefined ? "" : String(p.external) }],
      ]),
    ),
  };
  if (i.memory !== undefined) hc.Memory = i.memory * MB;
  if (i.memorySwap !== undefined) hc.MemorySwap = i.memorySwap === -1 ? -1 : i.memorySwap * MB;
  if (i.cpuShares !== undefined) hc.CpuShares = i.cpuShares;
  if (i.cpus !== undefined) hc.NanoCpus = Math.round(Number(i.cpus) * 1e9);
  else {
    if (i.cpuPeriod !== undefined) hc.CpuPeriod = i.cpuPeriod;
    if (i.cpuQuota !== undefined) hc.CpuQuota = i.cpuQuota;
  }
  if (i.cpuSet !== undefined) hc.CpusetCpus = i.cpuSet;
  if (i.deviceReadIops) hc.BlkioDeviceReadIOps = rates(i.deviceReadIops);
  if (i.deviceWriteIops) hc.BlkioDeviceWriteIOps = rates(i.deviceWriteIops);
  if (i.deviceReadBps) hc.BlkioDeviceReadBps = rates(i.deviceReadBps);
  if (i.deviceWriteBps) hc.BlkioDeviceWriteBps = rates(i.deviceWriteBps);
  if (i.capabilities?.adds) hc.CapAdd = i.capabilities.adds;
  if (i.capabilities?.drops) hc.CapDrop = i.capabilities.drops;
  if (i.tmpfs) hc.Tmpfs = i.tmpfs;
  if (i.mounts)
    hc.Mounts = (i.mounts as Inputs[]).map((m) => ({
      Type: m.type,
      Source: m.source,
      Target: m.target,
      ...(m.readOnly ? { ReadOnly: true } : {}),
    }));
  if (i.networkMode) hc.NetworkMode = i.networkMode;
  const first = nets[0];
  if (first) hc.NetworkMode = first.name;
  const body: Docker.ContainerCreateOptions = {
    name: i.name,
    Image: i.image,
    Labels: labelsOf(i.labels),
    Env: i.envs ?? [],
    ExposedPorts: Object.fromEntries(ports.map((p) => [`${p.internal}/${p.protocol ?? "tcp"}`, {}])),
    HostConfig: hc,
  };
  if (i.hostname) body.Hostname = i.hostname;
  if (i.user) body.User = i.user;
  if (i.workingDir) body.WorkingDir = i.workingDir;
  if (i.entrypoints) body.Entrypoint = i.entrypoints;
  if (i.command) body.Cmd = i.command;
  if (first) {
    body.NetworkingConfig = {
      EndpointsConfig: {
        [first.name]: {
          ...(first.ipv4Address ? { IPAMConfig: { IPv4Address: first.ipv4Address } } : {}),
          Aliases: first.aliases ?? [],
        },
      },
    };
  }
  return body;
}

function listFiles(root: string, dir = ""): string[] {
  return readdirSync(path.join(root, dir)).flatMap((f) => {
    const rel = dir ? `${dir}/${f}` : f;
    return statSync(path.join(root, rel)).isDirectory() ? listFiles(root, rel) : [rel];
  });
}

/** What the mocks' newResource does per docker type; `record` is called once the resource exists. */
export class DockerEngineTranslator {
  constructor(
    private readonly docker: Docker,
    private readonly record: (r: EngineResource) => void,
    private readonly log: (line: string) => void,
  ) {}

  async create(type: string, name: string, i: Inputs): Promise<{ id: string; state: Inputs }> {
    switch (type) {
      case "docker:index/network:Network": {
        const ipam = (i.ipamConfigs ?? []) as Inputs[];
        const net = await this.docker.createNetwork({
          Name: i.name ?? name,
          Driver: i.driver ?? "bridge",
          CheckDuplicate: true,
          Internal: Boolean(i.internal),
          Attachable: Boolean(i.attachable),
          Labels: labelsOf(i.labels),
          ...(i.options ? { Options: i.options } : {}),
          IPAM: {
            Driver: i.ipamDriver ?? "default",
            Config: ipam.map((c) => ({
              ...(c.subnet ? { Subnet: c.subnet } : {}),
              ...(c.gateway ? { Gateway: c.gateway } : {}),
              ...(c.ipRange ? { IPRange: c.ipRange } : {}),
            })),
          },
        });
        this.record({ kind: "network", name, id: net.id });
        this.log(`+ docker:Network ${i.name} (${ipam.map((c) => c.subnet).join(", ")})`);
        return { id: net.id, state: { ...i, name: i.name ?? name } };
      }
      case "docker:index/volume:Volume": {
        const v = await this.docker.createVolume({
          Name: i.name ?? name,
          Labels: labelsOf(i.labels),
          ...(i.driver ? { Driver: i.driver } : {}),
          ...(i.driverOpts ? { DriverOpts: i.driverOpts } : {}),
        });
        const vname =
          (v as unknown as { name?: string; Name?: string }).Name ?? (v as unknown as { name: string }).name;
        this.record({ kind: "volume", name, id: vname });
        this.log(`+ docker:Volume ${vname}`);
        return { id: vname, state: { ...i, name: vname } };
      }
      case "docker:index/remoteImage:RemoteImage": {
        let info: Docker.ImageInspectInfo;
        try {
          info = await this.docker.getImage(i.name).inspect();
        } catch (err) {
          throw new Error(
            `image ${i.name} is not on the engine (${process.env.DOCKER_HOST ?? "default socket"}) and no registry is reachable here: ${(err as Error).message}`,
          );
        }
        if (!i.keepLocally) this.record({ kind: "image", name, id: i.name, keep: false });
        this.log(`+ docker:RemoteImage ${i.name} (present: ${info.Id.slice(0, 19)})`);
        return {
          id: `${info.Id}${i.name}`,
          state: { ...i, imageId: info.Id, repoDigest: info.RepoDigests?.[0] ?? "" },
        };
      }
      case "docker:index/image:Image": {
        const ctx = i.build?.context as string;
        const dockerfile = path.relative(ctx, i.build?.dockerfile ?? path.join(ctx, "Dockerfile"));
        const buildargs = i.build?.args ?? {};
        const stream = await this.docker.buildImage(
          { context: ctx, src: listFiles(ctx) },
          { t: i.imageName, dockerfile, buildargs, forcerm: true },
        );
        await new Promise<void>((resolve, reject) =>
          this.docker.modem.followProgress(stream, (err: Error | null, out: Array<{ error?: string }>) => {
            const failed = err ?? out.find((o) => o.error);
            if (failed)
              reject(
                new Error(
                  `build of ${i.imageName}: ${err ? err.message : (failed as { error: string }).error}`,
                ),
              );
            else resolve();
          }),
        );
        const info = await this.docker.getImage(i.imageName).inspect();
        this.record({ kind: "image", name, id: i.imageName, keep: false });
        this.log(`+ docker:Image ${i.imageName} built from ${ctx}`);
        return { id: info.Id, state: { ...i, repoDigest: "", baseImageName: i.imageName } };
      }
      case "docker:index/container:Container":
        return this.container(name, i);
      default:
        throw new Error(`resource type ${type} (${name}) is not translated by the engine stand-in`);
    }
  }

  private async container(name: string, i: Inputs): Promise<{ id: string; state: Inputs }> {
    const c = await this.docker.createContainer(containerBody(i));
    this.record({
      kind: "container",
      name,
      id: c.id,
      graceSeconds: i.destroyGraceSeconds ?? 0,
      removeVolumes: i.removeVolumes ?? true,
      ...(String(i.networkMode ?? "").startsWith("container:") ? { sharesNetwork: true } : {}),
    });
    const nets = (i.networksAdvanced ?? []) as Array<{
      name: string;
      ipv4Address?: string;
      aliases?: string[];
    }>;
    for (const n of nets.slice(1)) {
      await this.docker.getNetwork(n.name).connect({
        Container: c.id,
        EndpointConfig: {
          ...(n.ipv4Address ? { IPAMConfig: { IPv4Address: n.ipv4Address } } : {}),
          Aliases: n.aliases ?? [],
        },
      });
    }
    const uploads = (i.uploads ?? []) as Inputs[];
    if (uploads.length > 0) {
      const files = uploads.map((u) => ({
        path: String(u.file).replace(/^\/+/, ""),
        content:
          u.contentBase64 !== undefined
            ? Buffer.from(u.contentBase64, "base64")
            : Buffer.from(String(u.content ?? ""), "utf8"),
        mode: u.executable ? 0o755 : 0o644,
      }));
      await c.putArchive(tarOf(files), { path: "/" });
    }
    await c.start();
    let info = await c.inspect();
    if (i.mustRun ?? true) {
      await new Promise((r) => setTimeout(r, 300));
      info = await c.inspect();
      if (!info.State.Running) {
        const logs = (await c.logs({ stdout: true, stderr: true, tail: 20 }))
          .toString("utf8")
          .replace(/[\x00-\x08]/g, "");
        throw new Error(
          `container ${i.name} is not running after start (exit code ${info.State.ExitCode}, must_run): ${logs.trim()}`,
        );
      }
    }
    const bound = info.NetworkSettings.Ports ?? {};
    const ports = ((i.ports ?? []) as Inputs[]).map((p) => {
      const b = bound[`${p.internal}/${p.protocol ?? "tcp"}`]?.[0];
      return {
        ...p,
        internal: p.internal as number,
        protocol: p.protocol ?? "tcp",
        ip: b?.HostIp ?? p.ip,
        external: b ? Number(b.HostPort) : p.external,
      };
    });
    const networkData = Object.entries(info.NetworkSettings.Networks ?? {}).map(([networkName, n]) => ({
      networkName,
      ipAddress: n.IPAddress,
      gateway: n.Gateway,
      macAddress: n.MacAddress,
    }));
    this.log(
      `+ docker:Container ${i.name} (${c.id.slice(0, 12)})${ports.length ? ` ports ${ports.map((p) => `${p.internal}→${p.ip}:${p.external}`).join(", ")}` : ""}`,
    );
    return { id: c.id, state: { ...i, ports, networkData, containerLogs: "" } };
  }

  /** Remove `r` (a missing one is already gone). */
  async remove(r: EngineResource): Promise<void> {
    const gone = (err: unknown) => (err as { statusCode?: number }).statusCode === 404;
    try {
      if (r.kind === "container") {
        const c = this.docker.getContainer(r.id);
        await c.stop({ t: r.graceSeconds ?? 0 }).catch((err) => {
          if (!gone(err) && (err as { statusCode?: number }).statusCode !== 304) throw err;
        });
        await c.remove({ force: true, v: r.removeVolumes ?? true });
      } else if (r.kind === "network") await this.docker.getNetwork(r.id).remove();
      else if (r.kind === "volume") await this.docker.getVolume(r.id).remove();
      else if (r.kind === "image" && !r.keep) await this.docker.getImage(r.id).remove();
      this.log(`- ${r.kind} ${r.name}`);
    } catch (err) {
      if (!gone(err)) throw err;
    }
  }
}

/**
 * The config a program run sees, as the Pulumi CLI assembles it: the stack file's `config:` (stacks/Pulumi.<S>.yaml,
 * Pulumi.yaml `stackConfigDir`), then the values `config set-all --path` set, whose keys may be paths
 * (`ingestbench:components.sink`: the key `sink` inside the object `ingestbench:components`); objects are handed to
 * the program as JSON text, scalars as strings.
 */
export function programConfig(
  stackFile: string,
  set: Record<string, string>,
  configFileText?: string,
): Record<string, string> {
  // `--config-file F` (the stand-in keeps F's text): the CLI reads F instead of the stack file
  const doc = (parseYaml(configFileText ?? readFileSync(stackFile, "utf8")) ?? {}) as {
    config?: Record<string, unknown>;
  };
  const config: Record<string, unknown> = structuredClone(doc.config ?? {});
  for (const [key, value] of Object.entries(set)) {
    const colon = key.indexOf(":");
    const [top, ...rest] = key.slice(colon + 1).split(".");
    const name = `${key.slice(0, colon + 1)}${top}`;
    if (rest.length === 0) {
      config[name] = value;
      continue;
    }
    let o = (config[name] =
      typeof config[name] === "object" && config[name] !== null ? config[name] : {}) as Record<
      string,
      unknown
    >;
    for (const p of rest.slice(0, -1))
      o = (o[p] = typeof o[p] === "object" && o[p] !== null ? o[p] : {}) as Record<string, unknown>;
    o[rest[rest.length - 1]!] = value;
  }
  return Object.fromEntries(
    Object.entries(config).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/** The stand-in's state file, as far as engine mode reads and writes it. */
interface StateFile {
  engine: { projectDir: string };
  stacks: Record<
    string,
    {
      config: Record<string, string>;
      outputs: Record<string, unknown>;
      resourceCount?: number;
      created?: EngineResource[];
      configFile?: { path: string; text: string };
    }
  >;
}

async function main(): Promise<void> {
  const [verb, statePath, stackName] = process.argv.slice(2) as [string, string, string];
  const load = (): StateFile => JSON.parse(readFileSync(statePath, "utf8")) as StateFile;
  const mutate = (f: (st: StateFile["stacks"][string]) => void) => {
    const s = load();
    f(s.stacks[stackName]!);
    writeFileSync(statePath, JSON.stringify(s, null, 2));
  };
  const docker = new Docker();
  const log = (l: string) => process.stdout.write(`${l}\n`);
  const translator = new DockerEngineTranslator(
    docker,
    (r) =>
      mutate((st) => {
        (st.created ??= []).push(r);
      }),
    log,
  );
  const destroyAll = async () => {
    const created = [...(load().stacks[stackName]!.created ?? [])];
    const waves = [
      created.filter((r) => r.kind === "container" && r.sharesNetwork),
      created.filter((r) => r.kind === "container" && !r.sharesNetwork),
      created.filter((r) => r.kind === "volume"),
      created.filter((r) => r.kind === "network" || r.kind === "image"),
    ];
    for (const wave of waves) {
      await Promise.all(wave.map((r) => translator.remove(r)));
      mutate((st) => {
        st.created = (st.created ?? []).filter((x) => !wave.some((r) => x.kind === r.kind && x.id === r.id));
      });
    }
    mutate((st) => {
      st.outputs = {};
      st.resourceCount = 0;
    });
  };
  if (verb === "destroy") return destroyAll();
  if (verb !== "up") throw new Error(`engine mode: unsupported verb ${verb}`);
  // loaded for `up` only: `destroy` needs the engine alone, and the SDK costs about a second of CPU to load
  const pulumi: typeof PulumiSdk = await import("@pulumi/pulumi");
  await destroyAll(); // a re-deploy replaces everything (see the header)
  const state = load();
  let failure: unknown;
  process.on("unhandledRejection", (err) => {
    failure ??= err;
  });
  await pulumi.runtime.setMocks(
    {
      newResource: async (a) => {
        if (!a.custom) return { id: "", state: a.inputs };
        if (failure) throw new Error("an earlier resource failed");
        try {
          return await translator.create(a.type, a.name, unsecret(a.inputs) as Inputs);
        } catch (err) {
          failure ??= err;
          throw err;
        }
      },
      call: () => ({}),
    },
    "ingestbench",
    stackName,
    false,
  );
  const st = state.stacks[stackName]!;
  pulumi.runtime.setAllConfig(
    programConfig(
      path.join(state.engine.projectDir, "stacks", `Pulumi.${stackName}.yaml`),
      st.config,
      st.configFile?.text,
    ),
  );
  const program = (await import(
    pathToFileURL(path.join(state.engine.projectDir, "infra/index.ts")).href
  )) as Record<string, PulumiSdk.Output<unknown>>;
  const outputs: Record<string, unknown> = {};
  try {
    for (const [k, o] of Object.entries(program)) {
      if (pulumi.Output.isInstance(o))
        outputs[k] = await (o as unknown as { promise(): Promise<unknown> }).promise();
    }
    await pulumi.runtime.disconnect();
  } catch (err) {
    failure ??= err;
  }
  if (failure) throw failure;
  for (const k of Object.keys(outputs)) if (outputs[k] === undefined) delete outputs[k];
  mutate((st) => {
    st.outputs = outputs;
    st.resourceCount = st.created?.length ?? 0;
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.on("SIGINT", () => {
    process.stderr.write("^C received; cancelling the current operation.\nerror: update canceled\n");
    process.exit(255);
  });
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`error: ${(err as Error).message ?? String(err)}\n`);
      process.exit(255);
    },
  );
}
