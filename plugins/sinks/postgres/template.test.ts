/** ./template.ts: the initdb template's key follows everything initdb's output depends on, and nothing else. */
import { describe, expect, it } from "vitest";
import { templateDir, templateKey, type TemplateInputs } from "./template.ts";

const inputs: TemplateInputs = {
  packageVersion: "18.4.0-beta.17",
  binDir: "/nonexistent/bin",
  initdbArgs: ["-U", "postgres", "--auth=trust"],
  hba: "host all all 0.0.0.0/0 trust\n",
  uid: 101,
  gid: 104,
  memoryCapBytes: 2 * 1024 ** 3,
};
const env = { TZ: "UTC" };

describe("the initdb template's key", () => {
  it("changes with the binaries, initdb's arguments, pg_hba.conf, the owner, the time zone and a memory cap under 1 GiB", () => {
    const k = templateKey(inputs, env);
    expect(templateKey({ ...inputs }, env)).toBe(k);
    for (const other of [
      { packageVersion: "18.5.0" },
      { binDir: "/other/bin" },
      { initdbArgs: ["-U", "postgres", "--auth=md5"] },
      { hba: "" },
      { uid: 0 },
      { gid: 0 },
      { memoryCapBytes: 512 * 1024 ** 2 },
    ])
      expect(templateKey({ ...inputs, ...other }, env), JSON.stringify(other)).not.toBe(k);
    expect(templateKey(inputs, { TZ: "Europe/Berlin" })).not.toBe(k);
    // initdb's probe starts its largest candidates within 1 GiB: every cap from there up (and none) is one template
    expect(templateKey({ ...inputs, memoryCapBytes: 4 * 1024 ** 3 }, env)).toBe(k);
    expect(templateKey({ ...inputs, memoryCapBytes: null }, env)).toBe(k);
    expect(templateDir(inputs, { ...env, INGESTBENCH_CACHE_DIR: "/c" })).toBe(`/c/postgres-initdb/${k}`);
    expect(templateDir(inputs, { ...env, INGESTBENCH_CACHE_DIR: "off" })).toBeNull();
  });
});
