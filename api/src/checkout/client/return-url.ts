/**
 * Where the checkout opened on its own (not framed by the SDK) sends the payer when they leave
 * it: a payment link's page hands its own return address in the fragment (api/src/payment-page/).
 * Pure. Only a path of this origin under /pay/ is taken, so a crafted fragment cannot make the
 * checkout an open redirect to another site.
 */
export function returnUrlOf(raw: string | null, origin: string): string | undefined {
  if (!raw || !raw.startsWith("/pay/") || raw.startsWith("//")) return undefined;
  try {
    const url = new URL(raw, origin);
    return url.origin === origin && url.pathname.startsWith("/pay/") ? url.pathname + url.search : undefined;
  } catch {
    return undefined;
  }
}
