import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import {
  createUniqId,
  MessageIdGenerator,
  parseUniqId,
  setDefaultMessageIdGenerator,
} from "../../lib/core/message-id.js";
import {
  createNodeMessageIdGenerator,
  installNodeMessageIdGenerator,
  newMessageId,
} from "../../lib/core/message-id-node.js";

const ID = /^[0-9A-F]{32}$/;
const at = (iso: string) => Date.parse(iso);

/** A generator whose clock reads the given instants in turn (the last one repeats). */
function fixed(instants: number[], options: { ip?: string; pid?: number; hash?: number } = {}) {
  let i = 0;
  const now = () => instants[Math.min(i++, instants.length - 1)]!;
  return new MessageIdGenerator({ ip: "10.0.0.7", pid: 4242, hash: 0x1234abcd, ...options, now });
}

describe("MessageIdGenerator", () => {
  it("lays out ip, pid, hash, ms in the month and counter as RocketMQ does (an id made on the JVM)", () => {
    // MessageClientIDSetter's layout with ip 10.0.0.7, pid 4242, hash 0x1234ABCD at 2024-03-05T10:20:30.456Z (UTC).
    const ids = fixed([at("2024-03-05T10:20:30.456Z")]);
    assert.equal(ids.prefix, "0A00000710921234ABCD");
    assert.equal(ids.next(), "0A00000710921234ABCD16D187780000");
    assert.equal(ids.next(), "0A00000710921234ABCD16D187780001");
  });

  it("keeps the low 16 bits of the pid and 32 bits of the hash", () => {
    assert.equal(fixed([0], { pid: 0x12345, hash: -1 }).prefix, "0A0000072345FFFFFFFF");
  });

  it("writes ms past 2^31 (day 25 on) as Java's int does, and parses them back", () => {
    const late = at("2024-03-30T10:00:00.000Z");
    const id = fixed([late]).next();
    assert.equal(id.slice(20, 28), "977DBD00"); // from the JVM: (int) -1753367296
    assert.equal(parseUniqId(id, { now: late + 1 }).timestamp, late);
  });

  it("counts from the new month after a month ends", () => {
    const ids = fixed([at("2024-03-31T23:59:59.999Z"), at("2024-04-01T00:00:00.000Z"), at("2024-04-01T00:00:00.005Z")]);
    assert.equal(ids.next().slice(20, 28), (31 * 86_400_000 - 1).toString(16).toUpperCase());
    assert.equal(ids.next().slice(20, 28), "00000000");
    assert.equal(ids.next().slice(20, 28), "00000005");
  });

  it("writes 0 when the clock steps back a little across a month start (NTP), as RocketMQ does", () => {
    const ids = fixed([at("2024-04-01T00:00:00.100Z"), at("2024-03-31T23:59:59.900Z")]);
    ids.next();
    assert.equal(ids.next().slice(20, 28), "00000000");
  });

  it("wraps the counter after 65,536 ids", () => {
    const ids = fixed([at("2024-03-05T00:00:00.000Z")]);
    const first = ids.next();
    for (let i = 1; i < 65_536; i++) ids.next();
    assert.equal(ids.next(), first);
  });

  it("makes 100,000 distinct, well-formed ids", () => {
    const ids = new MessageIdGenerator();
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      const id = ids.next();
      assert.ok(ID.test(id), id);
      assert.ok(id.startsWith(ids.prefix));
      seen.add(id);
    }
    assert.equal(seen.size, 100_000);
  });

  it("draws a random prefix when given no process values", () => {
    assert.notEqual(new MessageIdGenerator().prefix, new MessageIdGenerator().prefix);
  });

  it("refuses an ip that is not IPv4", () => {
    for (const ip of ["10.0.0", "10.0.0.256", "::1", "a.b.c.d"]) {
      assert.throws(
        () => new MessageIdGenerator({ ip }),
        (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL),
        ip,
      );
    }
    assert.equal(new MessageIdGenerator({ ip: [192, 168, 1, 2] }).prefix.slice(0, 8), "C0A80102");
  });
});

