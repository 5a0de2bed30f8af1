import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { makeApp, type TestApp } from "../support/app";

export const PASSWORD = "correct horse battery";

export interface AuthTestApp extends TestApp {
  /** POST JSON (optionally with a bearer token or extra headers) */
  json(
    path: string,
    body: unknown,
    opts?: { bearer?: string; headers?: Record<string, string>; method?: string },
  ): Promise<Response>;
  /** GET with a bearer token */
  bearer(path: string, token: string): Promise<Response>;
  /** register through the API (from a fresh client IP); returns the 201 body */
  register(email: string, password?: string): Promise<Registered>;
  login(email: string, password?: string): Promise<Pair>;
  /** messages in DATA_DIR/outbox (RFC 822 text), oldest first */
  outbox(): string[];
  /** the token of the last link to `path` (verify-email, reset-password) mailed to `to` */
  lastToken(to: string, path: string): string;
}

export interface Registered {
  accountId: string;
  email: string;
  tier: string;
  emailVerified: boolean;
  keyId: string;
  apiKey: string;
}
export interface Pair {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  refreshToken: string;
}

let ipCounter = 0;
/** a distinct client address (the app trusts X-Forwarded-For in these tests) */
export const freshIp = () => `198.51.100.${++ipCounter % 250}`;

/** The real app (embedded store, outbox mailer) trusting X-Forwarded-For so tests pick client IPs. */
export async function makeAuthApp(env: Record<string, string> = {}): Promise<AuthTestApp> {
  const t = await makeApp({ TRUST_PROXY: "true", ...env });
  const dir = join(t.deps.config.DATA_DIR, "outbox");
  // mails that /auth routes prepare after answering are in the outbox once `json` resolves
  const json: AuthTestApp["json"] = async (path, body, opts = {}) => {
    const r = await t.req(path, {
      method: opts.method ?? "POST",
      headers: {
        "content-type": "application/json",
        "x-forwarded-for": freshIp(),
        ...(opts.bearer ? { authorization: `Bearer ${opts.bearer}` } : {}),
        ...opts.headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    await t.deps.auth.settled();
    return r;
  };
  const outbox = () => {
    let names: string[] = [];
    try {
      names = readdirSync(dir).sort((a, b) => a.split(".")[1]!.localeCompare(b.split(".")[1]!));
    } catch {}
    return names.map((n) => decodeQuotedPrintable(readFileSync(join(dir, n), "utf8")));
  };
  return {
    ...t,
    json,
    bearer: (path, token) => t.req(path, { headers: { authorization: `Bearer ${token}` } }),
    async register(email, password = PASSWORD) {
      const r = await json("/auth/register", { email, password });
      if (r.status !== 201) throw new Error(`register: ${r.status} ${await r.text()}`);
      return (await r.json()) as Registered;
    },
    async login(email, password = PASSWORD) {
      const r = await json("/auth/login", { email, password });
      if (r.status !== 200) throw new Error(`login: ${r.status} ${await r.text()}`);
      return (await r.json()) as Pair;
    },
    outbox,
    lastToken(to, path) {
      const mail = outbox()
        .filter((m) => new RegExp(`^To: ${to.replace(/[.+]/g, "\\$&")}\\r?$`, "im").test(m))
        .at(-1);
      const m = mail && new RegExp(`/${path}\\?token=([A-Za-z0-9_%-]+)`).exec(mail);
      if (!m) throw new Error(`no ${path} link mailed to ${to}`);
      return decodeURIComponent(m[1] as string);
    },
  };
}

/** Every file under `dir`, recursively, with its bytes. */
export function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => {
      const path = join(d.parentPath, d.name);
      return { path, bytes: readFileSync(path) };
    });
}

/** Undo quoted-printable soft line breaks and escapes (nodemailer wraps long lines so). */
export const decodeQuotedPrintable = (text: string) =>
  text
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
