/**
 * @module Connection floods on the HTTP port that the remoting door shares, on both storage modes, from this
 * process (no Java): 1,100 remoting connections opened at once, each sending the start of a frame and nothing
 * more: the door takes 1,024 and closes the rest, a new remoting client is refused while it is full and answered
 * once a slot frees; then 2,148 connections that send nothing at all: at most 2,048 wait for their first byte at
 * once (the one waiting longest is closed to make room). Throughout, HTTP on the same port answers, and nothing is
 * written. The assertions are on counts and answers, never on time.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { describe, it } from "node:test";
import { MAX_UNDECIDED_CONNECTIONS, RequestCode } from "../../lib/remoting/index.js";
import { waitUntil } from "../support/consumer-helpers.js";
import { json, RawRemoting } from "../support/remoting-raw.js";
import { useTestServer } from "../support/server-fixture.js";

const DOOR_LIMIT = 1024;

interface Flood {
  sockets: Socket[];
  /** Sockets the server closed. */
  closed(): number;
  end(): Promise<void>;
}

/** Opens `count` connections at once; each writes `first` (if any) once connected, then nothing. */
async function flood(port: number, count: number, first?: Uint8Array): Promise<Flood> {
  let closed = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect(port, "127.0.0.1");
          s.on("error", () => undefined);
          s.once("close", () => closed++);
          s.once("connect", () => {
            if (first !== undefined) s.write(first);
            resolve(s);
          });
          s.once("error", reject);
        }),
    ),
  );
  return {
    sockets,
    closed: () => closed,
    async end() {
      await Promise.all(
        sockets.map((s) => (s.destroyed ? undefined : new Promise((resolve) => s.once("close", resolve).destroy()))),
      );
    },
  };
}

for (const mode of ["local", "aws"] as const) {
  describe(`connection floods on the remoting door's port (${mode})`, () => {
    const ctx = useTestServer(mode);
    const port = () => ctx.server.server.port;
    const health = async () => (await fetch(`${ctx.server.url}/health`, { headers: { connection: "close" } })).status;
    const topics = async () => {
      const c = await RawRemoting.open(port());
      try {
        const answer = await c.request({ code: RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER });
        return (json(answer) as { topicList: string[] }).topicList.sort();
      } finally {
        c.close();
      }
    };

    it("past 1,024 remoting connections the door closes new ones; HTTP still answers; a freed slot serves again", async () => {
      const door = ctx.server.server.remoting;
      assert.ok(door !== undefined);
      const before = await topics();
      const heapBefore = process.memoryUsage().heapUsed;
      // A frame's 4-byte length (first byte 0: remoting) and nothing after it: each holds a slot.
      const partial = Buffer.from([0, 0, 0, 64]);
      const hostile = await flood(port(), DOOR_LIMIT + 76, partial);
      try {
        await waitUntil(
          () => door.connections === DOOR_LIMIT && hostile.closed() === 76,
          `the door holds ${DOOR_LIMIT} and closed the rest (holds ${door.connections}, closed ${hostile.closed()})`,
        );
        assert.equal(await health(), 200, "HTTP on the same port still answers");
        const refused = await RawRemoting.open(port());
        void refused.request({ code: RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER });
        await refused.closed;
        assert.equal(refused.received, 0, "a client past the limit is closed without an answer");
        assert.ok(process.memoryUsage().heapUsed - heapBefore < 256 * 1024 * 1024, "the flood's memory is bounded");

        const [one] = hostile.sockets.filter((s) => !s.destroyed);
        one?.destroy();
        await waitUntil(() => door.connections === DOOR_LIMIT - 1, "a slot freed");
        assert.deepEqual(await topics(), before, "served again, and nothing was written");
      } finally {
        await hostile.end();
      }
      await waitUntil(() => door.connections === 0, "every flooding connection gone");
    });

    it(`connections that send nothing: at most ${MAX_UNDECIDED_CONNECTIONS} wait at once; HTTP and remoting still answer`, async () => {
      const sniffing = ctx.server.server.sniffing;
      assert.ok(sniffing !== undefined);
      const before = await topics();
      const silent = await flood(port(), MAX_UNDECIDED_CONNECTIONS + 100);
      try {
        assert.ok(
          sniffing.undecided <= MAX_UNDECIDED_CONNECTIONS,
          `${sniffing.undecided} connections waiting for a first byte`,
        );
        assert.equal(await health(), 200, "HTTP on the same port still answers");
        assert.deepEqual(await topics(), before, "a remoting client is answered, and nothing was written");
        assert.ok(sniffing.undecided <= MAX_UNDECIDED_CONNECTIONS);
      } finally {
        await silent.end();
      }
      await waitUntil(() => sniffing.undecided === 0, "the silent connections gone");
    });
  });
}
