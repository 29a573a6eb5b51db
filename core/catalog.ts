/**
 * Shapes of the image catalog of the container platforms (docker now, azure's cloud-init later): every deployable sink,
 * collector and the load generator's runtime, pinned by image tag and, once resolved, by digest.
 *
 * Digests: this machine has no Docker engine and no registry client, so no digest below has been looked up.
 * `digest` is `null` until someone resolves it with `docker buildx imagetools inspect <repo>:<tag>` (or
 * `crane digest`) for linux/amd64 + arm64 (the index digest) and writes it here; `imageRef()` then yields
 * `<repo>:<tag>@sha256:<64 hex>`, which Docker pulls by digest (the tag is kept for people reading it).
 * test/infra/docker/catalog.test.ts checks that every digest present has that exact format, and lists the
 * unresolved ones. No placeholder digests are written: a made-up digest would fail the pull.
 *
 * Ports, data directories and environment are the images' own documented defaults. `metrics` names each
 * component's own telemetry endpoint (on its "metrics" port, else on its data port); `uploads` are static server
 * settings written into the container (collector configs are rendered per scenario by infra/render/); `build` is an
 * image the docker platform builds itself (a pinned plugin, a patch, a service the pulled image lacks) instead of
 * pulling the entry's image.
 */

export type CatalogKind = "sink" | "collector" | "platform";

export interface CatalogPort {
  /** the port inside the container */
  port: number;
  /** "data" receives the benchmark's events (the first data port is the endpoint's `data`); "metrics" is the component's own telemetry endpoint */
  role: "data" | "metrics" | "control";
  protocol: "tcp" | "udp";
  /** what speaks on it, e.g. "http", "postgres", "forward" */
  scheme: string;
}

/** The component's own telemetry endpoint. */
export interface CatalogMetrics {
  /** HTTP path on the metrics port (or the data port when the entry has no "metrics" port) */
  path: string;
  /** "prometheus" text exposition, or the component's own JSON */
  format: "prometheus" | "json";
  /** what it reports that the observers use */
  about: string;
}

/** A file written into the component's container at creation (docker.Container `uploads`). */
export interface CatalogUpload {
  /** absolute path in the container */
  file: string;
  content: string;
}

/**
 * An image the docker platform builds (@pulumi/docker Image, not pushed) for some pairings, instead of pulling
 * `repository:tag`: e.g. Fluentd with fluent-plugin-griddb and write-up 000's fix for a GridDB sink.
 */
export interface CatalogBuild {
  /** build context, relative to the repository root (holds the Dockerfile) */
  context: string;
  /** local image name and pinned tag given to the build */
  repository: string;
  tag: string;
  /** the sinks this collector needs the built image for (not read when `always`) */
  forSinks: readonly string[];
  /**
   * true: every host running the component runs the built image, whatever it is paired with (a sink whose pulled
   * image lacks what the harness speaks to, e.g. GridDB without its Web API); absent: only the `forSinks` pairings
   */
  always?: boolean;
  /** what the build adds, for people */
  adds: string;
}

export interface CatalogImage {
  /** catalog name, as scenarios name components (`sink: { clickhouse: ... }`) */
  name: string;
  kind: CatalogKind;
  /** image repository, with registry host when not Docker Hub */
  repository: string;
  /** image tag: pins the version for readers; the digest pins the bytes */
  tag: string;
  /** "sha256:<64 hex>" of the image index, or null while unresolved (see the header) */
  digest: string | null;
  /** the version the running component must report (compared by the harness' version probe) */
  version: string;
  ports: CatalogPort[];
  /** where the component keeps its data: a docker volume, or a tmpfs on RAM-disk stacks */
  dataDir: string;
  /** environment for a benchmark setup (auth off, single node); `{heapMiB}` is replaced per host (see heapMiB) */
  env: Record<string, string>;
  /**
   * environment variables whose value is a sink's password (variable → sink name): never written in the catalog;
   * the platforms fill them from the stack's Pulumi config secret `ingestbench:<sink>Password` or the harness's
   * INGESTBENCH_<SINK>_PASSWORD (infra/secrets.ts), as Pulumi secrets
   */
  secretEnv?: Record<string, string>;
  /** command override (after the image's entrypoint); absent = the image's default */
  command?: string[];
  /** whether the component's heap must be sized from the memory cap (JVM): half the cap, as Elastic advises */
  heapFromMemory?: boolean;
  /**
   * how the harness asks a deployed container its version (harness/remote/versions.ts): this command, run inside the
   * container (docker exec / SSH); the first `x.y[.z]` of its output is the running version. null: the image has no
   * command that reports it; the image tag is recorded instead, marked "not probed".
   */
  versionCommand: readonly string[] | null;
  /** the component's own telemetry endpoint; absent: none over HTTP (e.g. PostgreSQL's pg_stat views over SQL) */
  metrics?: CatalogMetrics;
  /** static settings files written into the container */
  uploads?: readonly CatalogUpload[];
  /** an image built by the docker platform for some pairings (see CatalogBuild) */
  build?: CatalogBuild;
  /** sinks the config renderer knows but this image cannot write into, with the reason (deploying one is refused) */
  refuses?: Readonly<Record<string, string>>;
  /** what still has to happen before this entry is usable before a docker or azure stack can deploy it */
  todo?: string;
  /**
   * The Debian-built images of this component (images/debian/, scripts/build-images.sh), for stacks with
   * `ingestbench:docker: { images: debian }`: one per version; a cell's `version` picks one (see imageVariant),
   * the first is the default.
   */
  debian?: readonly CatalogVariant[];
}

