import type { Static } from "@sinclair/typebox";
import { useEffect, useRef, useState } from "preact/hooks";
import type { ServiceResponse } from "../catalog/model";
import type { TransactionInfo } from "../catalog/transactions/model";
import { api, call, session } from "./api";
import { Landing } from "./landing";
import { CodeBlock, CopyButton, Field, Status, useDark } from "./ui";

/** A catalog entry as the API answers it. */
type Brand = Static<typeof ServiceResponse>;

const VARIANTS = ["mono", "color", "dark", "light", "wordmark", "icon"] as const;
type Format = "svg" | "png" | "webp";

export function assetPath(slug: string, format: Format, variant: string, size: number): string {
  const q = new URLSearchParams({ variant });
  if (format !== "svg") q.set("size", String(size));
  return `/v1/${format}/${encodeURIComponent(slug)}?${q}`;
}

interface Asset {
  url: string;
  served: string | null;
  restricted: boolean;
  blob: Blob;
}
/** Assets fetched with the key header and shown through object URLs (one fetch per URL and key). */
const assets = new Map<string, Promise<Asset | string>>();
function fetchAsset(path: string): Promise<Asset | string> {
  const id = `${session.get("apiKey")} ${path}`;
  let p = assets.get(id);
  if (!p) {
    p = call(path, { cred: "key" }).then(async (r) => {
      if (!r.ok) {
        assets.delete(id);
        const body = (await r.json().catch(() => null)) as { message?: string } | null;
        return body?.message ?? `Request failed (${r.status}).`;
      }
      const blob = await r.blob();
      return {
        url: URL.createObjectURL(blob),
        served: r.headers.get("x-svg-variant"),
        restricted: r.headers.has("x-variant-restricted"),
        blob,
      };
    });
    assets.set(id, p);
  }
  return p;
}

function useAsset(path: string | null): Asset | string | null {
  const [asset, setAsset] = useState<Asset | string | null>(null);
  useEffect(() => {
    let live = true;
    setAsset(null);
    if (path) void fetchAsset(path).then((a) => live && setAsset(a));
    return () => {
      live = false;
    };
  }, [path]);
  return asset;
}

/** A mono mark (an object URL) used as a CSS mask, painted in a brand colour. */
function Mask(props: { url: string; color: string | null; label: string; class?: string }) {
  return (
    <div
      class={`tinted ${props.class ?? ""}`}
      role="img"
      aria-label={props.label}
      style={{
        maskImage: `url("${props.url}")`,
        WebkitMaskImage: `url("${props.url}")`,
        backgroundColor: props.color ? `#${props.color}` : "currentColor",
      }}
    />
  );
}

/**
 * The brand's mark for the current theme: in dark mode its own dark variant when the key may
 * have it and the catalog holds one, else the mono mark painted in the dark-mode colour (the
 * brand colour in light mode).
 */
function BrandMark(props: { brand: Brand; dark: boolean; tier: string }) {
  const { brand, dark } = props;
  const mono = useAsset(assetPath(brand.slug, "svg", "mono", 0));
  const darkArt = useAsset(
    dark && props.tier !== "free" ? assetPath(brand.slug, "svg", "dark", 0) : null,
  );
  if (darkArt && typeof darkArt !== "string" && darkArt.served === "dark")
    return <img class="mark" src={darkArt.url} alt={`${brand.name} logo`} />;
  if (!mono || typeof mono === "string") return <div class="mark" />;
  const color = dark ? (brand.darkModeColor ?? brand.brandColor) : brand.brandColor;
  return <Mask url={mono.url} color={color} label={`${brand.name} logo`} class="mark" />;
}

/** The background each variant is drawn for: "light" = for light backgrounds, "dark" = for dark. */
const INTENDED: Record<string, "light" | "dark"> = { dark: "dark" };
const TILE_BG = { light: [255, 255, 255], dark: [0x11, 0x13, 0x18] } as const;
/** WCAG 2 minimum contrast for graphics (1.4.11). */
const GRAPHIC_CONTRAST = 3;

