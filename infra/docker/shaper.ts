/**
 * The tc step of a docker host's network cap, as a shell script run by the host's shaper container: a container
 * with NET_ADMIN sharing the host container's network namespace (`--network container:<name>`), so the component
 * images need neither tc nor NET_ADMIN themselves.
 *
 * Egress: tbf on eth0 (rate in bit/s, tc-tbf(8); the same burst and latency as the local platform), under a netem
 * root when delay or loss is asked. Ingress: an ingress qdisc with a matchall police filter at the same rate
 * (drop above it), so both directions are capped as libvirt's <bandwidth> inbound/outbound does. The script
 * prints `tc -s qdisc show` for the read-back and then sleeps, so the shaper stays up (and visible) with its host.
 */
import { tbfBurstFor, TBF_LATENCY_MS } from "../local/netns.ts";

export interface Shaping {
  rateBytesPerSec?: number;
  burstBytes?: number;
  delayMs?: number;
  lossPercent?: number;
}

/** POSIX sh script applying `s` to `dev`. */
export function shaperScript(s: Shaping, dev = "eth0"): string {
  const lines = ["set -eu", `tc qdisc del dev ${dev} root 2>/dev/null || true`, `tc qdisc del dev ${dev} ingress 2>/dev/null || true`];
  const netem: string[] = [];
  if (s.delayMs !== undefined) netem.push(`delay ${s.delayMs}ms`);
  if (s.lossPercent !== undefined) netem.push(`loss ${s.lossPercent}%`);
  const tbf =
    s.rateBytesPerSec !== undefined
      ? `tbf rate ${Math.round(s.rateBytesPerSec * 8)}bit burst ${s.burstBytes ?? tbfBurstFor(s.rateBytesPerSec)} latency ${TBF_LATENCY_MS}ms`
      : undefined;
  if (netem.length > 0) {
    lines.push(`tc qdisc add dev ${dev} root handle 1: netem ${netem.join(" ")}`);
    if (tbf) lines.push(`tc qdisc add dev ${dev} parent 1: handle 2: ${tbf}`);
  } else if (tbf) {
    lines.push(`tc qdisc add dev ${dev} root handle 1: ${tbf}`);
  }
  if (s.rateBytesPerSec !== undefined) {
    lines.push(
      `tc qdisc add dev ${dev} handle ffff: ingress`,
      `tc filter add dev ${dev} parent ffff: matchall action police rate ${Math.round(s.rateBytesPerSec * 8)}bit burst ${s.burstBytes ?? tbfBurstFor(s.rateBytesPerSec)} conform-exceed drop`,
    );
  }
  lines.push(`tc -s qdisc show dev ${dev}`, `echo "ingestbench shaper: applied on ${dev}"`, "exec sleep infinity");
  return lines.join("\n") + "\n";
}
