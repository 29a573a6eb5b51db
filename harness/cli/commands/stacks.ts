/**
 * `ingestbench stacks [--json]`: list the stacks in stacks/ as a table (stacksTable): per stack its platform, per host
 * its caps in units (CPU cores, memory, disk IOPS and MiB/s or tmpfs, network rate and delay) and, on azure, its VM
 * size. --json prints each host's requested limits as the stack file gives them. A broken stack file is reported, the
 * others listed, and the exit code is 2.
 */
import { IngestbenchError } from "../../../core/errors.ts";
import { listStacks, loadPulumiStack, loadStack } from "../../../infra/stack/schema.ts";
import type { HostLimits, StackSpec } from "../../../core/limits.ts";
import { VM_SIZES, type VmSizeName } from "../../../infra/azure/sizes.ts";
import { thisMachine } from "../../../infra/local/platform.ts";
import { stackCapsFit } from "../../results/caps.ts";
import { EXIT, type CommandModule } from "../context.ts";

/** How a stack's caps fit this machine, as `stacks` and `validate` show it (local and docker stacks). */
export interface StackFit {
  /** every host of the stack running at once (a collector host only runs for scenarios with a collector) */
  oversubscribed: boolean;
  reasons: string[];
  /** per host, its caps at or above this machine: "uncapped (≥ machine)" */
  uncapped: Record<string, string[]>;
  machine: { cores: number; memoryBytes: number };
}

/**
 * The caps of all of a stack's hosts against this machine (harness/results/caps.ts stackCapsFit); undefined for
 * azure stacks, whose hosts are VMs of their own. A flag, not an error: such a stack still runs, its runs flagged
 * `oversubscribed` (docs/decisions/0008-oversubscribed-stacks-are-flagged.md).
 */
export function stackFit(stack: StackSpec): StackFit | undefined {
  const fit = stackCapsFit(stack, Object.keys(stack.hosts), thisMachine());
  return (
    fit && {
      oversubscribed: fit.oversubscribed,
      reasons: fit.reasons,
      uncapped: fit.uncapped,
      machine: fit.machine,
    }
  );
}

/** The fit as one line of text ("" when the caps fit and none is at or above the machine). */
export function stackFitText(fit: StackFit | undefined): string {
  if (!fit) return "";
  const parts: string[] = [];
  const m = `${fit.machine.cores} cores, ${(fit.machine.memoryBytes / 2 ** 30).toFixed(1)} GiB`;
  if (fit.oversubscribed) parts.push(`oversubscribed on this machine (${m}): ${fit.reasons.join("; ")}`);
  for (const [h, us] of Object.entries(fit.uncapped))
    parts.push(`${h} uncapped (≥ machine): ${us.join("; ")}`);
  return parts.join("; ");
}

/** One stack as `stacks --json` prints it: a valid one with its hosts, or a broken one with its error. */
export type StackEntry =
  | {
      name: string;
      ok: true;
      platform: string;
      hosts: Array<{ name: string; vmSize: string | null; requested: Record<string, unknown> }>;
      fit?: StackFit;
    }
  | { name: string; ok: false; error: string };

/** Every stack of `stacksDir`, in name order. Only IngestbenchErrors make a stack broken; others propagate. */
export function stackEntries(stacksDir: string): StackEntry[] {
  return stackListing(stacksDir).map((l) => l.entry);
}

/** A stack as the table shows it: its entry, and each host's parsed limits (by host name) when it loaded. */
export interface StackListing {
  entry: StackEntry;
  limits: Record<string, HostLimits>;
}

/** Every stack of `stacksDir` with its hosts' parsed limits (stackEntries' entries, in name order). */
export function stackListing(stacksDir: string): StackListing[] {
  return listStacks(stacksDir).map((name): StackListing => {
    try {
      const s = loadStack(name, stacksDir);
      // an azure host's hardware is its VM size (with the caps in its stack file on top)
      const vmSizes =
        s.platform === "azure" ? (loadPulumiStack(name, stacksDir).platform.azure?.vmSizes ?? {}) : {};
      const fit = stackFit(s);
      const entry: StackEntry = {
        name,
        ok: true,
        platform: s.platform,
        hosts: Object.values(s.hosts).map((h) => ({
          name: h.name,
          vmSize: vmSizes[h.name] ?? null,
          requested: h.requested,
        })),
        ...(fit ? { fit } : {}),
      };
      return { entry, limits: Object.fromEntries(Object.values(s.hosts).map((h) => [h.name, h.limits])) };
    } catch (err) {
      if (!(err instanceof IngestbenchError)) throw err;
      return { entry: { name, ok: false, error: err.message }, limits: {} };
    }
  });
}

/** A number in the largest unit it reaches, at most one decimal, no trailing ".0": 125829120, 1024 → "120 MiB". */
function inUnits(n: number, base: number, units: readonly string[]): string {
  let i = 0;
  let x = n;
  while (x >= base && i < units.length - 1) {
    x /= base;
    i++;
  }
  return `${Number(x.toFixed(1))} ${units[i]}`;
}

