/**
 * Real HTTP servers on 127.0.0.1 serving a collector's metrics payload (a byte-level vector) at one path, for the
 * claims tests (plugins/collectors/<name>/claims.test.ts, test/harness/remote/claims.test.ts). Call
 * `closeMetricsServers` after each test.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Served {
  port: number;
  paths: string[];
  close(): Promise<void>;
}
const servers: Served[] = [];

/** Close every server `serve` opened. */
export async function closeMetricsServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()));
}

/** A real HTTP server on 127.0.0.1 answering `path` with `body` (and `status`); any other path: 404. */
export async function serve(
  pathName: string,
  body: string,
  o: { status?: number; type?: string; hang?: boolean } = {},
): Promise<Served> {
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    if (o.hang) return; // never answers (the timeout test)
    if (req.url !== pathName) return void res.writeHead(404).end("not found");
    res.writeHead(o.status ?? 200, { "content-type": o.type ?? "text/plain; version=0.0.4" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const s: Served = {
    port: (server.address() as AddressInfo).port,
    paths,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(s);
  return s;
}

/** A port nothing listens on: one a server had, now closed. */
export async function closedPort(): Promise<number> {
  const s = await serve("/", "");
  servers.splice(servers.indexOf(s), 1);
  await s.close();
  return s.port;
}

/** The metrics endpoint at `port` on 127.0.0.1. */
export const at = (port: number) => ({ host: "127.0.0.1", port });
