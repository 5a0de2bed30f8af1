import { invalid, notFound } from "../../platform/domain-errors";
import type { Brand } from "../built-catalog";
import { emailDomain, normalizeHost } from "./domain";
import type { BrandResolver } from "./service";

const EMAIL_REFUSED = {
  malformed: "The email parameter is not a valid e-mail address.",
  ip_literal: "The e-mail address has an IP address instead of a domain.",
  consumer_provider:
    "The e-mail address is from a consumer mail provider, not a company domain; pass the company's domain instead.",
  no_registrable_domain:
    "The e-mail address's domain has no registrable part (it is a public suffix or a local name).",
} as const;

/**
 * The brand of a domain or a business e-mail address, exactly one of the two (GET /v1/brand and
 * the MCP resolve_brand tool): 422 validation_error for neither, both or a domain that is not a
 * host name, 422 email_not_brand_domain for an e-mail the rules refuse, 404 domain_not_found
 * when no brand has the domain, after telling `onMiss` what was not found (`domain:<host>` or
 * `email:<host>`: an address's domain, never its local part).
 */
export function lookupBrand(
  brands: BrandResolver,
  input: { domain?: string; email?: string },
  /** told the host (and how it was asked for) when no brand has it: demand analytics, discovery */
  onMiss?: (host: string, kind: "domain" | "email") => void,
): Brand {
  const { domain, email } = input;
  if ((domain === undefined) === (email === undefined))
    throw invalid(
      domain === undefined
        ? "Pass one of the parameters domain, email or transaction."
        : "Pass one of domain, email or transaction, not two.",
    );
  let host: string;
  if (domain !== undefined) {
    const h = normalizeHost(domain);
    if (!h.ok)
      throw invalid(
        h.reason === "ip_address"
          ? "Invalid parameter domain: an IP address is not a domain name"
          : "Invalid parameter domain: not a domain name",
      );
    host = h.host;
  } else {
    const e = emailDomain(email as string);
    if (!e.ok) throw invalid(EMAIL_REFUSED[e.reason], "email_not_brand_domain");
    host = e.host;
  }
  const brand = brands.resolveHost(host);
  if (!brand) {
    onMiss?.(host, domain !== undefined ? "domain" : "email");
    throw notFound("domain_not_found", `No brand matches the domain ${host}.`);
  }
  return brand;
}
