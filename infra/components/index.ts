/** Component catalog: every deployable sink and collector, by the name scenarios use. */
import { clickhouse } from "./clickhouse.ts";
import { postgres } from "./postgres.ts";
import { rsyslog } from "./rsyslog.ts";
import { syslogNg } from "./syslog-ng.ts";
import type { ComponentFactory } from "../../core/component.ts";

export const components: Record<string, ComponentFactory<any>> = {
  [postgres.name]: postgres,
  [clickhouse.name]: clickhouse,
  [syslogNg.name]: syslogNg,
  [rsyslog.name]: rsyslog,
};
