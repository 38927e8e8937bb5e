/**
 * HTML with escaping by default: every value interpolated into `html\`…\`` is escaped unless
 * it is itself Html (built by html`…` or raw()). Merchant-supplied text (references,
 * metadata, URLs, descriptions) therefore always lands as text, never as markup.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

type Value = Html | string | number | bigint | boolean | null | undefined | Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join("");
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup we wrote ourselves (never anything a merchant or payer sent). */
export const raw = (s: string) => new Html(s);
