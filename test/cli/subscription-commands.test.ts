/**
 * @module The built `nimbus updateSubscription`, `subscriptionList` and `deleteSubscription` against a local
 * broker: an HTTPS target with its secret from the environment, a Lambda target with a SQL92 filter, the list
 * (never a secret), a bad definition refused with nothing stored, and the delete.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ensureBuilt, nimbus, startTestBroker, type TestBroker } from "../support/cli-runner.js";

describe("nimbus updateSubscription, subscriptionList, deleteSubscription (the built CLI)", () => {
  let broker: TestBroker;
  const secret = "whsec-from-the-environment";
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) => nimbus(args, { url: broker.url, env });
  const listed = async () =>
    (JSON.parse((await run(["subscriptionList", "--json"])).stdout) as { subscriptions: { group: string }[] })
      .subscriptions;

  before(async () => {
    await ensureBuilt();
    broker = await startTestBroker();
  });
  after(() => broker.close());

  it("creates an HTTPS subscription (secret from NIMBUS_WEBHOOK_SECRET) and a Lambda one; lists both", async () => {
    const http = await run(
      [
        ...["updateSubscription", "-g", "Hooks", "-t", "Orders", "-u", "http://127.0.0.1:8080/hook"],
        ...["--batchSize", "32", "--maxConcurrency", "4"],
      ],
      { NIMBUS_WEBHOOK_SECRET: secret },
    );
    assert.equal(http.code, 0, http.stderr);
    assert.match(http.stdout, /Hooks\s+Orders\s+TAG \*\s+http:\/\/127\.0\.0\.1:8080\/hook\s+32\s+4\s+none/);
    const arn = "arn:aws:lambda:eu-west-1:123456789012:function:orders";
    const fn = await run([
      "updateSubscription",
      "-g",
      "Fn",
      "-t",
      "Orders",
      "--functionArn",
      arn,
      "--sql",
      "amount > 10",
      "-o",
      "queue",
      "--enableMsgTrace",
    ]);
    assert.equal(fn.code, 0, fn.stderr);
    const list = await run(["subscriptionList"]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /Fn\s+Orders\s+SQL92 amount > 10\s+arn:aws:lambda.*\s+RMQ_SYS_TRACE_TOPIC\s+-\n/);
    assert.match(list.stdout, /Hooks\s+Orders\s+.*\s+off\s+-\n/, "tracing is off unless asked for");
    assert.ok(!list.stdout.includes(secret) && !(await run(["subscriptionList", "--json"])).stdout.includes(secret));
    assert.deepEqual((await listed()).map((s) => s.group).sort(), ["Fn", "Hooks"]);
  });

  it("a bad definition is refused and stores nothing; a missing target is a usage error", async () => {
    const lambdaTarget = (arn: string) => ["updateSubscription", "-g", "Bad", "-t", "Orders", "--functionArn", arn];
    const bad = await run(lambdaTarget("arn:aws:lambda:nowhere"));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /PARAMETER_ILLEGAL/);
    const selfTraced = await run([
      ...lambdaTarget("arn:aws:lambda:eu-west-1:123456789012:function:x"),
      ...["--enableMsgTrace", "--customizedTraceTopic", "Orders"],
    ]);
    assert.notEqual(selfTraced.code, 0);
    assert.match(selfTraced.stderr, /customizedTraceTopic is the subscribed topic/);
    const none = await run(["updateSubscription", "-g", "Bad", "-t", "Orders"]);
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /exactly one target/);
    assert.deepEqual((await listed()).map((s) => s.group).sort(), ["Fn", "Hooks"]);
  });

  it("one vocabulary: -s is the tag filter as in consume; -b, -c, -w, -f and -e are not updateSubscription's", async () => {
    const tagged = await run(
      [
        ...[
          "updateSubscription",
          "-g",
          "Tagged",
          "-t",
          "Orders",
          "-u",
          "http://127.0.0.1:8080/hook",
          "-s",
          "TagA || TagB",
        ],
      ],
      { NIMBUS_WEBHOOK_SECRET: secret },
    );
    assert.equal(tagged.code, 0, tagged.stderr);
    assert.match(tagged.stdout, /Tagged\s+Orders\s+TAG TagA \|\| TagB/);
    for (const letter of ["-b", "-c", "-w", "-f", "-e"]) {
      const old = await run(
        ["updateSubscription", "-g", "Old", "-t", "Orders", "-u", "http://127.0.0.1:8080/hook", letter, "1"],
        {
          NIMBUS_WEBHOOK_SECRET: secret,
        },
      );
      assert.equal(old.code, 2, `${letter}: a usage error`);
      assert.match(old.stderr, new RegExp(`unknown option '${letter}'`));
    }
    assert.equal((await run(["deleteSubscription", "-g", "Tagged"])).code, 0);
  });

  it("deleteSubscription ends one; deleting it again fails", async () => {
    assert.equal((await run(["deleteSubscription", "-g", "Fn"])).code, 0);
    assert.deepEqual(
      (await listed()).map((s) => s.group),
      ["Hooks"],
    );
    const again = await run(["deleteSubscription", "-g", "Fn"]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /SUBSCRIPTION_GROUP_NOT_EXIST|no subscription/);
  });
});
