import { describe, expect, it } from "vitest";
import { serverAccount } from "./component.ts";

const passwd = (...users: string[]) =>
  [
    "root:x:0:0:root:/root:/bin/bash",
    ...users.map((u, i) => `${u}:x:${100 + i}:${200 + i}::/nonexistent:/usr/sbin/nologin`),
  ].join("\n");

describe("the account PostgreSQL runs as (it refuses root)", () => {
  it("as root, prefers the postgres account", () => {
    expect(serverAccount(passwd("nobody", "postgres"), 0)).toEqual({ user: "postgres", uid: 101, gid: 201 });
  });
  it("as root on a fresh machine without a postgres account, falls back to nobody", () => {
    expect(serverAccount(passwd("nobody"), 0)).toEqual({ user: "nobody", uid: 100, gid: 200 });
  });
  it("as root with neither account, refuses with a clear error", () => {
    expect(() => serverAccount(passwd("daemon"), 0)).toThrow(/neither a "postgres" nor a "nobody" account/);
  });
  it("as another user, runs as that user", () => {
    expect(serverAccount(passwd("postgres"), 1000).user).toBeUndefined();
  });
});
