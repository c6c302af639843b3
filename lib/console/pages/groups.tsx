/**
 * @module Consumer groups: every group the broker knows (`GET /groups`, a page of 100 at a time) with its live
 * members, message model, total lag, topics and whether it may consume; or a group typed by name.
 */
import { useState } from "preact/hooks";
import { call } from "../api.js";
import { useConnection } from "../connection.js";
import { recentGroups } from "../lag-samples.js";
import { href, navigate } from "../router.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading, OpenByName, TableBox } from "../widgets.js";

export function GroupsPage() {
  const conn = useConnection();
  const [pages, setPages] = useState<string[]>([]);
  const startAfter = pages.at(-1);
  const list = useApi(
    () => call(conn, "listGroups", { query: startAfter === undefined ? {} : { startAfter } }),
    [conn, startAfter],
  );
  const recent = recentGroups();
  const groups = list.data?.groups;
  const next = list.data?.nextStartAfter;
  return (
    <section>
      <h1>Consumer groups</h1>
      <ErrorBox error={list.error} />
      <Loading when={list.loading && groups === undefined} />
      {groups && groups.length === 0 && <p>No consumer group yet: one appears with its first commit or heartbeat.</p>}
      {groups && groups.length > 0 && (
        <TableBox label="Consumer groups">
          <thead>
            <tr>
              <th>Group</th>
              <th>Members</th>
              <th>Model</th>
              <th>Total lag</th>
              <th>Topics</th>
              <th>Consume</th>
              <th>Retry max</th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.group} data-testid="group-row">
                <td>
                  <a href={href(["groups", g.group])}>{g.group}</a>
                </td>
                <td>{g.memberCount}</td>
                <td>{g.memberCount === 0 ? "OFFLINE" : g.messageModel}</td>
                <td class={g.totalLag > 0 ? "lag" : ""}>{g.totalLag}</td>
                <td>{g.topics.join(", ")}</td>
                <td>{g.subscriptionGroup.consumeEnable ? "enabled" : "disabled"}</td>
                <td>{g.subscriptionGroup.retryMaxTimes}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      )}
      <div class="row">
        {pages.length > 0 && (
          <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
            Previous page
          </button>
        )}
        {next !== undefined && (
          <button type="button" onClick={() => setPages([...pages, next])}>
            Next page
          </button>
        )}
      </div>
      <OpenByName
        form="Open group"
        label="Consumer group"
        name="group"
        open={(name) => navigate(href(["groups", name]))}
      />
      {recent.length > 0 && (
        <>
          <h2>Opened before</h2>
          <ul class="topic-list">
            {recent.map((g) => (
              <li key={g}>
                <a href={href(["groups", g])}>{g}</a>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
