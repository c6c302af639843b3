/**
 * @module mqadmin's cluster and topic commands: `clusterList`, `updateTopic`, `deleteTopic`, `topicList`,
 * `topicRoute`, `topicStatus`. Each is one NimbusApi call (two for `updateTopic -c`), printed as a table or
 * as the API's JSON.
 */
import { type Command, InvalidArgumentError } from "commander";
import { PermName } from "../core/perm-name.js";
import { MASTER_ID } from "../core/topology.js";
import type { QueueStatus, TopicRouteData } from "../protocol/index.js";
import { DEFAULT_QUEUE_NUMS, MAX_QUEUE_NUMS } from "../protocol/index.js";
import { type ApiOptions, apiCommand, connect, intIn, usage } from "./common.js";
import { brokerNamesOf, clusterBrokers, clusterOption, refuseOptions } from "./mqadmin-compat.js";
import { formatTable, formatTime, note, print, printJson } from "./output.js";

interface TopicOptions extends ApiOptions {
  topic: string;
  clusterName?: string;
  /** topicStatus: each queue's write load against its partition keys' ceiling. */
  load?: boolean;
}

interface ClusterListOptions extends ApiOptions {
  clusterName?: string;
}

interface TopicListOptions extends ApiOptions {
  /** mqadmin's `-c` (clusterModel): the cluster of each topic too. */
  clusterModel?: boolean;
}

/** Topic routes read at once by `topicList -c` (one request each). */
const ROUTE_READS_IN_FLIGHT = 4;

interface UpdateTopicOptions extends TopicOptions {
  brokerName?: string;
  clusterName?: string;
  readQueueNums?: number;
  writeQueueNums?: number;
  perm?: number;
  /** `-a +key.index=<bool>`: whether the message index keeps the topic's keys. */
  attributes?: boolean;
}

/**
 * mqadmin's `-a +name=value,...` (RocketMQ 5's topic attributes). Nimbus has one, `key.index`; a message's type
 * (delay, transaction, FIFO) is per message, so `message.type` and the others are refused with that.
 */
function keyIndexAttribute(value: string): boolean {
  let keyIndex: boolean | undefined;
  for (const part of value.split(",").map((p) => p.trim())) {
    const match = /^\+key\.index=(true|false)$/.exec(part);
    if (match === null) {
      throw new InvalidArgumentError(
        `${part}: Nimbus topics have one attribute, +key.index=true|false; a message's type (delay, transaction) is per message`,
      );
    }
    keyIndex = match[1] === "true";
  }
  if (keyIndex === undefined) throw new InvalidArgumentError("-a needs +key.index=true or +key.index=false");
  return keyIndex;
}

export function addTopicCommands(program: Command): void {
  refuseOptions(
    apiCommand(program, "clusterList", "list the live brokers of every cluster").option(
      "-c, --clusterName <cluster>",
      "only this cluster",
    ),
    [
      {
        flags: "-m, --moreStats",
        hint: "Nimbus keeps no per-broker TPS counters; topicStatus -t T and consumerProgress show offsets and lag",
      },
      { flags: "-i, --interval <seconds>", hint: "repeat it with watch -n <seconds> nimbus clusterList" },
    ],
  ).action(clusterList);

  const updateTopicCommand = apiCommand(
    program,
    "updateTopic",
    "create or update a topic's queues on brokers (other brokers keep theirs)",
  )
    .requiredOption("-t, --topic <topic>", "topic name")
    .option("-b, --brokerName <names>", "broker name(s) or address(es), comma-separated")
    .option("-c, --clusterName <cluster>", "every master broker of this cluster")
    .option(
      "-r, --readQueueNums <n>",
      `read queues per broker (default ${DEFAULT_QUEUE_NUMS})`,
      intIn(1, MAX_QUEUE_NUMS),
    )
    .option(
      "-w, --writeQueueNums <n>",
      `write queues per broker (default ${DEFAULT_QUEUE_NUMS})`,
      intIn(1, MAX_QUEUE_NUMS),
    )
    .option("-p, --perm <perm>", "permission bits: 2 write, 4 read, 6 read+write (default 6)", intIn(0, 15))
    .option(
      "-a, --attributes <attributes>",
      "topic attributes as mqadmin writes them; Nimbus has one: +key.index=false (keys not indexed)",
      keyIndexAttribute,
    )
    .addHelpText("after", "\nExample:\n  nimbus updateTopic -t TopicTest -b broker-a -r 2 -w 2");
  refuseOptions(updateTopicCommand, [
    {
      flags: "-o, --order <bool>",
      hint: "every Nimbus queue keeps its order: send with a queue selector for ordered messages (docs/client.md)",
    },
    { flags: "-u, --unit <bool>", hint: "Nimbus has no units" },
    { flags: "-s, --hasUnitSub <bool>", hint: "Nimbus has no units" },
  ]).action(updateTopic);

  clusterOption(
    apiCommand(program, "deleteTopic", "delete a topic's route (its messages stay until retention)").requiredOption(
      "-t, --topic <topic>",
      "topic name",
    ),
    "checked; the route is deleted from the whole stage, as mqadmin does for a cluster",
  ).action(deleteTopic);

  apiCommand(program, "topicList", "list the topics")
    .option("-c, --clusterModel", "print each topic's cluster(s) too (one route read per topic)")
    .action(topicList);

  apiCommand(program, "topicClusterList", "show the cluster(s) a topic has queues in")
    .requiredOption("-t, --topic <topic>", "topic name")
    .action(topicClusterList);

  apiCommand(program, "topicRoute", "show a topic's queues per broker (its route)")
    .requiredOption("-t, --topic <topic>", "topic name")
    .option("-l, --list", "mqadmin's list format: the same table")
    .action(topicRoute);

  clusterOption(
    apiCommand(program, "topicStatus", "show every queue's min and max offset and last update").requiredOption(
      "-t, --topic <topic>",
      "topic name",
    ),
    "only the queues of this cluster's brokers",
  )
    .option(
      "--load",
      "also each queue's appends/s and its busiest partition key's share of 1,000 write units/s (one query per index key)",
    )
    .action(topicStatus);
}

