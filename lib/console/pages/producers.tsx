/** @module Producer groups: a group's live producers (producerConnection). */
import { useState } from "preact/hooks";
import { call } from "../api.js";
import { useConnection } from "../connection.js";
import { formatAge, formatTime } from "../format.js";
import { href, navigate } from "../router.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading, TableBox } from "../widgets.js";

export function ProducersPage({ group }: { group: string | undefined }) {
  const conn = useConnection();
  const [input, setInput] = useState(group ?? "");
  const producers = useApi(
    async () => (group ? call(conn, "producerConnection", { params: { group } }) : undefined),
    [conn, group],
  );
  const now = Date.now();
  return (
    <section>
      <h1>Producer groups</h1>
      <form
        class="form"
        aria-label="Open producer group"
        onSubmit={(e) => {
          e.preventDefault();
          if (input.trim() !== "") navigate(href(["producers", input.trim()]));
        }}
      >
        <label>
          Producer group
          <input name="producerGroup" value={input} required onInput={(e) => setInput(e.currentTarget.value)} />
        </label>
        <button type="submit">Open</button>
      </form>
      <ErrorBox error={producers.error} />
      <Loading when={producers.loading && group !== undefined} />
      {producers.data && producers.data.producers.length === 0 && <p>No live producer in {group}.</p>}
      {producers.data && producers.data.producers.length > 0 && (
        <TableBox label="Producers">
          <thead>
            <tr>
              <th>Client id</th>
              <th>Address</th>
              <th>Language</th>
              <th>Version</th>
              <th>Transactional</th>
              <th>Last heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {producers.data.producers.map((p) => (
              <tr key={p.clientId} data-testid="producer-row">
                <td class="mono">{p.clientId}</td>
                <td>{p.clientAddr}</td>
                <td>{p.language}</td>
                <td>{p.version}</td>
                <td>{p.transactional ? "yes" : "no"}</td>
                <td title={formatTime(p.lastHeartbeat)}>{formatAge(p.lastHeartbeat, now)}</td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      )}
    </section>
  );
}
