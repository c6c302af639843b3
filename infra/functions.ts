/**
 * @module Builds a Lambda function from a `FunctionSpec` of manifest.ts, with what every Nimbus function
 * shares: arm64 (about 20% cheaper per GB-second than x86), Node 22, the stage's settings in its
 * environment, and links to exactly the tables and bucket the spec names (a link grants IAM access).
 */
import { channelApi } from "./channel-api.js";
import { settings } from "./config.js";
import type { FunctionSpec } from "./manifest.js";
import { bucket, table, tableNamesJson, tableRegionsJson } from "./storage.js";

/**
 * `apiUrl` is the brokers' address that the name server hands to clients (NIMBUS_API_URL).
 *
 * The handlers read plain environment variables (functions/shared/aws-context.ts) rather than SST's
 * `Resource`, so the same code runs in the local server without SST. `NIMBUS_TABLES` names every table,
 * not only the linked ones: a handler that starts using another table then fails with AccessDenied, which
 * says what is missing, instead of ResourceNotFound on a made-up name.
 */
export function createFunction(name: string, spec: FunctionSpec, apiUrl: $util.Input<string>): sst.aws.Function {
  return new sst.aws.Function(name, {
    handler: spec.handler,
    // Lambda's Node 20 runtime is deprecated; the code itself stays on Node 20 features (engines >= 20).
    runtime: "nodejs22.x",
    architecture: "arm64",
    memory: `${spec.memoryMb} MB`,
    timeout: `${spec.timeoutSeconds} seconds`,
    link: [...spec.tables.map(table), ...(spec.bucket ? [bucket] : []), ...(spec.channel ? [channelApi] : [])],
    environment: {
      NIMBUS_BUCKET: bucket.name,
      NIMBUS_TABLES: tableNamesJson,
      NIMBUS_TABLE_REGIONS: tableRegionsJson,
      // A slave cell serves its broker, read-only; any other stage its name server and every broker.
      NIMBUS_ROLE: JSON.stringify(
        settings.cell === undefined
          ? { kind: "all" }
          : { kind: "broker", brokerName: settings.cell.brokerName, brokerId: settings.cell.brokerId },
      ),
      NIMBUS_API_URL: apiUrl,
      NIMBUS_CONFIG: JSON.stringify(settings.nimbus),
      // Every function answers where the channel is; those that post hints reach its Management API.
      NIMBUS_CHANNEL_URL: channelApi.url,
      ...(spec.channel ? { NIMBUS_CHANNEL_MANAGEMENT_URL: channelApi.managementEndpoint } : {}),
    },
    logging: { format: "json", retention: settings.production ? "3 months" : "1 week" },
    transform: {
      function: (args) => {
        // No START/END/REPORT lines (INFO): at ~350 bytes a call they would add about $0.18 per million calls
        // of log ingestion (docs/cost.md). Errors still log; duration and errors stay in the free metrics.
        if (args.loggingConfig === undefined) return;
        args.loggingConfig = $output(args.loggingConfig).apply((config) => ({
          ...config,
          systemLogLevel: "WARN",
          applicationLogLevel: "INFO",
        }));
      },
    },
  });
}
