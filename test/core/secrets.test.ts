import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  passwordConfigKey,
  passwordEnvName,
  redact,
  redactDeep,
  sinkPassword,
  writeSecretFile,
} from "../../core/secrets.ts";
import { loadStack } from "../../infra/stack/schema.ts";
import { writeCellConfigFile } from "../../harness/provision/provisioner.ts";

describe("sink passwords (core/secrets.ts)", () => {
  it("come from INGESTBENCH_<SINK>_PASSWORD; the Pulumi config key is ingestbench:<sink>Password; none by default", () => {
    expect(passwordEnvName("griddb")).toBe("INGESTBENCH_GRIDDB_PASSWORD");
    expect(passwordEnvName("fluent-bit")).toBe("INGESTBENCH_FLUENT_BIT_PASSWORD");
    expect(passwordConfigKey("griddb")).toBe("ingestbench:griddbPassword");
    expect(sinkPassword("griddb", {})).toBeUndefined();
    expect(sinkPassword("griddb", { INGESTBENCH_GRIDDB_PASSWORD: "" })).toBeUndefined();
    expect(sinkPassword("griddb", { INGESTBENCH_GRIDDB_PASSWORD: "unit-pw-1" })).toBe("unit-pw-1");
  });

  it("redact hides every password handed out (longest first), and PASSWORD= assignments whatever their value", () => {
    sinkPassword("postgres", { INGESTBENCH_POSTGRES_PASSWORD: "unit-pw-2" });
    sinkPassword("loki", { INGESTBENCH_LOKI_PASSWORD: "unit-pw-2-longer" });
    expect(redact("docker exec -e X=unit-pw-2 c psql; other unit-pw-2-longer")).toBe(
      "docker exec -e X=[redacted] c psql; other [redacted]",
    );
    expect(redact("--env=GRIDDB_PASSWORD=never-seen-before x")).toBe("--env=GRIDDB_PASSWORD=[redacted] x");
    expect(redactDeep({ error: { message: "auth unit-pw-2 failed" }, n: 3 })).toEqual({
      error: { message: "auth [redacted] failed" },
      n: 3,
    });
  });

  it("writeSecretFile makes the file 0600, also when it existed with another mode", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ibtest-secret-file-"));
    try {
      const f = path.join(dir, "conf");
      writeFileSync(f, "old", { mode: 0o644 });
      writeSecretFile(f, "password x\n");
      expect(statSync(f).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("passwords in stack files", () => {
  const stack = (value: string) =>
    `config:\n  ingestbench:platform: docker\n  ingestbench:hosts:\n    loadgen: { cpu: "1" }\n    sink: { cpu: "1" }\n  ingestbench:griddbPassword: ${value}\n`;
  it("are taken only as Pulumi secrets (secure:), plain text is refused at its line with the command to use", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "ibtest-secret-stack-"));
    try {
      writeFileSync(path.join(dir, "Pulumi.ok.yaml"), stack('{ secure: "v1:abc" }'));
      writeFileSync(path.join(dir, "Pulumi.plain.yaml"), stack("admin"));
      expect(() => loadStack("ok", dir)).not.toThrow();
      expect(() => loadStack("plain", dir)).toThrow(
        /Pulumi\.plain\.yaml:6:\d+: config\.ingestbench:griddbPassword: a password must be a Pulumi secret: `pulumi config set --secret ingestbench:griddbPassword …`/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a cell's config file keeps the stack file's secure values and salt, adds the cell, replaces the components map, mode 0600", () => {
    const original = `encryptionsalt: v1:salt\nconfig:\n  ingestbench:platform: docker\n  ingestbench:components: { sink: clickhouse, collector: fluent-bit }\n  ingestbench:griddbPassword:\n    secure: v1:cipher\n`;
    const { dir, file } = writeCellConfigFile("s", original, {
      "ingestbench:components.sink": { value: "postgres", secret: false },
      "ingestbench:cell": { value: '{"a":1}', secret: false },
    });
    try {
      expect(path.basename(dir)).toMatch(new RegExp(`^ib-pulumi-config-${process.pid}-`));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const text = readText(file);
      expect(text).toContain("encryptionsalt: v1:salt");
      expect(text).toContain("secure: v1:cipher");
      expect(text).toMatch(/ingestbench:components:\n\s+sink: postgres\n/);
      expect(text).not.toContain("fluent-bit");
      expect(text).toContain(`ingestbench:cell: '{"a":1}'`);
      expect(() =>
        writeCellConfigFile("s", original, { "ingestbench:x": { value: "v", secret: true } }),
      ).toThrow(/is a secret; per-cell config carries none/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function readText(f: string): string {
  return readFileSync(f, "utf8");
}
