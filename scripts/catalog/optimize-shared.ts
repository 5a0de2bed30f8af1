/** Placeholder id prefix used while optimizing; replaced by "<variant>-<slug>" per stored SVG. */
export const ID_TOKEN = "ZZIDPFX";
