/**
 * Fault steps on the docker platform, on the REAL Docker engine (scripts/docker-engine.sh) with the Debian-built
 * images: stack docker-debian-faults (loadgen → syslog-ng 3.38 → PostgreSQL 15 containers) deployed through the
 * Pulumi CLI stand-in's engine mode (test/helpers/pulumi-engine.ts), then a BenchRun on the deployed stack's site
 * (harness/remote/site.ts) running scenarios/collector-kill-restart-debian.yaml: its steps go through the docker
 * StepTarget (harness/remote/docker-steps.ts: `docker kill` of the collector's container at 3 s, `docker restart`
 * at 4 s). The test reads the final table (over the sink's published port, before the ledger) to check that the
 * ledger and the kill's cost name exactly the absent seqs, and that the stack is gone afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { deployStack, destroyStack } from "../../harness/provision/deployed.ts";
import { shellsFor } from "../../harness/remote/hosts.ts";
import { RemoteSite } from "../../harness/remote/site.ts";
import { BenchRun } from "../../harness/runner/run.ts";
import type { RunRecord } from "../../harness/results/types.ts";
import { loadStack } from "../../infra/stack/schema.ts";
import { useCleanups } from "../helpers/cleanups.ts";
import { DOCKER_ENV, engine, SHAPER_IMAGE } from "../helpers/docker-engine.ts";
import { createPulumiCliStandIn, STAND_IN_PASSWORDS } from "../helpers/pulumi-cli-stand-in.ts";
import { projectRoot, scenarioPlan } from "../helpers/bench.ts";
import {
  expectKillRestartChargesEveryMissingRange,
  expectLedgerNamesExactlyTheAbsentSeqs,
  readStoredSeqs,
  type SinkInfo,
} from "../helpers/pipeline-ledger.ts";

const STACK = "docker-debian-faults";
const LABEL = `ingestbench.stack=${STACK}`;
const cleanups = useCleanups();

const listing = (): string =>
  spawnSync("docker", ["ps", "-aq", "--filter", `label=${LABEL}`], {
    env: DOCKER_ENV,
    encoding: "utf8",
  }).stdout.trim();

/** The run's timeline entry `i`, which must have run to its end. */
function ran(record: RunRecord, i: number) {
  const e = record.timeline?.[i];
  expect(e, `timeline entry ${i}`).toBeDefined();
  expect(e!.startS).not.toBeNull();
  expect(e!.endS!).toBeGreaterThanOrEqual(e!.startS!);
  return e!;
}