function luminance(rgb: readonly number[]): number {
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * Contrast of a drawn mark against a tile background: the mean colour of its opaque pixels
 * (alpha-weighted) against the background, as a WCAG ratio. Null until measured.
 */
function useContrast(url: string | null, bg: "light" | "dark"): number | null {
  const [ratio, setRatio] = useState<number | null>(null);
  useEffect(() => {
    setRatio(null);
    if (!url) return;
    let live = true;
    const img = new Image();
    img.onload = () => {
      const c = document.createElement("canvas");
      c.width = c.height = 48;
      const ctx = c.getContext("2d", { willReadFrequently: true });
      if (!ctx || !live) return;
      ctx.drawImage(img, 0, 0, 48, 48);
      const d = ctx.getImageData(0, 0, 48, 48).data;
      const sum = [0, 0, 0];
      let w = 0;
      for (let i = 0; i < d.length; i += 4) {
        const a = (d[i + 3] as number) / 255;
        if (a < 0.5) continue;
        for (let k = 0; k < 3; k++) sum[k] = (sum[k] as number) + (d[i + k] as number) * a;
        w += a;
      }
      if (!w) return;
      const fg = luminance(sum.map((v) => v / w));
      const back = luminance(TILE_BG[bg]);
      setRatio((Math.max(fg, back) + 0.05) / (Math.min(fg, back) + 0.05));
    };
    img.src = url;
    return () => {
      live = false;
    };
  }, [url, bg]);
  return ratio;
}

function VariantTile(props: { brand: Brand; variant: string; format: Format; size: number }) {
  const a = useAsset(assetPath(props.brand.slug, props.format, props.variant, props.size));
  const intended = INTENDED[props.variant] ?? "light";
  const other = intended === "light" ? "dark" : "light";
  const [flipped, setFlipped] = useState(false);
  const bg = flipped ? other : intended;
  const url = a && typeof a !== "string" ? a.url : null;
  const ratio = useContrast(url, bg);
  const label = `${props.brand.name} ${props.variant}`;
  return (
    <figure class="variant">
      <div class={`tile on-${bg}`}>
        {url && <img src={url} alt={`${label} logo on a ${bg} background`} />}
        {ratio !== null && ratio < GRAPHIC_CONTRAST && (
          <span class="flag" title="Below the 3:1 contrast WCAG asks of graphics">
            Low contrast {ratio.toFixed(1)}:1
          </span>
        )}
      </div>
      {props.variant === "mono" && url && props.format === "svg" && (
        <div class="pair tinted-pair">
          <div class="tile on-light">
            <Mask
              url={url}
              color={props.brand.brandColor}
              label={`${label} logo in the brand colour`}
              class="tile-mark"
            />
          </div>
          <div class="tile on-dark">
            <Mask
              url={url}
              color={props.brand.darkModeColor ?? props.brand.brandColor}
              label={`${label} logo in the dark-mode colour`}
              class="tile-mark"
            />
          </div>
        </div>
      )}
      <figcaption>
        <span>
          <strong>{props.variant}</strong>
          <span class="hint"> on {bg}</span>
          {typeof a === "string" && <span class="error"> — {a}</span>}
          {a && typeof a !== "string" && a.restricted && (
            <span class="hint"> (pro only: mono served)</span>
          )}
          {a &&
            typeof a !== "string" &&
            !a.restricted &&
            a.served &&
            a.served !== props.variant && (
              <span class="hint"> (fallback: not in the catalog, {a.served} served)</span>
            )}
        </span>
        <button
          type="button"
          class="small"
          aria-pressed={flipped}
          aria-label={`Show ${props.variant} on ${other}`}
          onClick={() => setFlipped(!flipped)}
        >
          On {other}
        </button>
      </figcaption>
    </figure>
  );
}

function snippets(slug: string, path: string, origin: string) {
  const url = `${origin}${path}`;
  return {
    curl: `curl -H "X-API-Key: $BRAND_API_KEY" "${url}" -o ${slug}.${path.split("/")[2]}`,
    fetch: `const r = await fetch("${url}", { headers: { "X-API-Key": process.env.BRAND_API_KEY } });\nconst blob = await r.blob();`,
    html: `<img id="${slug}-logo" alt="${slug} logo">\n<script type="module">\n  const r = await fetch("${url}", { headers: { "X-API-Key": KEY_FROM_YOUR_BACKEND } });\n  document.getElementById("${slug}-logo").src = URL.createObjectURL(await r.blob());\n</script>`,
  };
}

function BrandDetail(props: { brand: Brand; tier: string }) {
  const { brand } = props;
  const dark = useDark();
  const [format, setFormat] = useState<Format>("svg");
  const [size, setSize] = useState(256);
  const [variant, setVariant] = useState("mono");
  const variants = props.tier === "free" ? ["mono"] : [...VARIANTS];
  const path = assetPath(brand.slug, format, variant, size);
  const snip = snippets(brand.slug, path, location.origin);
  const css = brand._css
    ? `:root {\n${Object.entries(brand._css)
        .map(([k, v]) => `  ${k}: ${v};`)
        .join("\n")}\n}`
    : "";
  const head = useRef<HTMLDivElement>(null);
  // one column (a phone): the brand opens below the results, so bring it into view
  useEffect(() => {
    if (matchMedia("(max-width: 720px)").matches) head.current?.scrollIntoView({ block: "start" });
  }, [brand.slug]);
  const svgText = async () => {
    const a = await fetchAsset(assetPath(brand.slug, "svg", variant, 0));
    return typeof a === "string" ? "" : a.blob.text();
  };
  return (
    <section class="brand-detail" aria-labelledby="brand-h">
      <div class="brand-head" ref={head}>
        <BrandMark brand={brand} dark={dark} tier={props.tier} />
        <h2 id="brand-h">{brand.name}</h2>
        <code>{brand.slug}</code>
      </div>
      <div class="controls">
        <label for="format">Format</label>
        <select
          id="format"
          value={format}
          onChange={(e) => setFormat((e.target as HTMLSelectElement).value as Format)}
        >
          <option value="svg">SVG</option>
          <option value="png">PNG</option>
          <option value="webp">WebP</option>
        </select>
        <label for="size">Size</label>
        <select
          id="size"
          value={size}
          disabled={format === "svg"}
          onChange={(e) => setSize(Number((e.target as HTMLSelectElement).value))}
        >
          {[64, 128, 256, 512, 1024].map((s) => (
            <option key={s} value={s}>
              {s} px
            </option>
          ))}
        </select>
        <label for="variant">Variant for snippets</label>
        <select
          id="variant"
          value={variant}
          onChange={(e) => setVariant((e.target as HTMLSelectElement).value)}
        >
          {variants.map((v) => (
            <option key={v}>{v}</option>
          ))}
        </select>
      </div>
      {props.tier === "free" && (
        <p class="hint">
          Free keys are served the mono mark; the other five variants need a pro key.
        </p>
      )}
      <div class="variants">
        {variants.map((v) => (
          <VariantTile
            key={`${v}-${format}-${size}`}
            brand={brand}
            variant={v}
            format={format}
            size={size}
          />
        ))}
      </div>
      <h3>Colours</h3>
      <ul class="colors">
        {(brand.colors ?? []).map((c) => (
          <li key={c.role + c.hex}>
            <span class="swatch" style={{ backgroundColor: `#${c.hex}` }} />
            {c.role} <code>#{c.hex}</code>{" "}
            <CopyButton text={`#${c.hex}`} label={`Copy ${c.role} colour`} />
          </li>
        ))}
      </ul>
      {css && (
        <>
          <h3>CSS custom properties</h3>
          <CodeBlock code={css} label="CSS custom properties" copyLabel="Copy _css block" />
        </>
      )}
      <h3>Snippets</h3>
      <CopyButton text={svgText} label={`Copy SVG (${variant})`} />
      {(Object.keys(snip) as (keyof typeof snip)[]).map((k) => (
        <CodeBlock key={k} code={snip[k]} label={`${k} snippet`} copyLabel={`Copy ${k} snippet`} />
      ))}
      {session.loggedIn() && <ReportProblem slug={brand.slug} />}
    </section>
  );
}

const PROBLEMS: [string, string][] = [
  ["wrong_logo", "The logo is wrong"],
  ["missing_logo", "The logo is missing"],
  ["wrong_brand", "This is another brand"],
  ["outdated", "The logo is outdated"],
  ["other", "Something else"],
];

/**
 * "Report a problem with this logo" (signed-in users): POST /v1/reports with the console's
 * access token. An operator reviews the report; the link is not fetched before that.
 */
function ReportProblem(props: { slug: string }) {
  const [kind, setKind] = useState("wrong_logo");
  const [url, setUrl] = useState("");
  const [note, setNote] = useState("");
  const [msg, setMsg] = useState({ text: "", error: false });
  const [busy, setBusy] = useState(false);
  useEffect(() => setMsg({ text: "", error: false }), [props.slug]);
  return (
    <details class="report">
      <summary>Report a problem with this logo</summary>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          const body: Record<string, string> = { slug: props.slug, kind };
          if (url.trim()) body.url = url.trim();
          if (note.trim()) body.note = note.trim();
          const r = await api<{ votes: number; voted: boolean }>("/v1/reports", {
            method: "POST",
            body,
            cred: "either",
          });
          setBusy(false);
          if (!r.ok) return setMsg({ text: r.message, error: true });
          setUrl("");
          setNote("");
          setMsg({
            text: !r.data.voted
              ? "Thank you: you reported this problem before; your link and note were added to it."
              : r.data.votes > 1
                ? `Thank you: this problem was reported before; your report adds a vote (${r.data.votes}).`
                : "Thank you: an operator will review the report.",
            error: false,
          });
        }}
      >
        <label for="report-kind">Problem</label>
        <select
          id="report-kind"
          value={kind}
          onChange={(e) => setKind((e.target as HTMLSelectElement).value)}
        >
          {PROBLEMS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <Field
          label="Link to the right logo (optional)"
          type="url"
          value={url}
          onInput={setUrl}
          hint="An https address of the brand's own logo file or page."
        />
        <label for="report-note">Note (optional)</label>
        <textarea
          id="report-note"
          maxLength={1000}
          rows={3}
          value={note}
          onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)}
        />
        <button type="submit" disabled={busy}>
          Send report
        </button>
        <Status {...msg} />
      </form>
    </details>
  );
}

