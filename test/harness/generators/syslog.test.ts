import { describe, expect, it } from "vitest";
import { syslog, syslogSchema } from "../../../harness/generators/syslog.ts";
import { generators } from "../../../harness/generators/index.ts";
import type { GeneratorFinal } from "../../../harness/generators/types.ts";
import type { EventField } from "../../../core/events/types.ts";
import { startSyslogReceiver } from "../../helpers/syslog-receiver.ts";

const fields: EventField[] = [
  { name: "ts", type: "timestamp" },
  { name: "msg", type: "string", size: 180 },
];

async function runFor(config: Record<string, unknown>, port: number, ms: number): Promise<GeneratorFinal> {
  const gen = syslog.create(syslogSchema.parse(config), {
    target: { host: "127.0.0.1", port, params: {} },
    fields,
    genId: 2,
  });
  const ac = new AbortController();
  setTimeout(() => ac.abort(), ms);
  return gen.run(ac.signal, () => undefined);
}

describe("syslog generator (real TCP receiver on 127.0.0.1)", () => {
  it("validates its config strictly and is registered", () => {
    expect(syslogSchema.parse({})).toMatchObject({
      batch: 1000,
      connections: 1,
      rate: "max",
      seed: 42,
      facility: 16,
      severity: 6,
    });
    expect(() => syslogSchema.parse({ batch: 10, port: 514 })).toThrow();
    expect(() => syslogSchema.parse({ facility: 24 })).toThrow();
    expect(generators.syslog).toBe(syslog);
  });

  it("delivers octet-counted RFC 5424 frames whose seqs are exactly 0..sent-1, never above its fixed rate", async () => {
    const r = await startSyslogReceiver();
    try {
      const t0 = performance.now();
      const final = await runFor({ batch: 500, connections: 2, rate: 50_000 }, r.port, 1500);
      const seconds = (performance.now() - t0) / 1000;
      await r.idle();
      expect(final.errors).toEqual([]);
      expect(final.accepted).toBe(final.sent);
      // paced: at most 50,000 events/s over the time it measurably ran, plus one batch per connection in flight; how
      // far below a busy machine kept it is not asserted (the receiver's seqs are, exactly)
      expect(final.sent).toBeGreaterThan(0);
      expect(final.sent).toBeLessThanOrEqual(50_000 * seconds + 2 * 500);
      expect(r.seqs).toHaveLength(final.sent);
      expect([...r.seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: final.sent }, (_, i) => i));
      expect(r.frames[0]).toMatch(
        /^<134>1 2024-11-07T00:00:00\.000Z ingestbench ingestbench 2 - \[ib@32473 ts="2024-11-07T00:00:00\.000Z" gen="2" seq="0" sent_at="20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"\] \S.{179}$/s,
      );
    } finally {
      r.server.close();
    }
  });

  it("stops after 10 refused connects without sending", async () => {
    const r = await startSyslogReceiver();
    const port = r.port;
    await new Promise<void>((res) => r.server.close(() => res()));
    const final = await runFor({ batch: 100 }, port, 20_000);
    expect(final).toMatchObject({ sent: 0, accepted: 0, rejectedRanges: [] });
    expect(final.errors[0]).toMatch(new RegExp(`connect 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    expect(final.errors.at(-1)).toMatch(/10 consecutive failures/);
  });
});
