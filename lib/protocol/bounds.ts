/**
 * @module The API's bounds, named once. The request schemas enforce the shape bounds (400
 * `PARAMETER_ILLEGAL`); the broker enforces the message bounds with RocketMQ's codes (`MESSAGE_ILLEGAL`,
 * 413 `MESSAGE_BODY_TOO_LARGE`). docs/api.md states every one of them (checked by test/protocol).
 */
import { MAX_FILTER_EXPRESSION_LENGTH } from "../core/filter/index.js";
import { BROKER_NAME_MAX_LENGTH, GROUP_MAX_LENGTH, TOPIC_MAX_LENGTH } from "../core/names.js";

export { BROKER_NAME_MAX_LENGTH, GROUP_MAX_LENGTH, TOPIC_MAX_LENGTH };

/** Messages in one `POST /send` (RocketMQ's batch has no fixed cap; 1024 keeps one request under Lambda's 6 MB). */
export const MAX_BATCH_MESSAGES = 1024;
/** RocketMQ's maxMessageSize: one message body at most 4 MiB. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * A whole batch, encoded: one maximal message (a MAX_BODY_BYTES body with MAX_PROPERTIES_BYTES of properties)
 * and the codec's framing fit, so the documented body limit is sendable (RocketMQ checks a batch against
 * maxMessageSize too). 4 MiB + 64 KiB.
 */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024 + 64 * 1024;
/** User properties of one message, names and values in UTF-8, at most 32 KiB (RocketMQ's short property length). */
export const MAX_PROPERTIES_BYTES = 32 * 1024;
/** A tag: at most 255 bytes of UTF-8. */
export const MAX_TAG_BYTES = 255;
/** One request body: Lambda's synchronous payload limit (API Gateway allows 10 MB, Lambda 6 MB). */
export const MAX_REQUEST_BYTES = 6 * 1024 * 1024;

/** `maxMsgNums` of a pull when the request gives none (RocketMQ's pullBatchSize is 32). */
export const DEFAULT_PULL_MESSAGES = 32;
/** The most messages one pull answers. */
export const MAX_PULL_MESSAGES = 1024;
/** A subscription expression (`TagA || TagB`, or SQL92), in characters: the filters' own bound. */
export const MAX_SUB_EXPRESSION_LENGTH = MAX_FILTER_EXPRESSION_LENGTH;

/** Messages one POP receive hands out at most (RocketMQ 5's SimpleConsumer allows 32 per receive). */
export const MAX_RECEIVE_MESSAGES = 32;
/** The longest a POP receive waits for a message (RocketMQ 5's longPollingTimeout, 0 to 20 s). */
export const MAX_LONG_POLL_MS = 20_000;
/** A received message's invisible time: 1 s to 12 h (RocketMQ 5 allows 10 s to 12 h; 1 s for tests and short work). */
export const MIN_INVISIBLE_MS = 1000;
export const MAX_INVISIBLE_MS = 12 * 3600_000;
/** Receipt handles in one `POST /ack`. */
export const MAX_ACK_HANDLES = 64;
/** A receipt handle, in characters. */
export const MAX_RECEIPT_HANDLE_LENGTH = 512;

/** Offsets in one commit: a group holds one per queue. */
export const MAX_OFFSETS_PER_COMMIT = 1024;
/** Producer groups, and consumer groups, in one heartbeat. */
export const MAX_GROUPS_PER_HEARTBEAT = 256;
/** Subscriptions of one consumer group in one heartbeat. */
export const MAX_SUBSCRIPTIONS_PER_GROUP = 256;
/** A client id (RocketMQ's `ip@instance[@unit]`), in characters. */
export const MAX_CLIENT_ID_LENGTH = 255;

/** Read and write queues of a topic on one broker: 1 to 1024. */
export const MAX_QUEUE_NUMS = 1024;
/** Queues per broker of a topic that `PUT /topics/{topic}` creates without numbers (RocketMQ's mqadmin default). */
export const DEFAULT_QUEUE_NUMS = 8;
/** Queues per broker of an auto-created topic (RocketMQ's defaultTopicQueueNums). */
export const DEFAULT_AUTO_CREATE_QUEUE_NUMS = 4;

