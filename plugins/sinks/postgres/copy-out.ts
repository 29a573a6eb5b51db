/**
 * `COPY … TO STDOUT` read straight off a node-postgres connection's socket, for the verifier's passes of every row
 * (./verifier.ts scan()): the CopyData frames are stripped in place and the payload handed on a socket chunk at a
 * time, with no object per row.
 *
 * Why not pg-copy-streams' `to` (which the pg-copy generator's `from` keeps using): PostgreSQL sends one CopyData
 * message per row ("Messages sent from the backend will always correspond to single data rows", PostgreSQL
 * documentation §54.7 "Message Formats", CopyData), and pg-copy-streams takes a Buffer of each message's payload before
 * joining them: most of the harness's CPU of a pass
 * (the binary decoding, ./binary-copy.ts, a small part), on the core the sink's own backend needs
 * (docs/measurements.md, "Figures moved from code comments").
 *
 * Protocol (PostgreSQL §54.2.6 "COPY Operations", §54.7): after the simple Query, the backend sends CopyOutResponse
 * ('H'), CopyData ('d') messages, CopyDone ('c'), then CommandComplete ('C') and ReadyForQuery ('Z'); NoticeResponse
 * ('N'), ParameterStatus ('S') and NotificationResponse ('A') may come in between; an ErrorResponse ('E') ends the copy.
 * Each message is a type byte and an int32 length that counts itself. The socket is taken from node-postgres's own
 * 'data' listener (its Connection's protocol parser, the only one) from the query's submission until CopyDone or an
 * ErrorResponse, and every message but CopyData is passed on to that listener (a notice still reaches the client's
 * 'notice' event); the bytes from the copy's end on go back to it, so that node-postgres parses the end of the
 * command (CommandComplete, ReadyForQuery, or the error, which rejects `done`) as for any query.
 */
import type { Socket } from "node:net";

/** What node-postgres hands a submittable (pg's Connection): its socket and `query` (a simple Query message). */
interface PgConnection {
  stream: Socket;
  query(text: string): void;
}

type DataListener = (chunk: Buffer) => void;

/** Message types (PostgreSQL §54.7). */
const COPY_DATA = 0x64,
  NOTICE = 0x4e,
  PARAMETER_STATUS = 0x53,
  NOTIFICATION = 0x41,
  COPY_OUT = 0x48;

/**
 * A node-postgres submittable (`client.query(new CopyOutQuery(sql, onPayload))`) for `COPY … TO STDOUT`: `onPayload`
 * gets the copy's data stream (the CopyData payloads, in order, joined: for FORMAT binary, the file format that
 * ./binary-copy.ts reads) in pieces split anywhere, each valid only during the call. `done` resolves with the rows
 * COPY reported, once the connection is ready again.
 * Errors (`done` rejects): the server's error (a node-postgres DatabaseError); the first error `onPayload` threw (the
 * rest of the copy is read and dropped, so that the connection stays in step); a statement that returns rows; a socket that does not have exactly one
 * 'data' listener at submission (not a node-postgres connection this reader knows).
 */
export class CopyOutQuery {
  readonly done: Promise<number>;
  private resolve!: (rows: number) => void;
  private reject!: (err: unknown) => void;
  private socket: Socket | null = null;
  private pgData: DataListener | null = null;
  /** the message header being read: its bytes so far (type byte and int32 length) */
  private readonly head = new Uint8Array(5);
  private headLen = 0;
  /** bytes of the current message's body not yet read */
  private left = 0;
  private type = 0;
  private rows = 0;
  private failure: unknown = null;
  private readonly listener: DataListener = (chunk) => this.onData(chunk);

