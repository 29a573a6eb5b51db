/**
 * A TCP syslog receiver on 127.0.0.1 for tests: parses RFC 6587 octet-counted frames ("MSG-LEN SP SYSLOG-MSG") and
 * records each frame's structured-data seq (-1 when a frame has none); the first frame of seq 0 is kept verbatim.
 */
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";

export interface SyslogReceiver {
  server: Server;
  port: number;
  /** seq of every frame, in arrival order */
  seqs: number[];
  /** the frames whose seq is 0, verbatim */
  frames: string[];
  sockets: Socket[];
  /** resolves once every connection opened so far has closed (at once when none is open) */
  idle(): Promise<void>;
}

/** Start a receiver on an ephemeral port. A frame with a bad MSG-LEN throws in the socket's data handler. */
export async function startSyslogReceiver(): Promise<SyslogReceiver> {
  const seqs: number[] = [];
  const frames: string[] = [];
  const sockets: Socket[] = [];
  let open = 0;
  let waiters: Array<() => void> = [];
  const server = createServer((s) => {
    sockets.push(s);
    open++;
    let buf = Buffer.alloc(0);
    s.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const sp = buf.indexOf(0x20);
        if (sp < 0) break;
        const len = Number(buf.subarray(0, sp).toString("latin1"));
        if (!Number.isInteger(len) || len <= 0)
          throw new Error(`bad MSG-LEN ${buf.subarray(0, sp).toString()}`);
        if (buf.length < sp + 1 + len) break;
        const msg = buf.subarray(sp + 1, sp + 1 + len).toString("utf8");
        buf = buf.subarray(sp + 1 + len);
        const m = / seq="(\d+)"/.exec(msg);
        const seq = m ? Number(m[1]) : -1;
        if (seq === 0) frames.push(msg);
        seqs.push(seq);
      }
    });
    s.on("close", () => {
      if (--open === 0) {
        for (const w of waiters) w();
        waiters = [];
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const idle = (): Promise<void> => (open === 0 ? Promise.resolve() : new Promise((r) => waiters.push(r)));
  return { server, port: (server.address() as AddressInfo).port, seqs, frames, sockets, idle };
}
