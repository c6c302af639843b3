/**
 * @module The Lambda side of configuration: reads the environment once (zod), builds the AWS storage and
 * the broker, and keeps them for the life of the container. The only place Lambda code reads `process.env`.
 *
 * Environment (set by infra/, from linked resources):
 * - `NIMBUS_BUCKET`: the message bucket; `NIMBUS_TABLES`: JSON `{ "queue-index": name, "routes": name, ... }`
 * - `NIMBUS_API_URL`: the stage's API URL (the brokers' address); `NIMBUS_CONFIG`: JSON `NimbusConfig` (optional)
 * - `NIMBUS_CHANNEL_URL`: the push channel's WebSocket URL (answered by `GET /push-channel`), optional
 * - `NIMBUS_CHANNEL_MANAGEMENT_URL`: its Management API, set on the functions that post hints (linked to it)
 * - `NIMBUS_DISPATCH_FUNCTION`: the `Dispatch` function's name, on the functions that wake it at send time
 * - `NIMBUS_SEAL_KEY`: the key that seals subscriptions' webhook secrets (Subscriptions and Dispatch)
 * - `NIMBUS_AUTH`: `acl` to check signatures and ACLs (users in the acl table), with `NIMBUS_ACL_MASTER_KEY`
 *   (seals their secrets) and `NIMBUS_ROOT_USER`/`NIMBUS_ROOT_PASSWORD` (the Super user); absent or `off`: open.
 * - `AWS_REGION` and the role's `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`: set by Lambda.
 */
import { LambdaClient } from "@aws-sdk/client-lambda";
import { z } from "zod";
import { OBJECT_REPLICATION_GRACE_MS } from "../../lib/broker/queue-log/index.js";
import { ACL_TABLE, AclStore, AesGcmSealer, parseMasterKey } from "../../lib/broker/security/index.js";
import { createBroker } from "../../lib/config/create-broker.js";
import { attachDispatchWake, dispatchInvoker } from "../../lib/config/dispatch-wake.js";
import { awsRetryOptions, awsTargetNetworks, parseNimbusConfig } from "../../lib/config/nimbus-config.js";
import { newMessageId } from "../../lib/core/message-id-node.js";
import { RequestAuth } from "../../lib/http/authorize.js";
import type { HandlerContext } from "../../lib/http/context.js";
import { DurableNonces } from "../../lib/http/replay-guard.js";
import { createAwsStorage } from "../../lib/storage/aws/index.js";
import type { Storage } from "../../lib/storage/storage.js";
import { managementApiGateway } from "./management-api.js";

let lambda: LambdaClient | undefined;
/** This container's Lambda client (Dispatch's wake on the sending side, targets' invokes on Dispatch's). */
export const defaultLambdaClient = (): LambdaClient => {
  lambda ??= new LambdaClient({});
  return lambda;
};

const jsonString = z.string().transform((s, ctx) => {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    ctx.addIssue({ code: "custom", message: "must be JSON" });
    return z.NEVER;
  }
});

const Env = z.object({
  AWS_REGION: z.string().min(1),
  NIMBUS_BUCKET: z.string().min(1),
  NIMBUS_TABLES: jsonString.pipe(z.record(z.string(), z.string().min(1))),
  NIMBUS_API_URL: z.string().url(),
  NIMBUS_CONFIG: jsonString.optional(),
  NIMBUS_CHANNEL_URL: z.string().url().optional(),
  NIMBUS_CHANNEL_MANAGEMENT_URL: z.string().url().optional(),
  NIMBUS_DISPATCH_FUNCTION: z.string().min(1).max(256).optional(),
  AWS_ACCESS_KEY_ID: z.string().optional(),
  AWS_SECRET_ACCESS_KEY: z.string().optional(),
  AWS_SESSION_TOKEN: z.string().optional(),
  /** A slave cell's name server tables live in another region: `{ "routes": "us-east-1", ... }`. */
  NIMBUS_TABLE_REGIONS: jsonString.pipe(z.record(z.string(), z.string().min(1))).optional(),
  /** What the stage serves: a slave cell is `{"kind":"broker","brokerName":"broker-a","brokerId":1}`. */
  NIMBUS_ROLE: jsonString
    .pipe(
      z.union([
        z.object({ kind: z.literal("all") }),
        z.object({ kind: z.literal("broker"), brokerName: z.string().min(1), brokerId: z.number().int().min(0) }),
      ]),
    )
    .optional(),
  NIMBUS_AUTH: z.enum(["acl", "off"]).optional(),
  NIMBUS_ACL_MASTER_KEY: z.string().optional(),
  /** Seals subscriptions' webhook secrets (Subscriptions seals, Dispatch opens): the stage's NimbusSealKey. */
  NIMBUS_SEAL_KEY: z.string().optional(),
  NIMBUS_ROOT_USER: z
    .string()
    .regex(/^[a-zA-Z0-9_-]{1,64}$/)
    .optional(),
  NIMBUS_ROOT_PASSWORD: z.string().min(8).optional(),
});