  constructor(
    readonly text: string,
    private readonly onPayload: (payload: Uint8Array) => void,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** node-postgres calls this when the query's turn comes. */
  submit(connection: PgConnection): Error | undefined {
    const socket = connection.stream;
    const listeners = socket.listeners("data") as DataListener[];
    if (listeners.length !== 1)
      return new Error(
        `COPY TO: the connection's socket has ${listeners.length} 'data' listeners, not node-postgres's one`,
      );
    this.socket = socket;
    this.pgData = listeners[0]!;
    socket.removeListener("data", this.pgData);
    socket.on("data", this.listener);
    connection.query(this.text);
    return undefined;
  }

  /**
   * Reads the frames of `chunk`: CopyData bodies are moved down within the chunk itself (copyWithin: no allocation)
   * and handed on as one piece; any other message of a running copy (CopyOutResponse, a notice, a parameter status,
   * a notification) goes to node-postgres as it comes, so that the client emits its events; at CopyDone, an
   * ErrorResponse or any message a copy does not send, the rest of the chunk, from that message, goes back to
   * node-postgres with the socket.
   */
  private onData(chunk: Buffer): void {
    let p = 0;
    let out = 0;
    const end = chunk.length;
    while (p < end) {
      if (this.left === 0 && this.headLen < 5) {
        // a new message: its type byte decides before its length is read whether the copy has ended
        if (this.headLen === 0 && !isCopyMessage(chunk[p]!)) {
          this.hand(chunk, out, p);
          return;
        }
        while (this.headLen < 5 && p < end) this.head[this.headLen++] = chunk[p++]!;
        if (this.headLen < 5) break;
        this.type = this.head[0]!;
        this.left =
          ((this.head[1]! << 24) | (this.head[2]! << 16) | (this.head[3]! << 8) | this.head[4]!) - 4;
        if (this.left < 0) {
          // a length below its own 4 bytes: no frame after it can be found; the connection is ended, and `done` rejects
          this.failure ??= new Error(
            `COPY TO: a message of type 0x${this.type.toString(16)} with length ${this.left + 4}, below 4`,
          );
          const socket = this.socket;
          this.detach();
          socket?.destroy(this.failure as Error);
          return;
        }
        if (this.type !== COPY_DATA) this.pgData?.(Buffer.from(this.head));
        if (this.left === 0) this.headLen = 0;
        continue;
      }
      const n = Math.min(this.left, end - p);
      if (this.type === COPY_DATA) {
        if (out !== p) chunk.copyWithin(out, p, p + n);
        out += n;
      } else this.pgData?.(chunk.subarray(p, p + n));
      p += n;
      this.left -= n;
      if (this.left === 0) this.headLen = 0;
    }
    this.give(chunk, out);
  }

  /** The payload chunk[0, out) to onPayload, unless it has already failed. */
  private give(chunk: Buffer, out: number): void {
    if (out === 0 || this.failure !== null) return;
    try {
      this.onPayload(chunk.subarray(0, out));
    } catch (err) {
      this.failure = err;
    }
  }

  /** The copy has ended at chunk[p]: the payload before it on, the socket back to node-postgres with the rest. */
  private hand(chunk: Buffer, out: number, p: number): void {
    this.give(chunk, out);
    const pgData = this.detach();
    if (pgData && p < chunk.length) pgData(chunk.subarray(p));
  }

  private detach(): DataListener | null {
    const { socket, pgData } = this;
    if (!socket || !pgData) return null;
    socket.removeListener("data", this.listener);
    socket.on("data", pgData);
    this.socket = null;
    this.pgData = null;
    return pgData;
  }

  handleCommandComplete(msg: { text?: string }): void {
    const m = /^COPY (\d+)/.exec(msg.text ?? "");
    if (m) this.rows = Number(m[1]);
  }

  handleReadyForQuery(): void {
    if (this.failure !== null) this.reject(this.failure);
    else this.resolve(this.rows);
  }

  handleError(err: unknown): void {
    this.detach();
    this.reject(this.failure ?? err);
  }

  /** A statement that returns rows is not a COPY TO: `done` rejects once it has ended. */
  handleRowDescription(): void {
    this.failure ??= new Error(`COPY TO: the statement returned rows, not a copy: ${this.text}`);
  }

  // node-postgres calls these for messages of other commands; a COPY TO has none
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}

/** Messages a running COPY TO sends (its end, CopyDone or an ErrorResponse, is not one). */
function isCopyMessage(type: number): boolean {
  return (
    type === COPY_DATA ||
    type === COPY_OUT ||
    type === NOTICE ||
    type === PARAMETER_STATUS ||
    type === NOTIFICATION
  );
}
