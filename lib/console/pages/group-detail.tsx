/**
 * @module One consumer group: its live members (consumerConnection), its subscription group, the consumerProgress
 * table with the total lag, and the lag chart: the broker's samples (one a minute, loaded when the page opens)
 * and those taken every few seconds while the page is open; each member's status (consumerStatus), reset
 * offset by time, its subscription, and the group's dead letters.
 */
import { useEffect, useState } from "preact/hooks";
import { call } from "../api.js";
import { useConnection } from "../connection.js";
import { formatAge, formatTime } from "../format.js";
import {
  appendSample,
  clearSamples,
  type LagSample,
  loadSamples,
  mergeSamples,
  rememberGroup,
} from "../lag-samples.js";
import { href } from "../router.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading, Stat, TableBox } from "../widgets.js";
import { ConsumerStatusTable } from "./consumer-status.js";
import { DeadLetters } from "./dead-letters.js";
import { GroupSubscription } from "./group-subscription.js";
import { LagChart } from "./lag-chart.js";
import { ResetOffset } from "./reset-offset.js";

const PERIODS_S = [2, 5, 15, 30, 60];

export function GroupDetailPage({ group }: { group: string }) {
  const conn = useConnection();
  const [periodS, setPeriodS] = useState(5);
  const members = useApi(() => call(conn, "consumerConnection", { params: { group } }), [conn, group]);
  const progress = useApi(() => call(conn, "consumerProgress", { params: { group } }), [conn, group]);
  const status = useApi(() => call(conn, "consumerStatus", { params: { group } }), [conn, group]);
  const history = useApi(() => call(conn, "lagHistory", { params: { group } }), [conn, group]);
  const subGroup = useApi(() => call(conn, "getSubGroup", { params: { group } }), [conn, group]);
  const [samples, setSamples] = useState<LagSample[]>(() => loadSamples(conn.apiUrl, group));

  useEffect(() => {
    rememberGroup(group);
    setSamples(loadSamples(conn.apiUrl, group));
  }, [conn, group]);

  // Every period: reload members and progress; each progress answer is one sample.
  useEffect(() => {
    const timer = setInterval(() => {
      members.reload();
      progress.reload();
      status.reload();
    }, periodS * 1000);
    return () => clearInterval(timer);
  }, [periodS, members.reload, progress.reload, status.reload]);

  const rows = progress.data?.rows;
  const totalLag = rows?.reduce((sum, r) => sum + r.diff, 0);
  useEffect(() => {
    if (totalLag === undefined) return;
    setSamples((before) => appendSample(conn.apiUrl, group, before, { at: Date.now(), lag: totalLag }));
  }, [progress.data]);

  // The topics to reset: those with offsets, and those the members subscribe to.
  const topics = [
    ...new Set([
      ...(rows ?? []).map((r) => r.topic),
      ...(members.data?.consumers ?? []).flatMap((c) => c.subscriptionDataSet.map((d) => d.topic)),
    ]),
  ].sort();
  const brokerSamples = history.data?.samples ?? [];
  const chartSamples = mergeSamples(brokerSamples, samples);
  const config = subGroup.data;
  const now = Date.now();
  return (
    <section>
      <p>
        <a href={href(["groups"])}>← Consumer groups</a>
      </p>
      <h1>
        Group <span class="mono">{group}</span>
      </h1>
      <div class="stats">
        <Stat label="Total lag" value={totalLag ?? "…"} testId="total-lag" />
        <Stat label="Members" value={members.data?.consumers.length ?? "…"} testId="member-count" />
        <Stat label="Queues" value={rows?.length ?? "…"} />
        <Stat
          label="Subscriptions"
          value={
            members.data === undefined ? "…" : members.data.subscriptionsConsistent ? "consistent" : "inconsistent"
          }
          testId="subscriptions-consistent"
        />
        <Stat
          label="Consume"
          value={config === undefined ? "…" : config.consumeEnable ? "enabled" : "disabled"}
          testId="consume-enable"
        />
        <Stat label="Retry max times" value={config?.retryMaxTimes ?? "…"} testId="retry-max-times" />
      </div>

      <h2>Lag over time</h2>
      <div class="row">
        <label class="inline">
          Sample every
          <select value={periodS} onChange={(e) => setPeriodS(Number(e.currentTarget.value))}>
            {PERIODS_S.map((s) => (
              <option key={s} value={s}>
                {s} s
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          onClick={() => {
            clearSamples(conn.apiUrl, group);
            setSamples([]);
          }}
        >
          Clear history
        </button>
      </div>
      <p class="muted" data-testid="broker-samples" data-count={brokerSamples.length}>
        {history.error
          ? `The broker's samples could not be read: ${history.error.message}`
          : `${brokerSamples.length} samples from the broker (one every ${(history.data?.intervalMs ?? 60_000) / 1000} s, the last day), the rest from this browser.`}
      </p>
      <LagChart samples={chartSamples} />

      <h2>Members</h2>
      <ErrorBox error={members.error} />
      <Loading when={members.loading && members.data === undefined} />
      {members.data && members.data.consumers.length === 0 && <p>No live consumer.</p>}
      {members.data && members.data.consumers.length > 0 && (
        <TableBox label="Members">
          <thead>
            <tr>
              <th>Client id</th>
              <th>Model</th>
              <th>Type</th>
              <th>Subscription</th>
              <th>Last heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {members.data.consumers.map((c) => (
              <tr key={c.clientId} data-testid="member-row">
                <td class="mono">{c.clientId}</td>
                <td>{c.messageModel}</td>
                <td>{c.consumeType}</td>
                <td>{c.subscriptionDataSet.map((s) => `${s.topic}: ${s.subString}`).join("; ")}</td>
                <td title={formatTime(c.lastHeartbeat)}>{formatAge(c.lastHeartbeat, now)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      )}

      <h2>Consumer status</h2>
      <ErrorBox error={status.error} />
      {status.data && <ConsumerStatusTable consumers={status.data.consumers} now={now} />}

      <h2>Consumer progress</h2>
      <ErrorBox error={progress.error} />
      {rows && rows.length === 0 && <p>The group has no offsets yet.</p>}
      {rows && rows.length > 0 && (
        <TableBox label="Consumer progress">
          <thead>
            <tr>
              <th>Topic</th>
              <th>Broker</th>
              <th>Queue</th>
              <th>Broker offset</th>
              <th>Consumer offset</th>
              <th>Diff</th>
              <th>Last consumed (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.topic}:${r.brokerName}:${r.queueId}`} data-testid="progress-row">
                <td>
                  <a href={href(["topics", r.topic])}>{r.topic}</a>
                </td>
                <td>{r.brokerName}</td>
                <td>{r.queueId}</td>
                <td>{r.brokerOffset}</td>
                <td>{r.consumerOffset}</td>
                <td class={r.diff > 0 ? "lag" : ""}>{r.diff}</td>
                <td>{formatTime(r.lastTimestamp)}</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr>
              <th colSpan={5}>Total lag</th>
              <th>{totalLag}</th>
              <th />
            </tr>
          </tfoot>
        </TableBox>
      )}

      <ResetOffset group={group} topics={topics} onReset={progress.reload} />
      <GroupSubscription group={group} />
      <DeadLetters group={group} />
    </section>
  );
}
