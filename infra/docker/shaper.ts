/**
 * The tc step of a docker host's network cap, as a shell script run by the host's shaper container: a container
 * with NET_ADMIN sharing the host container's network namespace (`--network container:<name>`), so the component
 * images need neither tc nor NET_ADMIN themselves.
 *
 * Egress: tbf on eth0 (rate in bit/s, tc-tbf(8); the same burst and latency as the local platform), under a netem
 * root when delay or loss is asked. Ingress: an ingress qdisc whose u32 match-all filter redirects every packet
 * (act_mirred) to an ifb device shaped by the same tbf, so both directions are capped as libvirt's <bandwidth>
 * inbound/outbound does. (Not a police action: kernels without act_police and cls_matchall, like this machine's
 * 6.18, refuse it; ifb + mirred + u32 is what tc-mirred(8) documents for ingress shaping.) The script
 * prints `tc -s qdisc show` for the read-back and then sleeps, so the shaper stays up (and visible) with its host.
 */
import { tbfBurstFor, TBF_LATENCY_MS } from "../local/netns.ts";

/** The intermediate functional block device that carries the host's inbound traffic through a tbf. */
export const SHAPER_IFB = "ifb0";
const IFB = SHAPER_IFB;

export interface Shaping {
  rateBytesPerSec?: number;
  burstBytes?: number;
  delayMs?: number;
  lossPercent?: number;
}

/** POSIX sh script applying `s` to `dev`, then sleeping (the shaper container's command). */
export function shaperScript(s: Shaping, dev = "eth0"): string {
  return (
    [
      ...shapeLines(s, dev, false),
      `echo "ingestbench shaper: applied on ${dev}"`,
      "exec sleep infinity",
    ].join("\n") + "\n"
  );
}

/**
 * POSIX sh script replacing what shapes `dev` by `s` and printing `tc -s qdisc show` of it (and of the ifb), run again
 * in a network namespace that was shaped before: a fault step's link change on the docker platform
 * (harness/remote/docker-steps.ts), through the shaper container or a NET_ADMIN helper of the shaper image.
 */
export function reshapeScript(s: Shaping, dev = "eth0"): string {
  return [...shapeLines(s, dev, true), `tc -s qdisc show dev ${IFB} 2>/dev/null || true`].join("\n") + "\n";
}

/** The tc lines; `again`: the namespace may hold an ifb and its qdisc from an earlier shaping. */
function shapeLines(s: Shaping, dev: string, again: boolean): string[] {
  const lines = [
    "set -eu",
    `tc qdisc del dev ${dev} root 2>/dev/null || true`,
    `tc qdisc del dev ${dev} ingress 2>/dev/null || true`,
  ];
  if (again) lines.push(`tc qdisc del dev ${IFB} root 2>/dev/null || true`);
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
      again
        ? `ip link show ${IFB} >/dev/null 2>&1 || ip link add ${IFB} type ifb`
        : `ip link add ${IFB} type ifb`,
      `ip link set ${IFB} up`,
      `tc qdisc add dev ${dev} handle ffff: ingress`,
      `tc filter add dev ${dev} parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev ${IFB}`,
      `tc qdisc add dev ${IFB} root handle 1: ${tbf}`,
    );
  }
  lines.push(`tc -s qdisc show dev ${dev}`);
  return lines;
}
