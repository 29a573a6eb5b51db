/** The rsyslog collector plugin: RFC 5424 over TCP into PostgreSQL (ompgsql), on the local platform only. */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { rsyslog, rsyslogSchema, type RsyslogConfig } from "./component.ts";

export const plugin = {
  kind: "collector",
  name: "rsyslog",
  about: "rsyslog 8.2302 built into /opt/ingestbench/rsyslog (local only)",
  evidence: { level: "real-ci", version: "8.2302" },
  schema: rsyslogSchema,
  local: rsyslog,
} satisfies CollectorPlugin<RsyslogConfig>;
