import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, isNimbusError } from "../../lib/core/errors.js";
import {
  AUTO_CREATE_TOPIC_KEY_TOPIC,
  DLQ_GROUP_TOPIC_PREFIX,
  dlqTopic,
  isDlqTopic,
  isRetryTopic,
  isSystemTopic,
  RETRY_GROUP_TOPIC_PREFIX,
  RMQ_SYS_SCHEDULE_TOPIC,
  RMQ_SYS_TRANS_HALF_TOPIC,
  retryTopic,
  SYSTEM_TOPIC_PREFIX,
  SYSTEM_TOPICS,
  validateBrokerName,
  validateGroup,
  validateTopic,
  validateUserTopic,
} from "../../lib/core/names.js";

const PATTERN = "^[%|a-zA-Z0-9_-]+$";

function assertIllegal(fn: () => void, message: string): void {
  assert.throws(fn, (err) => isNimbusError(err, ErrorCode.PARAMETER_ILLEGAL) && err.message === message);
}

describe("validateTopic", () => {
  it("accepts every allowed character, up to 127 characters", () => {
    for (const topic of ["a", "TopicTest", "%RETRY%group", "a|b", "with-dash_and_underscore09", "x".repeat(127)]) {
      validateTopic(topic);
    }
    validateTopic("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%|_-");
  });

  it("refuses 128 characters", () => {
    assertIllegal(() => validateTopic("x".repeat(128)), "The specified topic is longer than topic max length 127.");
  });

  it("refuses blank names", () => {
    for (const topic of ["", " ", "\t\n"]) assertIllegal(() => validateTopic(topic), "The specified topic is blank");
    assertIllegal(() => validateTopic(undefined as unknown as string), "The specified topic is blank");
  });

  it("refuses illegal characters with RocketMQ's message", () => {
    for (const topic of ["a b", "a#b", "a.b", "a/b", "a:b", "tópico", "中文", "a\u0000", "a\nb", "😀", "a*"]) {
      assertIllegal(
        () => validateTopic(topic),
        `The specified topic[${topic}] contains illegal characters, allowing only ${PATTERN}`,
      );
    }
  });

  it("lets system topics pass", () => {
    validateTopic(AUTO_CREATE_TOPIC_KEY_TOPIC);
    validateTopic("rmq_sys_x");
  });
});

describe("validateUserTopic", () => {
  it("refuses system topics, including retry and dead-letter topics", () => {
    for (const topic of [...SYSTEM_TOPICS, "rmq_sys_anything", "%RETRY%g", "%DLQ%g"]) {
      assertIllegal(() => validateUserTopic(topic), `The topic[${topic}] is conflict with system topic.`);
    }
  });

  it("checks the name rule first, and accepts ordinary topics", () => {
    assertIllegal(() => validateUserTopic(""), "The specified topic is blank");
    validateUserTopic("TopicTest");
    validateUserTopic("RMQ_SYS_TRACE_TOPIC_X"); // only the exact name, and the lower-case prefix, are reserved
  });
});

describe("validateGroup", () => {
  it("accepts up to 255 characters", () => {
    validateGroup("please_rename_unique_group_name");
    validateGroup("g".repeat(255));
  });

  it("refuses blank, too long and illegal names with RocketMQ's messages", () => {
    assertIllegal(() => validateGroup(""), "the specified group is blank");
    assertIllegal(() => validateGroup("g".repeat(256)), "the specified group is longer than group max length 255.");
    assertIllegal(
      () => validateGroup("my group"),
      `the specified group[my group] contains illegal characters, allowing only ${PATTERN}`,
    );
  });
});

describe("validateBrokerName", () => {
  it("accepts up to 127 characters of the same set", () => {
    validateBrokerName("broker-a");
    validateBrokerName("b".repeat(127));
  });

  it("refuses blank, too long and illegal names", () => {
    assertIllegal(() => validateBrokerName(""), "The specified brokerName is blank");
    assertIllegal(
      () => validateBrokerName("b".repeat(128)),
      "The specified brokerName is longer than brokerName max length 127.",
    );
    assertIllegal(
      () => validateBrokerName("broker#a"),
      `The specified brokerName[broker#a] contains illegal characters, allowing only ${PATTERN}`,
    );
  });
});

describe("system topics", () => {
  it("lists RocketMQ's system topics", () => {
    assert.deepEqual([...SYSTEM_TOPICS].sort(), [
      "BenchmarkTest",
      "OFFSET_MOVED_EVENT",
      "RMQ_SYS_TRACE_TOPIC",
      "RMQ_SYS_TRANS_HALF_TOPIC",
      "RMQ_SYS_TRANS_OP_HALF_TOPIC",
      "SCHEDULE_TOPIC_XXXX",
      "SELF_TEST_TOPIC",
      "TBW102",
      "TRANS_CHECK_MAX_TIME_TOPIC",
    ]);
    assert.equal(RMQ_SYS_SCHEDULE_TOPIC, "SCHEDULE_TOPIC_XXXX");
    assert.equal(RMQ_SYS_TRANS_HALF_TOPIC, "RMQ_SYS_TRANS_HALF_TOPIC");
    assert.equal(SYSTEM_TOPIC_PREFIX, "rmq_sys_");
    assert.equal(RETRY_GROUP_TOPIC_PREFIX, "%RETRY%");
    assert.equal(DLQ_GROUP_TOPIC_PREFIX, "%DLQ%");
  });

  it("recognizes named topics and the three prefixes", () => {
    for (const topic of [...SYSTEM_TOPICS, "rmq_sys_", "rmq_sys_SYNC_BROKER_MEMBER_x", "%RETRY%g", "%DLQ%g"]) {
      assert.equal(isSystemTopic(topic), true, topic);
    }
    for (const topic of ["TopicTest", "tbw102", "RMQ_SYS_X", "xrmq_sys_", "RETRY%g", "g%DLQ%", "%retry%g"]) {
      assert.equal(isSystemTopic(topic), false, topic);
    }
  });

  it("makes and recognizes retry and dead-letter topics", () => {
    assert.equal(retryTopic("group"), "%RETRY%group");
    assert.equal(dlqTopic("group"), "%DLQ%group");
    assert.equal(isRetryTopic(retryTopic("g")), true);
    assert.equal(isDlqTopic(dlqTopic("g")), true);
    assert.equal(isRetryTopic(dlqTopic("g")), false);
    assert.equal(isDlqTopic(retryTopic("g")), false);
    assert.equal(isRetryTopic("TopicTest"), false);
  });
});
