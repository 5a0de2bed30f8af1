/**
 * The fixture websites discovery is tested and benchmarked on (served by web-fixtures.ts on
 * loopback): one per way a real site shows its logo, plus the ones that must yield nothing or
 * be refused. Images are made here with sharp (PNG) and a minimal ICO writer.
 */
import sharp from "sharp";
import { bytes, html, type Route, redirect, type Site } from "./web-fixtures";

/** A PNG of side x side: a coloured square with a white disc (not flat, so it is kept). */
export async function png(
  side: number,
  color = "#1a73e8",
  height = side,
): Promise<Uint8Array<ArrayBuffer>> {
  const r = Math.max(2, Math.floor(Math.min(side, height) / 3));
  const disc = Buffer.from(
    `<svg width="${side}" height="${height}"><circle cx="${side / 2}" cy="${height / 2}" r="${r}" fill="#fff"/></svg>`,
  );
  const out = await sharp({ create: { width: side, height, channels: 4, background: color } })
    .composite([{ input: disc }])
    .png()
    .toBuffer();
  return new Uint8Array(out);
}

/** An ICO file holding the given PNGs (Vista-style PNG entries). */
export function ico(entries: { side: number; png: Uint8Array }[]): Uint8Array<ArrayBuffer> {
  const head = Buffer.alloc(6 + 16 * entries.length);
  head.writeUInt16LE(0, 0);
  head.writeUInt16LE(1, 2);
  head.writeUInt16LE(entries.length, 4);
  let offset = head.length;
  entries.forEach((e, i) => {
    const at = 6 + 16 * i;
    head[at] = e.side >= 256 ? 0 : e.side;
    head[at + 1] = e.side >= 256 ? 0 : e.side;
    head.writeUInt16LE(1, at + 4);
    head.writeUInt16LE(32, at + 6);
    head.writeUInt32LE(e.png.length, at + 8);
    head.writeUInt32LE(offset, at + 12);
    offset += e.png.length;
  });
  return new Uint8Array(Buffer.concat([head, ...entries.map((e) => Buffer.from(e.png))]));
}

export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path fill="#e4002b" d="M12 2 22 22H2z"/></svg>';
export const TWO_COLOUR_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="16" height="32" fill="#0050a0"/><rect x="16" width="16" height="32" fill="#ffcc00"/></svg>';
export const SCRIPTED_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" onload="alert(1)"><script>alert(document.cookie)</script><a href="javascript:alert(2)"><circle cx="12" cy="12" r="10" fill="#008060"/></a><image href="http://169.254.169.254/x.png"/></svg>';

const svgRoute = (svg: string): Route => bytes(svg, "image/svg+xml");
const doc = (
  head: string,
  body = "<main><p>Products, services and news from our company.</p></main>",
) => html(`<!doctype html><html><head>${head}</head><body>${body}</body></html>`);

