// ClickHouse with a password (INGESTBENCH_CLICKHOUSE_PASSWORD), for real: Debian's clickhouse-server 18.16.1 started
// by the component on a direct host (127.0.0.1), users.xml with the password's SHA-256, the verifier authenticating
// with HTTP Basic auth, and a wrong password refused with an error naming the variable.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunningComponent } from "../../../core/component.ts";
import { basicAuthorization, passwordEnvName, sha256Hex } from "../../../core/secrets.ts";
import { createDirectHost, type DirectHost } from "../../../test/helpers/direct-host.ts";
import { clickhouseAuthRefusal, clickhouseHttpAuth } from "./auth.ts";
import { clickhouse, clickhouseSchema } from "./component.ts";
import { clickhouseVerifier } from "./verifier.ts";

const HTTP_PORT = 18273;
const TCP_PORT = 19273;
const VAR = passwordEnvName("clickhouse");
const PASSWORD = "ch-Unit+pw/5e1";
const hosts: DirectHost[] = [];
const servers: RunningComponent[] = [];
const saved = process.env[VAR];
afterAll(async () => {
  if (saved === undefined) delete process.env[VAR];
  else process.env[VAR] = saved;
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const h of hosts) await h.cleanup();
});

describe("clickhouse HTTP authentication", () => {
  it("sends Basic auth (RFC 7617 section 2's Aladdin vector) and no ?user= when the variable is set, ?user= alone without it", () => {
    expect(clickhouseHttpAuth({ user: "Aladdin" }, { [VAR]: "open sesame" })).toEqual({
      headers: { Authorization: "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==" },
      query: {},
    });
    expect(clickhouseHttpAuth({}, { [VAR]: "pw" }).headers.Authorization).toBe(
      basicAuthorization("default", "pw"),
    );
    expect(clickhouseHttpAuth({ user: "ib" }, {})).toEqual({ headers: {}, query: { user: "ib" } });
    expect(
      clickhouseAuthRefusal(
        500,
        "Code: 193, e.displayText() = DB::Exception: Wrong password for user default",
        {},
        { [VAR]: "pw" },
      ),
    ).toMatch(new RegExp(`refused user "default" with the password from ${VAR}`));
    expect(
      clickhouseAuthRefusal(
        500,
        "Code: 60, e.displayText() = DB::Exception: Table default.x doesn't exist",
        {},
        {},
      ),
    ).toBeUndefined();
  });

  it("real 18.16.1: users.xml holds only the password's SHA-256 (mode 0600), a request without it is refused, the verifier uses it, a wrong one is E_SINK_AUTH naming the variable", async () => {
    process.env[VAR] = PASSWORD;
    const host = await createDirectHost("sink", "clickhouse");
    hosts.push(host);
    const server = await clickhouse.startLocal(
      host,
      clickhouseSchema.parse({ version: "18.16.1", httpPort: HTTP_PORT, tcpPort: TCP_PORT }),
    );
    servers.push(server);
    expect(server.running).toBe("18.16.1");

    const users = join(host.dataDir, "clickhouse", "etc", "users.xml");
    const text = readFileSync(users, "utf8");
    expect(text).toContain(`<password_sha256_hex>${sha256Hex(PASSWORD)}</password_sha256_hex>`);
    expect(text).not.toContain(PASSWORD);
    expect(statSync(users).mode & 0o777).toBe(0o600);

    // the server itself asks for it: no credentials, and a wrong password, are refused
    const bare = await fetch(`http://127.0.0.1:${HTTP_PORT}/`, { method: "POST", body: "SELECT 1" });
    const bareBody = await bare.text();
    expect(bare.status).not.toBe(200);
    expect(bareBody).toMatch(/Code: 19[34]\b/);
    const wrongAnswer = await fetch(`http://127.0.0.1:${HTTP_PORT}/`, {
      method: "POST",
      body: "SELECT 1",
      headers: { Authorization: basicAuthorization("default", "not-it") },
    });
    expect(wrongAnswer.status).not.toBe(200);
    expect(await wrongAnswer.text()).toMatch(/Code: 193\b.*Wrong password for user default/);

    const ctx = {
      host: "127.0.0.1",
      port: HTTP_PORT,
      params: { ...server.params, table: "ib_auth" },
      fields: [{ name: "msg", type: "string" as const, size: 8 }],
    };
    const v = clickhouseVerifier.create(ctx);
    await v.prepare();
    const ok = await fetch(`http://127.0.0.1:${HTTP_PORT}/`, {
      method: "POST",
      body: "EXISTS TABLE default.ib_auth",
      headers: clickhouseHttpAuth({}).headers,
    });
    expect((await ok.text()).trim()).toBe("1");

    process.env[VAR] = "wrong-pw-9c2";
    const refused = await clickhouseVerifier
      .create(ctx)
      .prepare()
      .then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string },
      );
    expect(refused?.code).toBe("E_SINK_AUTH");
    expect(refused?.message).toContain(`refused user "default" with the password from ${VAR}`);
    expect(refused?.message).not.toContain("wrong-pw-9c2");
    process.env[VAR] = PASSWORD;
  }, 90_000);
});
