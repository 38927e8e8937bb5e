/**
 * The session-token API as the checkout calls it (same origin: the page is served by the
 * service). The token travels in the Authorization header only.
 */
// The server's own types for what GET /api/payment-sessions answers (type-only: nothing of the
// server is bundled into the page, and the two cannot drift apart).
import type { PayerSessionView as PayerSession } from "../../sessions/payer-view.ts";
import { BaseError } from "../../../../shared/base-error.ts";
export type { PayerNetworkView as PayerNetwork, PayerSessionView as PayerSession } from "../../sessions/payer-view.ts";

/** A signed authorization, as POST /api/payment-sessions/authorizations takes it. */
export interface SignedAuthorization {
  chainId: number;
  from: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
  signature: string;
}

export class ApiFailure extends BaseError {
  override name = "ApiFailure";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    opts: { cause?: unknown } = {},
  ) {
    super(message, opts);
  }
}

export class SessionApi {
  private etag: string | undefined;
  constructor(private readonly token: string) {}

  private async call(method: "GET" | "POST", path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
        credentials: "omit",
        referrerPolicy: "no-referrer",
      });
    } catch (e) {
      throw new ApiFailure(0, "network", "The payment service cannot be reached. Check your connection.", { cause: e });
    }
    if (!res.ok && res.status !== 304) {
      const err = ((await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }).error ?? {};
      throw new ApiFailure(res.status, err.code ?? "unknown", err.message ?? `The payment service answered ${res.status}.`);
    }
    return res;
  }

  /** The session; undefined when it has not changed since the last call (304). */
  async session(paymentSessionId: string): Promise<PayerSession | undefined> {
    const res = await this.call("GET", `/api/payment-sessions?paymentSessionId=${encodeURIComponent(paymentSessionId)}`, undefined, this.etag ? { "if-none-match": this.etag } : {});
    if (res.status === 304) return undefined;
    this.etag = res.headers.get("etag") ?? undefined;
    return (await res.json()) as PayerSession;
  }

  async cancel(): Promise<PayerSession> {
    return (await (await this.call("POST", "/api/payment-sessions/cancel", {})).json()) as PayerSession;
  }

  /** Test tokens of `tokenAddress` (one the session accepts on `chainId`); `amountBaseUnits` in that token's own base units. */
  async faucet(address: string, chainId: number, tokenAddress: string): Promise<{ amountBaseUnits: string; txHash: string }> {
    return (await (await this.call("POST", "/api/sandbox/faucet", { address, chainId, tokenAddress })).json()) as { amountBaseUnits: string; txHash: string };
  }

  /** Records a signed authorization: the payment service submits it (the payer pays no network fee). */
  async authorize(signed: SignedAuthorization): Promise<{ status: string }> {
    return (await (await this.call("POST", "/api/payment-sessions/authorizations", signed)).json()) as { status: string };
  }

  async testPay(chainId: number): Promise<{ txHash: string }> {
    return (await (await this.call("POST", "/api/sandbox/pay", { chainId })).json()) as { txHash: string };
  }
}
