/**
 * @module The connection: which API the console talks to and how it signs (signing.ts). Defaults: the
 * page's `?api=` (the deployed console's link, infra/outputs.ts) or the page's own origin (the local
 * server). Kept in sessionStorage: keys are gone when the tab closes.
 */
import { createContext } from "preact";
import { useContext, useState } from "preact/hooks";
import type { Connection } from "./api.js";
import { type Auth, regionOfApiUrl, signerFor } from "./signing.js";

export interface ConnectionSettings {
  apiUrl: string;
  auth: Auth;
}

const STORAGE_KEY = "nimbus-console-connection";

export function initialSettings(): ConnectionSettings {
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (stored !== null) {
    try {
      return JSON.parse(stored) as ConnectionSettings;
    } catch {
      sessionStorage.removeItem(STORAGE_KEY);
    }
  }
  const page = new URLSearchParams(window.location.search);
  return { apiUrl: (page.get("api") ?? window.location.origin).replace(/\/+$/, ""), auth: { kind: "none" } };
}

export function saveSettings(settings: ConnectionSettings): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(settings));
}

export function connectionOf(settings: ConnectionSettings): Connection {
  return { apiUrl: settings.apiUrl, sign: signerFor(settings.auth) };
}

export const ConnectionContext = createContext<Connection>({ apiUrl: "", sign: signerFor({ kind: "none" }) });

export function useConnection(): Connection {
  return useContext(ConnectionContext);
}

/** The connection form: API URL, and AWS keys for a stage with IAM auth. */
export function ConnectionPage(props: { settings: ConnectionSettings; onSave: (s: ConnectionSettings) => void }) {
  const [apiUrl, setApiUrl] = useState(props.settings.apiUrl);
  const current = props.settings.auth;
  const [kind, setKind] = useState<Auth["kind"]>(current.kind);
  const [region, setRegion] = useState(current.kind === "sigv4" ? current.region : (regionOfApiUrl(apiUrl) ?? ""));
  const [accessKeyId, setAccessKeyId] = useState(current.kind === "sigv4" ? current.accessKeyId : "");
  const [secretAccessKey, setSecret] = useState(current.kind === "sigv4" ? current.secretAccessKey : "");
  const [sessionToken, setToken] = useState(current.kind === "sigv4" ? (current.sessionToken ?? "") : "");
  const [accessKey, setAccessKey] = useState(current.kind === "nimbus" ? current.accessKey : "");
  const [secretKey, setSecretKey] = useState(current.kind === "nimbus" ? current.secretKey : "");
  const [saved, setSaved] = useState(false);

  const submit = (e: Event) => {
    e.preventDefault();
    const auth: Auth =
      kind === "none"
        ? { kind: "none" }
        : kind === "nimbus"
          ? { kind: "nimbus", accessKey, secretKey }
          : { kind: "sigv4", region, accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
    props.onSave({ apiUrl: apiUrl.trim().replace(/\/+$/, ""), auth });
    setSaved(true);
  };

  return (
    <section>
      <h1>Connection</h1>
      <p class="muted">
        The API this console calls, and how it signs requests: a stage with IAM auth needs AWS keys (SigV4), as the CLI
        does. Kept in this tab only.
      </p>
      <form class="form" onSubmit={submit}>
        <label>
          API URL
          <input name="apiUrl" value={apiUrl} required onInput={(e) => setApiUrl(e.currentTarget.value)} />
        </label>
        <label>
          Auth
          <select name="auth" value={kind} onChange={(e) => setKind(e.currentTarget.value as Auth["kind"])}>
            <option value="none">None (local broker, or a stage without auth)</option>
            <option value="nimbus">Nimbus user (a stage with ACL auth, the default)</option>
            <option value="sigv4">AWS SigV4 (IAM auth)</option>
          </select>
        </label>
        {kind === "nimbus" && (
          <>
            <label>
              Access key (user name)
              <input
                name="accessKey"
                value={accessKey}
                required
                autocomplete="username"
                onInput={(e) => setAccessKey(e.currentTarget.value)}
              />
            </label>
            <label>
              Secret key (password)
              <input
                name="secretKey"
                type="password"
                value={secretKey}
                required
                autocomplete="current-password"
                onInput={(e) => setSecretKey(e.currentTarget.value)}
              />
            </label>
          </>
        )}
        {kind === "sigv4" && (
          <>
            <label>
              Region
              <input name="region" value={region} required onInput={(e) => setRegion(e.currentTarget.value)} />
            </label>
            <label>
              Access key id
              <input
                name="accessKeyId"
                value={accessKeyId}
                required
                autocomplete="username"
                onInput={(e) => setAccessKeyId(e.currentTarget.value)}
              />
            </label>
            <label>
              Secret access key
              <input
                name="secretAccessKey"
                type="password"
                value={secretAccessKey}
                required
                autocomplete="current-password"
                onInput={(e) => setSecret(e.currentTarget.value)}
              />
            </label>
            <label>
              Session token (temporary credentials)
              <input name="sessionToken" value={sessionToken} onInput={(e) => setToken(e.currentTarget.value)} />
            </label>
          </>
        )}
        <button type="submit">Connect</button>
        {saved && (
          <span class="ok" role="status">
            Saved.
          </span>
        )}
      </form>
    </section>
  );
}
