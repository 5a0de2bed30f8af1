import { useEffect, useRef, useState } from "preact/hooks";
import { api, call, session } from "./api";
import { CodeBlock, CopyButton, Field, Status, useDark } from "./ui";

interface Brand {
  id: number;
  slug: string;
  name: string;
  brandColor: string | null;
  darkModeColor: string | null;
  colors: { role: string; hex: string; source: string }[] | null;
  _css: Record<string, string> | null;
}

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

function VariantTile(props: { brand: Brand; variant: string; format: Format; size: number }) {
  const a = useAsset(assetPath(props.brand.slug, props.format, props.variant, props.size));
  const label = `${props.brand.name} ${props.variant}`;
  return (
    <figure class="variant">
      <div class="pair">
        {(["light", "dark"] as const).map((bg) => (
          <div key={bg} class={`tile on-${bg}`}>
            {a && typeof a !== "string" && (
              <img src={a.url} alt={`${label} logo on a ${bg} background`} />
            )}
          </div>
        ))}
      </div>
      {props.variant === "mono" && a && typeof a !== "string" && props.format === "svg" && (
        <div class="pair tinted-pair">
          <div class="tile on-light">
            <Mask
              url={a.url}
              color={props.brand.brandColor}
              label={`${label} logo in the brand colour`}
              class="tile-mark"
            />
          </div>
          <div class="tile on-dark">
            <Mask
              url={a.url}
              color={props.brand.darkModeColor ?? props.brand.brandColor}
              label={`${label} logo in the dark-mode colour`}
              class="tile-mark"
            />
          </div>
        </div>
      )}
      <figcaption>
        {props.variant}
        {typeof a === "string" && <span class="error"> — {a}</span>}
        {a && typeof a !== "string" && a.restricted && (
          <span class="hint"> (pro only: mono served)</span>
        )}
        {a && typeof a !== "string" && !a.restricted && a.served && a.served !== props.variant && (
          <span class="hint"> (not in the catalog: {a.served} served)</span>
        )}
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
    </section>
  );
}

export function ExplorerPage() {
  const [key, setKey] = useState(session.get("apiKey"));
  const [q, setQ] = useState("");
  const [results, setResults] = useState<Brand[]>([]);
  const [msg, setMsg] = useState({ text: "", error: false });
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
      setMsg({ text: `${r.data.total} match${r.data.total === 1 ? "" : "es"}.`, error: false });
    }, 350);
    return () => clearTimeout(t);
  }, [q, haveKey]);

  return (
    <>
      <form
        class="keyform"
        onSubmit={(e) => {
          e.preventDefault();
          session.set("apiKey", key.trim());
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
      </form>
      {!haveKey ? (
        <p>Paste an API key to search the catalog, or sign up to get one.</p>
      ) : (
        <div class="explorer">
          <div class="search">
            <Field
              label="Search brands"
              type="search"
              value={q}
              onInput={setQ}
              hint="At least 2 characters; each search counts against your search quota."
            />
            <Status {...msg} />
            <ul class="results" aria-label="Search results">
              {results.map((b) => (
                <li key={b.slug}>
                  <button
                    type="button"
                    aria-pressed={brand?.slug === b.slug}
                    onClick={async () => {
                      const r = await api<Brand>(`/v1/catalog/${encodeURIComponent(b.slug)}`, {
                        cred: "key",
                      });
                      if (r.ok) setBrand(r.data);
                      else setMsg({ text: r.message, error: true });
                    }}
                  >
                    <span
                      class="swatch"
                      style={{ backgroundColor: b.brandColor ? `#${b.brandColor}` : "transparent" }}
                    />
                    {b.name} <small>{b.slug}</small>
                  </button>
                </li>
              ))}
            </ul>
          </div>
          {brand && <BrandDetail brand={brand} tier={tier} />}
        </div>
      )}
    </>
  );
}
