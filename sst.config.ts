/// <reference path="./.sst/platform/config.d.ts" />
/**
 * @module The SST app: `npx sst deploy --stage <stage>` (docs/deploy.md). Thin on purpose: the stage's
 * settings come from lib/config/stages.ts, the resources from infra/.
 */
export default $config({
  async app(input) {
    const { stageSettings } = await import("./lib/config/stages.js");
    const stage = stageSettings(input.stage);
    return {
      name: "nimbus",
      home: "aws",
      // Production keeps its data when the stage is removed, and `sst remove` refuses to run on it.
      removal: stage.production ? "retain" : "remove",
      protect: stage.production,
      providers: { aws: { region: stage.region as aws.Region } },
    };
  },
  async run() {
    await import("./infra/storage.js");
    await import("./infra/console.js");
    await import("./infra/api.js");
    await import("./infra/schedules.js");
    await import("./infra/channel.js");
    await import("./infra/grpc.js");
    const { outputs } = await import("./infra/outputs.js");
    return outputs;
  },
});
