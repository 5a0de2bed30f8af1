/** The https fixture site reported artwork is fetched from, and a fetcher that reaches it. */
import { GuardedFetcher } from "../../src/catalog/discovery/fetcher";
import { ICON_SVG, TWO_COLOUR_SVG } from "../support/logo-sites";
import { FIXTURE_TLS } from "../support/tls-fixture";
import { bytes, type FixtureWeb, startFixtureWeb } from "../support/web-fixtures";

/** secure.test over https (the fixture certificate): a mono mark, a two-colour one, a page. */
export const startArtworkSite = () =>
  startFixtureWeb(
    {
      "secure.test": {
        "/logo.svg": bytes(ICON_SVG, "image/svg+xml"),
        "/two.svg": bytes(TWO_COLOUR_SVG, "image/svg+xml"),
        "/page.html": bytes("<p>no image</p>", "text/html"),
      },
    },
    {},
    FIXTURE_TLS,
  );

/** Discovery's guarded fetcher through the fixture proxy, trusting the fixture certificate. */
export const fixtureFetcher = (web: FixtureWeb) =>
  new GuardedFetcher({
    userAgent: "test",
    proxy: web.proxyUrl,
    allowLoopback: true,
    ca: FIXTURE_TLS.cert,
    resolve: web.resolve,
  });
