// A zx step (harness/runner/steps.ts StepContext): the state of every process of each collector host, from
// /proc/<pid>/stat (proc(5): field 3 is the state, "T" = stopped by a signal). Returns "collector: 1234 T, 1240 T".
import { readFile } from "node:fs/promises";

export default async function processStates(ctx) {
  const lines = [];
  for (const [role, host] of Object.entries(ctx.hosts)) {
    if (!role.startsWith("collector")) continue;
    const states = [];
    for (const pid of await host.pids()) {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
      // the command name (field 2) is in parentheses and may hold spaces: the state follows the last ")"
      if (stat) states.push(`${pid} ${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]}`);
    }
    lines.push(`${role}: ${states.join(", ")}`);
  }
  return lines.join("\n");
}
