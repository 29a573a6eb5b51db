/**
 * The image catalog of the container platforms: every deployable sink and collector's image comes from its plugin
 * (plugins/registry.ts); the platform's own images (loadgen, shaper) are listed here. Shapes and digest rules:
 * core/catalog.ts.
 */
import type { CatalogImage } from "../core/catalog.ts";
import { allPlugins } from "../plugins/registry.ts";
export { DIGEST, heapMiB, imageRef, imageVariant } from "../core/catalog.ts";
export type {
  CatalogBuild,
  CatalogImage,
  CatalogVariant,
  ImageSource,
  CatalogKind,
  CatalogMetrics,
  CatalogPort,
  CatalogUpload,
} from "../core/catalog.ts";

/** The platform's own images: the load generator's runtime and the network shaper of docker hosts. */
const platformImages: CatalogImage[] = [
  {
    name: "loadgen",
    kind: "platform",
    repository: "node",
    tag: "20.18.0-bookworm-slim",
    digest: null,
    version: "20.18.0",
    ports: [],
    dataDir: "/var/lib/ingestbench",
    env: {},
    // the harness execs the generator inside; the container only has to stay up, and to stop on `docker stop`'s
    // SIGTERM (a PID 1 `sleep` ignores it, so every destroy would wait out the grace period)
    command: ["sh", "-c", "trap 'exit 0' TERM INT; sleep infinity & wait"],
    versionCommand: ["node", "--version"],
    debian: [
      {
        repository: "ingestbench/debian-loadgen",
        tag: "20",
        version: "20",
        build: "loadgen",
        about: "trixie's nodejs (20.19)",
      },
    ],
  },
  {
    name: "shaper",
    kind: "platform",
    repository: "nicolaka/netshoot",
    tag: "v0.13",
    digest: null,
    version: "0.13",
    ports: [],
    dataDir: "/tmp",
    env: {},
    versionCommand: ["tc", "-V"],
    debian: [
      {
        repository: "ingestbench/debian-shaper",
        tag: "bookworm",
        version: "6.1",
        build: "shaper",
        about: "bookworm's iproute2 (6.1)",
      },
    ],
  },
];

/** Every image: the plugins' (sinks, then collectors, in registry order), then the platform's own. */
const entries: CatalogImage[] = [...allPlugins.flatMap((p) => (p.image ? [p.image] : [])), ...platformImages];

/** The catalog by name. */
export const catalog: Readonly<Record<string, CatalogImage>> = Object.freeze(
  Object.fromEntries(entries.map((e) => [e.name, e])),
);

/** Names of the components a host may run (sinks and collectors; `loadgen` and `shaper` are the platform's own images). */
export const deployableComponents: readonly string[] = entries
  .filter((e) => e.kind !== "platform")
  .map((e) => e.name);

/** The catalog entry, or an Error listing the known names. */
export function catalogEntry(name: string): CatalogImage {
  const e = catalog[name];
  if (!e) throw new Error(`no component "${name}" in the catalog; known: ${Object.keys(catalog).join(", ")}`);
  return e;
}
