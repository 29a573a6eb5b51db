// `gc` with no Docker engine answering (harness/provision/gc.ts collectDeadDeployments): it says what it could not
// look for; a DOCKER_HOST the user set gets no hint about ingestbench's own engine (the hint is for an unset one,
// which would try the default socket: not tested, a machine may have an engine there). A socket path that cannot
// exist: nothing is contacted; dryRun: nothing is removed.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collectDeadDeployments } from "../../../harness/provision/gc.ts";
import { repoRoot } from "./fixtures.ts";

const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-gc-no-engine-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("gc without a Docker engine", () => {
  it("names the engine it tried and that expired docker stacks were not looked for", async () => {
    const sock = `unix://${path.join(tmp, "no-such-engine.sock")}`;
    const set = await collectDeadDeployments({
      projectDir: repoRoot,
      dryRun: true,
      env: { PATH: process.env.PATH, DOCKER_HOST: sock },
    });
    expect(set.engineSkipped).toMatch(
      new RegExp(
        `^no Docker engine answers at ${sock.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} \\(.+\\), so expired docker stacks were not looked for$`,
      ),
    );
  });
});
