/**
 * The run's end: a failure as run.json keeps it (recordFailure), then teardown, always (teardownPhase): the summary of
 * what was measured when the run ended early, the fault steps and the load stopped, the OOM kills and resource
 * exhaustion read, the verifier closed, the site torn down, the instrument's cost, run.json written.
 */
import {
  ConfigurationError,
  IngestbenchError,
  ProvisioningError,
  VerificationError,
} from "../../../core/errors.ts";
import type { RunRecord } from "../../results/types.ts";
import {
  dedupeExhaustion,
  EXHAUSTION_CODES,
  exhaustionIn,
  exhaustionMessage,
  exhaustionResource,
  type Exhaustion,
} from "../exhaustion.ts";
import { mergeFinals, takeReplayIndex } from "../generator-group.ts";
import { now } from "../instrument-cost.ts";
import { LOADGEN, oomMessage, SINK, type OomKill } from "../site.ts";
import { collectorHosts } from "../versions.ts";
import type { RunContext } from "./context.ts";
import { summarize } from "./summary.ts";

function errorKind(err: unknown): NonNullable<RunRecord["error"]>["kind"] {
  if (err instanceof ConfigurationError) return "configuration";
  if (err instanceof ProvisioningError) return "provisioning";
  if (err instanceof VerificationError) return "verification";
  return "run";
}

/**
 * An error that is not an IngestbenchError as run.json keeps it: `message` one line, "<stage>: <first line>" plus,
 * for a failed command (execa's message: "Command failed with exit code N: cmd\n\n<stderr>"), the last line of
 * what it printed; `detail` the rest of the message and the stack, for --debug.
 */
export function unexpectedError(e: Error, stage: string): { message: string; detail: string } {
  const lines = e.message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const first = lines[0] ?? e.name;
  const last = lines.length > 1 ? lines[lines.length - 1]! : undefined;
  const tail = last && last.length <= 200 ? `: ${last}` : "";
  return { message: `${stage}: ${first}${tail}`, detail: e.stack ?? e.message };
}

/** The run failed with `err`: its status and run.json `error` (the interruption's when the signal aborted). */
export function recordFailure(ctx: RunContext, err: unknown): void {
  const { record, signal } = ctx;
  record.status = signal?.aborted ? "interrupted" : "error";
  const e = err as Error & { code?: string };
  record.error = { code: e.code ?? "E_UNEXPECTED", kind: errorKind(err), message: e.message };
  // a step cut short by the signal fails with its own code (e.g. E_PG_ABORTED): the run's is the interruption
  if (signal?.aborted && e.code !== "E_INTERRUPTED") {
    record.error = {
      code: "E_INTERRUPTED",
      kind: "run",
      message: `interrupted (${String(signal.reason ?? "signal")}) during: ${e.message}`,
    };
  }
  // a bug or a failed command (an ExecaError): one line naming what failed and when; its whole text and stack are
  // kept beside it (printed with --debug, harness/runner/drive.ts)
  if (!(err instanceof IngestbenchError) && !signal?.aborted)
    record.error = { ...record.error, ...unexpectedError(e, ctx.stage) };
}

/** Tear the run down whatever phase it ended in, and write run.json (see the file comment). */
export async function teardownPhase(ctx: RunContext): Promise<void> {
  const { record, cost, site, writer } = ctx;
  cost.stopAfterLoadSampler();
  ctx.stage = "tearing down";
  summarizeWhatWasMeasured(ctx);
  ctx.sampler?.flushDeferred(writer);
  const errors = await stopWhatRuns(ctx);
  const tTeardown = now();
  errors.push(...(await site.teardown()));
  cost.teardownMs = now() - tTeardown;
  cost.parts = site.overheadParts?.();
  const instrument = cost.instrumentRecord(record, ctx.stack);
  if (instrument) record.instrument = instrument;
  if (errors.length) {
    record.error ??= { code: "E_TEARDOWN", kind: "provisioning", message: "" };
    record.error.message = [record.error.message, ...errors].filter(Boolean).join("\n");
    if (record.status === "ok") record.status = "error";
  }
  record.finishedAt = new Date().toISOString();
  await writer.close();
  await writer.writeRecord(record);
}

/** An interrupted or failed run still gets the summary of what it measured, when it measured enough. */
function summarizeWhatWasMeasured(ctx: RunContext): void {
  const { record, series, sampler } = ctx;
  if (record.summary || !sampler || series.filter((p) => p.phase === "measure").length < 2) return;
  try {
    const p = ctx.load?.progress;
    record.summary = summarize(ctx, sampler, p && p.sent > 0 ? p.bytes / (p.sent + (p.repeated ?? 0)) : 0);
  } catch {
    // nothing to summarise: the series is still written
  }
}

