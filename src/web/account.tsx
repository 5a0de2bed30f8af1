import { useEffect, useState } from "preact/hooks";
import { api, session } from "./api";
import { CopyButton, EmailField, Field, Link, navigate, Status } from "./ui";

interface Msg {
  text: string;
  error?: boolean;
}

const tokenParam = () => new URLSearchParams(location.search).get("token") ?? "";

/** Shows a freshly issued key once, with a copy button and the warning. */
function NewKey(props: { apiKey: string }) {
  return (
    <section class="newkey" aria-labelledby="newkey-h">
      <h2 id="newkey-h">Your API key</h2>
      <p class="warning">
        This key is shown <strong>once</strong>. Copy it now and keep it secret: it cannot be shown
        again, only replaced by a new one.
      </p>
      <p>
        <code class="secret">{props.apiKey}</code>
      </p>
      <CopyButton text={props.apiKey} label="Copy key" />
      <p class="hint">
        It is kept in this tab's session storage for the explorer until the tab closes.
      </p>
    </section>
  );
}

async function login(email: string, password: string): Promise<string> {
  const r = await api<{ accessToken: string; refreshToken: string }>("/auth/login", {
    method: "POST",
    body: { email, password },
  });
  if (!r.ok) return r.message;
  session.set("accessToken", r.data.accessToken);
  session.set("refreshToken", r.data.refreshToken);
  return "";
}

export function SignupPage() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [msg, setMsg] = useState<Msg>({ text: "" });
  const [key, setKey] = useState("");
  if (key)
    return (
      <>
        <Status text="Account created. We sent you an e-mail to verify your address." />
        <NewKey apiKey={key} />
        <p>
          Next: <Link href="/">explore the catalog</Link> or{" "}
          <Link href="/dashboard">see your usage</Link>.
        </p>
      </>
    );
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setMsg({ text: "Creating your account…" });
        const r = await api<{ apiKey: string }>("/auth/register", {
          method: "POST",
          body: { email, password },
        });
        if (!r.ok) return setMsg({ text: r.message, error: true });
        session.set("apiKey", r.data.apiKey);
        const err = await login(email, password);
        if (err) setMsg({ text: `Account created, but logging in failed: ${err}`, error: true });
        setKey(r.data.apiKey);
      }}
    >
      <EmailField value={email} onInput={setEmail} />
      <Field
        label="Password"
        type="password"
        value={password}
        onInput={setPassword}
        autocomplete="new-password"
        required
        minLength={10}
        hint="10 to 256 characters."
      />
      <button type="submit">Sign up</button>
      <Status {...msg} />
      <p>
        Already have an account? <Link href="/login">Log in</Link>.
      </p>
    </form>
  );
}

export function LoginPage() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [msg, setMsg] = useState<Msg>({ text: "" });
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setMsg({ text: "Logging in…" });
        const err = await login(email, password);
        if (err) return setMsg({ text: err, error: true });
        navigate("/dashboard");
      }}
    >
      <EmailField value={email} onInput={setEmail} />
      <Field
        label="Password"
        type="password"
        value={password}
        onInput={setPassword}
        autocomplete="current-password"
        required
      />
      <button type="submit">Log in</button>
      <Status {...msg} />
      <p>
        <Link href="/forgot-password">Forgot your password?</Link> ·{" "}
        <Link href="/signup">Sign up</Link>
      </p>
    </form>
  );
}

/** The e-mail link's page: nothing happens on GET, the button POSTs the token. */
export function VerifyPage() {
  const [msg, setMsg] = useState<Msg>({ text: "" });
  const [done, setDone] = useState(false);
  const token = tokenParam();
  if (!token)
    return <Status text="This link has no token. Open the link from the e-mail again." error />;
  return (
    <>
      <p>Confirm that this e-mail address is yours.</p>
      <button
        type="button"
        disabled={done}
        onClick={async () => {
          const r = await api("/auth/verify-email", { method: "POST", body: { token } });
          if (!r.ok) return setMsg({ text: r.message, error: true });
          setDone(true);
          setMsg({ text: "Your e-mail address is verified." });
        }}
      >
        Verify my e-mail address
      </button>
      <Status {...msg} />
    </>
  );
}

export function ResetPage() {
  const [password, setPassword] = useState("");
  const [msg, setMsg] = useState<Msg>({ text: "" });
  const [done, setDone] = useState(false);
  const token = tokenParam();
  if (!token)
    return <Status text="This link has no token. Open the link from the e-mail again." error />;
  if (done)
    return (
      <>
        <Status text="Your password is changed. Every session was logged out." />
        <p>
          <Link href="/login">Log in with the new password</Link>
        </p>
      </>
    );
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const r = await api("/auth/reset-password", { method: "POST", body: { token, password } });
        if (!r.ok) return setMsg({ text: r.message, error: true });
        session.set("accessToken", "");
        session.set("refreshToken", "");
        setDone(true);
      }}
    >
      <Field
        label="New password"
        type="password"
        value={password}
        onInput={setPassword}
        autocomplete="new-password"
        required
        minLength={10}
        hint="10 to 256 characters."
      />
      <button type="submit">Set the new password</button>
      <Status {...msg} />
    </form>
  );
}

