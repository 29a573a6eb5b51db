/**
 * Which image each host of a docker stack runs: the catalog entry of its component (infra/catalog.ts), as is for
 * `ingestbench:docker.images: upstream` (the default), or its Debian-built variant for `images: debian`
 * (core/catalog.ts imageVariant: the variant the cell's `version` of that component picks, e.g. syslog-ng 3.38 or
 * 4.8, postgres 15 or 17). Used by the Pulumi program (./stack.ts, ./host.ts) and, before anything is deployed, by
 * the harness's image check (harness/provision/images.ts), so both pick the same image.
 */
import { ConfigurationError } from "../../core/errors.ts";
import { catalogEntry, imageRef, imageVariant, type CatalogImage, type ImageSource } from "../catalog.ts";

/** A host's resolved image: the entry it runs and, for Debian-built images, scripts/build-images.sh's name of it. */
export interface ResolvedImage {
  entry: CatalogImage;
  /** `<repository>:<tag>` (and digest, when resolved) */
  ref: string;
  /** the build name for Debian-built images (`bash scripts/build-images.sh <build>`); undefined for upstream */
  build?: string;
}

/**
 * The image of component `name` (a catalog name, "loadgen" or "shaper") on a stack with `source` images, for a
 * cell whose block of that component pins `version` (undefined: none; a non-string is ignored).
 * @throws ConfigurationError E_STACK_FIELD (field `ingestbench:docker.images`) when the component has no
 *         Debian-built image, or none for that version; the message lists the ones there are
 */
export function resolveImage(name: string, source: ImageSource, version: unknown): ResolvedImage {
  const entry = catalogEntry(name);
  try {
    const v = imageVariant(entry, source, typeof version === "string" ? version : undefined);
    const { buildName, ...resolved } = v;
    return {
      entry: resolved,
      ref: imageRef(resolved),
      ...(buildName !== undefined ? { build: buildName } : {}),
    };
  } catch (err) {
    throw new ConfigurationError(
      "E_STACK_FIELD",
      `ingestbench:docker.images is ${source}: ${(err as Error).message}`,
      { field: "ingestbench:docker.images", cause: err },
    );
  }
}

/** The `version` a cell's block of a component pins (`{ version: "15" }`), else undefined. */
export function pinnedVersion(blocks: Readonly<Record<string, unknown>>, component: string): unknown {
  const b = blocks[component];
  return typeof b === "object" && b !== null && !Array.isArray(b)
    ? (b as Record<string, unknown>).version
    : undefined;
}
