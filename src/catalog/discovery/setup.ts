import { readFileSync } from "node:fs";
import tls from "node:tls";
import type { Config } from "../../config";
import { log } from "../../platform/log";
import { type EnrichableCatalog, EnrichmentService } from "../enrichment/service";
import type { EnrichmentStore } from "../enrichment/store/port";
import { ArtworkPool } from "./artwork-pool";
import { dohTxt, systemTxt } from "./bimi";
import { GuardedFetcher } from "./fetcher";
import { markRoots, pemCertificates } from "./mark";
import type { DiscoveryCatalog } from "./pipeline";
import { DiscoveryService } from "./service";
import type { DiscoveryStore } from "./store/port";
import type { X509Certificate } from "./x509";

/**
 * Discovery and enrichment as the configuration says (DISCOVERY*, PUBLIC_URL): the guarded
 * fetcher with its proxy and trust, the BIMI resolver, one artwork worker for both, and the
 * stored records read at start. The service (deps.ts) and the admin CLI start them here.
 */

/** The User-Agent of every discovery request: the service's name and where to read about it. */
export function discoveryUserAgent(publicUrl: string | undefined): string {
  return `BrandAssetAPI-LogoDiscovery/1.0 (+${publicUrl ?? "https://brandassets.dev"}/docs/discovery)`;
}

/** The discovery service as the configuration says (DISCOVERY*, PUBLIC_URL). */
export function createDiscovery(
  config: Pick<
    Config,
    | "DISCOVERY"
    | "DISCOVERY_PROXY"
    | "DISCOVERY_ALLOW_PRIVATE"
    | "DISCOVERY_PROXY_RESOLVES"
    | "DISCOVERY_CA_FILE"
    | "DISCOVERY_DOH_URL"
    | "DISCOVERY_VMC_ROOTS"
    | "DISCOVERY_REFRESH_DAYS"
    | "DISCOVERY_WORKERS"
    | "DISCOVERY_QUEUE"
    | "PUBLIC_URL"
  >,
  store: DiscoveryStore,
  enrichment: EnrichmentService,
  catalog: DiscoveryCatalog,
  artworkPool: ArtworkPool,
  trust = discoveryTrust(config),
): DiscoveryService {
  if (config.DISCOVERY_ALLOW_PRIVATE)
    log(
      "warn",
      "DISCOVERY_ALLOW_PRIVATE is on: discovery may fetch loopback addresses (tests only)",
    );
  if (config.DISCOVERY_PROXY_RESOLVES && !config.DISCOVERY_PROXY)
    log("warn", "DISCOVERY_PROXY_RESOLVES is on without DISCOVERY_PROXY: hosts are resolved here");
  const fetcher = new GuardedFetcher({
    userAgent: discoveryUserAgent(config.PUBLIC_URL),
    proxy: config.DISCOVERY_PROXY ?? null,
    allowLoopback: config.DISCOVERY_ALLOW_PRIVATE,
    proxyResolves: config.DISCOVERY_PROXY_RESOLVES,
    ...(trust.ca ? { ca: trust.ca } : {}),
  });
  const service = new DiscoveryService(
    store,
    enrichment,
    catalog,
    fetcher,
    {
      enabled: config.DISCOVERY,
      workers: config.DISCOVERY_WORKERS,
      queueSize: config.DISCOVERY_QUEUE,
      refreshDays: config.DISCOVERY_REFRESH_DAYS,
    },
    artworkPool,
  );
  service.vmcRoots = trust.vmcRoots;
  // BIMI records: over DoH when configured, else the system's DNS unless the proxy resolves
  // (then this host has no DNS to ask)
  service.txt = config.DISCOVERY_DOH_URL
    ? dohTxt(config.DISCOVERY_DOH_URL, fetcher)
    : config.DISCOVERY_PROXY && config.DISCOVERY_PROXY_RESOLVES
      ? null
      : systemTxt();
  return service;
}

/**
 * What discovery trusts besides the system: DISCOVERY_CA_FILE's CAs for https, and the mark
 * certificate roots for BIMI (bundled, plus DISCOVERY_VMC_ROOTS). Read first, so a bad file
 * stops the start before anything else is started.
 */
export function discoveryTrust(config: Pick<Config, "DISCOVERY_CA_FILE" | "DISCOVERY_VMC_ROOTS">): {
  ca?: string[];
  vmcRoots: X509Certificate[];
} {
  return {
    ...(config.DISCOVERY_CA_FILE ? { ca: trustedCas(config.DISCOVERY_CA_FILE) } : {}),
    vmcRoots: markRoots(config.DISCOVERY_VMC_ROOTS ? vmcRootsPem(config.DISCOVERY_VMC_ROOTS) : ""),
  };
}

/**
 * The system's CA certificates plus the ones in `file` (PEM: a TLS-inspecting egress proxy's
 * CA). A file that cannot be read, or holds no certificate, stops the start.
 */
export function trustedCas(file: string): string[] {
  const pem = readFileSync(file, "utf8");
  const certs = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!certs) throw new Error(`DISCOVERY_CA_FILE ${file} holds no PEM certificate`);
  return [...tls.rootCertificates, ...certs];
}

/** The PEM text of DISCOVERY_VMC_ROOTS; a file that cannot be read, or holds no certificate, stops the start. */
function vmcRootsPem(file: string): string {
  const pem = readFileSync(file, "utf8");
  if (!pemCertificates(pem).length)
    throw new Error(`DISCOVERY_VMC_ROOTS ${file} holds no PEM certificate`);
  return pem;
}

/**
 * Enrichment and discovery over a loaded catalog, as the service and the admin CLI run them:
 * one background Worker for their CPU work, discovery records replayed, earlier attempts read.
 */
export async function startEnrichment(
  config: Parameters<typeof createDiscovery>[0],
  stores: { enrichment: EnrichmentStore; discoveries: DiscoveryStore },
  catalog: EnrichableCatalog & DiscoveryCatalog,
) {
  const trust = discoveryTrust(config);
  const artworkPool = new ArtworkPool();
  const enrichment = new EnrichmentService(stores.enrichment, catalog);
  enrichment.useDeriver((b) => artworkPool.derive(b));
  enrichment.useDiscoveries(stores.discoveries);
  await enrichment.start();
  const discovery = createDiscovery(
    config,
    stores.discoveries,
    enrichment,
    catalog,
    artworkPool,
    trust,
  );
  await discovery.start();
  return {
    enrichment,
    discovery,
    /** stop taking jobs, wait for the running ones, end the Worker */
    async close() {
      await discovery.close();
      await enrichment.close();
      artworkPool.stop();
    },
  };
}