export function ForgotPage() {
  const [email, setEmail] = useState("");
  const [msg, setMsg] = useState<Msg>({ text: "" });
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const r = await api("/auth/forgot-password", { method: "POST", body: { email } });
        setMsg(
          r.ok
            ? {
                text: "If an account uses this address, an e-mail with a reset link is on its way.",
              }
            : { text: r.message, error: true },
        );
      }}
    >
      <EmailField value={email} onInput={setEmail} />
      <button type="submit">Send a reset link</button>
      <Status {...msg} />
    </form>
  );
}

interface Me {
  email: string | null;
  tier: string;
  emailVerified: boolean;
  createdAt: string;
  keys: { keyId: string; prefix: string; createdAt: string }[];
}

/** The billing errors a person can act on, in the console's words (else the API's message). */
const BILLING_ERRORS: Record<string, string> = {
  billing_not_configured:
    "Billing is not configured on this server: ask its operator to upgrade your plan.",
  no_billing_account: "You have no subscription to manage yet: upgrade to pro first.",
  already_subscribed: "Your account is already on the pro plan.",
  managed_plan: "Your plan is managed by the operator of this server.",
};

export function AccountPage() {
  const [me, setMe] = useState<Me | null>(null);
  const [msg, setMsg] = useState<Msg>({ text: "" });
  const [key, setKey] = useState("");
  const [password, setPassword] = useState("");
  const load = async () => {
    const r = await api<Me>("/auth/me", { cred: "bearer" });
    if (r.ok) setMe(r.data);
    else setMsg({ text: r.message, error: true });
  };
  useEffect(() => {
    if (session.loggedIn()) void load();
  }, []);
  if (!session.loggedIn())
    return (
      <p>
        <Link href="/login">Log in</Link> to manage your account.
      </p>
    );
  const billing = async (path: string, body?: unknown) => {
    setMsg({ text: "Opening Stripe…" });
    const r = await api<{ url: string; error?: string }>(path, {
      method: "POST",
      body,
      cred: "bearer",
    });
    if (!r.ok)
      return setMsg({ text: BILLING_ERRORS[r.data?.error ?? ""] ?? r.message, error: true });
    location.assign(r.data.url);
  };
  return (
    <>
      {me && (
        <dl class="facts">
          <dt>E-mail</dt>
          <dd>
            {me.email} {me.emailVerified ? "(verified)" : "(not verified)"}
          </dd>
          <dt>Plan</dt>
          <dd>{me.tier}</dd>
          <dt>Keys</dt>
          <dd>{me.keys.map((k) => `${k.prefix}…`).join(", ") || "none"}</dd>
        </dl>
      )}
      <Status {...msg} />
      {key && <NewKey apiKey={key} />}
      <section aria-labelledby="actions-h">
        <h2 id="actions-h">Actions</h2>
        <div class="buttons">
          {me && !me.emailVerified && (
            <button
              type="button"
              onClick={async () => {
                await api("/auth/resend-verification", {
                  method: "POST",
                  body: { email: me.email },
                });
                setMsg({ text: "A new verification e-mail is on its way." });
              }}
            >
              Resend the verification e-mail
            </button>
          )}
          <button
            type="button"
            onClick={async () => {
              if (!confirm("Replace your API key? The current key stops working at once.")) return;
              const r = await api<{ apiKey: string }>("/auth/api-key/regenerate", {
                method: "POST",
                cred: "bearer",
              });
              if (!r.ok) return setMsg({ text: r.message, error: true });
              session.set("apiKey", r.data.apiKey);
              setKey(r.data.apiKey);
              void load();
            }}
          >
            Regenerate API key
          </button>
          {me?.tier === "free" && (
            <button type="button" onClick={() => billing("/v1/billing/checkout", { plan: "pro" })}>
              Upgrade to pro
            </button>
          )}
          <button type="button" onClick={() => billing("/v1/billing/portal")}>
            Manage billing
          </button>
          <button
            type="button"
            onClick={async () => {
              await api("/auth/logout", {
                method: "POST",
                body: { refreshToken: session.get("refreshToken") },
              });
              session.clear();
              navigate("/login");
            }}
          >
            Log out
          </button>
        </div>
      </section>
      <section aria-labelledby="delete-h" class="danger">
        <h2 id="delete-h">Delete the account</h2>
        <p>Your keys stop working and your e-mail address is erased. This cannot be undone.</p>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const r = await api("/auth/me", {
              method: "DELETE",
              body: { password },
              cred: "bearer",
            });
            if (!r.ok) return setMsg({ text: r.message, error: true });
            session.clear();
            navigate("/signup");
          }}
        >
          <Field
            label="Password to confirm"
            type="password"
            value={password}
            onInput={setPassword}
            autocomplete="current-password"
            required
          />
          <button type="submit" class="destructive">
            Delete my account
          </button>
        </form>
      </section>
    </>
  );
}