/** A queue id is a non-negative 32-bit integer; a queue offset a non-negative safe integer. */
export const MAX_QUEUE_ID = 0x7fffffff;

/** Subscriptions of a stage (one per consumer group): listed in one partition read. */
export const MAX_SUBSCRIPTIONS = 1000;
/** Messages in one delivery: 1 to 32 (a POP receive's maximum). */
export const MAX_SUBSCRIPTION_BATCH_SIZE = 32;
/** How long a subscription may wait to fill a batch: at most 5 minutes (SQS's event source mapping's limit). */
export const MAX_SUBSCRIPTION_BATCHING_WINDOW_MS = 300_000;
/** Deliveries of one subscription in flight at once: 1 to 100. */
export const MAX_SUBSCRIPTION_CONCURRENCY = 100;
/** Redeliveries of a failed message before its dead letter: at most 32. */
export const MAX_SUBSCRIPTION_RECONSUME_TIMES = 32;
/** One delivery's timeout: 1 s to 15 min (Lambda's longest run). */
export const MIN_SUBSCRIPTION_TIMEOUT_MS = 1000;
export const MAX_SUBSCRIPTION_TIMEOUT_MS = 900_000;
/** An HTTPS target's URL, in characters. */
export const MAX_SUBSCRIPTION_URL_LENGTH = 2048;
/** A subscription's filter expression, in characters (the SQL92 filters' maximum). */
export const MAX_SUBSCRIPTION_FILTER_LENGTH = MAX_FILTER_EXPRESSION_LENGTH;
/** An HTTPS target's answer, read at most this far (the failed ids of a partial failure). */
export const MAX_TARGET_ANSWER_BYTES = 256 * 1024;
/**
 * The shape of any JSON body, checked before a schema sees it (lib/http/json-body.ts), so that no decoder
 * walks attacker-sized input: an array at most 4096 items, an object at most 1024 keys, nesting at most 16
 * deep, at most 262,144 values in all. Each schema's own maximum is at most these.
 */
export const MAX_JSON_ARRAY_ITEMS = 4096;
export const MAX_JSON_OBJECT_KEYS = 1024;
export const MAX_JSON_DEPTH = 16;
export const MAX_JSON_VALUES = 256 * 1024;
/** User properties of one message, by count (their bytes are bounded by MAX_PROPERTIES_BYTES too). */
export const MAX_PROPERTY_COUNT = 1024;
/** An error answer names at most this many issues, then how many more there were. */
export const MAX_REPORTED_ISSUES = 5;
/** One issue's text in an error answer, in characters (a longer one is cut). */
export const MAX_ISSUE_LENGTH = 300;

/** A name in an answer (a topic, group, broker, cluster, client id, address, user, message id), in characters. */
export const MAX_NAME_LENGTH = 255;
/** Free text in a request or an answer (a subscription expression, a key, an error message), in characters. */
export const MAX_TEXT_LENGTH = 4096;
/** A list in an answer (topics, users, ACLs, brokers, queues, offsets, clients); a request's lists are smaller. */
export const MAX_LIST_ITEMS = 65_536;
/** A map in an answer (brokers by name, addresses by broker id). */
export const MAX_MAP_ENTRIES = 65_536;
/** One property value, in characters (over MAX_PROPERTIES_BYTES in all is the broker's 413). */
export const MAX_PROPERTY_VALUE_LENGTH = 64 * 1024;
/** Keys of one message. */
export const MAX_KEYS_PER_MESSAGE = 1024;
/** A message body as base64 text: whatever fits in one request (a body over MAX_BODY_BYTES is the broker's 413). */
export const MAX_BASE64_LENGTH = 6 * 1024 * 1024;

/** Messages one query by key answers per page (mqadmin queryMsgByKey's default maxNum, RocketMQ's maxMsgsNumBatch). */
export const MAX_QUERY_MESSAGES = 64;
/** Copies of one message id a query by id answers (a message sent again, or delayed and retried, keeps its id). */
export const MAX_QUERY_BY_ID_MESSAGES = 32;
/** A message key or a message id in a query, in characters. */
export const MAX_QUERY_KEY_LENGTH = 255;
/** A query's paging cursor, in characters: a few bytes per queue of the topic (where each goes on). */
export const MAX_QUERY_CURSOR_LENGTH = 16_384;
