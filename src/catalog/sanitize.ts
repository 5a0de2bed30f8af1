/**
 * SVG sanitizer (pure, shared by the catalog build and the runtime enrichment job).
 *
 * Works on svgo's parsed XML tree (a custom svgo plugin), not on regexes over markup:
 * - only known static SVG elements survive (no script, foreignObject, iframe, image,
 *   animation elements, or any prefixed / unknown element), comments, doctypes and
 *   processing instructions are dropped;
 * - on* event handlers, xml:base, src/action/data-style attributes and unknown prefixed
 *   attributes are dropped;
 * - href / xlink:href survive only as local "#fragment" references;
 * - url(...) in attributes and CSS must be a local "#fragment", otherwise the attribute or
 *   declaration value is dropped; CSS with @import, escapes, expression() and similar is
 *   dropped entirely; any javascript:/vbscript:/data: value is dropped.
 */
import type { CustomPlugin, XastChild, XastElement, XastParent } from "svgo";
import { optimize } from "svgo";

const ALLOWED_ELEMENTS = new Set([
  "svg",
  "g",
  "defs",
  "symbol",
  "use",
  "title",
  "desc",
  "path",
  "rect",
  "circle",
  "ellipse",
  "line",
  "polyline",
  "polygon",
  "text",
  "tspan",
  "textPath",
  "linearGradient",
  "radialGradient",
  "stop",
  "pattern",
  "clipPath",
  "mask",
  "marker",
  "filter",
  "feBlend",
  "feColorMatrix",
  "feComponentTransfer",
  "feComposite",
  "feConvolveMatrix",
  "feDiffuseLighting",
  "feDisplacementMap",
  "feDistantLight",
  "feDropShadow",
  "feFlood",
  "feFuncA",
  "feFuncB",
  "feFuncG",
  "feFuncR",
  "feGaussianBlur",
  "feMerge",
  "feMergeNode",
  "feMorphology",
  "feOffset",
  "fePointLight",
  "feSpecularLighting",
  "feSpotLight",
  "feTile",
  "feTurbulence",
  "style",
  "switch",
  "a",
]);

