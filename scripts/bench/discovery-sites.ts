/**
 * Fixture websites for scripts/bench/discovery.ts, in their own process: `count` small sites
 * (`site-0.test` ...) behind the loopback forward proxy of tests/support/web-fixtures.ts, four
 * kinds in turn (SVG icon, apple-touch-icon PNG, manifest icon PNG, favicon.ico). Prints the
 * proxy URL as one JSON line, then serves until killed.
 *
 *   bun scripts/bench/discovery-sites.ts 1000
 */
import { ico, png } from "../../tests/support/logo-sites";
import { bytes, html, type Site, startFixtureWeb } from "../../tests/support/web-fixtures";

const count = Number(process.argv[2] ?? 1000);
const colours = ["#e4002b", "#0a7d32", "#1a73e8", "#6b2fbf", "#ff6600"];
const images = await Promise.all(colours.map((c) => png(180, c)));
const favicons = await Promise.all(
  colours.map(async (c) => ico([{ side: 48, png: await png(48, c) }])),
);

const sites: Record<string, Site> = {};
for (let i = 0; i < count; i++) {
  const c = colours[i % colours.length] as string;
  const page = (head: string) =>
    html(
      `<!doctype html><html><head><title>Site ${i} Company | Home</title>${head}</head><body><header><nav>Products</nav></header><main><p>Site ${i} makes things.</p></main></body></html>`,
    );
  const image = images[i % images.length] as Uint8Array<ArrayBuffer>;
  const kind = i % 4;
  sites[`site-${i}.test`] =
    kind === 0
      ? {
          "/": page('<link rel="icon" type="image/svg+xml" href="/icon.svg">'),
          "/icon.svg": bytes(
            `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path fill="${c}" d="M12 2 22 22H2z"/><circle cx="12" cy="15" r="${2 + (i % 5)}" fill="#fff"/></svg>`,
            "image/svg+xml",
          ),
        }
      : kind === 1
        ? {
            "/": page('<link rel="apple-touch-icon" href="/apple-touch-icon.png">'),
            "/apple-touch-icon.png": bytes(image, "image/png"),
          }
        : kind === 2
          ? {
              "/": page('<link rel="manifest" href="/site.webmanifest">'),
              "/site.webmanifest": bytes(
                JSON.stringify({
                  name: `Site ${i} Company`,
                  icons: [{ src: "/icon-180.png", sizes: "180x180" }],
                }),
                "application/manifest+json",
              ),
              "/icon-180.png": bytes(image, "image/png"),
            }
          : {
              "/": page(""),
              "/favicon.ico": bytes(
                favicons[i % favicons.length] as Uint8Array<ArrayBuffer>,
                "image/x-icon",
              ),
            };
}
const web = await startFixtureWeb(sites);
console.log(JSON.stringify({ proxyUrl: web.proxyUrl }));
