/**
 * The gRPC door's second read of a SendMessage's user properties (lib/grpc/wire-properties.ts) stops past what a
 * message may have: an empty map entry costs two bytes on the wire, so a small request could otherwise name millions
 * of them, each an array kept beside the request. Entries within the bound are read in wire order, duplicates kept.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sendRequestProperties } from "../../lib/grpc/wire-properties.js";
import { MAX_PROPERTY_COUNT } from "../../lib/protocol/index.js";

/** A protobuf varint. */
function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

/** A length-delimited field. */
const field = (num: number, body: number[]): number[] => [(num << 3) | 2, ...varint(body.length), ...body];
const text = (s: string) => [...Buffer.from(s, "utf8")];

/** A SendMessageRequest (messages = 1) of one Message whose user_properties (= 2) are `entries`. */
const request = (entries: number[][]) => Uint8Array.from(field(1, entries.flat()));

describe("a SendMessage's user properties as sent", () => {
  it("are read in wire order, a duplicate key kept", () => {
    const entry = (k: string, v: string) => field(2, [...field(1, text(k)), ...field(2, text(v))]);
    assert.deepEqual(sendRequestProperties(request([entry("a", "1"), entry("b", "2"), entry("a", "3")])), [
      [
        ["a", "1"],
        ["b", "2"],
        ["a", "3"],
      ],
    ]);
  });

  it("stop one past the bound however many the request names", () => {
    const empty = field(2, []); // two bytes: an entry with no key and no value
    const read = sendRequestProperties(request(Array.from({ length: 100_000 }, () => empty)));
    assert.equal(read?.[0]?.length, MAX_PROPERTY_COUNT + 1, "one past the bound: the broker's check refuses it");
  });
});
