/** @module Hash routes (`#/topics/TopicA`): the console is one static page, so every view is a hash. */
import { useEffect, useState } from "preact/hooks";

export interface Route {
  /** Decoded path segments: `#/topics/A%20B` is `["topics", "A B"]`. */
  segments: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const [path = "", search = ""] = hash.replace(/^#\/?/, "").split("?");
  return {
    segments: path
      .split("/")
      .filter((s) => s !== "")
      .map((s) => decodeURIComponent(s)),
    query: new URLSearchParams(search),
  };
}

/** A hash link: segments encoded, query appended when not empty. */
export function href(segments: readonly (string | number)[], query: Record<string, string | number> = {}): string {
  const path = segments.map((s) => encodeURIComponent(String(s))).join("/");
  const q = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  return `#/${path}${q.size > 0 ? `?${q}` : ""}`;
}

export function navigate(to: string): void {
  window.location.hash = to;
}

/** The current route, updated on every hash change. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(window.location.hash));
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
