/** The container platforms' image of fluent-bit (docker, azure): its catalog entry (shapes and digest rules: core/catalog.ts). */
import type { CatalogImage } from "../../../core/catalog.ts";

export const image: CatalogImage = {
  name: "fluent-bit",
  kind: "collector",
  repository: "fluent/fluent-bit",
  // the -debug tag is the same release with a shell: the plain tag is distroless, and the harness runs its
  // version command and reads the container's cgroup counters through `sh` inside it (harness/remote/)
  tag: "4.0.3-debug",
  digest: null,
  version: "4.0.3",
  ports: [
    // 001 fed Fluent Bit through its HTTP input on 8888; forward is the other data port
    { port: 8888, role: "data", protocol: "tcp", scheme: "http" },
    { port: 24224, role: "data", protocol: "tcp", scheme: "forward" },
    { port: 2020, role: "metrics", protocol: "tcp", scheme: "http" },
  ],
  dataDir: "/var/lib/fluent-bit",
  env: {},
  versionCommand: ["/fluent-bit/bin/fluent-bit", "--version"],
  metrics: {
    path: "/api/v2/metrics/prometheus",
    format: "prometheus",
    about:
      "fluentbit_input_records_total, fluentbit_output_proc_records_total, fluentbit_output_retries_total, fluentbit_output_dropped_records_total, storage chunks",
  },
};
