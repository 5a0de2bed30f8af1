/** The console's only network code: same-origin calls to the API, credentials from sessionStorage. */

const store = typeof sessionStorage === "undefined" ? null : sessionStorage;

/** API key, access and refresh tokens: sessionStorage only (gone when the tab closes). */
export const session = {
  get: (name: "apiKey" | "accessToken" | "refreshToken") => store?.getItem(name) ?? "",
  set(name: "apiKey" | "accessToken" | "refreshToken", value: string) {
    if (value) store?.setItem(name, value);
    else store?.removeItem(name);
    notify();
  },
  loggedIn: () => Boolean(store?.getItem("refreshToken") || store?.getItem("accessToken")),
  clear() {
    store?.clear();
    notify();
  },
};

const listeners = new Set<() => void>();
/** Subscribe to session and rate-limit changes; returns the unsubscribe function. */
export function subscribe(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
function notify() {
  for (const fn of listeners) fn();
}

export interface RateLimitInfo {
  call: string;
  limit: string | null;
  remaining: string | null;
  reset: string | null;
}
/** The X-RateLimit-* headers of the last metered call. */
export let lastRateLimit: RateLimitInfo | null = null;

export interface ApiResult<T> {
  ok: boolean;
  status: number;
  data: T;
  headers: Headers;
  /** the API's message for an error answer */
  message: string;
}

export type Credential = "none" | "key" | "bearer" | "either";

/** One refresh at a time: refresh tokens are single-use, so concurrent 401s share it. */
let refreshing: Promise<boolean> | null = null;
function refreshTokens(): Promise<boolean> {
  refreshing ??= refreshOnce().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

async function refreshOnce(): Promise<boolean> {
  const refreshToken = session.get("refreshToken");
  if (!refreshToken) return false;
  const r = await fetch("/auth/refresh", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ refreshToken }),
  });
  if (!r.ok) {
    session.set("accessToken", "");
    session.set("refreshToken", "");
    return false;
  }
  const pair = (await r.json()) as { accessToken: string; refreshToken: string };
  session.set("accessToken", pair.accessToken);
  session.set("refreshToken", pair.refreshToken);
  return true;
}

function authHeaders(cred: Credential): Record<string, string> {
  const bearer = session.get("accessToken");
  const key = session.get("apiKey");
  if ((cred === "bearer" || cred === "either") && bearer)
    return { authorization: `Bearer ${bearer}` };
  if ((cred === "key" || cred === "either") && key) return { "x-api-key": key };
  return {};
}

/** fetch on this origin with the right credential; a 401 on a bearer call refreshes once. */
export async function call(
  path: string,
  opts: { method?: string; body?: unknown; cred?: Credential } = {},
): Promise<Response> {
  const cred = opts.cred ?? "none";
  const send = () =>
    fetch(path, {
      method: opts.method ?? "GET",
      headers: {
        ...authHeaders(cred),
        ...(opts.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
  const sentToken = session.get("accessToken");
  let r = await send();
  if (r.status === 401 && cred !== "key" && cred !== "none" && session.get("refreshToken")) {
    // another call may have refreshed the pair while this one was in flight: use it
    const fresh = session.get("accessToken");
    if ((fresh && fresh !== sentToken) || (await refreshTokens())) r = await send();
  }
  if (r.headers.has("x-ratelimit-reset")) {
    lastRateLimit = {
      call: `${opts.method ?? "GET"} ${path}`,
      limit: r.headers.get("x-ratelimit-limit"),
      remaining: r.headers.get("x-ratelimit-remaining"),
      reset: r.headers.get("x-ratelimit-reset"),
    };
    notify();
  }
  return r;
}

/** call() and parse the JSON answer (or the API's {error, message}). */
export async function api<T>(
  path: string,
  opts: { method?: string; body?: unknown; cred?: Credential } = {},
): Promise<ApiResult<T>> {
  let r: Response;
  try {
    r = await call(path, opts);
  } catch {
    return {
      ok: false,
      status: 0,
      data: null as T,
      headers: new Headers(),
      message: "The API could not be reached.",
    };
  }
  const text = await r.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  const err = data as { message?: string } | null;
  const message = r.ok ? "" : (err?.message ?? `Request failed (${r.status}).`);
  return { ok: r.ok, status: r.status, data: data as T, headers: r.headers, message };
}
