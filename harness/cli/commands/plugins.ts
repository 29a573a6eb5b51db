/**
 * `ingestbench plugins [--json]`: the sinks and collectors of plugins/registry.ts as a table: kind, the platforms
 * each runs on (local: it has a local component; docker and azure: it has an image) and the versions of its images
 * (the upstream one and the Debian-built ones), each with its one-line `about` under it.
 */
import { collectors, sinks } from "../../../plugins/registry.ts";
import type { CollectorPlugin, SinkPlugin } from "../../../core/plugin.ts";
import type { CommandModule } from "../context.ts";

/** One plugin as `plugins --json` prints it. */
export interface PluginEntry {
  name: string;
  kind: "sink" | "collector";
  platforms: Array<"local" | "docker" | "azure">;
  /** the container image's version (docker, azure), or null when it runs locally only */
  image: string | null;
  /** the Debian-built images' versions (images/debian), in the catalog's order */
  debian: string[];
  about: string;
}

/** Every registered plugin, sinks first, in registry order. */
export function pluginEntries(): PluginEntry[] {
  const all: Array<SinkPlugin | CollectorPlugin> = [...Object.values(sinks), ...Object.values(collectors)];
  return all.map((p) => ({
    name: p.name,
    kind: p.kind,
    platforms: [...(p.local ? (["local"] as const) : []), ...(p.image ? (["docker", "azure"] as const) : [])],
    image: p.image?.version ?? null,
    debian: (p.image?.debian ?? []).map((d) => d.version),
    about: p.about,
  }));
}

/** `text` cut at spaces into lines of at most `width` columns, each starting with `indent`. */
function wrap(text: string, width: number, indent: string): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && [...`${indent}${line} ${word}`].length > width) {
      out.push(`${indent}${line}`);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(`${indent}${line}`);
  return out;
}

/** The plugins as a table of at most `width` columns: a row per plugin, its `about` wrapped under it. */
export function pluginsTable(entries: readonly PluginEntry[], width = 100): string {
  const head = ["plugin", "kind", "platforms", "image", "Debian-built images"];
  const rows = entries.map((e) => [
    e.name,
    e.kind,
    e.platforms.join(", "),
    e.image ?? "–",
    e.debian.join(", ") || "–",
  ]);
  const widths = head.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...r[i]!].length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const out = [line(head)];
  entries.forEach((e, i) => out.push(line(rows[i]!), ...wrap(e.about, width, "  ")));
  out.push("Where each stands (real in CI or not): README.md; the plugin layout: plugins/README.md.");
  return out.join("\n");
}

export const registerPlugins: CommandModule = (program, ctx) => {
  program
    .command("plugins")
    .summary("List the sinks and collectors, their platforms and versions")
    .description(
      "List the sink and collector plugins (plugins/registry.ts) as a table: the platforms each runs on (local: a local component; docker and azure: an image), its image's version and the Debian-built images' versions, and what it is.",
    )
    .option(
      "--json",
      "print one JSON array on stdout: per plugin { name, kind, platforms, image, debian, about }",
    )
    .action(
      ctx.action((flags: { json?: boolean }) => {
        const entries = pluginEntries();
        if (flags.json) ctx.printJson(entries);
        else ctx.print(pluginsTable(entries));
      }),
    );
};
