/**
 * @module What `NimbusSubscription` (nimbus-mq/sst) sends at deploy time, run through the Subscriptions function's
 * own routes as its `aws.lambda.Invocation` would (the event of infra/sst/registration.ts, a stage without ACLs):
 * the definition is stored with the Lambda target; a refused one fails the deploy with the API's 400 and stores
 * nothing; on `acl` stages the CLI step carries the same settings.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  checkAnswer,
  cliStep,
  definition,
  putRequest,
  type SubscriptionSettings,
} from "../../infra/sst/registration.js";
import type { ApiEvent } from "../../lib/http/api-types.js";
import type { HandlerContext } from "../../lib/http/context.js";
import { createApiHandler } from "../../lib/http/handler.js";
import { SERVICE_ROUTES } from "../../lib/http/routes/index.js";
import { apiGatewayEvent } from "../support/api-gateway-event.js";
import { openTestBroker, type TestBroker } from "../support/server-fixture.js";

const ARN = "arn:aws:lambda:eu-west-1:123456789012:function:orders-OrdersFunction";
const SETTINGS: SubscriptionSettings = {
  topic: "RegTopic",
  group: "RegGroup",
  filterExpression: { type: "TAG", expression: "created || paid" },
  batchSize: 10,
  ordering: "messageGroup",
  maxConcurrency: 4,
  enableMsgTrace: true,
};

describe("NimbusSubscription's deploy-time registration", () => {
  let t: TestBroker;
  before(async () => {
    t = await openTestBroker();
    await t.broker.topics.upsert("RegTopic", { readQueueNums: 1, writeQueueNums: 1, brokerNames: ["broker-a"] });
  });
  after(() => t.close());

  const invoke = async (input: string): Promise<string> => {
    const handler = createApiHandler(
      SERVICE_ROUTES.Subscriptions,
      async (): Promise<HandlerContext> => ({ broker: t.broker, role: { kind: "all" } }),
    );
    return JSON.stringify(await handler(JSON.parse(input) as ApiEvent));
  };
  /** The stored definition, read back through the same function. */
  const get = async (group: string) =>
    JSON.parse(await invoke(JSON.stringify(apiGatewayEvent("GET", `/subscriptions/${group}`)))) as {
      statusCode: number;
      body: string;
    };

  it("stores the definition with the Lambda target; the answer passes the deploy's check", async () => {
    const answer = await invoke(putRequest(SETTINGS.group, definition(SETTINGS, ARN)));
    checkAnswer(answer);
    const stored = await get(SETTINGS.group);
    assert.equal(stored.statusCode, 200);
    const body = JSON.parse(stored.body) as Record<string, unknown>;
    assert.deepEqual(body.target, { type: "lambda", functionArn: ARN });
    assert.equal(body.ordering, "messageGroup");
    assert.equal(body.batchSize, 10);
    assert.equal(body.maxConcurrency, 4);
    assert.equal(body.enableMsgTrace, true);
    assert.deepEqual(body.filterExpression, { type: "TAG", expression: "created || paid" });
  });

  it("a refused definition fails the deploy with the API's 400 and stores nothing", async () => {
    const bad = { ...SETTINGS, group: "RegBadGroup", batchSize: 1000 };
    const answer = await invoke(putRequest(bad.group, definition(bad, ARN)));
    assert.throws(() => checkAnswer(answer), /refused the subscription \(400\)/);
    assert.equal((await get(bad.group)).statusCode, 404);
  });

  it("on acl stages: the one CLI step, with the same settings", () => {
    assert.equal(
      cliStep(SETTINGS, ARN),
      `nimbus updateSubscription -g 'RegGroup' -t 'RegTopic' --functionArn '${ARN}' -s 'created || paid' --batchSize '10' --maxConcurrency '4' -o 'messageGroup' --enableMsgTrace`,
    );
  });
});
