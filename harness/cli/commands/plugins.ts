/**
 * `ingestbench plugins [--json]`: every sink and collector of the registry (plugins/registry.ts) with its kind,
 * version, the platforms it runs on (local: the descriptor has a local component; docker and azure: it has an image)
 * and how it has been verified (core/plugin.ts Evidence): real in CI, run once by hand on a named machine, or
 * protocol vectors only. The table fits 100 columns; its words are in pluginsWords, in one place.
 */
import type { CollectorPlugin, Evidence, SinkPlugin } from "../../../core/plugin.ts";
import { allPlugins } from "../../../plugins/registry.ts";
import type { CommandModule } from "../context.ts";

/** A platform a plugin runs on. */
export type PluginPlatform = "local" | "docker" | "azure";

/** One plugin as `plugins` lists it (`--json` prints these). */
export interface PluginRow {
  kind: "sink" | "collector";
  name: string;
  /** the version the evidence speaks of; without one (vectors), the image's pinned version; null when neither */
  version: string | null;
  platforms: PluginPlatform[];
  evidence: Evidence;
  /** the evidence in words, as the table prints it */
  verified: string;
}

/** The words `ingestbench plugins` prints: the table's headers and the evidence levels (one place, for ui/). */
export function pluginsWords(): {
  headers: [string, string, string, string, string];
  none: string;
  evidence(e: Evidence): string;
} {
  return {
    headers: ["kind", "name", "version", "platforms", "verified"],
    none: "–",
    evidence: (e) =>
      e.level === "real-ci"
        ? "real in CI"
        : e.level === "run-once"
          ? `run once on ${e.machine} ${e.date}`
          : "protocol vectors only",
  };
}

/** The rows of `plugins` for `plugins` (default: the registry's, sinks first, in registry order). */
export function pluginRows(plugins: ReadonlyArray<SinkPlugin | CollectorPlugin> = allPlugins): PluginRow[] {
  const words = pluginsWords();
  return plugins.map((p) => ({
    kind: p.kind,
    name: p.name,
    version: p.evidence.level === "vectors" ? (p.image?.version ?? null) : p.evidence.version,
    platforms: [...(p.local ? ["local" as const] : []), ...(p.image ? (["docker", "azure"] as const) : [])],
    evidence: p.evidence,
    verified: words.evidence(p.evidence),
  }));
}

/**
 * The rows as a table of at most `width` columns (default 100): a column per header, two spaces apart; the last
 * column (the evidence) wraps at spaces onto lines of its own, under itself, when a row would be wider.
 */
export function pluginsTable(rows: PluginRow[], width = 100): string {
  const words = pluginsWords();
  const cells = rows.map((r) => [
    r.kind,
    r.name,
    r.version ?? words.none,
    r.platforms.join(", ") || words.none,
    r.verified,
  ]);
  const lead = [0, 1, 2, 3].map((i) => Math.max(words.headers[i]!.length, ...cells.map((c) => c[i]!.length)));
  const indent = lead.reduce((a, w) => a + w + 2, 0);
  const room = Math.max(20, width - indent);
  const line = (c: string[]): string[] => {
    const head = c
      .slice(0, 4)
      .map((s, i) => s.padEnd(lead[i]!))
      .join("  ");
    const parts: string[] = [];
    let cur = "";
    for (const word of c[4]!.split(" ")) {
      if (cur && cur.length + 1 + word.length > room) {
        parts.push(cur);
        cur = word;
      } else cur = cur ? `${cur} ${word}` : word;
    }
    parts.push(cur);
    return [`${head}  ${parts[0]}`, ...parts.slice(1).map((p) => `${" ".repeat(indent)}${p}`)];
  };
  return [...line(words.headers), ...cells.flatMap(line)].map((l) => l.trimEnd()).join("\n");
}

export const registerPlugins: CommandModule = (program, ctx) => {
  program
    .command("plugins")
    .summary("List sinks and collectors: versions, platforms, how verified")
    .description(
      "List every sink and collector: kind, version, platforms (local, docker, azure) and how it has been verified: real in CI, run once by hand on a named machine, or protocol vectors only.",
    )
    .option(
      "--json",
      "print one JSON array on stdout: per plugin { kind, name, version, platforms, evidence: { level, version, machine, date }, verified }",
    )
    .action(
      ctx.action((flags: { json?: boolean }) => {
        const rows = pluginRows();
        if (flags.json) ctx.printJson(rows);
        else ctx.print(pluginsTable(rows));
      }),
    );
};
