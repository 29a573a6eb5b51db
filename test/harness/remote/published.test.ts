/**
 * The published ports re-read after a container restart (harness/remote/published.ts): the engine picks a host port
 * for each `127.0.0.1::<port>` publication every time the container starts, so the outputs must follow it. The
 * inspect answers are NetworkSettings.Ports as Engine 20.10 printed them on this machine for a container published
 * with `-p 127.0.0.1::5432`, before (32768) and after (32769) a `docker restart`.
 */
import { describe, expect, it } from "vitest";
import type { StackOutputs } from "../../../core/outputs.ts";
import { harnessAddress } from "../../../core/outputs.ts";
import { applyPublished, parsePublishedPorts, refreshPublished } from "../../../harness/remote/published.ts";

const BEFORE = '{"5432/tcp":[{"HostIp":"127.0.0.1","HostPort":"32768"}]}';
const AFTER = '{"5432/tcp":[{"HostIp":"127.0.0.1","HostPort":"32769"}]}';

function outputs(): StackOutputs {
  const limits = { requested: {}, applied: {}, enforced: true, notes: [] };
  return {
    platform: "docker",
    stack: "s",
    network: { name: "ib-s", subnet: "10.215.1.0/24" },
    hosts: {
      sink: { address: "10.215.1.3", container: "ib-s-sink", component: "postgres", image: "p:15", limits },
    },
    endpoints: {
      postgres: [
        {
          host: "sink",
          data: { host: "10.215.1.3", port: 5432, scheme: "postgres" },
          metrics: null,
          published: [{ internal: 5432, external: 32768, ip: "127.0.0.1", protocol: "tcp" }],
        },
      ],
    },
    versions: {},
  };
}

describe("published ports re-read after a restart (harness/remote/published.ts)", () => {
  it("parses NetworkSettings.Ports: bindings per port/protocol, an exposed-only port as none, malformed bindings left out", () => {
    expect([...parsePublishedPorts(AFTER)]).toEqual([["5432/tcp", [{ ip: "127.0.0.1", port: 32769 }]]]);
    expect([
      ...parsePublishedPorts(
        '{"5514/tcp":null,"9000/udp":[{"HostIp":"0.0.0.0","HostPort":"49153"},{"HostIp":"::","HostPort":""}]}',
      ),
    ]).toEqual([
      ["5514/tcp", []],
      ["9000/udp", [{ ip: "0.0.0.0", port: 49153 }]],
    ]);
    expect([...parsePublishedPorts("null")]).toEqual([]);
    expect(() => parsePublishedPorts("not json")).toThrow(SyntaxError);
  });

  it("moves the outputs' published port to the one the engine publishes now, so the harness reaches the restarted sink there; an unchanged port is no line", () => {
    const o = outputs();
    expect(applyPublished(o, "sink", parsePublishedPorts(BEFORE))).toEqual([]);
    expect(applyPublished(o, "sink", parsePublishedPorts(AFTER))).toEqual([
      "5432/tcp now published at 127.0.0.1:32769 (was 32768)",
    ]);
    expect(harnessAddress(o, o.endpoints.postgres![0]!)).toEqual({ host: "127.0.0.1", port: 32769 });
    // a stopped container publishes nothing: no address until it runs again
    expect(applyPublished(o, "sink", parsePublishedPorts("{}"))).toEqual([
      "5432/tcp now not published (was 32769)",
    ]);
    expect(harnessAddress(o, o.endpoints.postgres![0]!)).toBeNull();
  });

  it("asks the engine for the container's ports (docker inspect) and applies them", async () => {
    const o = outputs();
    const asked: string[][] = [];
    const lines = await refreshPublished(o, "sink", {
      container: "ib-s-sink",
      engine: async (args) => {
        asked.push(args);
        return `${AFTER}\n`;
      },
    });
    expect(asked).toEqual([
      ["inspect", "--type", "container", "--format", "{{json .NetworkSettings.Ports}}", "ib-s-sink"],
    ]);
    expect(lines).toEqual(["5432/tcp now published at 127.0.0.1:32769 (was 32768)"]);
  });
});
