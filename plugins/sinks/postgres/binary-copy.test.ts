// The binary COPY reader against a stream built byte by byte from PostgreSQL's documentation ("COPY", "Binary
// Format": signature, flags, header extension, tuples of int16 field count and int32-length fields, −1 = NULL,
// int2/int4/int8 and tid (tidsend: uint32 block, uint16 offset),
// trailer −1), fed whole, split at every byte boundary, and one byte at a time (byte-level vectors, no server).
import { describe, expect, it } from "vitest";
import { BINARY_COPY_SIGNATURE, BinaryCopyReader, type CopyInt } from "./binary-copy.ts";

const be = (n: number, bytes: 2 | 4): number[] =>
  bytes === 2
    ? [(n >> 8) & 0xff, n & 0xff]
    : [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const int8 = (v: bigint): number[] =>
  Array.from({ length: 8 }, (_, i) => Number((BigInt.asUintN(64, v) >> BigInt(56 - 8 * i)) & 0xffn));
const field = (bytes: number[] | null): number[] =>
  bytes === null ? be(-1, 4) : [...be(bytes.length, 4), ...bytes];

const tuples: CopyInt[][] = [
  [5, 7],
  [null, -1],
  [-2, null],
  [2147483647, 2n ** 60n],
  [-2147483648, -(2n ** 62n)],
  [0, Number.MAX_SAFE_INTEGER],
  [1, -Number.MAX_SAFE_INTEGER],
  [3, -(2n ** 53n)],
  [-7], // an int2 field
  [], // a tuple of no fields
  [4, 9, 3 * 65536 + 7], // gen, seq, ctid (3,7): a tid field (block uint32, offset uint16)
  [4, 10, 4294967295 * 65536 + 65535], // the largest tid
];
const tid = (v: number): number[] => [...be(Math.floor(v / 65536), 4), ...be(v % 65536, 2)];
const encode = (v: CopyInt, i: number, row: CopyInt[]): number[] =>
  v === null
    ? field(null)
    : row.length === 1
      ? field(be(Number(v), 2))
      : i === 0
        ? field(be(Number(v), 4))
        : i === 2
          ? field(tid(Number(v)))
          : field(int8(BigInt(v)));
const stream = Uint8Array.from([
  ...BINARY_COPY_SIGNATURE,
  ...be(0, 4), // flags
  ...be(3, 4),
  0xaa,
  0xbb,
  0xcc, // a header extension of 3 bytes, skipped
  ...tuples.flatMap((row) => [...be(row.length, 2), ...row.flatMap((v, i) => encode(v, i, row))]),
  ...be(-1, 2), // trailer
]);

function read(chunks: Uint8Array[]): CopyInt[][] {
  const out: CopyInt[][] = [];
  const r = new BinaryCopyReader((f) => out.push([...f]));
  for (const c of chunks) r.push(c);
  r.end();
  expect(r.tuples).toBe(out.length);
  return out;
}

describe("BinaryCopyReader: PostgreSQL's binary COPY format (byte-level vectors from the documentation)", () => {
  it("reads the same tuples whole, split at every byte boundary, and one byte at a time", () => {
    expect(read([stream])).toEqual(tuples);
    for (let i = 0; i <= stream.length; i++)
      expect(read([stream.subarray(0, i), stream.subarray(i)])).toEqual(tuples);
    expect(read(Array.from(stream, (b) => Uint8Array.of(b)))).toEqual(tuples);
  });

  it("refuses a truncated stream, a bad signature, OIDs, a non-integer field and bytes after the trailer", () => {
    for (let i = 0; i < stream.length; i++)
      expect(() => read([stream.subarray(0, i)])).toThrow(/ended at byte \d+ before its trailer/);
    const bad = stream.slice();
    bad[7] = 0x00;
    expect(() => read([bad])).toThrow(/not the binary COPY signature at byte 7/);
    const oids = stream.slice();
    oids[12] = 0x01; // flags bit 16 (bytes 11..14, most significant first)
    expect(() => read([oids])).toThrow(/flags 0x10000/);
    const text = Uint8Array.from([
      ...stream.subarray(0, 22),
      ...be(1, 2),
      ...field([0x61, 0x62, 0x63]),
      ...be(-1, 2),
    ]);
    expect(() => read([text])).toThrow(/a field of 3 bytes .* at byte 24/);
    expect(() => read([stream, Uint8Array.of(0)])).toThrow(/1 bytes after the trailer/);
  });
});
