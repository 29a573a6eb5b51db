/**
 * The image catalog (infra/catalog.ts) and the shaper's tc script (infra/docker/shaper.ts).
 * Digests are not resolved on this machine (no Docker engine, no registry client): every digest present must be a
 * well-formed sha256, and the unresolved ones are listed here so that resolving one is a visible change.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  catalog,
  catalogEntry,
  DIGEST,
  deployableComponents,
  heapMiB,
  imageRef,
} from "../../../infra/catalog.ts";
import { shaperScript } from "../../../infra/docker/shaper.ts";

describe("image catalog", () => {
  it("pins every image by an exact tag (never latest) and, where resolved, by a sha256 digest", () => {
    for (const e of Object.values(catalog)) {
      expect(e.tag, e.name).not.toMatch(/^(latest|stable|main)$/);
      expect(e.tag, e.name).toMatch(/\d/);
      if (e.digest !== null) {
        expect(e.digest, e.name).toMatch(DIGEST);
        expect(imageRef(e)).toBe(`${e.repository}:${e.tag}@${e.digest}`);
      } else {
        expect(imageRef(e)).toBe(`${e.repository}:${e.tag}`);
      }
    }
  });

  it("says, for every image whose digest is still unresolved, that it has to be resolved with a registry lookup", () => {
    const unresolved = Object.values(catalog).filter((e) => e.digest === null);
    // nothing here can reach a registry: every pulled image is unresolved, and the catalog header says how to resolve one
    expect(unresolved.map((e) => e.name)).toEqual(
      expect.arrayContaining(["postgres", "clickhouse", "loadgen", "shaper"]),
    );
    for (const e of unresolved) expect(imageRef(e), e.name).toBe(`${e.repository}:${e.tag}`);
  });

  it("has every sink and collector the container platforms run, Elasticsearch at 8.15.3, and a data port for every sink and collector", () => {
    expect(deployableComponents).toEqual(
      expect.arrayContaining([
        "postgres",
        "clickhouse",
        "fluent-bit",
        "vector",
        "fluentd",
        "elasticsearch",
        "loki",
        "griddb",
        "syslog-ng",
      ]),
    );
    expect(catalogEntry("elasticsearch").tag).toBe("8.15.3");
    expect(catalogEntry("fluentd").version).toBe("1.12.0");
    for (const name of deployableComponents)
      expect(
        catalogEntry(name).ports.some((p) => p.role === "data"),
        name,
      ).toBe(true);
    expect(() => catalogEntry("mongodb")).toThrow(
      /no component "mongodb" in the catalog; known: .*clickhouse/,
    );
  });

  it("sizes a JVM heap at half the memory cap", () => {
    expect(heapMiB(2 * 1024 ** 3)).toBe(1024);
    expect(heapMiB(256 * 1024 ** 2)).toBe(256);
    expect(heapMiB(undefined)).toBe(1024);
  });
});

describe("shaper script", () => {
  it("shapes egress with tbf and ingress through an ifb with the same tbf, and parses as sh and bash", () => {
    const script = shaperScript({ rateBytesPerSec: 12_000_000, burstBytes: 120_000 });
    expect(script.split("\n")).toEqual([
      "set -eu",
      "tc qdisc del dev eth0 root 2>/dev/null || true",
      "tc qdisc del dev eth0 ingress 2>/dev/null || true",
      "tc qdisc add dev eth0 root handle 1: tbf rate 96000000bit burst 120000 latency 50ms",
      "ip link add ifb0 type ifb",
      "ip link set ifb0 up",
      "tc qdisc add dev eth0 handle ffff: ingress",
      "tc filter add dev eth0 parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev ifb0",
      "tc qdisc add dev ifb0 root handle 1: tbf rate 96000000bit burst 120000 latency 50ms",
      "tc -s qdisc show dev eth0",
      'echo "ingestbench shaper: applied on eth0"',
      "exec sleep infinity",
      "",
    ]);
    for (const shell of ["sh", "bash"]) expect(() => execFileSync(shell, ["-n", "-c", script])).not.toThrow();
  });

  it("puts netem (delay, loss) at the root with tbf below it, with the local platform's burst by default", () => {
    const script = shaperScript({ rateBytesPerSec: 1_250_000, delayMs: 10, lossPercent: 0.1 });
    expect(script).toContain(
      "tc qdisc add dev eth0 root handle 1: netem delay 10ms loss 0.1%\ntc qdisc add dev eth0 parent 1: handle 2: tbf rate 10000000bit burst 32768 latency 50ms",
    );
    expect(() => execFileSync("bash", ["-n", "-c", script])).not.toThrow();
  });
});

describe("catalog metrics endpoints and collector renderers", () => {
  it("names a metrics endpoint for every collector and every sink but PostgreSQL (pg_stat views over SQL)", () => {
    expect(catalogEntry("fluentd").metrics).toMatchObject({ path: "/api/plugins.json", format: "json" });
    expect(catalogEntry("fluent-bit").metrics).toMatchObject({
      path: "/api/v2/metrics/prometheus",
      format: "prometheus",
    });
    expect(catalogEntry("vector").metrics).toMatchObject({ path: "/metrics", format: "prometheus" });
    expect(catalogEntry("clickhouse").metrics?.path).toBe("/metrics");
    // ClickHouse serves /metrics on 9363 only with a <prometheus> server section: the catalog uploads one
    expect(catalogEntry("clickhouse").uploads?.[0]?.content).toMatch(
      /<prometheus>[\s\S]*<port>9363<\/port>[\s\S]*<\/prometheus>/,
    );
    expect(catalogEntry("elasticsearch").metrics?.path).toMatch(/^\/_nodes\/stats/);
    expect(catalogEntry("loki").metrics?.path).toBe("/metrics");
    expect(catalogEntry("postgres").metrics).toBeUndefined();
  });

  it("has a renderer for each config-rendered collector whose data and metrics ports are the catalog's", async () => {
    const { rendererOf } = await import("../../../infra/render/index.ts");
    const sinkFor = { name: "clickhouse" as const, host: "10.0.0.2", port: 8123, params: {} };
    for (const name of ["fluentd", "fluent-bit", "vector"]) {
      const p = rendererOf(name)!;
      const out = p.render.render({
        config: p.schema.parse({}),
        sink: sinkFor,
        fields: [{ name: "msg", type: "string", size: 10 }],
      });
      const ports = catalogEntry(name).ports;
      expect(
        ports.filter((p) => p.role === "data").map((p) => p.port),
        name,
      ).toContain(out.listens.data);
      expect(ports.find((p) => p.role === "metrics")?.port, name).toBe(out.listens.metrics);
    }
  });

  it("builds Fluentd for GridDB sinks from images/fluentd-griddb under a pinned tag (no registry digest for a local build)", () => {
    const build = catalogEntry("fluentd").build!;
    expect(build).toMatchObject({
      context: "images/fluentd-griddb",
      repository: "ingestbench/fluentd-griddb",
      forSinks: ["griddb"],
    });
    expect(build.tag).toMatch(/^1\.12\.0-ruby2\.7\.2-griddb1\.0\.2-/);
  });
});