async function clusterList(opts: ClusterListOptions): Promise<void> {
  const api = connect(opts);
  const info = await api.clusterInfo();
  const clusters = opts.clusterName === undefined ? Object.keys(info.clusterAddrTable).sort() : [opts.clusterName];
  if (opts.clusterName !== undefined) await clusterBrokers(api, opts.clusterName, info);
  if (opts.json) return printJson(info);
  const rows: (string | number)[][] = [];
  for (const cluster of clusters) {
    for (const brokerName of [...(info.clusterAddrTable[cluster] ?? [])].sort()) {
      const addrs = info.brokerAddrTable[brokerName]?.brokerAddrs ?? {};
      for (const [id, addr] of Object.entries(addrs).sort(([a], [b]) => Number(a) - Number(b))) {
        rows.push([cluster, brokerName, Number(id), addr]);
      }
    }
  }
  print(
    formatTable([{ header: "Cluster Name" }, { header: "Broker Name" }, { header: "BID" }, { header: "Addr" }], rows),
  );
}

async function updateTopic(opts: UpdateTopicOptions, cmd: Command): Promise<void> {
  if ((opts.brokerName === undefined) === (opts.clusterName === undefined)) {
    usage(cmd, "updateTopic needs either -b <brokerName> or -c <clusterName>");
  }
  const api = connect(opts);
  let brokerNames: string[];
  if (opts.clusterName !== undefined) {
    brokerNames = await clusterBrokers(api, opts.clusterName);
  } else {
    brokerNames = (opts.brokerName ?? "")
      .split(",")
      .map((b) => b.trim())
      .filter((b) => b.length > 0);
    if (brokerNames.length === 0) usage(cmd, "-b needs a broker name");
    // mqadmin's -b is a broker's address: the broker serving there is meant.
    if (brokerNames.some((b) => /[:/]/.test(b))) {
      const info = await api.clusterInfo();
      brokerNames = [...new Set(brokerNames.flatMap((b) => brokerNamesOf(info, b)))];
    }
  }
  const route = await api.updateTopic(opts.topic, {
    brokerNames,
    readQueueNums: opts.readQueueNums,
    writeQueueNums: opts.writeQueueNums,
    perm: opts.perm,
    ...(opts.attributes === undefined ? {} : { keyIndex: opts.attributes }),
  });
  if (opts.json) return printJson(route);
  for (const b of brokerNames) print(`create topic to ${b} success.\n`);
  const qd = route.queueDatas.find((q) => q.brokerName === brokerNames[0]);
  if (qd !== undefined) {
    print(
      `TopicConfig [topicName=${opts.topic}, readQueueNums=${qd.readQueueNums}, writeQueueNums=${qd.writeQueueNums}, perm=${PermName.perm2String(qd.perm)}]\n`,
    );
  }
}

async function deleteTopic(opts: TopicOptions): Promise<void> {
  await connect(opts).deleteTopic(opts.topic);
  if (opts.json) return printJson({ topic: opts.topic, deleted: true });
  print(`delete topic [${opts.topic}] success.\n`);
}

