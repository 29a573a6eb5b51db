// Resource exhaustion named from log lines (harness/runner/exhaustion.ts). Fluentd does not run here: its lines are
// byte-level vectors of what Fluentd writes (lib/fluent/plugin/buffer.rb raises BufferOverflowError "buffer space
// has too many data"; output.rb warns "failed to write data into buffer by buffer overflow" with overflow_action
// throw_exception; the input logs error_class/error), in Fluentd's own log format. PostgreSQL's, ClickHouse's,
// syslog-ng's and Node's lines are as those programs print them.
import { describe, expect, it } from "vitest";
import {
  classifyLog,
  dedupeExhaustion,
  exhaustionIn,
  exhaustionMessage,
} from "../../../harness/runner/exhaustion.ts";

const FLUENTD_WARN =
  "2026-12-01 15:00:00 +0000 [warn]: #0 failed to write data into buffer by buffer overflow action=:throw_exception\n";
const FLUENTD_ERROR =
  '2026-12-01 15:00:00 +0000 [error]: #0 unexpected error on reading data host="10.215.7.10" port=40312 error_class=Fluent::Plugin::Buffer::BufferOverflowError error="buffer space has too many data"\n';
const PG_ENOSPC =
  '2026-12-01 15:00:00.123 UTC [4242] ERROR:  could not extend file "base/5/16384": No space left on device\n2026-12-01 15:00:00.123 UTC [4242] HINT:  Check free disk space.\n';
const CH_ENOSPC =
  "2026.12.01 15:00:00.123456 [ 77 ] {} <Error> executeQuery: Code: 243. DB::Exception: Cannot reserve 1.00 MiB, not enough space. (NOT_ENOUGH_SPACE) (version 18.16.1)\n";
const NODE_ENOSPC = "Error: ENOSPC: no space left on device, write\n";
const NODE_PORTS = "connect EADDRNOTAVAIL 10.213.0.2:5432 - Local (0.0.0.0:0)";
const SYSLOG_NG_PORTS =
  "Connection failed; fd='15', server='AF_INET(10.213.0.3:5432)', local='AF_INET(0.0.0.0:0)', error='Cannot assign requested address (99)'\n";

describe("exhaustion classifier (byte-level vectors: Fluentd's published log lines, PostgreSQL, ClickHouse, syslog-ng, Node)", () => {
  it("names Fluentd's BufferOverflowError (throw_exception), from its warning and from the input's error line, as bytes", () => {
    for (const text of [
      FLUENTD_WARN,
      FLUENTD_ERROR,
      Buffer.from(FLUENTD_WARN + FLUENTD_ERROR, "utf8").toString("utf8"),
    ]) {
      expect(classifyLog(text)).toEqual([{ kind: "buffer-overflow", line: text.trim().split("\n")[0] }]);
    }
    expect(
      Buffer.from(FLUENTD_ERROR).includes(
        Buffer.from("error_class=Fluent::Plugin::Buffer::BufferOverflowError"),
      ),
    ).toBe(true);
  });

  it("names no overflow in the warning of overflow_action block, recorded from a real Fluentd 1.12.0 (it waits, nothing is lost)", () => {
    // fluentd.log of the rate=20000 run of scenarios/fluentd-clickhouse-saturation.yaml (docs/measurements.md)
    const block =
      "2026-12-07 23:33:53 +0000 [warn]: #0 [ib_sink] failed to write data into buffer by buffer overflow action=:block\n";
    expect(classifyLog(block)).toEqual([]);
    expect(classifyLog(block + FLUENTD_WARN).map((h) => h.line)).toEqual([FLUENTD_WARN.trim()]);
  });

  it("names a full disk from PostgreSQL's, ClickHouse's and Node's ENOSPC, and ports from EADDRNOTAVAIL", () => {
    expect(classifyLog(PG_ENOSPC)).toEqual([{ kind: "disk-full", line: PG_ENOSPC.split("\n")[0] }]);
    expect(classifyLog(CH_ENOSPC).map((h) => h.kind)).toEqual(["disk-full"]);
    expect(classifyLog(NODE_ENOSPC).map((h) => h.kind)).toEqual(["disk-full"]);
    expect(classifyLog(NODE_PORTS)).toEqual([{ kind: "ports", line: NODE_PORTS }]);
    expect(classifyLog(SYSLOG_NG_PORTS).map((h) => h.kind)).toEqual(["ports"]);
    // CRLF line ends, one hit per kind however many lines say it
    expect(
      classifyLog((PG_ENOSPC + NODE_PORTS + "\r\n" + PG_ENOSPC).replace(/\n/g, "\r\n")).map((h) => h.kind),
    ).toEqual(["disk-full", "ports"]);
  });

  it("names nothing in ordinary lines (a connection refused, a checkpoint, the word buffer)", () => {
    const ordinary = [
      "2026-12-01 15:00:00.123 UTC [1] LOG:  checkpoint complete: wrote 3 buffers (0.0%)",
      "connect ECONNREFUSED 10.213.0.2:5432",
      "2026-12-01 15:00:00 +0000 [info]: #0 flushing all buffer forcedly",
      "Syslog connection closed; fd='16', client='AF_INET(10.213.0.1:40000)'",
    ].join("\n");
    expect(classifyLog(ordinary)).toEqual([]);
  });

  it("keeps one entry per kind and host, merges the evidence, and says each in the message", () => {
    const list = dedupeExhaustion([
      ...exhaustionIn("sink", [{ source: "postgres.log", text: PG_ENOSPC }]),
      {
        kind: "disk-full",
        host: "sink",
        source: "statfs of the data volume",
        line: "df …",
        evidence: "65536 of 65536 KiB used, 0 KiB free",
      },
      ...exhaustionIn("collector", [{ source: "docker logs ib-s-collector", text: FLUENTD_ERROR }]),
    ]);
    expect(list.map((e) => [e.kind, e.host, e.source])).toEqual([
      ["disk-full", "sink", "postgres.log"],
      ["buffer-overflow", "collector", "docker logs ib-s-collector"],
    ]);
    expect(list[0]!.evidence).toBe("65536 of 65536 KiB used, 0 KiB free");
    expect(exhaustionMessage(list)).toMatch(
      /^host sink ran out of disk space \(ENOSPC\): postgres\.log: .*No space left on device \(65536 of 65536 KiB used, 0 KiB free\); host collector overflowed its collector buffer \(BufferOverflowError\)/,
    );
  });
});
