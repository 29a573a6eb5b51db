/**
 * A harness process to be killed, for gc tests on the real Docker engine: it registers a docker deployment as
 * `ingestbench bench` does (harness/provision/deployments.ts), creates what the docker platform's Pulumi program
 * creates for a two-host stack (the stack network, a data volume, the sink and loadgen containers, with the
 * labels of infra/docker/stack.ts stackLabels and host.ts) through the Engine API, writes a run.json that says
 * "running", and runs a process in the loadgen container through `docker exec` (harness/remote/shell.ts), printing
 * `phase deploy`, `phase load`, `phase drain` on stdout as it gets there. It never cleans up: the test SIGKILLs it.
 *
 * argv: <stack> <results dir>. Environment: DOCKER_HOST, TMPDIR (where the registry goes).
 */
import { writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { registerDeployment } from "../../harness/provision/deployments.ts";
import { dockerExecShell } from "../../harness/remote/shell.ts";
import { dockerClient } from "../../infra/docker/gc.ts";

const [stack, results] = process.argv.slice(2) as [string, string];
const docker = await dockerClient();
const labels = {
  "ingestbench.managed-by": "pulumi",
  "ingestbench.stack": stack,
  "ingestbench.owner": "test",
  "ingestbench.expiry-seconds": "14400",
};
const say = (s: string) => void process.stdout.write(`${s}\n`);

const deployment = registerDeployment(stack, "docker", "bench");
const net = `ib-${stack}`;
await docker.createNetwork({ Name: net, Driver: "bridge", Labels: labels });
await docker.createVolume({
  Name: `ib-${stack}-sink-data`,
  Labels: { ...labels, "ingestbench.host": "sink" },
});
say("phase deploy");
// the deploy goes on slowly, so that a kill lands in it
await new Promise((r) => setTimeout(r, 1500));
for (const host of ["sink", "loadgen"]) {
  const c = await docker.createContainer({
    name: `ib-${stack}-${host}`,
    Image: "ingestbench/debian:bookworm",
    Cmd: ["sleep", "infinity"],
    Hostname: host,
    Labels: {
      ...labels,
      "ingestbench.host": host,
      "ingestbench.component": host === "sink" ? "postgres" : "loadgen",
    },
    HostConfig: {
      NetworkMode: net,
      NanoCpus: 250_000_000,
      Memory: 64 * 1024 * 1024,
      ...(host === "sink"
        ? { Mounts: [{ Type: "volume", Source: `ib-${stack}-sink-data`, Target: "/data" }] }
        : {}),
    },
  });
  await c.start();
}
const dir = path.join(results, stack, "quickstart", "run-1");
mkdirSync(dir, { recursive: true });
writeFileSync(
  path.join(dir, "run.json"),
  JSON.stringify({ status: "running", finishedAt: null, error: null }),
);
deployment.addRecord(path.join(dir, "run.json"));
// the load: a generator-like process in the loadgen container, attached through docker exec -i
const shell = dockerExecShell("loadgen", `ib-${stack}-loadgen`);
shell.spawn("sh", ["-c", "while :; do echo x; sleep 0.1; done"], { stdio: ["pipe", "ignore", "ignore"] });
say("phase load");
await new Promise((r) => setTimeout(r, 1500));
say("phase drain");
await new Promise((r) => setTimeout(r, 600_000));
