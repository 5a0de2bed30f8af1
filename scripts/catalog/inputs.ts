/**
 * The catalog version: a hash over everything the build reads. Kept free of heavy imports so
 * `--if-stale` can answer in a few milliseconds.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";

export const DATA_PACKAGES = [
  "simple-icons",
  "@iconify-json/logos",
  "@iconify-json/devicon",
  "@iconify-json/skill-icons",
  "@iconify-json/cib",
  "@iconify-json/fa6-brands",
  "@iconify-json/streamline-logos",
  "@iconify-json/bxl",
  "@iconify-json/tabler",
  "@lobehub/icons-static-svg",
  "@thesvg/icons",
  "@web3icons/core",
  "@web3icons/common",
  "name-suggestion-index",
  "svgo",
  "tldts",
  "@resvg/resvg-js",
];

export function builderFiles(root: string): string[] {
  const helpers = readdirSync(join(root, "scripts/catalog"), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".ts"))
    .sort()
    .map((f) => `scripts/catalog/${f}`);
  const fixtures = readdirSync(join(root, "fixtures"))
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => `fixtures/${f}`);
  return [
    "scripts/build-catalog.ts",
    ...helpers,
    "src/catalog/colors.ts",
    "src/catalog/sanitize.ts",
    "src/catalog/built-catalog.ts",
    ...fixtures,
  ];
}

export function packageVersion(root: string, pkg: string): string {
  const file = join(root, "node_modules", pkg, "package.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : "missing";
}

export function inputsVersion(root: string): string {
  const hash = createHash("sha256");
  for (const pkg of DATA_PACKAGES) hash.update(`${pkg}@${packageVersion(root, pkg)}\n`);
  for (const rel of builderFiles(root)) {
    const file = join(root, rel);
    hash.update(`${rel}\n`);
    hash.update(existsSync(file) ? readFileSync(file) : "missing");
    hash.update("\n");
  }
  return hash.digest("hex").slice(0, 32);
}

/** The version recorded in a built catalog, read from its first bytes (no full JSON parse). */
export function builtVersion(catalogFile: string): string | null {
  if (!existsSync(catalogFile)) return null;
  const fd = openSync(catalogFile, "r");
  try {
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, 256, 0);
    return /^\{"version":"([0-9a-f]+)"/.exec(buf.subarray(0, n).toString("utf8"))?.[1] ?? null;
  } finally {
    closeSync(fd);
  }
}
