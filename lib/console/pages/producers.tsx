/** @module Producer groups: a group's live producers (producerConnection). */
import { call } from "../api.js";
import { useConnection } from "../connection.js";
import { formatAge, formatTime } from "../format.js";
import { href, navigate } from "../router.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading, OpenByName, TableBox } from "../widgets.js";

export function ProducersPage({ group }: { group: string | undefined }) {
  const conn = useConnection();
  const producers = useApi(
    async () => (group ? call(conn, "producerConnection", { params: { group } }) : undefined),
    [conn, group],
  );
  const now = Date.now();
  return (
    <section>
      <h1>Producer groups</h1>
      <OpenByName
        form="Open producer group"
        label="Producer group"
        name="producerGroup"
        initial={group ?? ""}
        open={(name) => navigate(href(["producers", name]))}
      />
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
