/** Small presentation helpers shared by the pages. */
import { presetByChainId } from "../../../shared/chains/presets.ts";
import { html, type Html } from "./html.ts";

/** "2026-11-23 10:12:05 UTC": unambiguous, the same for every reader. */
export function when(d: Date | string | null | undefined): string {
  if (!d) return "—";
  const iso = (typeof d === "string" ? new Date(d) : d).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

export function timeTag(d: Date | string | null | undefined): Html {
  if (!d) return html`—`;
  const iso = (typeof d === "string" ? new Date(d) : d).toISOString();
  return html`<time datetime="${iso}">${when(iso)}</time>`;
}

export function statusBadge(status: string): Html {
  return html`<span class="badge status-${status.toLowerCase()}">${status}</span>`;
}

export function networkName(chainId: number): string {
  return presetByChainId(chainId)?.name ?? `chain ${chainId}`;
}

/** A transaction hash, linked to the network's block explorer when it has one (none for local networks). */
export function txLink(chainId: number, hash: string): Html {
  const base = presetByChainId(chainId)?.explorerUrl;
  return base ? html`<a class="mono" href="${`${base}/tx/${hash}`}" rel="noopener noreferrer" target="_blank">${hash}</a>` : html`<code class="mono">${hash}</code>`;
}

export function addressLink(chainId: number, address: string): Html {
  const base = presetByChainId(chainId)?.explorerUrl;
  return base ? html`<a class="mono" href="${`${base}/address/${address}`}" rel="noopener noreferrer" target="_blank">${address}</a>` : html`<code class="mono">${address}</code>`;
}
