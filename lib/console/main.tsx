/**
 * @module The Nimbus console: one static page (index.html + console.js + console.css, bundled by
 * build-console.ts) whose views are hash routes. It calls the API with the connection's signer.
 */
import { render } from "preact";
import { useMemo, useState } from "preact/hooks";
import "uplot/dist/uPlot.min.css";
import "./console.css";
import { ConnectionContext, ConnectionPage, connectionOf, initialSettings, saveSettings } from "./connection.js";
import { ClusterPage } from "./pages/cluster.js";
import { GroupDetailPage } from "./pages/group-detail.js";
import { GroupsPage } from "./pages/groups.js";
import { MessageViewPage } from "./pages/message-view.js";
import { MessagesPage } from "./pages/messages.js";
import { ProducersPage } from "./pages/producers.js";
import { SearchPage } from "./pages/search.js";
import { TopicDetailPage } from "./pages/topic-detail.js";
import { TopicsPage } from "./pages/topics.js";
import { TransactionsPage } from "./pages/transactions.js";
import { href, type Route, useRoute } from "./router.js";

const NAV: [string, string][] = [
  ["cluster", "Cluster"],
  ["topics", "Topics"],
  ["groups", "Consumer groups"],
  ["messages", "Messages"],
  ["search", "Search"],
  ["producers", "Producers"],
  ["transactions", "Transactions"],
  ["connection", "Connection"],
];

function App() {
  const route = useRoute();
  const [settings, setSettings] = useState(initialSettings);
  const conn = useMemo(() => connectionOf(settings), [settings]);
  const section = route.segments[0] ?? "cluster";
  return (
    <ConnectionContext.Provider value={conn}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">Nimbus console</span>
        <nav aria-label="Views">
          {NAV.map(([id, label]) => (
            <a key={id} href={href([id])} aria-current={section === id ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="api mono" title="API">
          {settings.apiUrl}
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {section === "connection" ? (
          <ConnectionPage
            settings={settings}
            onSave={(s) => {
              saveSettings(s);
              setSettings(s);
            }}
          />
        ) : (
          // A new path is a new view: no state (forms, last answers) carries over from another topic or group.
          <View key={route.segments.join("/")} route={route} />
        )}
      </main>
    </ConnectionContext.Provider>
  );
}

function View({ route }: { route: Route }) {
  const [section = "cluster", a, b, c, d] = route.segments;
  switch (section) {
    case "cluster":
      return <ClusterPage />;
    case "topics":
      return a === undefined ? <TopicsPage /> : <TopicDetailPage topic={a} />;
    case "groups":
      return a === undefined ? <GroupsPage /> : <GroupDetailPage group={a} />;
    case "messages":
      return <MessagesPage query={route.query} />;
    case "search":
      return <SearchPage query={route.query} />;
    case "message":
      return <MessageViewPage topic={a ?? ""} broker={b ?? ""} queue={Number(c)} offset={Number(d)} />;
    case "producers":
      return <ProducersPage group={a} />;
    case "transactions":
      return <TransactionsPage query={route.query} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            No view <span class="mono">{section}</span>. <a href={href(["cluster"])}>Cluster</a>
          </p>
        </section>
      );
  }
}

const root = document.getElementById("app");
if (root) render(<App />, root);
