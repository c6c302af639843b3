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

/** A text field's value and its setter, as `useState` gives them. */
type FieldState = [string, (value: string) => void];

/**
 * A labelled text input of the connection form. `login` makes it a required sign-in field: "user" autocompletes
 * as a user name, "secret" is a password field.
 */
function Field(props: {
  label: string;
  name: string;
  state: FieldState;
  required?: boolean;
  login?: "user" | "secret";
}) {
  const [value, setValue] = props.state;
  return (
    <label>
      {props.label}
      <input
        name={props.name}
        type={props.login === "secret" ? "password" : undefined}
        value={value}
        required={props.required === true || props.login !== undefined}
        autocomplete={props.login === "user" ? "username" : props.login === "secret" ? "current-password" : undefined}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
    </label>
  );
}

/** The connection form: API URL, and AWS keys for a stage with IAM auth. */
export function ConnectionPage(props: { settings: ConnectionSettings; onSave: (s: ConnectionSettings) => void }) {
  const apiUrl = useState(props.settings.apiUrl);
  const current = props.settings.auth;
  const [kind, setKind] = useState<Auth["kind"]>(current.kind);
  const sigv4 = current.kind === "sigv4" ? current : undefined;
  const nimbus = current.kind === "nimbus" ? current : undefined;
  const region = useState(sigv4?.region ?? regionOfApiUrl(apiUrl[0]) ?? "");
  const accessKeyId = useState(sigv4?.accessKeyId ?? "");
  const secretAccessKey = useState(sigv4?.secretAccessKey ?? "");
  const sessionToken = useState(sigv4?.sessionToken ?? "");
  const accessKey = useState(nimbus?.accessKey ?? "");
  const secretKey = useState(nimbus?.secretKey ?? "");
  const [saved, setSaved] = useState(false);

  const submit = (e: Event) => {
    e.preventDefault();
    const token = sessionToken[0];
    const auth: Auth =
      kind === "none"
        ? { kind: "none" }
        : kind === "nimbus"
          ? { kind: "nimbus", accessKey: accessKey[0], secretKey: secretKey[0] }
          : {
              kind: "sigv4",
              region: region[0],
              accessKeyId: accessKeyId[0],
              secretAccessKey: secretAccessKey[0],
              ...(token ? { sessionToken: token } : {}),
            };
    props.onSave({ apiUrl: apiUrl[0].trim().replace(/\/+$/, ""), auth });
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
        <Field label="API URL" name="apiUrl" state={apiUrl} required />
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
            <Field label="Access key (user name)" name="accessKey" state={accessKey} login="user" />
            <Field label="Secret key (password)" name="secretKey" state={secretKey} login="secret" />
          </>
        )}
        {kind === "sigv4" && (
          <>
            <Field label="Region" name="region" state={region} required />
            <Field label="Access key id" name="accessKeyId" state={accessKeyId} login="user" />
            <Field label="Secret access key" name="secretAccessKey" state={secretAccessKey} login="secret" />
            <Field label="Session token (temporary credentials)" name="sessionToken" state={sessionToken} />
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