async function topicList(opts: TopicListOptions): Promise<void> {
  const api = connect(opts);
  const topics = await api.listTopics();
  if (!opts.clusterModel) {
    if (opts.json) return printJson({ topics });
    if (topics.length === 0) note("no topics");
    return print(topics.map((t) => `${t}\n`).join(""));
  }
  const clusters = new Map<string, string[]>();
  const queue = [...topics];
  const worker = async () => {
    for (let topic = queue.shift(); topic !== undefined; topic = queue.shift()) {
      clusters.set(topic, clustersOf(await api.topicRoute(topic)));
    }
  };
  await Promise.all(Array.from({ length: ROUTE_READS_IN_FLIGHT }, worker));
  const rows = topics.flatMap((t) => (clusters.get(t) ?? []).map((c) => [c, t]));
  if (opts.json) return printJson({ topics: rows.map(([cluster, topic]) => ({ cluster, topic })) });
  if (topics.length === 0) note("no topics");
  print(formatTable([{ header: "Cluster Name" }, { header: "Topic" }], rows));
}

/** The clusters of a route's brokers, sorted. */
function clustersOf(route: TopicRouteData): string[] {
  return [...new Set(route.brokerDatas.map((b) => b.cluster))].sort();
}

async function topicClusterList(opts: TopicOptions): Promise<void> {
  const clusters = clustersOf(await connect(opts).topicRoute(opts.topic));
  if (opts.json) return printJson({ topic: opts.topic, clusters });
  print(clusters.map((c) => `${c}\n`).join(""));
}

async function topicRoute(opts: TopicOptions): Promise<void> {
  const route = await connect(opts).topicRoute(opts.topic);
  if (opts.json) return printJson(route);
  print(formatRoute(route));
}

/** A broker's addresses: the master's, then each slave's as `id: address` (a master gone shows `-`). */
function addresses(byId: Record<string, string>): string {
  const slaves = Object.entries(byId)
    .filter(([id]) => id !== String(MASTER_ID))
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([id, address]) => `${id}: ${address}`);
  return [byId[String(MASTER_ID)] ?? "-", ...slaves].join(", ");
}

/** The route as a table: a row per broker with its queues, permission and addresses. */
export function formatRoute(route: TopicRouteData): string {
  const brokers = new Map(route.brokerDatas.map((b) => [b.brokerName, b]));
  const rows = route.queueDatas.map((qd) => {
    const broker = brokers.get(qd.brokerName);
    return [
      qd.brokerName,
      broker?.cluster ?? "",
      qd.readQueueNums,
      qd.writeQueueNums,
      `${PermName.perm2String(qd.perm)} (${qd.perm})`,
      addresses(broker?.brokerAddrs ?? {}),
    ];
  });
  return formatTable(
    [
      { header: "Broker Name" },
      { header: "Cluster" },
      { header: "Read Queues" },
      { header: "Write Queues" },
      { header: "Perm" },
      { header: "Addr" },
    ],
    rows,
  );
}

async function topicStatus(opts: TopicOptions): Promise<void> {
  const api = connect(opts);
  const all = await api.topicStatus(opts.topic, { load: opts.load === true });
  const inCluster = opts.clusterName === undefined ? undefined : new Set(await clusterBrokers(api, opts.clusterName));
  const queues = inCluster === undefined ? all : all.filter((q) => inCluster.has(q.brokerName));
  if (opts.json) return printJson({ queues });
  const rows = queues.map((q) => [
    q.brokerName,
    q.queueId,
    q.minOffset,
    q.maxOffset,
    formatTime(q.lastUpdateTimestamp),
    ...(opts.load === true ? loadColumns(q.load) : []),
  ]);
  const loadHeaders =
    opts.load === true ? [{ header: "Appends/s" }, { header: "Keys" }, { header: "Busiest Key" }] : [];
  print(
    formatTable(
      [
        { header: "Broker Name" },
        { header: "QID" },
        { header: "Min Offset" },
        { header: "Max Offset" },
        { header: "Last Updated", align: "left" },
        ...loadHeaders,
      ],
      rows,
    ),
  );
  for (const q of queues.filter((q) => q.load?.nearLimit === true)) {
    const share = Math.round((q.load?.busiestKeyShare ?? 0) * 100);
    console.error(
      `warning: queue ${q.brokerName}/${q.queueId} runs at ${share} % of a partition key's write ceiling: DynamoDB throttles it soon (more queues, batches, or hotTopics: docs/deploy.md)`,
    );
  }
}

/** A queue's load as table cells: appends/s, index keys, the busiest key's share of 1,000 write units/s. */
function loadColumns(load: QueueStatus["load"]): (string | number)[] {
  if (load === undefined) return ["-", "-", "-"];
  return [Math.round(load.appendsPerSecond), load.indexKeys, `${Math.round(load.busiestKeyShare * 100)} %`];
}
