/**
 * @module The push channel's gateway on AWS: API Gateway's Management API (`POST @connections/{id}`),
 * signed with SigV4 as the function's role (linked to the WebSocket API: `execute-api:ManageConnections`).
 * A 410 means the connection is gone; other failures reject, and the channel logs them (a hint is only a
 * hint: the client's poll finds the messages).
 */
import type { PushGateway } from "../../lib/broker/push/index.js";
import { type Credentials, signRequest } from "../../lib/core/sigv4.js";
import type { ServerFrame } from "../../lib/protocol/index.js";

/** A post that takes longer is abandoned (the send's answer waits for hints at most `CHANNEL_SETTLE_MS`). */
const POST_TIMEOUT_MS = 1000;

export function managementApiGateway(endpoint: string, region: string, credentials: Credentials): PushGateway {
  const base = endpoint.replace(/\/+$/, "");
  return {
    async post(connectionId: string, frame: ServerFrame) {
      const url = `${base}/@connections/${encodeURIComponent(connectionId)}`;
      const body = JSON.stringify(frame);
      const headers = { "content-type": "application/json" };
      const signed = signRequest({ method: "POST", url, region, credentials, headers, body });
      const res = await fetch(url, {
        method: "POST",
        headers: { ...headers, ...signed },
        body,
        signal: AbortSignal.timeout(POST_TIMEOUT_MS),
      });
      if (res.status === 410) return "gone";
      if (!res.ok) throw new Error(`posting to connection ${connectionId}: HTTP ${res.status} ${await res.text()}`);
      return "sent";
    },
  };
}