describe("fault steps on the docker platform (real engine, Debian-built images)", () => {
  it("collector-kill-restart-debian: docker kill and docker restart of the collector's container; the timeline, and the ledger and the kill's cost name exactly the absent seqs", async () => {
    await engine();
    expect(listing(), `stack ${STACK} is deployed already`).toBe("");
    const standIn = createPulumiCliStandIn({ engine: { projectDir: projectRoot } });
    const tmp = mkdtempSync(path.join(os.tmpdir(), "ib-docker-steps-"));
    // the Automation API and the shells read the process environment: the stand-in first on PATH, the engine's socket
    const saved: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      DOCKER_HOST: process.env.DOCKER_HOST,
      PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE,
    };
    for (const k of Object.keys(STAND_IN_PASSWORDS)) saved[k] = process.env[k];
    // the deploy runs in this process: the sinks' test passwords (no product default) go into its environment
    Object.assign(process.env, {
      ...STAND_IN_PASSWORDS,
      PATH: standIn.env.PATH,
      DOCKER_HOST: DOCKER_ENV.DOCKER_HOST,
      PULUMI_CONFIG_PASSPHRASE: "",
    });
    cleanups.push(async () => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      standIn.cleanup();
      rmSync(tmp, { recursive: true, force: true });
    });
    cleanups.push(async () => {
      // whatever a failure left: the containers (and step helpers) and volumes of the stack, and its network
      spawnSync(
        "sh",
        [
          "-c",
          `docker rm -f $(docker ps -aq --filter label=${LABEL}) 2>/dev/null; docker network rm ib-${STACK} 2>/dev/null; docker volume rm $(docker volume ls -q --filter label=${LABEL}) 2>/dev/null`,
        ],
        { env: DOCKER_ENV },
      );
    });

    const scenario = path.join(projectRoot, "scenarios", "collector-kill-restart-debian.yaml");
    const t0 = performance.now();
    const outputs = await deployStack({ stack: STACK, scenario, signal: new AbortController().signal });
    const deployedS = (performance.now() - t0) / 1000;
    let destroyed = false;
    cleanups.push(async () => {
      if (!destroyed) await destroyStack({ stack: STACK });
    });

    const stack = loadStack(STACK, path.join(projectRoot, "stacks"));
    const plan = scenarioPlan("collector-kill-restart-debian.yaml");
    let present: Set<number> | undefined;
    const run = new BenchRun({
      stack,
      plan,
      resultsRoot: path.join(tmp, "results"),
      invocation: new Date().toISOString(),
      projectRoot,
      site: () =>
        new RemoteSite({ stack, plan, outputs, shell: shellsFor(outputs), shaperImage: SHAPER_IMAGE }),
      // the verifier's defaults where the deployed sink's params name none (plugins/sinks/postgres/verifier.ts)
      beforeLedger: async (s: SinkInfo) => {
        present = await readStoredSeqs({
          ...s,
          params: { user: "postgres", database: "postgres", ...s.params },
        });
      },
    });
    const record = await run.run();
    const ranS = (performance.now() - t0) / 1000 - deployedS;

    // the engine publishes a restarted container's ports anew, at other host ports: the restart step re-read them
    // (harness/remote/published.ts), and the site gives the verifier the sink's port as the engine publishes it now
    // (RemoteSite.sinkControl, what the run asks after a fault disturbed the sink). A `restart: sink` here would cost
    // PostgreSQL's initdb on its emptied tmpfs (16.6 s measured): the collector's restart shows the same re-read
    const publishedNow = (container: string, port: number) =>
      Number(
        spawnSync("docker", ["port", container, `${port}/tcp`], { env: DOCKER_ENV, encoding: "utf8" })
          .stdout.trim()
          .split(":")
          .pop(),
      );
    const collectorPort = publishedNow(outputs.hosts.collector!.container, 5514);
    const site = new RemoteSite({
      stack,
      plan,
      outputs,
      shell: shellsFor(outputs),
      shaperImage: SHAPER_IMAGE,
    });
    expect(await site.sinkControl()).toEqual({
      host: "127.0.0.1",
      port: publishedNow(outputs.hosts.sink!.container, 5432),
    });

    await destroyStack({ stack: STACK });
    destroyed = true;
    expect(listing(), "the stack's containers are gone").toBe("");

    expect(record.error).toBeNull();
    expect(record.platform).toBe("docker");
    const kill = ran(record, 0);
    const restart = ran(record, 1);
    const collector = outputs.hosts.collector!.container;
    expect(kill).toMatchObject({
      action: "kill",
      host: "collector",
      status: "ok",
      exitCode: 0,
      trigger: "at 3s",
      fault: true,
    });
    expect(kill.output).toContain(`SIGKILL to ${collector} (syslog-ng on collector`);
    expect(restart).toMatchObject({ action: "restart", host: "collector", status: "ok", exitCode: 0 });
    expect(restart.output).toMatch(
      new RegExp(
        `^restarted ${collector} \\(syslog-ng on collector, pid \\d+ on this machine, port \\d+ listening\\)`,
      ),
    );
    expect(restart.output).toMatch(
      new RegExp(`; 5514/tcp now published at 127\\.0\\.0\\.1:${collectorPort} \\(was \\d+\\)`),
    );
    expect(outputs.endpoints["syslog-ng"]![0]!.published.find((p) => p.internal === 5514)!.external).toBe(
      collectorPort,
    );
    expect(kill.startS!).toBeGreaterThanOrEqual(3 - 0.002);
    expect(restart.startS!).toBeGreaterThanOrEqual(4 - 0.002);

    // the ledger names exactly the absent seqs of the final table, and the kill lost some
    const lost = expectLedgerNamesExactlyTheAbsentSeqs(record, present!);
    const l = record.ledger!;
    expect(lost).toBeGreaterThan(0);
    expectKillRestartChargesEveryMissingRange(record);
    console.log(
      `docker collector-kill-restart: deploy ${deployedS.toFixed(1)} s, run + destroy ${ranS.toFixed(1)} s; sent ${l.sent}, stored ${l.stored}, lost ${l.lost}, missing ${JSON.stringify(l.missingRanges)}; timeline ${JSON.stringify(record.timeline!.map((e) => [e.name, e.startS?.toFixed(2), e.endS?.toFixed(2), e.status, e.output]))}`,
    );
  }, 600_000);
});
