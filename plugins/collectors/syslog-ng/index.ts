/** The syslog-ng collector plugin: RFC 5424 over TCP into PostgreSQL (sql()) or ClickHouse (http()). */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { claims } from "./claims.ts";
import { syslogNg, syslogNgSchema, type SyslogNgConfig } from "./component.ts";
import { image } from "./image.ts";
import { syslogNgRenderer } from "./render.ts";

export const plugin = {
  kind: "collector",
  name: "syslog-ng",
  about: "syslog-ng 3.38: the installed syslog-ng locally, balabit/syslog-ng:3.38.1 on docker and azure",
  schema: syslogNgSchema,
  local: syslogNg,
  image,
  render: syslogNgRenderer,
  claims,
} satisfies CollectorPlugin<SyslogNgConfig>;
