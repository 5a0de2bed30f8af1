/** Reading iconify JSON sets and turning their icons into standalone SVG documents. */
import { readFileSync } from "node:fs";
import { join } from "node:path";

interface IconProps {
  body?: string;
  left?: number;
  top?: number;
  width?: number;
  height?: number;
  rotate?: number;
  hFlip?: boolean;
  vFlip?: boolean;
  hidden?: boolean;
}

export interface IconifySet extends IconProps {
  prefix: string;
  icons: Record<string, IconProps & { body: string }>;
  aliases?: Record<string, IconProps & { parent: string }>;
}

export interface ResolvedIcon {
  /** name in the set (an icon or an alias) */
  name: string;
  body: string;
  left: number;
  top: number;
  width: number;
  height: number;
  rotate: number;
  hFlip: boolean;
  vFlip: boolean;
  hidden: boolean;
}

export function loadIconifySet(root: string, pkg: string): IconifySet {
  return JSON.parse(readFileSync(join(root, "node_modules", pkg, "icons.json"), "utf8"));
}

/**
 * An icon or alias with set defaults applied. Alias chains are followed; an alias's own
 * dimensions win, its rotation adds up and its flips toggle (iconify semantics).
 */
export function resolveIcon(set: IconifySet, name: string): ResolvedIcon | null {
  const chain: IconProps[] = [];
  let current = name;
  for (let depth = 0; depth < 8; depth++) {
    const icon = set.icons[current];
    if (icon) {
      chain.push(icon);
      break;
    }
    const alias = set.aliases?.[current];
    if (!alias) return null;
    chain.push(alias);
    current = alias.parent;
  }
  const base = chain[chain.length - 1];
  if (base?.body === undefined) return null;
  const pick = <K extends "left" | "top" | "width" | "height">(key: K, dflt: number): number => {
    for (const props of chain) if (props[key] !== undefined) return props[key] as number;
    return set[key] ?? dflt;
  };
  let rotate = 0;
  let hFlip = false;
  let vFlip = false;
  for (const props of chain) {
    rotate += props.rotate ?? 0;
    if (props.hFlip) hFlip = !hFlip;
    if (props.vFlip) vFlip = !vFlip;
  }
  return {
    name,
    body: base.body,
    left: pick("left", 0),
    top: pick("top", 0),
    width: pick("width", 16),
    height: pick("height", 16),
    rotate: rotate % 4,
    hFlip,
    vFlip,
    hidden: Boolean(chain[0]?.hidden),
  };
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A full SVG document for a resolved icon (viewBox from left/top/width/height, transforms). */
export function iconToSvg(icon: ResolvedIcon, title: string): string {
  let { left, top, width, height, body } = icon;
  const transforms: string[] = [];
  if (icon.hFlip || icon.vFlip) {
    const sx = icon.hFlip ? -1 : 1;
    const sy = icon.vFlip ? -1 : 1;
    const tx = icon.hFlip ? left * 2 + width : 0;
    const ty = icon.vFlip ? top * 2 + height : 0;
    transforms.push(`translate(${tx} ${ty}) scale(${sx} ${sy})`);
  }
  if (icon.rotate) {
    // quarter turns around the centre of the box; the box swaps sides on odd turns
    const cx = left + width / 2;
    const cy = top + height / 2;
    transforms.unshift(`rotate(${icon.rotate * 90} ${cx} ${cy})`);
    if (icon.rotate % 2 === 1) {
      [left, top] = [cx - height / 2, cy - width / 2];
      [width, height] = [height, width];
    }
  }
  if (transforms.length) body = `<g transform="${transforms.join(" ")}">${body}</g>`;
  const xlink = body.includes("xlink:") ? ' xmlns:xlink="http://www.w3.org/1999/xlink"' : "";
  return (
    `<svg xmlns="http://www.w3.org/2000/svg"${xlink} role="img" viewBox="${left} ${top} ${width} ${height}">` +
    `<title>${escapeXml(title)}</title>${body}</svg>`
  );
}