/** A result's thumbnail: the public gallery's PNG, which spends none of the key's quota. */
export function thumbnailPath(slug: string, size = 48): string {
  return `/v1/gallery/${encodeURIComponent(slug)}/thumbnail?variant=color&size=${size}`;
}

type Transaction = Static<typeof TransactionInfo>;

/** One sentence on what a statement-line lookup read, and what it found. */
export function describeTransaction(t: Transaction, brand: string | null): string {
  if (t.operation) return `A bank operation (${t.operation.replace(/_/g, " ")}), not a merchant.`;
  const via = t.intermediary ? ` through ${t.intermediary.name}` : "";
  const merchant = t.merchant
    ? `"${t.merchant}"${via}`
    : `only ${t.intermediary?.name ?? "a code"}`;
  if (!brand)
    return `No brand for ${merchant}${t.confidence ? ` (best candidate's confidence ${t.confidence.toFixed(2)}, below 0.70)` : ""}: a local business, a person or a merchant the catalog lacks.`;
  return `${merchant} is ${brand} (confidence ${t.confidence.toFixed(2)}, by ${t.match}).`;
}

/** The "statement line" box: a card-statement descriptor to its brand (GET /v1/brand?transaction=). */
function StatementLine(props: { onFound: (slug: string) => void }) {
  const [line, setLine] = useState("");
  const [country, setCountry] = useState("");
  const [msg, setMsg] = useState({ text: "", error: false });
  return (
    <form
      class="statement"
      aria-labelledby="statement-h"
      onSubmit={async (e) => {
        e.preventDefault();
        const q = new URLSearchParams({ transaction: line.trim() });
        if (country.trim()) q.set("country", country.trim());
        const r = await api<{ slug: string; name: string; transaction?: Transaction }>(
          `/v1/brand?${q}`,
          { cred: "key" },
        );
        const t = (r.data as { transaction?: Transaction } | null)?.transaction;
        if (r.ok && t) {
          setMsg({ text: describeTransaction(t, r.data.name), error: false });
          props.onFound(r.data.slug);
        } else if (r.status === 404 && t)
          setMsg({ text: describeTransaction(t, null), error: false });
        else setMsg({ text: r.message, error: true });
      }}
    >
      <h2 id="statement-h">Statement line</h2>
      <Field
        label="Card statement line"
        value={line}
        onInput={setLine}
        autocomplete="off"
        minLength={3}
        required
        hint="As the bank shows it, e.g. SQ *BLUE BOTTLE COFFEE OAKLAND; counts against your domain quota."
      >
        <button type="submit">Find the brand</button>
      </Field>
      <Field
        label="Country (optional)"
        value={country}
        onInput={setCountry}
        autocomplete="off"
        hint="Two letters, e.g. US: tells namesakes apart."
      />
      <Status {...msg} />
    </form>
  );
}

function noMatch(q: string): string {
  return `No brand matches "${q}". Try the company's name in fewer words, its domain (e.g. stripe.com) or another spelling.`;
}

export function ExplorerPage() {
  const [key, setKey] = useState(session.get("apiKey"));
  const [keyMsg, setKeyMsg] = useState({ text: "", error: false });
  const [q, setQ] = useState("");
  const [results, setResults] = useState<Brand[]>([]);
  const [msg, setMsg] = useState({ text: "", error: false });
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const [brand, setBrand] = useState<Brand | null>(null);
  const [tier, setTier] = useState("free");
  const activeKey = session.get("apiKey");
  const haveKey = Boolean(activeKey);

  useEffect(() => {
    if (!haveKey) return;
    void api<{ tier: string }>("/v1/usage", { cred: "key" }).then((r) =>
      setTier(r.ok ? r.data.tier : "free"),
    );
  }, [activeKey]);

  async function openBrand(slug: string) {
    const r = await api<Brand & { suggestions?: string[] }>(
      `/v1/catalog/${encodeURIComponent(slug)}`,
      { cred: "key" },
    );
    setSuggestions(r.ok ? [] : (r.data?.suggestions ?? []));
    if (r.ok) {
      setBrand(r.data);
      history.replaceState(null, "", `/?brand=${encodeURIComponent(r.data.slug)}`);
    } else setMsg({ text: r.message, error: true });
  }

  // /?brand=<slug> opens that brand (a near miss answers with "did you mean")
  useEffect(() => {
    const slug = new URLSearchParams(location.search).get("brand");
    if (haveKey && slug) void openBrand(slug);
  }, [activeKey]);

  useEffect(() => {
    if (!haveKey || q.trim().length < 2) {
      setResults([]);
      return;
    }
    const t = setTimeout(async () => {
      const r = await api<{ matches: Brand[]; total: number }>(
        `/v1/search?${new URLSearchParams({ q: q.trim(), limit: "12" })}`,
        { cred: "key" },
      );
      if (!r.ok) return setMsg({ text: r.message, error: true });
      setResults(r.data.matches);
      setSuggestions([]);
      const n = r.data.total;
      setMsg({
        text: n ? `${n} match${n === 1 ? "" : "es"}.` : noMatch(q.trim()),
        error: false,
      });
    }, 350);
    return () => clearTimeout(t);
  }, [q, haveKey]);

  return (
    <>
      {!haveKey && <Landing />}
      {!haveKey && <h2 id="key-h">Already have a key?</h2>}
      <form
        class="keyform"
        aria-labelledby={haveKey ? undefined : "key-h"}
        onSubmit={async (e) => {
          e.preventDefault();
          const candidate = key.trim();
          if (!candidate) {
            session.set("apiKey", "");
            return setKeyMsg({ text: "", error: false });
          }
          // checked before it is kept: GET /v1/usage costs no quota
          setKeyMsg({ text: "Checking the key…", error: false });
          const r = await fetch("/v1/usage", { headers: { "x-api-key": candidate } }).catch(
            () => null,
          );
          if (!r) return setKeyMsg({ text: "The API could not be reached.", error: true });
          if (r.status === 401)
            return setKeyMsg({
              text: "This key was not accepted: check that it was pasted whole, or get a new one from your account page.",
              error: true,
            });
          if (!r.ok)
            return setKeyMsg({ text: `The key could not be checked (${r.status}).`, error: true });
          const usage = (await r.json()) as { tier: string };
          session.set("apiKey", candidate);
          setKeyMsg({ text: `Key accepted: ${usage.tier} plan.`, error: false });
        }}
      >
        <Field
          label="API key"
          type="password"
          value={key}
          onInput={setKey}
          autocomplete="off"
          hint="Kept in this tab's session storage and sent only to this API."
        >
          <button type="submit">Use this key</button>
        </Field>
        <Status {...keyMsg} />
      </form>
      {haveKey && (
        <div class="explorer">
          <div class="search">
            <Field
              label="Search brands"
              type="search"
              value={q}
              onInput={setQ}
              hint="At least 2 characters; each search counts against your search quota (thumbnails do not)."
            />
            <Status {...msg} />
            {suggestions.length > 0 && (
              <p class="didyoumean">
                Did you mean{" "}
                {suggestions.map((slug, i) => (
                  <span key={slug}>
                    {i > 0 && ", "}
                    <button type="button" class="small" onClick={() => void openBrand(slug)}>
                      {slug}
                    </button>
                  </span>
                ))}
                ?
              </p>
            )}
            <ul class="results" aria-label="Search results">
              {results.map((b) => (
                <li key={b.slug}>
                  <button
                    type="button"
                    aria-pressed={brand?.slug === b.slug}
                    onClick={() => void openBrand(b.slug)}
                  >
                    <img class="thumb" src={thumbnailPath(b.slug)} alt="" loading="lazy" />
                    {b.name} <small>{b.slug}</small>
                  </button>
                </li>
              ))}
            </ul>
            <StatementLine onFound={(slug) => void openBrand(slug)} />
          </div>
          {brand && <BrandDetail brand={brand} tier={tier} />}
        </div>
      )}
    </>
  );
}
