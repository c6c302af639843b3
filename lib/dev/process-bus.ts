/**
 * @module What the worker processes of one `nimbus dev --workers N` (or `nimbus proxy --workers N`) tell each
 * other, so that N processes on one store behave as one broker: the write path's notices (an append wakes the long
 * polls and subscription delivery of the processes that wait on its topic: lib/dev/append-notices.ts), route and
 * ACL changes (the next request in any process reads them again, instead of within the caches' seconds), frames
 * for push-channel connections another process holds, subscriptions saved (delivery runs in one process), and
 * remoting consumers joining or leaving a group (NOTIFY_CONSUMER_IDS_CHANGED reaches the group's consumers connected
 * to every worker). Storage stays the truth: a lost message costs latency, never correctness. The primary process
 * relays each message to every other worker over Node's cluster IPC.
 */
import type { Broker } from "../broker/index.js";
import type { InProcessDispatch } from "../broker/subscriptions/index.js";
import type { RequestAuth } from "../http/authorize.js";
import type { ServerFrame } from "../protocol/index.js";
import { type AppendedNotice, AppendNotices, type InterestNotice } from "./append-notices.js";

export type BusMessage =
  | AppendedNotice
  | InterestNotice
  | { t: "route"; topic?: string | undefined }
  | { t: "acl"; username: string }
  | { t: "post"; connectionId: string; frame: ServerFrame }
  | { t: "saved"; group: string }
  | { t: "members"; group: string };

/** A process's end of the bus. */
export interface ProcessBus {
  send(message: BusMessage): void;
  onMessage(listener: (message: BusMessage) => void): void;
}

/** The parts of a server the bus connects. */
export interface BusParts {
  broker: Broker;
  auth: RequestAuth | undefined;
  /** Delivers a relayed push-channel frame if the connection is this process's. */
  deliverRelayed(connectionId: string, frame: ServerFrame): void;
  /** This process's subscription delivery, when it runs here (one process of the deployment). */
  dispatch: InProcessDispatch | undefined;
  /** A consumer joined or left a group in another process: this process's remoting consumers rebalance. */
  membersChanged?: ((group: string) => void) | undefined;
}

/** Connects a server's hints and caches to the bus, both ways. */
export function wireBus(bus: ProcessBus, parts: BusParts): void {
  const { broker, auth, dispatch } = parts;
  const notices = new AppendNotices((m) => bus.send(m), broker.queueLog.interest);
  broker.queueLog.onAppended((q, maxOffset, elsewhere) => notices.appended(q, maxOffset, elsewhere));
  broker.routeCache.onInvalidate = (topic) => bus.send({ t: "route", topic });
  if (auth !== undefined) auth.onForget = (username) => bus.send({ t: "acl", username });
  // Where delivery does not run, a save is told to the process where it does.
  if (dispatch === undefined) broker.subscriptions.onSaved = (s) => bus.send({ t: "saved", group: s.group });
  bus.onMessage((m) => {
    switch (m.t) {
      case "interest":
        notices.heardInterest(m);
        return;
      case "appended":
        notices.heardAppended();
        broker.queueLog.appendedElsewhere(
          { topic: m.topic, brokerName: m.brokerName, queueId: m.queueId },
          m.maxOffset,
        );
        return;
      case "route":
        broker.routeCache.invalidateFromElsewhere(m.topic);
        return;
      case "acl":
        auth?.forgetFromElsewhere(m.username);
        return;
      case "post":
        parts.deliverRelayed(m.connectionId, m.frame);
        return;
      case "members":
        parts.membersChanged?.(m.group);
        return;
      case "saved":
        if (dispatch === undefined) return;
        void broker.subscriptions
          .get(m.group)
          .then((s) => {
            if (s !== undefined) dispatch.saved(s);
          })
          .catch((err: unknown) => console.error("nimbus: a saved subscription could not be read:", err));
        return;
    }
  });
  notices.start();
}

const KINDS = new Set(["appended", "interest", "route", "acl", "post", "saved", "members"]);

/** Whether an IPC message is one of the bus's (the cluster module sends its own messages on the same channel). */
export function isBusMessage(message: unknown): message is BusMessage {
  return typeof message === "object" && message !== null && KINDS.has((message as { t?: unknown }).t as string);
}

/** A worker's end: messages go to the primary, which relays them to the other workers. */
export function workerBus(): ProcessBus {
  return {
    send(message) {
      if (process.connected) process.send?.(message);
    },
    onMessage(listener) {
      process.on("message", (message: unknown) => {
        if (isBusMessage(message)) listener(message);
      });
    },
  };
}