/**
 * A Debian-built image of a component: what differs from the entry it belongs to. Absent keys are the entry's;
 * `metrics: null` means the image serves no telemetry endpoint (e.g. ClickHouse 18.16 has no <prometheus> setting).
 * Such an image is never pulled (no registry has it): it must be on the engine, built with
 * `bash scripts/build-images.sh <build>`.
 */
export interface CatalogVariant {
  repository: string;
  tag: string;
  /** the version the running component must report (its first x.y[.z] starts with it) */
  version: string;
  /** scripts/build-images.sh's name of the image (`bash scripts/build-images.sh --list`) */
  build: string;
  versionCommand?: readonly string[] | null;
  ports?: CatalogPort[];
  dataDir?: string;
  env?: Record<string, string>;
  command?: string[];
  uploads?: readonly CatalogUpload[];
  metrics?: CatalogMetrics | null;
  /** what is different about this image, for people */
  about: string;
}

/** Where a docker stack's images come from: the entries' upstream images, or the Debian-built ones. */
export type ImageSource = "upstream" | "debian";

/** "15" is met by "15", "15.18"; "3.38" by "3.38.1"; not "3.380" (the deployed pin rule, harness/remote/versions.ts). */
/**
 * A pin rule for deployed components: the running version equals the pin or extends it by more parts
 * ("25.8" is met by "25.8.2"; "1.12.0" by "1.12.0"; "3.38" not by "3.380").
 */
export function matchesImagePin(pinned: string, running: string): boolean {
  const bare = running.replace(/ \(.*\)$/, "");
  return bare === pinned || bare.startsWith(`${pinned}.`);
}

function extendsVersion(base: string, v: string): boolean {
  return v === base || v.startsWith(`${base}.`);
}

/**
 * The entry a host runs: `entry` itself for upstream images; for Debian-built ones the variant whose version the
 * cell's `version` pin extends or is extended by (pin "15.18" or "15" → variant "15"), or the first variant when
 * the cell pins none. The result has no `debian` list and carries `buildName` (scripts/build-images.sh's name) for messages.
 * @throws Error naming the versions there are, when the pin matches no variant or the entry has none
 */
export function imageVariant(
  entry: CatalogImage,
  source: ImageSource,
  version?: string,
): CatalogImage & { buildName?: string } {
  const { debian, ...base } = entry;
  if (source === "upstream") return base;
  if (!debian || debian.length === 0)
    throw new Error(`${entry.name} has no Debian-built image (images/debian/README.md lists them)`);
  const v =
    version === undefined
      ? debian[0]!
      : debian.find((d) => extendsVersion(d.version, version) || extendsVersion(version, d.version));
  if (!v) {
    throw new Error(
      `${entry.name} version "${version}" has no Debian-built image: there are ${debian.map((d) => `${d.version} (${d.repository}:${d.tag})`).join(", ")}`,
    );
  }
  const { build, about: _about, metrics, ...over } = v;
  const out: CatalogImage & { buildName?: string } = { ...base, ...over, digest: null, buildName: build };
  if (metrics === null) delete out.metrics;
  else if (metrics !== undefined) out.metrics = metrics;
  delete out.build; // the Debian image is run as it is (no pairing build on top)
  delete out.todo;
  return out;
}

/** Format of a resolved digest. */
export const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** `<repository>:<tag>@<digest>`, or `<repository>:<tag>` while the digest is unresolved. */
export function imageRef(e: CatalogImage): string {
  return e.digest === null ? `${e.repository}:${e.tag}` : `${e.repository}:${e.tag}@${e.digest}`;
}

/** JVM heap for a memory cap: half of it (Elastic's advice), at most 31 GiB (compressed oops), at least 256 MiB. */
export function heapMiB(memoryBytes: number | undefined): number {
  if (memoryBytes === undefined) return 1024;
  return Math.max(256, Math.min(31 * 1024, Math.floor(memoryBytes / 2 / 1024 ** 2)));
}