describe("parseUniqId", () => {
  it("round-trips ip, pid and time", () => {
    const made = at("2024-03-05T10:20:30.456Z");
    const id = fixed([made], { ip: "172.31.5.200", pid: 65535 }).next();
    assert.deepEqual(parseUniqId(id, { now: made + 60_000 }), { ip: "172.31.5.200", pid: 65535, timestamp: made });
  });

  it("round-trips with the real clock", () => {
    const before = Date.now();
    const id = new MessageIdGenerator({ ip: "10.1.2.3", pid: 77 }).next();
    const info = parseUniqId(id);
    assert.equal(info.ip, "10.1.2.3");
    assert.equal(info.pid, 77);
    assert.ok(info.timestamp >= before && info.timestamp <= Date.now(), `${info.timestamp}`);
  });

  it("keeps an id read in the ms it was made in this month (RocketMQ's >= would move it back a month)", () => {
    const made = at("2024-03-05T10:20:30.456Z");
    assert.equal(parseUniqId(fixed([made]).next(), { now: made }).timestamp, made);
  });

  it("places the time in the previous month when it would otherwise be in the future", () => {
    const made = at("2024-03-30T10:00:00.000Z");
    const id = fixed([made]).next();
    assert.equal(parseUniqId(id, { now: at("2024-04-02T00:00:00.000Z") }).timestamp, made);
  });

  it("round-trips in the local time zone too", () => {
    const made = new Date(2024, 1, 29, 13, 14, 15, 16).getTime();
    const ids = new MessageIdGenerator({ ip: "10.0.0.1", pid: 1, now: () => made, timeZone: "local" });
    assert.equal(parseUniqId(ids.next(), { now: made + 1, timeZone: "local" }).timestamp, made);
  });

  it("reads a Java client's IPv6 id (56 characters)", () => {
    const ip = "20010db8000000000000000000000001";
    const id = `${ip}0050ABCDEF01${"00000010"}0001`;
    assert.equal(id.length, 56);
    const info = parseUniqId(id, { now: at("2024-03-05T00:00:00.000Z") });
    assert.equal(info.ip, "2001:0db8:0000:0000:0000:0000:0000:0001");
    assert.equal(info.pid, 0x50);
    assert.equal(info.timestamp, at("2024-03-01T00:00:00.016Z"));
  });

  it("accepts lower-case hex and refuses anything else", () => {
    const id = fixed([at("2024-03-05T00:00:00.000Z")]).next();
    assert.equal(parseUniqId(id.toLowerCase(), { now: at("2024-03-06T00:00:00.000Z") }).ip, "10.0.0.7");
    for (const bad of ["", "ABC", `${id}0`, `${id.slice(0, 31)}G`]) {
      assert.throws(
        () => parseUniqId(bad),
        (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL),
        bad,
      );
    }
  });
});

describe("createUniqId and the node generator", () => {
  it("makes ids from the default generator, which can be replaced", () => {
    assert.ok(ID.test(createUniqId()));
    const mine = fixed([at("2024-03-05T00:00:00.000Z")]);
    setDefaultMessageIdGenerator(mine);
    assert.ok(createUniqId().startsWith("0A00000710921234ABCD"));
  });

  it("builds a node generator from this process: its pid, and its address unless loopback", () => {
    const ids = createNodeMessageIdGenerator();
    assert.equal(ids.prefix.slice(8, 12), (process.pid & 0xffff).toString(16).toUpperCase().padStart(4, "0"));
    assert.equal(createNodeMessageIdGenerator({ ip: "10.9.8.7" }).prefix.slice(0, 8), "0A090807");
  });

  it("installs one node generator behind createUniqId and newMessageId", () => {
    const installed = installNodeMessageIdGenerator();
    assert.equal(installNodeMessageIdGenerator(), installed);
    assert.ok(createUniqId().startsWith(installed.prefix));
    const id = newMessageId();
    assert.ok(ID.test(id) && id.startsWith(installed.prefix));
    assert.equal(parseUniqId(id).pid, process.pid & 0xffff);
  });
});
