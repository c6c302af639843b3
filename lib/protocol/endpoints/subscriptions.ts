/**
 * @module Subscriptions (docs/subscriptions.md): a consumer group's messages of one topic pushed to an AWS Lambda
 * function or an HTTPS endpoint, the target's answer taken as the ack. `PUT /subscriptions/{group}` creates or
 * replaces one (a group has at most one), `GET` reads it (never its signing secret), `DELETE` ends it, and
 * `GET /subscriptions` lists them. The body's names are fixed (docs/subscriptions.md), so that any HTTP stack can be a target.
 */
import { z } from "zod";
import { clusterPermission, groupPermission, topicPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import {
  MAX_SUBSCRIPTION_BATCH_SIZE,
  MAX_SUBSCRIPTION_BATCHING_WINDOW_MS,
  MAX_SUBSCRIPTION_CONCURRENCY,
  MAX_SUBSCRIPTION_RECONSUME_TIMES,
  MAX_SUBSCRIPTION_TIMEOUT_MS,
  MAX_SUBSCRIPTION_URL_LENGTH,
  MAX_SUBSCRIPTIONS,
  MAX_TEXT_LENGTH,
  MIN_SUBSCRIPTION_TIMEOUT_MS,
} from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { groupName, sendTopicName, success, timestamp, userTopicName } from "../fields.js";
import { FilterExpressionSchema } from "./pop.js";

export const SUBSCRIPTION_ORDERINGS = ["none", "queue", "messageGroup"] as const;
export type SubscriptionOrdering = (typeof SUBSCRIPTION_ORDERINGS)[number];

/**
 * An HTTPS URL without credentials or fragment. Plain http only to a loopback host (a local webhook under
 * `nimbus dev`, the tests' target): a secret and messages never cross a network unencrypted.
 */
export const targetUrl = z
  .string()
  .max(MAX_SUBSCRIPTION_URL_LENGTH)
  .superRefine((text, ctx) => {
    const problem = urlProblem(text);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .meta({ description: "https://..., or http:// to a loopback host" });

function urlProblem(text: string): string | undefined {
  // No `URL` annotation: the infrastructure's type check sees the DOM's URL type beside Node's.
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url === undefined) return "a target url is an absolute https:// URL";
  if (url.username !== "" || url.password !== "") return "a target url carries no credentials (use the secret)";
  if (url.hash !== "") return "a target url has no #fragment";
  const loopback = url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]";
  if (url.protocol === "https:" || (url.protocol === "http:" && loopback)) return undefined;
  return "a target url is https:// (http:// only to localhost, 127.0.0.1 or [::1])";
}

/** A signing secret: printable ASCII without blanks, 16 to 256 characters. */
const signingSecret = z
  .string()
  .max(256)
  .regex(/^[!-~]{16,256}$/, "a secret is 16 to 256 printable characters, no blanks");

/** `arn:aws:lambda:<region>:<account>:function:<name>[:<version or alias>]`, as Lambda's Invoke takes it. */
export const FUNCTION_ARN_PATTERN =
  /^arn:aws[a-zA-Z-]*:lambda:[a-z]{2}(-[a-z]+)+-\d:\d{12}:function:[a-zA-Z0-9_-]{1,64}(:(\$LATEST|[a-zA-Z0-9_-]{1,128}))?$/;

const HttpTargetSchema = z.object({ type: z.literal("http"), url: targetUrl, secret: signingSecret }).strict();
const LambdaTargetSchema = z
  .object({
    type: z.literal("lambda"),
    functionArn: z
      .string()
      .max(256)
      .regex(FUNCTION_ARN_PATTERN, "a functionArn is arn:aws:lambda:<region>:<account>:function:<name>"),
  })
  .strict();

export const SubscriptionTargetSchema = z
  .discriminatedUnion("type", [HttpTargetSchema, LambdaTargetSchema])
  .meta({ id: "SubscriptionTarget" });
export type SubscriptionTarget = z.output<typeof SubscriptionTargetSchema>;

/** Retry backoff of a failed message: `initialMs` doubled each attempt, at most `maxMs`. */
export const RetryBackoffSchema = z
  .object({
    initialMs: z.number().int().min(1000).max(MAX_SUBSCRIPTION_TIMEOUT_MS),
    maxMs: z
      .number()
      .int()
      .min(1000)
      .max(2 * 3600_000),
  })
  .strict()
  .refine((b) => b.maxMs >= b.initialMs, "retryBackoff.maxMs is at least initialMs")
  .meta({ id: "RetryBackoff" });
export type RetryBackoff = z.output<typeof RetryBackoffSchema>;

export const SubscriptionDefinitionSchema = z
  .object({
    topic: userTopicName,
    filterExpression: FilterExpressionSchema.default({ type: "TAG", expression: "*" }),
    target: SubscriptionTargetSchema,
    batchSize: z.number().int().min(1).max(MAX_SUBSCRIPTION_BATCH_SIZE).default(10),
    maxBatchingWindowMs: z.number().int().min(0).max(MAX_SUBSCRIPTION_BATCHING_WINDOW_MS).default(0),
    maxConcurrency: z.number().int().min(1).max(MAX_SUBSCRIPTION_CONCURRENCY).default(2),
    ordering: z.enum(SUBSCRIPTION_ORDERINGS).default("none"),
    maxReconsumeTimes: z.number().int().min(0).max(MAX_SUBSCRIPTION_RECONSUME_TIMES).default(16),
    /** How long one delivery may take before it counts as failed (an addition to the base shape). */
    timeoutMs: z.number().int().min(MIN_SUBSCRIPTION_TIMEOUT_MS).max(MAX_SUBSCRIPTION_TIMEOUT_MS).default(30_000),
    retryBackoff: RetryBackoffSchema.default({ initialMs: 10_000, maxMs: 600_000 }),
    /** RocketMQ's `enableMsgTrace` for the dispatcher: SubBefore / SubAfter records of every delivery (docs/trace.md). */
    enableMsgTrace: z.boolean().default(false),
    /** Where those records go: default `RMQ_SYS_TRACE_TOPIC`; a user topic (other than the subscribed one) otherwise. */
    customizedTraceTopic: sendTopicName.optional(),
  })
  .strict()
  // A subscription tracing into its own topic would deliver its trace records, tracing them again, without end.
  .refine((d) => d.customizedTraceTopic !== d.topic, {
    message: "customizedTraceTopic is the subscribed topic (its deliveries would trace themselves)",
    path: ["customizedTraceTopic"],
  })
  .meta({ id: "SubscriptionDefinition" });
export type SubscriptionDefinition = z.output<typeof SubscriptionDefinitionSchema>;

/** A stored subscription as the API answers it: the definition, its group, times; an http target's secret never. */
export const SubscriptionInfoSchema = z
  .object({
    group: z.string().max(MAX_TEXT_LENGTH),
    topic: z.string().max(MAX_TEXT_LENGTH),
    filterExpression: FilterExpressionSchema,
    target: z.discriminatedUnion("type", [
      z.object({
        type: z.literal("http"),
        url: z.string().max(MAX_SUBSCRIPTION_URL_LENGTH),
        secretSet: z.literal(true),
      }),
      z.object({ type: z.literal("lambda"), functionArn: z.string().max(MAX_TEXT_LENGTH) }),
    ]),
    batchSize: z.number().int(),
    maxBatchingWindowMs: z.number().int(),
    maxConcurrency: z.number().int(),
    ordering: z.enum(SUBSCRIPTION_ORDERINGS),
    maxReconsumeTimes: z.number().int(),
    timeoutMs: z.number().int(),
    retryBackoff: z.object({ initialMs: z.number().int(), maxMs: z.number().int() }),
    enableMsgTrace: z.boolean(),
    customizedTraceTopic: z.string().max(MAX_TEXT_LENGTH).optional(),
    createdAt: timestamp,
    updatedAt: timestamp,
    /**
     * The last failed delivery (the target's error, a refused address, a timeout, messages it named as failed) and
     * when, as the dispatching processes recorded it (at most once per 10 s each). Absent: none failed.
     */
    lastDeliveryError: z.object({ reason: z.string().max(MAX_TEXT_LENGTH), at: timestamp }).optional(),
  })
  .meta({ id: "SubscriptionInfo" });
export type SubscriptionInfo = z.output<typeof SubscriptionInfoSchema>;

export const updateSubscription = endpoint({
  id: "updateSubscription",
  // Sub on the topic and the group (what a consumer of them needs), and Create or Update on the group:
  // the route asks for Create when the group has no subscription yet, Update when it has.
  access: ({ params, body }) => [
    topicPermission(body.topic, "Sub"),
    groupPermission(params.group, "Sub"),
    groupPermission(params.group, "Create", "Update"),
  ],
  method: "PUT",
  path: "/subscriptions/{group}",
  service: "Subscriptions",
  summary:
    "Creates or replaces the group's subscription: its topic's messages delivered to a Lambda function or HTTPS URL.",
  params: z.object({ group: groupName }),
  body: SubscriptionDefinitionSchema,
  response: SubscriptionInfoSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.NO_PERMISSION, ErrorCode.CONDITION_FAILED],
});

