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
  evidence: { level: "real-ci", version: "3.38" },
  schema: syslogNgSchema,
  local: syslogNg,
  image,
  render: syslogNgRenderer,
  claims,
  // the floor below which syslog-ng 3.38 cannot start (docs/decisions/0009; the measurement:
  // docs/measurements.md, "Figures moved from code comments")
  minMemory: {
    bytes: 2 * 2 ** 20,
    why: "it was OOM-killed at start under a 1 MiB cap and started under 2 MiB (docs/decisions/0009-memory-caps-too-small-to-start.md)",
  },
  // `generator: none`: example-msg-generator() makes the load (./component.ts exampleMsgGeneratorSource), one gen per host
  selfLoad: {
    input: "example-msg-generator()",
    setting: "example-msg-generator",
    generators: (c) => (c["example-msg-generator"] ? 1 : 0),
    counter: "syslog-ng-ctl stats: source s_gen processed (the messages example-msg-generator() made)",
    counterKey: () => "generated",
    // a tick every freq s: three ticks without a message, at least a second
    quietMs: (c) => Math.max(1000, 3000 * (c["example-msg-generator"]?.freq ?? 1)),
  },
} satisfies CollectorPlugin<SyslogNgConfig>;
