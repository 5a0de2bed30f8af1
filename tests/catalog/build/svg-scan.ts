/**
 * An independent hazard scan for stored SVGs (regex based on purpose: it must not share code
 * with the sanitizer it checks). Returns the problems found, empty when the SVG is clean.
 */
export function svgHazards(svg: string): string[] {
  const problems: string[] = [];
  const check = (re: RegExp, what: string) => {
    if (re.test(svg)) problems.push(what);
  };
  check(/<\s*([\w-]+:)?script\b/i, "script element");
  check(/<\s*([\w-]+:)?foreignObject\b/i, "foreignObject element");
  check(
    /<\s*([\w-]+:)?(iframe|embed|object|image|animate\w*|set|handler|listener)\b/i,
    "active element",
  );
  check(/\son[a-z]+\s*=/i, "event handler attribute");
  check(/\s(?:xlink:)?href\s*=\s*["'](?!#)/i, "non-local href");
  check(/url\(\s*["']?(?!#)/i, "non-local url()");
  check(/@import/i, "@import");
  check(/javascript:|vbscript:/i, "script URL");
  check(/data:/i, "data: URL");
  check(/<!DOCTYPE|<!ENTITY|<\?xml-stylesheet/i, "doctype or stylesheet instruction");
  check(/xml:base/i, "xml:base");
  if (!/^<svg[\s>]/.test(svg)) problems.push("root is not <svg>");
  if (!/<svg[^>]*\sviewBox="[^"]+"/.test(svg)) problems.push("no viewBox");
  return problems;
}
