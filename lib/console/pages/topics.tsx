/** @module Topics: the list with a filter, and the form that creates a topic (updateTopic). */
import { useState } from "preact/hooks";
import { call } from "../api.js";
import { useConnection } from "../connection.js";
import { href, navigate } from "../router.js";
import { useApi } from "../use-api.js";
import { ErrorBox, Loading } from "../widgets.js";
import { TopicForm } from "./topic-form.js";

export function TopicsPage() {
  const conn = useConnection();
  const topics = useApi(() => call(conn, "listTopics"), [conn]);
  const [filter, setFilter] = useState("");
  const shown = (topics.data?.topics ?? []).filter((t) => t.toLowerCase().includes(filter.trim().toLowerCase()));
  return (
    <section>
      <h1>Topics</h1>
      <ErrorBox error={topics.error} />
      <label class="inline">
        Filter
        <input
          name="filter"
          type="search"
          value={filter}
          placeholder="part of a name"
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
      </label>
      <Loading when={topics.loading && topics.data === undefined} />
      {topics.data && (
        <p class="muted">
          {shown.length} of {topics.data.topics.length} topics
        </p>
      )}
      <ul class="topic-list" aria-label="Topics">
        {shown.map((t) => (
          <li key={t}>
            <a href={href(["topics", t])}>{t}</a>
          </li>
        ))}
      </ul>
      <h2>Create a topic</h2>
      <TopicForm mode="create" onSaved={(topic) => navigate(href(["topics", topic]))} />
    </section>
  );
}
