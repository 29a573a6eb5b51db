/** syslog-ng's claims inside its container (./claims.ts): syslog-ng-ctl's CSV as syslog-ng 3.38 prints it, no container run here. */
import { describe, expect, it } from "vitest";
import { claims } from "./claims.ts";
import { parseStats } from "./component.ts";

describe("syslog-ng's claims inside its container (syslog-ng-ctl stats CSV as syslog-ng 3.38 prints it)", () => {
  it("runs syslog-ng-ctl on the container's control socket and parses the counts as the local component does", async () => {
    const calls: string[][] = [];
    const csv = [
      "SourceName;SourceId;SourceInstance;State;Type;Number",
      "source;s_ib;;a;processed;5000",
      "src.network;s_ib#0;tcp,0.0.0.0:5514;a;processed;5000",
      "dst.sql;d_sink#0;sql,pgsql,10.77.0.13,5432,postgres,ib_events;a;written;4900",
      "dst.sql;d_sink#0;sql,pgsql,10.77.0.13,5432,postgres,ib_events;a;dropped;0",
      "dst.sql;d_sink#0;sql,pgsql,10.77.0.13,5432,postgres,ib_events;a;queued;100",
      "",
    ].join("\n");
    const counts = await claims.read(async (cmd, args) => {
      calls.push([cmd, ...args]);
      return csv;
    });
    expect(calls).toEqual([["syslog-ng-ctl", "stats", "-c", "/var/lib/syslog-ng/syslog-ng.ctl"]]);
    expect(counts).toEqual(parseStats(csv));
    expect(counts).toEqual({ received: 5000, written: 4900, dropped: 0, queued: 100 });
  });
});
