import "uplot/dist/uPlot.min.css";
import "./style.css";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { AccountPage, ForgotPage, LoginPage, ResetPage, SignupPage, VerifyPage } from "./account";
import { lastRateLimit, session } from "./api";
import { DashboardPage } from "./dashboard";
import { ExplorerPage } from "./explorer";
import { Link, useSession } from "./ui";

const PAGES: Record<string, { title: string; view: () => preact.JSX.Element }> = {
  "/": { title: "Explorer", view: ExplorerPage },
  "/dashboard": { title: "Usage", view: DashboardPage },
  "/account": { title: "Account", view: AccountPage },
  "/signup": { title: "Sign up", view: SignupPage },
  "/login": { title: "Log in", view: LoginPage },
  "/verify-email": { title: "Verify e-mail", view: VerifyPage },
  "/reset-password": { title: "Reset password", view: ResetPage },
  "/forgot-password": { title: "Forgot password", view: ForgotPage },
};

function RateLimitBar() {
  const r = lastRateLimit;
  if (!r) return null;
  return (
    <section class="ratelimit" aria-label="Rate limit of the last call">
      Last call <code>{r.call}</code>: limit {r.limit ?? "unlimited"}, remaining{" "}
      {r.remaining ?? "unlimited"}, resets in {r.reset} s
    </section>
  );
}

/** Stripe sends the browser back to /?checkout=success|cancelled (docs/billing.md). */
function CheckoutNotice() {
  const checkout = new URLSearchParams(location.search).get("checkout");
  if (checkout === "success")
    return (
      <p class="status" role="status">
        Thank you: your plan turns pro as soon as Stripe confirms the payment.
      </p>
    );
  if (checkout === "cancelled")
    return (
      <p class="status" role="status">
        Checkout was cancelled; nothing was charged.
      </p>
    );
  return null;
}

function App() {
  useSession();
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const on = () => setPath(location.pathname);
    addEventListener("popstate", on);
    return () => removeEventListener("popstate", on);
  }, []);
  const page = PAGES[path] ?? (PAGES["/"] as (typeof PAGES)[string]);
  useEffect(() => {
    document.title = `${page.title} · Brand Asset API`;
  }, [page]);
  const nav: [string, string][] = session.loggedIn()
    ? [
        ["/", "Explorer"],
        ["/dashboard", "Usage"],
        ["/account", "Account"],
      ]
    : [
        ["/", "Explorer"],
        ["/dashboard", "Usage"],
        ["/signup", "Sign up"],
        ["/login", "Log in"],
      ];
  const View = page.view;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <Link href="/" class="brand" label="Brand Asset API, home">
          <svg class="logo" viewBox="0 0 32 32" aria-hidden="true">
            <rect width="32" height="32" rx="8" fill="var(--accent)" />
            <path
              d="M10 7h8a5 5 0 0 1 2.6 9.3A5.5 5.5 0 0 1 18.5 25H10zm4 4v4h4a2 2 0 0 0 0-4zm0 7.5V21h4.5a1.75 1.75 0 0 0 0-3.5z"
              fill="var(--accent-fg)"
            />
          </svg>
          <span class="brand-name">Brand Asset API</span>
        </Link>
        <nav aria-label="Console">
          <ul>
            {nav.map(([href, label]) => (
              <li key={href}>
                <Link href={href} current={href === path}>
                  {label}
                </Link>
              </li>
            ))}
            <li>
              <a href="/swagger">
                <span class="wide">API </span>docs
              </a>
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>
          {path === "/" && !session.get("apiKey") ? "Brand logos, one API call away" : page.title}
        </h1>
        <CheckoutNotice />
        <View />
      </main>
      <footer>
        <RateLimitBar />
      </footer>
    </>
  );
}

render(<App />, document.getElementById("app") as HTMLElement);
