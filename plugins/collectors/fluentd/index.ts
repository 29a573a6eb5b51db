/** The fluentd collector plugin: an installed Fluentd on the local platform (./component.ts), the image on docker and azure. */
import type { CollectorPlugin } from "../../../core/plugin.ts";
import { claims, fluentdPressure } from "./claims.ts";
import { fluentd } from "./component.ts";
import { image } from "./image.ts";
import { fluentdRenderer, fluentdSchema, type FluentdConfig } from "./render.ts";

export const plugin = {
  kind: "collector",
  name: "fluentd",
  about:
    "Fluentd 1.12.0: the installed fluentd locally (bring your own: README.md); fluent/fluentd on docker and azure, with fluent-plugin-griddb built for GridDB sinks",
  evidence: { level: "run-once", version: "1.12.0", machine: "Intel Xeon (2 cores)", date: "2026-12-07" },
  schema: fluentdSchema,
  local: fluentd,
  image,
  render: fluentdRenderer,
  claims,
  pressure: fluentdPressure,
  // `generator: none`: in_sample makes the load, one gen per worker, seq by auto_increment_key (./render.ts)
  selfLoad: {
    input: "in_sample",
    setting: "source.sample",
    generators: (c) => (c.source.sample ? c.system.workers : 0),
    // Fluentd 1.12's inputs report no emit_records (./claims.ts): the one <match>'s emit_records, on worker k's own
    // monitor_agent port (port + k) for gen index k (./render.ts: worker k stamps gen genBase + k)
    counter:
      "monitor_agent on each worker's port: the output's emit_records (every sample event reaches the one <match>)",
    counterKey: () => "emitted",
    perPort: true,
    // in_sample emits in ten bins a second (./render.ts): two seconds without an event
    quietMs: () => 2000,
  },
} satisfies CollectorPlugin<FluentdConfig>;