const bytesText = (b: number): string => inUnits(b, 1024, ["B", "KiB", "MiB", "GiB", "TiB"]);
const bitsText = (bytesPerSec: number): string =>
  inUnits(bytesPerSec * 8, 1000, ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"]);

/** One host's cells: CPU cores, memory, disk, network, VM size ("–" where the stack sets no cap). */
export function hostCells(limits: HostLimits, vmSize: string | null): string[] {
  const vm = vmSize && Object.hasOwn(VM_SIZES, vmSize) ? VM_SIZES[vmSize as VmSizeName] : undefined;
  // an azure host without a cap has its VM size's own vCPUs and memory
  const cpu = limits.cpu
    ? String(Number((limits.cpu.quotaUs / limits.cpu.periodUs).toPrecision(6)))
    : vm
      ? `${vm.vcpus} (VM)`
      : "–";
  const memory =
    limits.memoryBytes !== undefined ? bytesText(limits.memoryBytes) : vm ? `${vm.memoryGiB} GiB (VM)` : "–";
  const d = limits.disk ?? {};
  const disk: string[] = [];
  if (d.tmpfsBytes !== undefined) disk.push(`tmpfs ${bytesText(d.tmpfsBytes)}`);
  if (d.totalIops !== undefined) disk.push(`${d.totalIops} IOPS`);
  else if (d.readIops !== undefined || d.writeIops !== undefined)
    disk.push(`IOPS r ${d.readIops ?? "–"} w ${d.writeIops ?? "–"}`);
  if (d.totalBytesPerSec !== undefined) disk.push(`${bytesText(d.totalBytesPerSec)}/s`);
  else if (d.readBytesPerSec !== undefined || d.writeBytesPerSec !== undefined)
    disk.push(
      `r ${d.readBytesPerSec === undefined ? "–" : `${bytesText(d.readBytesPerSec)}/s`} w ${d.writeBytesPerSec === undefined ? "–" : `${bytesText(d.writeBytesPerSec)}/s`}`,
    );
  const n = limits.network ?? {};
  const network: string[] = [];
  if (n.bandwidthBytesPerSec !== undefined) network.push(bitsText(n.bandwidthBytesPerSec));
  if (n.delayMs !== undefined) network.push(`+${n.delayMs} ms`);
  if (n.lossPercent !== undefined) network.push(`${n.lossPercent} % loss`);
  return [cpu, memory, disk.join(", ") || "–", network.join(", ") || "–", vmSize ?? ""];
}

/** `text` cut into lines of at most `width` columns at spaces, the lines after the first indented by `indent`. */
function wrap(text: string, width: number, indent: string): string[] {
  const lead = /^ */.exec(text)![0];
  const out: string[] = [];
  let line = lead;
  for (const word of text.slice(lead.length).split(" ")) {
    const next = line.trim() ? `${line} ${word}` : `${line}${word}`;
    if ([...next].length > width && line.trim()) {
      out.push(line);
      line = `${indent}${word}`;
    } else line = next;
  }
  if (line.trim()) out.push(line);
  return out;
}

/**
 * The fit in the table's words: what the caps add up to, and which hosts' caps are the whole machine (what each
 * host asked is in its row; `validate` and --json give the long form).
 */
function fitNote(fit: StackFit | undefined): string {
  if (!fit) return "";
  const parts: string[] = [];
  if (fit.oversubscribed)
    parts.push(`oversubscribed: ${fit.reasons.map((r) => r.replace(/ \(asked: [^)]*\)/, "")).join("; ")}`);
  const uncapped = Object.entries(fit.uncapped).map(
    ([h, us]) => `${h} ${us.map((u) => u.split(":")[0]).join(", ")}`,
  );
  if (uncapped.length > 0) parts.push(`uncapped (≥ machine): ${uncapped.join("; ")}`);
  return parts.join("; ");
}

/**
 * The stacks as a table of at most `width` columns (100 by default): a line per stack (name and platform), then a
 * row per host with its caps in units, then the stack's fit on this machine (wrapped). Broken stacks say so in one
 * line. Columns are as wide as their widest cell; the VM size column shows only when an azure host has one.
 */
export function stacksTable(listing: readonly StackListing[], width = 100): string {
  const head = ["stack / host", "CPU (cores)", "memory", "disk", "network", "VM size"];
  const rows = listing.flatMap((l) =>
    l.entry.ok
      ? l.entry.hosts.map((h) => [`  ${h.name}`, ...hostCells(l.limits[h.name] ?? {}, h.vmSize)])
      : [],
  );
  const cols = rows.some((r) => r[5]) ? head.length : head.length - 1;
  const widths = Array.from({ length: cols }, (_, i) =>
    Math.max([...head[i]!].length, ...rows.map((r) => [...r[i]!].length)),
  );
  const line = (cells: string[]): string =>
    cells
      .slice(0, cols)
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const out = [line(head)];
  for (const l of listing) {
    const e = l.entry;
    if (!e.ok) {
      out.push(...wrap(`${e.name}: INVALID (${e.error.split("\n")[0]})`, width, "    "));
      continue;
    }
    out.push(`${e.name} (${e.platform})`);
    for (const h of e.hosts) out.push(line([`  ${h.name}`, ...hostCells(l.limits[h.name] ?? {}, h.vmSize)]));
    const fit = fitNote(e.fit);
    if (fit) out.push(...wrap(`  !! ${fit}`, width, "     "));
  }
  out.push(
    ...wrap(
      "– no cap; (VM) no cap: the azure VM size's own. --json: the caps as the stack files give them.",
      width,
      "",
    ),
  );
  return out.join("\n");
}

export const registerStacks: CommandModule = (program, ctx) => {
  program
    .command("stacks")
    .summary("List the stacks and their hosts' caps")
    .description(
      "List the stacks in stacks/ as a table: each host's CPU, memory, disk and network caps (azure: its VM size). A broken stack file is reported, the others listed, and the exit code is 2.",
    )
    .option("--json", "print one JSON array on stdout (its fields: docs/commands.md)")
    .action(
      ctx.action((flags: { json?: boolean }) => {
        const listing = stackListing(ctx.stacksDir);
        const entries = listing.map((l) => l.entry);
        if (flags.json) ctx.printJson(entries);
        else ctx.print(stacksTable(listing));
        return entries.every((e) => e.ok) ? EXIT.ok : EXIT.configuration;
      }),
    );
};