/** End the steps and the load where still running, read OOM kills and exhaustion, close the verifier: the errors. */
async function stopWhatRuns(ctx: RunContext): Promise<string[]> {
  const { record, site } = ctx;
  const errors: string[] = [];
  const attempt = async (what: string, f: () => Promise<unknown>): Promise<void> => {
    try {
      await f();
    } catch (e) {
      errors.push(`${what}: ${(e as Error).message}`);
    }
  };
  if (ctx.steps && !record.timeline)
    await attempt("steps", async () => {
      record.timeline = await ctx.steps!.finish();
    });
  if (ctx.load && !ctx.finals) {
    await attempt("generator", async () => {
      const stopped = await ctx.load!.stop();
      takeReplayIndex(stopped); // not for the record
      record.generator = mergeFinals(stopped);
    });
  }
  if (site.oomKills && record.status !== "interrupted")
    await attempt("OOM check", async () => reportOom(ctx, await site.oomKills!()));
  if (record.status !== "interrupted")
    await attempt("exhaustion check", async () =>
      reportExhaustion(ctx, await (site.exhaustion?.() ?? Promise.resolve([]))),
    );
  if (ctx.verifier) await attempt("verifier", () => ctx.verifier!.close());
  return errors;
}

/**
 * A container the kernel OOM-killed under its memory cap is the run's error (E_OOM_KILLED, naming host, cap and
 * sources) and its bottleneck (memory, score 1), never an unexplained loss; an error it caused (a dropped
 * connection, a short ledger) is kept in the message after it.
 */
function reportOom(ctx: RunContext, kills: OomKill[]): void {
  if (kills.length === 0) return;
  const r = ctx.record;
  const message = oomMessage(kills);
  const prior = r.error;
  r.error = {
    code: "E_OOM_KILLED",
    kind: "run",
    message: prior ? `${message}\nthen: ${prior.code}: ${prior.message}` : message,
  };
  r.status = "error";
  const k = kills.find((x) => x.host === SINK) ?? kills[0]!;
  if (r.summary) {
    const b = r.summary.bottleneck;
    const evidence = `OOM-killed under its memory cap: ${k.evidence}`;
    r.summary.bottleneck = {
      resource: "memory",
      host: k.host,
      score: 1,
      evidence,
      candidates: [{ resource: "memory", host: k.host, score: 1, evidence }, ...b.candidates],
    };
  }
}

/**
 * Resource exhaustion (../exhaustion.ts) the site read in its hosts' logs, and what the generators' errors and the
 * run's error say (a generator's EADDRNOTAVAIL, the sink's ENOSPC answered to a client), is recorded as run.json
 * `exhaustion` and becomes the run's error (E_DISK_FULL, E_PORTS_EXHAUSTED, E_BUFFER_OVERFLOW) and its bottleneck
 * (disk, network, memory on that host, score 1), never an unexplained loss; an error before it (an OOM kill, a
 * failed request) is kept after it in the message.
 */
function reportExhaustion(ctx: RunContext, fromSite: Exhaustion[]): void {
  const r = ctx.record;
  const texts = [
    ...(r.generator?.errors ?? []).map((text, i) => ({ source: `generator error ${i + 1}`, text })),
    ...(r.error ? [{ source: `the run's error (${r.error.code})`, text: r.error.message }] : []),
  ];
  // a generator's (or the run's) ENOSPC is the answer of the host it writes to; its EADDRNOTAVAIL its own ports
  const entry = ctx.plan.collector ? (collectorHosts(Object.keys(ctx.stack.hosts))[0] ?? "collector") : SINK;
  const fromTexts = exhaustionIn(LOADGEN, texts).map((e) => (e.kind === "ports" ? e : { ...e, host: entry }));
  const found = dedupeExhaustion([...fromSite, ...fromTexts]);
  if (found.length === 0) return;
  r.exhaustion = found;
  const first = found[0]!;
  const prior = r.error;
  const message = exhaustionMessage(found);
  r.error = {
    code: EXHAUSTION_CODES[first.kind],
    kind: "run",
    message: prior ? `${message}\nthen: ${prior.code}: ${prior.message}` : message,
  };
  r.status = "error";
  if (r.summary) {
    const b = r.summary.bottleneck;
    const resource = exhaustionResource(first.kind);
    const evidence = `${first.kind}: ${first.source}: ${first.line}${first.evidence ? ` (${first.evidence})` : ""}`;
    r.summary.bottleneck = {
      resource,
      host: first.host,
      score: 1,
      evidence,
      candidates: [{ resource, host: first.host, score: 1, evidence }, ...b.candidates],
    };
  }
}
