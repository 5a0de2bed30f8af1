import { useEffect, useState } from "preact/hooks";
import { BATCH_SLUG_CAP, BUCKETS, DAILY_LIMITS } from "../quota/limits";
import { api } from "./api";
import { CodeBlock, Field, Link, Status } from "./ui";

interface Match {
  slug: string;
  name: string;
  brandColor: string | null;
}

const thumb = (slug: string, size: number) =>
  `/v1/gallery/${encodeURIComponent(slug)}/thumbnail?variant=color&size=${size}`;

const fmt = (n: number | null) => (n === null ? "unlimited" : n.toLocaleString("en-US"));

/** Public search of the catalog through the gallery: real logos, no account, no key. */
function TrySearch() {
  const [q, setQ] = useState("stripe");
  const [matches, setMatches] = useState<Match[]>([]);
  const [msg, setMsg] = useState({ text: "", error: false });
  useEffect(() => {
    const query = q.trim();
    if (query.length < 2) return setMatches([]);
    const t = setTimeout(async () => {
      const r = await api<{ matches: Match[] }>(
        `/v1/gallery/search?${new URLSearchParams({ q: query, limit: "12" })}`,
      );
      if (!r.ok) return setMsg({ text: r.message, error: true });
      setMatches(r.data.matches);
      setMsg({
        text: r.data.matches.length
          ? `${r.data.matches.length} brands shown.`
          : `No brand matches "${query}". Try fewer words or the company's domain.`,
        error: false,
      });
    }, 300);
    return () => clearTimeout(t);
  }, [q]);
  return (
    <section aria-labelledby="try-h" class="card try">
      <h2 id="try-h">Try it: search the catalog</h2>
      <Field
        label="Brand name or domain"
        type="search"
        value={q}
        onInput={setQ}
        hint="No account needed; these previews are public thumbnails."
      />
      <Status {...msg} />
      <ul class="gallery" aria-label="Catalog previews">
        {matches.map((m) => (
          <li key={m.slug}>
            <img src={thumb(m.slug, 128)} alt={`${m.name} logo`} width={64} height={64} />
            <span>{m.name}</span>
            <code>{m.slug}</code>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Plans() {
  return (
    <section aria-labelledby="plans-h">
      <h2 id="plans-h">Plans</h2>
      <div class="table-wrap">
        <table class="plans">
          <caption class="hint">Requests per UTC day, per bucket</caption>
          <thead>
            <tr>
              <th scope="col">Bucket</th>
              <th scope="col">Free</th>
              <th scope="col">Pro</th>
            </tr>
          </thead>
          <tbody>
            {BUCKETS.map((b) => (
              <tr key={b}>
                <th scope="row">{b}</th>
                <td>{fmt(DAILY_LIMITS.free[b])}</td>
                <td>{fmt(DAILY_LIMITS.pro[b])}</td>
              </tr>
            ))}
            <tr>
              <th scope="row">variants</th>
              <td>mono</td>
              <td>all six</td>
            </tr>
            <tr>
              <th scope="row">slugs per batch</th>
              <td>{BATCH_SLUG_CAP.free}</td>
              <td>{BATCH_SLUG_CAP.pro}</td>
            </tr>
          </tbody>
        </table>
      </div>
      <p class="hint">Enterprise: limits set per account by the operator.</p>
    </section>
  );
}

/** The first screen for a visitor without a key: try, see, compare plans, sign up. */
export function Landing() {
  const img = `<img src="${location.origin}${thumb("stripe", 64)}" alt="Stripe" width="64" height="64">`;
  return (
    <div class="landing">
      <section class="hero">
        <p class="lead">
          Logos, colours and brand data for thousands of companies: SVG, PNG and WebP from one API,
          with the right variant for light and dark.
        </p>
        <div class="buttons">
          <Link href="/signup" class="button primary">
            Get a free key
          </Link>
          <a href="/swagger" class="button">
            Read the API reference
          </a>
        </div>
      </section>
      <TrySearch />
      <section aria-labelledby="img-h">
        <h2 id="img-h">One line of HTML</h2>
        <p>A public thumbnail needs no key:</p>
        <CodeBlock code={img} label="img example" copyLabel="Copy img example" />
        <p class="hint">
          Full-size SVG, PNG and WebP in every variant come from <code>/v1/svg</code>,{" "}
          <code>/v1/png</code> and <code>/v1/webp</code> with your key in <code>X-API-Key</code>.
        </p>
      </section>
      <Plans />
    </div>
  );
}
