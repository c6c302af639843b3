/**
 * @module Consumer group endpoints: RocketMQ's subscription groups (mqadmin's updateSubGroup, deleteSubGroup,
 * SubscriptionGroupConfig), the operator's list of every group (RocketMQ Dashboard's consumer page) and a
 * group's lag history (the broker's bounded samples, docs/groups.md).
 */
import { z } from "zod";
import { clusterPermission, groupPermission } from "../../core/acl.js";
import { ErrorCode } from "../../core/errors.js";
import { MAX_TEXT_LENGTH } from "../bounds.js";
import { endpoint } from "../endpoint.js";
import { consumerGroupName, timestamp } from "../fields.js";

/** RocketMQ's SubscriptionGroupConfig.retryMaxTimes default. */
export const DEFAULT_RETRY_MAX_TIMES = 16;
/** The most retries a group may be given (as the send-back's maxReconsumeTimes). */
export const MAX_RETRY_MAX_TIMES = 1000;
/** Groups in one page of `GET /groups`. */
export const MAX_GROUPS_PER_PAGE = 100;
/** Topics and members listed per group in `GET /groups` (counts are exact past it). */
export const MAX_GROUP_LIST_ITEMS = 256;
/** Lag samples a group keeps: a day at one per minute (the ring, docs/groups.md). */
export const MAX_LAG_SAMPLES = 1440;

/** The settings of a subscription group, as RocketMQ's SubscriptionGroupConfig names them. */
export const SubscriptionGroupSettingsSchema = z
  .object({
    /** False: pulls and POP receives of the group are refused (NO_PERMISSION), as RocketMQ's broker does. */
    consumeEnable: z.boolean(),
    /** False: a BROADCASTING consumer's heartbeat for the group is refused (NO_PERMISSION). */
    consumeBroadcastEnable: z.boolean(),
    /** Reconsumes before the dead-letter queue: send-backs that name no maxReconsumeTimes, and POP receives. */
    retryMaxTimes: z.number().int().min(0).max(MAX_RETRY_MAX_TIMES),
    /** POP receives of the group are FIFO: one message of a message group in flight at a time. */
    consumeMessageOrderly: z.boolean(),
  })
  .strict()
  .meta({ id: "SubscriptionGroupSettings" });
export type SubscriptionGroupSettings = z.output<typeof SubscriptionGroupSettingsSchema>;

/** RocketMQ's defaults of a SubscriptionGroupConfig (a group nobody configured has these). */
export const DEFAULT_SUBSCRIPTION_GROUP: SubscriptionGroupSettings = {
  consumeEnable: true,
  consumeBroadcastEnable: true,
  retryMaxTimes: DEFAULT_RETRY_MAX_TIMES,
  consumeMessageOrderly: false,
};

export const SubscriptionGroupConfigSchema = SubscriptionGroupSettingsSchema.extend({
  groupName: z.string().max(MAX_TEXT_LENGTH),
  /** Set by updateSubGroup; false: the defaults of a group the broker met (a consumer's commit or heartbeat). */
  configured: z.boolean(),
  updatedAt: timestamp,
}).meta({ id: "SubscriptionGroupConfig" });
export type SubscriptionGroupConfig = z.output<typeof SubscriptionGroupConfigSchema>;

/** A row of the operator's group list: what RocketMQ Dashboard's consumer page shows per group. */
export const GroupSummarySchema = z
  .object({
    group: z.string().max(MAX_TEXT_LENGTH),
    /** Topics the group committed offsets for or its live members subscribe to (sorted, at most 256). */
    topics: z.array(z.string().max(MAX_TEXT_LENGTH)).max(MAX_GROUP_LIST_ITEMS),
    /** Live members' client ids (sorted, at most 256). */
    members: z.array(z.string().max(MAX_TEXT_LENGTH)).max(MAX_GROUP_LIST_ITEMS),
    memberCount: z.number().int().min(0),
    /** CLUSTERING or BROADCASTING as the live members say; "" with none. */
    messageModel: z.string().max(MAX_TEXT_LENGTH),
    /** The sum of consumerProgress's diffs over the group's topics. */
    totalLag: z.number().int().min(0),
    subscriptionGroup: SubscriptionGroupConfigSchema,
  })
  .meta({ id: "GroupSummary" });
export type GroupSummary = z.output<typeof GroupSummarySchema>;

export const LagSampleSchema = z
  .object({ at: timestamp, lag: z.number().int().min(0) })
  .strict()
  .meta({ id: "LagSample" });
export type LagSample = z.output<typeof LagSampleSchema>;

const groupParams = z.object({ group: consumerGroupName });

export const listGroups = endpoint({
  id: "listGroups",
  access: () => [clusterPermission("List")],
  method: "GET",
  path: "/groups",
  service: "Groups",
  summary: "Every consumer group with its topics, live members, total lag and subscription group, a page at a time.",
  query: z
    .object({
      /** The last group of the previous page. */
      startAfter: consumerGroupName.optional(),
      limit: z.coerce.number().int().min(1).max(MAX_GROUPS_PER_PAGE).optional(),
    })
    .strict(),
  response: z.object({
    groups: z.array(GroupSummarySchema).max(MAX_GROUPS_PER_PAGE),
    /** Pass as `startAfter` for the next page; absent on the last page. */
    nextStartAfter: z.string().max(MAX_TEXT_LENGTH).optional(),
  }),
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

export const getSubGroup = endpoint({
  id: "getSubGroup",
  access: ({ params }) => [groupPermission(params.group, "Get")],
  method: "GET",
  path: "/groups/{group}/subscription-group",
  service: "Groups",
  summary: "The group's subscription group config (RocketMQ's defaults when nobody configured it).",
  params: groupParams,
  response: SubscriptionGroupConfigSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

export const updateSubGroup = endpoint({
  id: "updateSubGroup",
  access: ({ params }) => [groupPermission(params.group, "Create", "Update")],
  method: "PUT",
  path: "/groups/{group}/subscription-group",
  service: "Groups",
  summary:
    "Creates or replaces the group's subscription group config (mqadmin's updateSubGroup); a field left out takes RocketMQ's default.",
  params: groupParams,
  body: SubscriptionGroupSettingsSchema.partial().strict(),
  response: SubscriptionGroupConfigSchema,
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});

export const deleteSubGroup = endpoint({
  id: "deleteSubGroup",
  access: ({ params }) => [groupPermission(params.group, "Delete")],
  method: "DELETE",
  path: "/groups/{group}/subscription-group",
  service: "Groups",
  summary: "Deletes the group's subscription group config (mqadmin's deleteSubGroup); its offsets stay.",
  params: groupParams,
  response: z.object({ group: z.string().max(MAX_TEXT_LENGTH), deleted: z.literal(true) }),
  errors: [ErrorCode.PARAMETER_ILLEGAL, ErrorCode.SUBSCRIPTION_GROUP_NOT_EXIST],
});

export const lagHistory = endpoint({
  id: "lagHistory",
  access: ({ params }) => [groupPermission(params.group, "Get", "Sub")],
  method: "GET",
  path: "/groups/{group}/lag-history",
  service: "Groups",
  summary: "The group's total lag samples the broker kept (at most a day at one a minute), oldest first.",
  params: groupParams,
  response: z.object({
    samples: z.array(LagSampleSchema).max(MAX_LAG_SAMPLES),
    /** The sampling period: at most one sample per group per this. */
    intervalMs: z.number().int().min(0),
  }),
  errors: [ErrorCode.PARAMETER_ILLEGAL],
});