/** The stage's auth gate; a stage with ACLs but without its master key fails closed (every request 500s). */
function requestAuth(env: z.output<typeof Env>, storage: Storage): RequestAuth {
  if (!env.NIMBUS_ACL_MASTER_KEY)
    throw new Error("NIMBUS_AUTH=acl needs NIMBUS_ACL_MASTER_KEY (sst secret set NimbusAclMasterKey)");
  return new RequestAuth({
    store: new AclStore(storage.table(ACL_TABLE), new AesGcmSealer(parseMasterKey(env.NIMBUS_ACL_MASTER_KEY))),
    // Mutating admin and ACL routes are replay-proof across containers (one conditional write each).
    nonces: new DurableNonces(storage.table(ACL_TABLE)),
    root:
      env.NIMBUS_ROOT_PASSWORD === undefined
        ? undefined
        : { username: env.NIMBUS_ROOT_USER ?? "root", password: env.NIMBUS_ROOT_PASSWORD },
  });
}

let context: Promise<HandlerContext> | undefined;

/** The broker of this Lambda container, built on first use. */
export function awsContext(): Promise<HandlerContext> {
  context ??= (async () => {
    const env = Env.parse(process.env);
    const config = parseNimbusConfig(env.NIMBUS_CONFIG);
    const storage = createAwsStorage({
      region: env.AWS_REGION,
      bucket: env.NIMBUS_BUCKET,
      tableNames: env.NIMBUS_TABLES,
      ...(env.NIMBUS_TABLE_REGIONS ? { tableRegions: env.NIMBUS_TABLE_REGIONS } : {}),
      ...awsRetryOptions(config),
    });
    const role = env.NIMBUS_ROLE ?? { kind: "all" as const };
    const slave = role.kind === "broker" && role.brokerId > 0;
    const broker = createBroker(storage, config, {
      apiUrl: env.NIMBUS_API_URL,
      // Subscription targets: public addresses unless the stage widens them to private ones (never loopback).
      defaultTargetNetworks: awsTargetNetworks(config),
      newMessageId,
      // A slave cell reads replicas: a batch's object can arrive after its index item.
      ...(slave ? { objectReplicationGraceMs: OBJECT_REPLICATION_GRACE_MS } : {}),
      ...(env.NIMBUS_SEAL_KEY ? { sealKey: parseMasterKey(env.NIMBUS_SEAL_KEY) } : {}),
    });
    // Hints go through the WebSocket API's Management API, signed as the function's role.
    if (env.NIMBUS_CHANNEL_MANAGEMENT_URL && env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
      broker.channel.attach(
        managementApiGateway(env.NIMBUS_CHANNEL_MANAGEMENT_URL, env.AWS_REGION, {
          accessKeyId: env.AWS_ACCESS_KEY_ID,
          secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
          ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
        }),
      );
    }
    // Appends to a subscribed topic wake Dispatch (docs/subscriptions.md).
    const dispatchWake =
      env.NIMBUS_DISPATCH_FUNCTION === undefined
        ? undefined
        : attachDispatchWake(broker, dispatchInvoker(defaultLambdaClient, env.NIMBUS_DISPATCH_FUNCTION));
    // A stage serves its name server and all its brokers in one API, unless it is a slave cell.
    return {
      broker,
      role,
      channelUrl: env.NIMBUS_CHANNEL_URL,
      dispatchWake,
      auth: env.NIMBUS_AUTH === "acl" ? requestAuth(env, storage) : undefined,
    };
  })();
  return context;
}