/** The standard fixture sites, by host. */
export async function logoSites(): Promise<Record<string, Site>> {
  const p180 = await png(180, "#0a7d32");
  const p512 = await png(512, "#6b2fbf");
  const p48 = await png(48, "#ff6600");
  const p32 = await png(32, "#ff6600");
  const wide = await png(600, "#333399", 160);
  return {
    "svgicon.test": {
      "/": doc(
        `<title>Svgicon Co | Home</title><link rel="icon" type="image/svg+xml" href="/icon.svg">`,
      ),
      "/icon.svg": svgRoute(ICON_SVG),
    },
    "touchicon.test": {
      "/": doc(
        `<title>Touch Icon Bank | Personal Banking</title><link rel="apple-touch-icon" href="/apple-touch-icon.png">`,
      ),
      "/apple-touch-icon.png": bytes(p180, "image/png"),
    },
    "webmanifest.test": {
      "/": doc(`<title>Home</title><link rel="manifest" href="/site.webmanifest">`),
      "/site.webmanifest": bytes(
        JSON.stringify({
          name: "Manifest Motors",
          theme_color: "#6b2fbf",
          icons: [{ src: "/android-chrome-512x512.png", sizes: "512x512", type: "image/png" }],
        }),
        "application/manifest+json",
      ),
      "/android-chrome-512x512.png": bytes(p512, "image/png"),
    },
    "faviconly.test": {
      "/": doc(`<title>Favicon Only Foods</title>`),
      "/favicon.ico": bytes(
        ico([
          { side: 32, png: p32 },
          { side: 48, png: p48 },
        ]),
        "image/x-icon",
      ),
    },
    "redirects.test": {
      "/": redirect("http://www.redirects.test/", 301),
    },
    "www.redirects.test": {
      "/": redirect("/en/home"),
      "/en/home": doc(`<title>Redirect Rail</title><link rel="icon" href="/brand.svg">`),
      "/brand.svg": svgRoute(TWO_COLOUR_SVG),
    },
    "inline.test": {
      "/": doc(
        "<title>Inline Instruments</title>",
        `<header class="site-header"><a href="/" class="navbar-brand" aria-label="Inline Instruments home"><svg viewBox="0 0 40 20" xmlns="http://www.w3.org/2000/svg"><path fill="#123abc" d="M0 0h40v20H0z"/></svg></a></header><main><p>Measuring things since 1950.</p></main>`,
      ),
    },
    "jsonld.test": {
      "/": doc(
        `<title>Welcome</title><script type="application/ld+json">${JSON.stringify({
          "@context": "https://schema.org",
          "@type": "Corporation",
          name: "JSON LD Logistics",
          logo: "https://jsonld.test/media/logo.png",
        })}</script>`,
      ),
      "/media/logo.png": bytes(p180, "image/png"),
    },
    "wpwidgets.test": {
      "/": doc(
        `<title>WP Widgets &#8211; Just another WordPress site</title><link rel="icon" href="https://wpwidgets.test/wp-includes/images/w-logo-blue-white-bg.png" sizes="32x32">`,
        `<header id="masthead" class="site-header"><div class="site-branding"><a href="https://wpwidgets.test/" class="custom-logo-link" rel="home"><img width="300" height="300" src="https://wpwidgets.test/wp-content/uploads/2024/01/wp-widgets-logo.png" class="custom-logo" alt="WP Widgets"></a></div></header><main><p>Widgets for everyone.</p></main>`,
      ),
      "/wp-content/uploads/2024/01/wp-widgets-logo.png": bytes(p180, "image/png"),
      "/wp-includes/images/w-logo-blue-white-bg.png": bytes(p180, "image/png"),
    },
    "parked.test": {
      "/": doc(
        "<title>parked.test</title>",
        "<h1>parked.test</h1><p>This domain may be for sale. Buy this domain now!</p><p>Related searches</p>",
      ),
      "/favicon.ico": bytes(ico([{ side: 48, png: p48 }]), "image/x-icon"),
    },
    "scripted.test": {
      "/": doc(
        `<title>Scripted Security</title><link rel="icon" type="image/svg+xml" href="/icon.svg">`,
      ),
      "/icon.svg": svgRoute(SCRIPTED_SVG),
    },
    "oversize.test": {
      "/": doc(`<title>Oversize</title>`, `<p>${"x".repeat(2 * 1024 * 1024 + 100)}</p>`),
    },
    "slow.test": {
      "/": async () => {
        await Bun.sleep(2000);
        return new Response("<title>Slow</title>", { headers: { "content-type": "text/html" } });
      },
    },
    "ogwide.test": {
      "/": doc(`<title>Wide Open Graph</title><meta property="og:image" content="/og.png">`),
      "/og.png": bytes(wide, "image/png"),
    },
    "to-loopback.test": { "/": redirect("http://localhost/admin") },
    "to-private.test": { "/": redirect("http://intranet.to-private.test/") },
  };
}

/** DNS answers of the SSRF fixtures (resolved by the fixture resolver, never contacted). */
export const SSRF_DNS: Record<string, string[]> = {
  "intranet.to-private.test": ["10.20.30.40"],
};