export const getSubscription = endpoint({
  id: "getSubscription",
  access: ({ params }) => [groupPermission(params.group, "Sub", "Get")],
  method: "GET",
  path: "/subscriptions/{group}",
  service: "Subscriptions",
  summary: "The group's subscription (an HTTPS target's secret is never answered).",
  params: z.object({ group: groupName }),
  response: SubscriptionInfoSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.SUBSCRIPTION_GROUP_NOT_EXIST],
});

export const deleteSubscription = endpoint({
  id: "deleteSubscription",
  access: ({ params }) => [groupPermission(params.group, "Delete")],
  method: "DELETE",
  path: "/subscriptions/{group}",
  service: "Subscriptions",
  summary: "Ends the group's subscription; its offsets and retry messages stay, as a consumer group's do.",
  params: z.object({ group: groupName }),
  response: success,
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.SUBSCRIPTION_GROUP_NOT_EXIST],
});

export const listSubscriptions = endpoint({
  id: "listSubscriptions",
  access: () => [clusterPermission("List")],
  method: "GET",
  path: "/subscriptions",
  service: "Subscriptions",
  summary: `Every subscription (one partition read, at most ${MAX_SUBSCRIPTIONS}), optionally of one topic.`,
  query: z.object({ topic: userTopicName.optional() }).strict(),
  response: z.object({ subscriptions: z.array(SubscriptionInfoSchema).max(MAX_SUBSCRIPTIONS) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});
