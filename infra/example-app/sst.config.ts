/// <reference path="../../.sst/platform/config.d.ts" />
/**
 * @module An application's own SST app that subscribes one of its functions to a Nimbus topic
 * (docs/subscriptions.md). `npm run check:infra` type-checks it with the Nimbus app. An app reads the Nimbus
 * stage's outputs (`sst deploy` prints them): here from the environment, as a CI job would pass them.
 */
export default $config({
  app(input) {
    return { name: "orders", home: "aws", removal: input.stage === "production" ? "retain" : "remove" };
  },
  async run() {
    const { NimbusSubscription } = await import("nimbus-mq/sst");
    const orders = new NimbusSubscription("Orders", {
      nimbus: {
        dispatchRole: process.env.NIMBUS_DISPATCH_ROLE ?? "",
        subscriptionsFunction: process.env.NIMBUS_SUBSCRIPTIONS_FUNCTION ?? "",
      },
      topic: "OrderTopic",
      group: "OrderProcessors",
      handler: "docs/examples/subscriber-function.handler",
      function: { memory: "256 MB", timeout: "30 seconds" },
      filterExpression: { type: "TAG", expression: "created || paid" },
      batchSize: 10,
      ordering: "messageGroup",
      maxConcurrency: 4,
      maxReconsumeTimes: 5,
    });
    return { ordersFunction: orders.functionArn, subscription: orders.registered };
  },
});
