// A zx step (harness/runner/steps.ts StepContext): the qdiscs on the sink's data-plane interface, read with zx's `$`
// (`tc -n <netns> qdisc show`), and the sink's open TCP connections through the platform's exec (`ss -tn` in the host).
export default async function linkQdiscs(ctx) {
  const sink = ctx.hosts.sink;
  if (sink.netns) ctx.log((await ctx.$`tc -n ${sink.netns} qdisc show`).stdout.trim());
  const ss = await ctx.exec("sink", "ss -tn state established | tail -n +2 | wc -l");
  ctx.log(`established TCP connections on the sink: ${ss.stdout.trim()}`);
}
