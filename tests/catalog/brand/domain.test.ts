import { describe, expect, test } from "bun:test";
import {
  emailDomain,
  isConsumerMailDomain,
  lookupChain,
  normalizeHost,
  registrableDomain,
} from "../../../src/catalog/brand/domain";

const host = (input: string) => {
  const r = normalizeHost(input);
  return r.ok ? r.host : `!${r.reason}`;
};

describe("normalizeHost: what users paste", () => {
  test.each([
    ["github.com", "github.com"],
    ["GitHub.COM", "github.com"],
    ["  github.com  ", "github.com"],
    ["https://github.com", "github.com"],
    ["HTTP://github.com/", "github.com"],
    ["https://github.com/org/repo?tab=1#readme", "github.com"],
    ["github.com:8080", "github.com"],
    ["https://user:pw@github.com:443/x", "github.com"],
    ["github.com.", "github.com"],
    ["github.com..", "github.com"],
    ["www.github.com", "github.com"],
    ["https://WWW.GitHub.com./path", "github.com"],
    ["ftp://files.example.org", "files.example.org"],
    ["mail.google.com", "mail.google.com"],
    ["www.localhost", "www.localhost"], // "www." goes only when a dotted name is left
    ["bücher.de", "xn--bcher-kva.de"],
    ["https://BÜCHER.de/", "xn--bcher-kva.de"],
    ["xn--bcher-kva.de", "xn--bcher-kva.de"],
    ["例え.jp", "xn--r8jz45g.jp"],
    ["ＧＩＴＨＵＢ.ｃｏｍ", "github.com"],
    ["localhost", "localhost"],
  ])("%s -> %s", (input, expected) => {
    expect(host(input)).toBe(expected);
  });

  test.each([["127.0.0.1"], ["http://10.0.0.1:8080/"], ["[::1]"], ["https://[2001:db8::1]/"]])(
    "IP address %s is refused",
    (input) => {
      expect(host(input)).toBe("!ip_address");
    },
  );

  test.each([
    [""],
    ["   "],
    ["exa mple.com"],
    ["a..b.com"],
    ["-bad.com"],
    ["bad-.com"],
    ["https://"],
    ["<script>.com"],
    [`${"a".repeat(64)}.com`],
    ["@@@"],
  ])("%p is not a host name", (input) => {
    expect(host(input)).toBe("!invalid");
  });
});

describe("registrable domains and the lookup chain", () => {
  test("registrable domain by the public suffix list", () => {
    expect(registrableDomain("mail.google.com")).toBe("google.com");
    expect(registrableDomain("a.b.example.co.uk")).toBe("example.co.uk");
    expect(registrableDomain("co.uk")).toBeNull();
    expect(registrableDomain("localhost")).toBeNull();
  });
  test("private suffixes count: a github.io site is its own registrable domain", () => {
    expect(registrableDomain("someone.github.io")).toBe("someone.github.io");
    expect(registrableDomain("shop.someone.myshopify.com")).toBe("someone.myshopify.com");
  });
  test("chain: the host, then each parent down to the registrable domain", () => {
    expect(lookupChain("a.b.example.co.uk")).toEqual([
      "a.b.example.co.uk",
      "b.example.co.uk",
      "example.co.uk",
    ]);
    expect(lookupChain("github.com")).toEqual(["github.com"]);
    expect(lookupChain("co.uk")).toEqual(["co.uk"]);
    expect(lookupChain("someone.github.io")).toEqual(["someone.github.io"]);
  });
});

describe("emailDomain", () => {
  const why = (email: string) => {
    const r = emailDomain(email);
    return r.ok ? r.host : `!${r.reason}`;
  };

  test("business addresses give their host", () => {
    expect(why("alice@stripe.com")).toBe("stripe.com");
    expect(why("Alice.Smith+tag@Eng.Stripe.COM")).toBe("eng.stripe.com");
    expect(why("  bob@github.com  ")).toBe("github.com");
    expect(why('"john doe"@acme-corp.com')).toBe("acme-corp.com");
    expect(why("josé@bücher.de")).toBe("xn--bcher-kva.de");
  });

  test.each([
    ["plainaddress"],
    ["@stripe.com"],
    ["alice@"],
    ["alice@@stripe.com"],
    ["al ice@stripe.com"],
    [".alice@stripe.com"],
    ["alice.@stripe.com"],
    ["al..ice@stripe.com"],
    [`${"a".repeat(65)}@stripe.com`],
    ["alice@stripe..com"],
    ["alice@-stripe.com"],
    ["alice@stripe.com/path"],
    ["alice@stripe.com:25"],
    ["alice@exa mple.com"],
  ])("malformed: %s", (email) => {
    expect(why(email)).toBe("!malformed");
  });

  test("64-character local part is fine", () => {
    expect(why(`${"a".repeat(64)}@stripe.com`)).toBe("stripe.com");
  });

  test.each([["alice@[10.0.0.1]"], ["alice@[IPv6:2001:db8::1]"], ["alice@10.0.0.1"]])(
    "IP literal: %s",
    (email) => {
      expect(why(email)).toBe("!ip_literal");
    },
  );

  test.each([
    ["alice@gmail.com"],
    ["alice@GMAIL.com"],
    ["alice@googlemail.com"],
    ["alice@outlook.com"],
    ["alice@hotmail.fr"],
    ["alice@yahoo.co.uk"],
    ["alice@mail.yahoo.co.uk"],
    ["alice@icloud.com"],
    ["alice@proton.me"],
    ["alice@fastmail.com"],
  ])("consumer provider: %s", (email) => {
    expect(why(email)).toBe("!consumer_provider");
  });

  test.each([["alice@co.uk"], ["alice@localhost"], ["alice@com"], ["alice@github.io"]])(
    "no registrable domain: %s",
    (email) => {
      expect(why(email)).toBe("!no_registrable_domain");
    },
  );

  test("the consumer list is the maintained npm list, not a handful of names", () => {
    expect(isConsumerMailDomain("gmx.net")).toBe(true);
    expect(isConsumerMailDomain("web.de")).toBe(true);
    expect(isConsumerMailDomain("stripe.com")).toBe(false);
    expect(isConsumerMailDomain("github.com")).toBe(false);
    // listed there, but company mail domains: overruled
    expect(isConsumerMailDomain("clerk.com")).toBe(false);
    expect(isConsumerMailDomain("bt.com")).toBe(false);
  });
});
