/**
 * @module Builds a Lambda function from a `FunctionSpec` of manifest.ts, with what every Nimbus function
 * shares: arm64 (about 20% cheaper per GB-second than x86), Node 22, the stage's settings in its
 * environment, and links to exactly the tables and bucket the spec names (a link grants IAM access).
 */
import { aclSecrets, sealKey } from "./auth.js";
import { channelApi } from "./channel-api.js";
import { settings } from "./config.js";
import { AUTH_TABLE, type FunctionSpec, functionAuthEnvironment } from "./manifest.js";
import { bucket, table, tableNamesJson, tableRegionsJson } from "./storage.js";

/**
 * `apiUrl` is the brokers' address that the name server hands to clients (NIMBUS_API_URL).
 *
 * The handlers read plain environment variables (functions/shared/aws-context.ts) rather than SST's
 * `Resource`, so the same code runs in the local server without SST. `NIMBUS_TABLES` names every table,
 * not only the linked ones: a handler that starts using another table then fails with AccessDenied, which
 * says what is missing, instead of ResourceNotFound on a made-up name.
 */
export function createFunction(
  name: string,
  spec: FunctionSpec,
  apiUrl: $util.Input<string>,
  api?: { reservedConcurrency: number },
  /** The functions its spec's `invokes` names (infra/api.ts creates Dispatch before the API functions). */
  invokable: { Dispatch?: sst.aws.Function | undefined } = {},
): sst.aws.Function {
  const invokes = (spec.invokes ?? []).flatMap((target) => invokable[target] ?? []);
  // An API function on a stage with ACLs reads users and ACLs (the acl table) and gets the stage's auth secrets.
  const acl = api !== undefined && aclSecrets !== undefined ? aclSecrets : undefined;
  const tables = acl && !spec.tables.includes(AUTH_TABLE) ? [...spec.tables, AUTH_TABLE] : spec.tables;
  return new sst.aws.Function(name, {
    handler: spec.handler,
    // Lambda's Node 20 runtime is deprecated; the code itself stays on Node 20 features (engines >= 20).
    runtime: "nodejs22.x",
    architecture: "arm64",
    memory: `${spec.memoryMb} MB`,
    timeout: `${spec.timeoutSeconds} seconds`,
    // A linked function grants `lambda:InvokeFunction` on it alone.
    link: [...tables.map(table), ...(spec.bucket ? [bucket] : []), ...(spec.channel ? [channelApi] : []), ...invokes],
    // Its cap and its guaranteed share of the account's concurrency (the stage's limits).
    ...(api ? { concurrency: { reserved: api.reservedConcurrency } } : {}),
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
      // The send-time wake of subscription delivery (lib/config/dispatch-wake.ts).
      ...(invokable.Dispatch && spec.invokes?.includes("Dispatch")
        ? { NIMBUS_DISPATCH_FUNCTION: invokable.Dispatch.name }
        : {}),
      ...(api ? functionAuthEnvironment(settings) : {}),
      ...(spec.sealsSecrets ? { NIMBUS_SEAL_KEY: sealKey.value } : {}),
      // Lambda keeps its environment encrypted at rest with KMS; the values come from SSM SecureStrings.
      ...(acl
        ? {
            NIMBUS_ACL_MASTER_KEY: acl.masterKey.value,
            NIMBUS_ROOT_USER: "root",
            NIMBUS_ROOT_PASSWORD: acl.rootPassword.value,
          }
        : {}),
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