/** Attributes that load or navigate to other documents. */
const URL_ATTRS = new Set(["src", "action", "formaction", "data", "srcdoc", "base"]);
const ALLOWED_PREFIXED_ATTRS = new Set(["xml:space", "xml:lang", "xlink:href", "xlink:title"]);
const SCRIPT_URL = /^(?:javascript|vbscript|data|livescript):/i;
const UNSAFE_CSS =
  /@import|\\|expression\s*\(|javascript:|vbscript:|behaviou?r\s*:|-moz-binding|image-set\s*\(|(?:^|[^-\w])image\s*\(|cross-fade\s*\(|element\s*\(|(?:^|[^-\w])src\s*\(/i;

/** Strip whitespace and control characters the way URL parsers ignore them. */
function compact(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control chars are the point here
  return value.replace(/[\s\u0000-\u001f\u007f]+/g, "");
}

function isLocalRef(value: string): boolean {
  return /^#[^\s"'()<>\\]*$/.test(value.trim());
}

/** Every url(...) in the value points at a local #fragment. */
function urlsAreLocal(value: string): boolean {
  const re = /url\(\s*(['"]?)(.*?)\1\s*\)/gis;
  const total = (value.match(/url\s*\(/gi) ?? []).length;
  let matched = 0;
  for (const m of value.matchAll(re)) {
    matched++;
    if (!isLocalRef(m[2] ?? "")) return false;
  }
  return matched === total;
}

/**
 * Sanitized CSS text, or null when the stylesheet cannot be made safe.
 * Comments are removed; url() values must be local fragments.
 */
export function sanitizeCss(css: string): string | null {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, "");
  if (UNSAFE_CSS.test(text) || UNSAFE_CSS.test(compact(text))) return null;
  if (/url\s*\(/i.test(text) && !urlsAreLocal(text)) return null;
  return text;
}

function sanitizeAttributes(node: XastElement): void {
  for (const [attr, value] of Object.entries(node.attributes)) {
    const lower = attr.toLowerCase();
    const local = lower.slice(lower.lastIndexOf(":") + 1);
    let keep = true;
    if (local.startsWith("on")) keep = false;
    else if (URL_ATTRS.has(local)) keep = false;
    else if (local === "href")
      keep = (lower === "href" || lower === "xlink:href") && isLocalRef(value);
    else if (lower.startsWith("xmlns")) keep = true;
    else if (attr.includes(":")) keep = ALLOWED_PREFIXED_ATTRS.has(lower);
    if (keep && SCRIPT_URL.test(compact(value))) keep = false;
    if (keep && /url\s*\(/i.test(value)) keep = urlsAreLocal(value);
    if (keep && lower === "style") {
      const css = sanitizeCss(value);
      keep = css !== null;
      if (css !== null) node.attributes[attr] = css;
    }
    if (!keep) delete node.attributes[attr];
  }
}

function detach(node: XastChild, parent: XastParent): void {
  parent.children = parent.children.filter((child) => child !== node);
}

function textOf(node: XastElement): string {
  return node.children
    .map((c) => (c.type === "text" || c.type === "cdata" ? c.value : ""))
    .join("");
}

/** svgo plugin that removes everything unsafe (see the file comment). */
export const sanitizePlugin: CustomPlugin = {
  name: "sanitizeSvg",
  fn: () => ({
    doctype: { enter: (node, parent) => detach(node, parent) },
    instruction: { enter: (node, parent) => detach(node, parent) },
    comment: { enter: (node, parent) => detach(node, parent) },
    element: {
      enter: (node, parent) => {
        const isRoot = parent.type === "root";
        if (!ALLOWED_ELEMENTS.has(node.name) || (isRoot && node.name !== "svg")) {
          detach(node, parent);
          return;
        }
        sanitizeAttributes(node);
        if (node.name === "style") {
          const css = sanitizeCss(textOf(node));
          if (css === null) detach(node, parent);
          else node.children = [{ type: "text", value: css }];
        }
      },
    },
  }),
};

function assertSvgRoot(svg: string): void {
  if (!/^\s*<svg[\s>]/.test(svg) || !/<\/svg>\s*$|\/>\s*$/.test(svg)) {
    throw new Error("input is not an SVG document");
  }
}

/** Sanitize an SVG document (no other optimization). Throws on unparsable input. */
export function sanitizeSvg(svg: string): string {
  const out = optimize(svg, { plugins: [sanitizePlugin] }).data;
  assertSvgRoot(out);
  return out;
}

/**
 * Sanitize and optimize with svgo's default preset (viewBox is kept; svgo v4 no longer
 * removes it by default; <title> is kept and role="img" added). Ids are minified and then
 * prefixed with `idPrefix`, so several inlined logos with gradients never share an id.
 *
 * `paths: false` skips convertPathData and mergePaths, for artwork whose path data was
 * already optimized upstream (iconify sets are imported through SVGO): on those sets the two
 * plugins save about 1% of the bytes for about half of the optimization time.
 */
export function sanitizeAndOptimizeSvg(
  svg: string,
  idPrefix: string,
  options: { paths?: boolean } = {},
): string {
  const paths = options.paths ?? true;
  const overrides = {
    convertColors: { shortname: false },
    ...(paths ? {} : { convertPathData: false as const, mergePaths: false as const }),
  };
  const out = optimize(svg, {
    plugins: [
      sanitizePlugin,
      { name: "preset-default", params: { overrides } },
      { name: "prefixIds", params: { prefix: idPrefix, delim: "-", prefixClassNames: true } },
      // svgo drops role as an unknown attribute; with the <title> it names the image
      { name: "addAttributesToSVGElement", params: { attributes: [{ role: "img" }] } },
      sanitizePlugin,
    ],
  }).data;
  assertSvgRoot(out);
  return out;
}
