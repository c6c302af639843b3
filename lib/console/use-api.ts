/** @module `useApi`: one API read for a view, with its loading state, its error and a reload. */
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api.js";

export interface ApiState<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change or `reload()` is called; keeps the last data while reloading. */
export function useApi<T>(load: () => Promise<T>, deps: readonly unknown[]): ApiState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    load()
      .then((d) => {
        if (!current) return;
        setData(d);
        setError(undefined);
      })
      .catch((err: unknown) => {
        if (current) setError(asApiError(err));
      })
      .finally(() => {
        if (current) setLoading(false);
      });
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data, error, loading, reload };
}

export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError
    ? err
    : new ApiError(0, "CONSOLE_ERROR", err instanceof Error ? err.message : String(err));
}
