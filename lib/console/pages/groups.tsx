/** @module Consumer groups: pick a group (typed, or one opened before). The API has no list of all groups. */
import { useState } from "preact/hooks";
import { recentGroups } from "../lag-samples.js";
import { href, navigate } from "../router.js";

export function GroupsPage() {
  const [group, setGroup] = useState("");
  const recent = recentGroups();
  return (
    <section>
      <h1>Consumer groups</h1>
      <form
        class="form"
        aria-label="Open group"
        onSubmit={(e) => {
          e.preventDefault();
          if (group.trim() !== "") navigate(href(["groups", group.trim()]));
        }}
      >
        <label>
          Consumer group
          <input name="group" value={group} required onInput={(e) => setGroup(e.currentTarget.value)} />
        </label>
        <button type="submit">Open</button>
      </form>
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
