/**
 * @module END_TRANSACTION spoken frame by frame (test/support/remoting-raw.ts): a producer group or transaction id
 * the HTTP end would refuse (too long, blanks, characters an id never has) is answered MESSAGE_ILLEGAL with a
 * bounded remark, not handed to the store as a key; a well-formed id of no transaction ends nothing and is answered.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestCode, ResponseCode } from "../../lib/remoting/index.js";
import { RawRemoting } from "../support/remoting-raw.js";
import { useTestServer } from "../support/server-fixture.js";

const COMMIT = "8";

describe("END_TRANSACTION's ids over the remoting door", () => {
  const ctx = useTestServer("local");

  it("refuses ids outside the HTTP end's bounds as MESSAGE_ILLEGAL", async () => {
    const c = await RawRemoting.open(ctx.server.server.port);
    const end = (producerGroup: string, transactionId: string) =>
      c.request({
        code: RequestCode.END_TRANSACTION,
        extFields: { producerGroup, transactionId, commitOrRollback: COMMIT, tranStateTableOffset: "0" },
      });
    try {
      const hostile: Array<[string, string, string]> = [
        ["a transaction id of 100,000 characters", "TxGroup", "A".repeat(100_000)],
        ["a transaction id with a slash", "TxGroup", "AB/CD"],
        ["a producer group of 100,000 characters", "G".repeat(100_000), "0A0B0C0D"],
        ["a producer group with a blank", "Tx Group", "0A0B0C0D"],
      ];
      for (const [what, group, id] of hostile) {
        const answer = await end(group, id);
        assert.equal(answer.code, ResponseCode.MESSAGE_ILLEGAL, `${what}: ${answer.remark}`);
        assert.ok((answer.remark ?? "").length <= 1024, `${what}: a bounded remark`);
      }
      const unknown = await end("TxGroup", "0A0B0C0D0E0F");
      assert.notEqual(unknown.code, ResponseCode.MESSAGE_ILLEGAL, unknown.remark);
    } finally {
      c.close();
    }
  });
});
