/**
 * The EIP-681 QR code, drawn by us as one SVG path (no image request, no third party):
 * uqr computes the module matrix; `qrPath` turns it into path data (pure, tested).
 */
import { encode } from "uqr";

/** Path data of the dark modules, one unit square each, with `border` light modules around. */
export function qrPath(text: string, border = 4): { size: number; d: string } {
  const qr = encode(text, { ecc: "M", border: 0 });
  let d = "";
  qr.data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (dark) d += `M${x + border} ${y + border}h1v1h-1z`;
    });
  });
  return { size: qr.size + 2 * border, d };
}

export function qrSvg(text: string, label: string): SVGSVGElement {
  const NS = "http://www.w3.org/2000/svg";
  const { size, d } = qrPath(text);
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  svg.setAttribute("shape-rendering", "crispEdges");
  const bg = document.createElementNS(NS, "rect");
  bg.setAttribute("width", String(size));
  bg.setAttribute("height", String(size));
  bg.setAttribute("fill", "#ffffff");
  const path = document.createElementNS(NS, "path");
  path.setAttribute("d", d);
  path.setAttribute("fill", "#0f172a");
  svg.append(bg, path);
  return svg;
}
