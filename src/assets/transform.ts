/**
 * Image options applied to an SVG before it is served or rendered: greyscale and a solid
 * recolouring (the silhouette in one colour). Both wrap the artwork's content in a group with an
 * SVG filter, so the same markup works as SVG in a browser and through resvg. Plain TS.
 */

const ROOT_OPEN = /<svg\b(?:[^>"']|"[^"]*"|'[^']*')*>/;

/** The id of the filter the options add (artwork ids never start with "__bx"). */
const FILTER_ID = "__bxf";

/** `svg` with its content wrapped in `<g filter>` over the given filter primitives. */
function withFilter(svg: string, primitives: string): string {
  const open = ROOT_OPEN.exec(svg);
  const close = svg.lastIndexOf("</svg>");
  if (!open || close < 0 || open[0].endsWith("/>")) return svg;
  const start = open.index + open[0].length;
  const defs = `<defs><filter id="${FILTER_ID}" color-interpolation-filters="sRGB">${primitives}</filter></defs>`;
  return `${svg.slice(0, start)}${defs}<g filter="url(#${FILTER_ID})">${svg.slice(start, close)}</g>${svg.slice(close)}`;
}

/** The artwork in shades of grey (luminance kept). */
export function greyscaleSvg(svg: string): string {
  return withFilter(svg, '<feColorMatrix type="saturate" values="0"/>');
}

/** The artwork's silhouette in one colour (6 hex characters, no "#"); transparency kept. */
export function solidSvg(svg: string, hex: string): string {
  return withFilter(
    svg,
    `<feFlood flood-color="#${hex}" result="c"/><feComposite in="c" in2="SourceAlpha" operator="in"/>`,
  );
}
