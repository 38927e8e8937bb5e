/**
 * Paysession browser SDK: opens the hosted checkout in a modal and tells the merchant's page
 * how the payment flow ended. Zero dependencies.
 *
 *   const paysession = init({ merchantId: process.env.NEXT_PUBLIC_SERVICE_MERCHANT_ID });
 *   const result = await paysession.open({ paymentSessionId, paymentSessionToken });
 *   // result.outcome: "succeeded" | "funded" | "canceled" | "error" | "closed"
 *
 * `open()` rejects with a PaysessionError (see result.ts for every code) when the session
 * cannot be opened; it never hangs: the checkout must answer within `loadTimeoutMs`.
 */
import { PROTOCOL, readFromCheckout, type SessionStatus, type ToCheckout } from "./protocol.ts";
import { checkMerchantId, checkOpenArgs, errorCodeOf, outcomeOf, PaysessionError, type PaymentResult } from "./result.ts";
import { openModal, type Modal } from "./modal.ts";

export { PaysessionError };
export type { PaymentResult, PaymentOutcome, PaysessionErrorCode } from "./result.ts";
export type { SessionStatus } from "./protocol.ts";

export const SDK_VERSION = "1.0.0";

export interface InitOptions {
  /** Your NEXT_PUBLIC_SERVICE_MERCHANT_ID (mch_test_… for sandbox, mch_live_… for production). */
  merchantId: string;
  /** The service's base address (your SERVICE_API_HOST); default: where this script was loaded from. */
  baseUrl?: string;
  /** How long the checkout may take to load before open() rejects with `checkout_unreachable` (default 20 s). */
  loadTimeoutMs?: number;
}

export interface OpenArgs {
  paymentSessionId: string;
  paymentSessionToken: string;
}

export interface Paysession {
  open(args: OpenArgs): Promise<PaymentResult>;
  /** True while a checkout is open. */
  readonly isOpen: boolean;
}

/** One checkout at a time on a page, whichever init() opened it. */
let openNow = false;

/** Set by the script-tag build (from document.currentScript) or the ESM build (import.meta.url). */
let scriptBase: string | undefined;
export function setDefaultBaseUrl(url: string | undefined): void {
  scriptBase = url;
}

/** The service's base from the SDK's own address: …/sdk/v1/paysession.js → … */
export function baseFromScriptUrl(src: string | undefined): string | undefined {
  if (!src) return undefined;
  const m = /^(https?:\/\/[^?#]*?)\/sdk\/v\d+\/[^/?#]+(?:[?#].*)?$/.exec(src);
  return m ? m[1] : undefined;
}

export function init(options: InitOptions): Paysession {
  const merchantEnv = checkMerchantId(options?.merchantId);
  const merchantId = options.merchantId;

  function baseUrl(): URL {
    const raw = options.baseUrl ?? scriptBase;
    try {
      if (raw) {
        const u = new URL(raw.endsWith("/") ? raw : `${raw}/`);
        if (u.protocol === "https:" || u.protocol === "http:") return u;
      }
    } catch {
      // reported below
    }
    throw new PaysessionError("invalid_argument", "No service base address: pass baseUrl (your SERVICE_API_HOST) to init().");
  }

  async function open(args: OpenArgs): Promise<PaymentResult> {
    if (typeof document === "undefined" || typeof window === "undefined") {
      throw new PaysessionError("not_in_browser", "open() needs a browser page.");
    }
    if (openNow) throw new PaysessionError("already_open", "A checkout is already open; wait for its open() to settle.");
    const { paymentSessionId, paymentSessionToken } = checkOpenArgs(args, merchantEnv);
    const checkoutUrl = new URL("checkout/v1/", baseUrl());
    const checkoutOrigin = checkoutUrl.origin;
    openNow = true;

    return new Promise<PaymentResult>((resolve, reject) => {
      let status: SessionStatus = "PENDING";
      let reason = "created";
      let settled = false;
      let initSent = false;
      let modal: Modal | undefined;

      const finish = (outcome: { result: PaymentResult } | { error: PaysessionError }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        window.removeEventListener("message", onMessage);
        modal?.remove();
        openNow = false;
        if ("result" in outcome) resolve(outcome.result);
        else reject(outcome.error);
      };
      const closeNow = () => finish({ result: { outcome: outcomeOf(status), status, reason, paymentSessionId } });

      const timer = setTimeout(
        () => finish({ error: new PaysessionError("checkout_unreachable", `The checkout at ${checkoutOrigin} did not load in time.`) }),
        options.loadTimeoutMs ?? 20_000,
      );

      const onMessage = (event: MessageEvent) => {
        // Only our checkout, in our iframe, is listened to.
        if (event.origin !== checkoutOrigin || !modal || event.source !== modal.iframe.contentWindow) return;
        const msg = readFromCheckout(event.data);
        if (!msg) return;
        if (msg.type === "ready") {
          if (initSent) return;
          initSent = true;
          const init: ToCheckout = { paysession: PROTOCOL, type: "init", merchantId, paymentSessionId, paymentSessionToken };
          // To the checkout's origin only: were the frame navigated elsewhere, the browser drops it.
          modal.iframe.contentWindow?.postMessage(init, checkoutOrigin);
        } else if (msg.type === "fail") {
          finish({ error: new PaysessionError(errorCodeOf(msg.code), msg.message) });
        } else {
          status = msg.status;
          reason = msg.reason;
          if (msg.type === "interactive") clearTimeout(timer);
          if (msg.type === "close") closeNow();
        }
      };
      window.addEventListener("message", onMessage);
      modal = openModal(checkoutUrl.toString(), closeNow);
    });
  }

  return {
    open,
    get isOpen() {
      return openNow;
    },
  };
}
