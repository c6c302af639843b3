/** @module Cluster: every registered broker by cluster, with its id, address, permission, last registration and liveness. */
import { useEffect } from "preact/hooks";
import { call } from "../api.js";
import { useConnection } from "../connection.js";
import { formatAge, formatPerm, formatTime } from "../format.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading, TableBox } from "../widgets.js";

/** Brokers register every 30 s: a refresh every 10 s shows liveness changes soon enough. */
const REFRESH_MS = 10_000;

export function ClusterPage() {
  const conn = useConnection();
  const brokers = useApi(() => call(conn, "brokerList"), [conn]);
  useEffect(() => {
    const timer = setInterval(brokers.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [brokers.reload]);
  const list = [...(brokers.data?.brokers ?? [])].sort(
    (a, b) => a.cluster.localeCompare(b.cluster) || a.brokerName.localeCompare(b.brokerName) || a.brokerId - b.brokerId,
  );
  const now = Date.now();
  return (
    <section>
      <h1>Cluster</h1>
      <ErrorBox error={brokers.error} />
      <Loading when={brokers.loading && brokers.data === undefined} />
      {brokers.data && list.length === 0 && <p>No broker has registered.</p>}
      {list.length > 0 && (
        <TableBox label="Brokers">
          <thead>
            <tr>
              <th>Cluster</th>
              <th>Broker</th>
              <th>brokerId</th>
              <th>Address</th>
              <th>Perm</th>
              <th>Last registration</th>
              <th>Liveness</th>
            </tr>
          </thead>
          <tbody>
            {list.map((b) => (
              <tr key={`${b.cluster}:${b.brokerName}:${b.brokerId}`} data-testid="broker-row">
                <td>{b.cluster}</td>
                <td>{b.brokerName}</td>
                <td>{b.brokerId === 0 ? "0 (master)" : `${b.brokerId} (slave)`}</td>
                <td class="mono">{b.address}</td>
                <td>{formatPerm(b.perm)}</td>
                <td title={formatTime(b.registeredAt)}>{formatAge(b.registeredAt, now)}</td>
                <td>
                  <span class={b.live ? "badge live" : "badge dead"}>{b.live ? "live" : "expired"}</span>
                </td>
              </tr>
            ))}
          </tbody>
        </TableBox>
      )}
      <p class="muted">A broker registers every 30 s and is live for 120 s after its last registration.</p>
    </section>
  );
}
