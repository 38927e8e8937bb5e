/**
 * The typed client for a merchant's TypeScript or JavaScript server (Node 20+, Bun, Deno). No dependencies:
 * fetch and WebCrypto only.
 *
 *   const paysession = new Paysession();            // SERVICE_API_KEY, SERVICE_API_HOST
 *   const s = await paysession.paymentSessions.create({ amount: "12.34", currency: "USD" });
 *   for await (const s of paysession.paymentSessions.list()) …   // every page
 *
 * Retries: a network failure, 429 and 5xx are retried (default 2 more times) with exponential
 * backoff and jitter, waiting at least what Retry-After says. A request that is not safe to
 * repeat is retried only with an Idempotency-Key: every create carries one generated key (the
 * same on each retry), so a create whose answer was lost cannot make a second session.
 */
import { PaysessionError } from "./errors.ts";
import type {
  AutomaticReturn,
  CreatedPaymentSession,
  CreatedWebhookEndpoint,
  CreatePaymentSessionParams,
  CreatePaymentLinkParams,
  PaymentLink,
  Delivery,
  EventType,
  ListParams,
  Page,
  PaymentSession,
  PaymentSessionEvent,
  PaymentSessionEventWithDeliveries,
  CreateRefundParams,
  Refund,
  RefundBalance,
  RefundEvent,
  RefundEventType,
  RefundEventWithDeliveries,
  RefundSettings,
  SettlementAddress,
  SettlementAddressUpdatedEventWithDeliveries,
  TestEventResult,
  UpdateRefundSettingsParams,
  WebhookAttempt,
  WebhookEndpoint,
  WebhookSecret,
} from "./types.ts";

export interface PaysessionOptions {
  /** Secret API key (sk_test_… or sk_live_…). Default: SERVICE_API_KEY. */
  apiKey?: string;
  /** The service's base address. Default: SERVICE_API_HOST. */
  host?: string;
  /** Retries after the first attempt. Default 2. */
  maxRetries?: number;
  /** Per attempt. Default 30 s. */
  timeoutMs?: number;
  /** First backoff; doubles per retry. Default 500 ms. */
  retryBaseMs?: number;
  /** The fetch to call (a wrapper, a mock). Default: the global one. */
  fetch?: FetchFunction;
}

/**
 * The global fetch's own type wherever the merchant's project declares one (Node's types, the DOM,
 * Bun's, Deno's); where it has none (`lib: ["ES2022"]` and no `@types/node`), a plain function type,
 * so that these declarations compile in any TypeScript project.
 */
export type FetchFunction = typeof globalThis extends { fetch: infer F } ? F : (input: string, init?: object) => Promise<unknown>;

export interface RequestOptions {
  /** For POSTs that take one (create session, create endpoint). */
  idempotencyKey?: string;
}

type Method = "GET" | "POST" | "PUT" | "DELETE";

const env = (name: string): string | undefined => (typeof process !== "undefined" ? process.env?.[name] : undefined);

/** A list you can await for one page or iterate for every item of every page. */
export class PageList<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (startingAfter?: string) => Promise<Page<T>>, private readonly startingAfter?: string) {}

  /** The first page. */
  then<R1 = Page<T>, R2 = never>(ok?: ((p: Page<T>) => R1 | PromiseLike<R1>) | null, fail?: ((e: unknown) => R2 | PromiseLike<R2>) | null): Promise<R1 | R2> {
    return this.fetchPage(this.startingAfter).then(ok, fail);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let cursor = this.startingAfter;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield* page.data;
      if (!page.hasMore || !page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }
}

export class Paysession {
  private readonly apiKey: string;
  private readonly host: string;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly retryBaseMs: number;
  private readonly fetchFn: FetchFunction;

  constructor(opts: PaysessionOptions = {}) {
    const apiKey = opts.apiKey ?? env("SERVICE_API_KEY");
    const host = opts.host ?? env("SERVICE_API_HOST");
    if (!apiKey) throw new PaysessionError("No API key: pass { apiKey } or set SERVICE_API_KEY.", "invalid_request_error", "api_key_missing");
    if (!/^sk_(test|live)_/.test(apiKey)) {
      throw new PaysessionError("The API key must be a secret key (sk_test_… or sk_live_…); session tokens belong in the browser.", "invalid_request_error", "api_key_malformed");
    }
    if (!host) throw new PaysessionError("No service address: pass { host } or set SERVICE_API_HOST.", "invalid_request_error", "host_missing");
    this.apiKey = apiKey;
    this.host = host.replace(/\/+$/, "");
    this.maxRetries = opts.maxRetries ?? 2;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.retryBaseMs = opts.retryBaseMs ?? 500;
    this.fetchFn = opts.fetch ?? fetch;
  }

  readonly paymentSessions = {
    create: (params: CreatePaymentSessionParams, opts: RequestOptions = {}) =>
      this.request<CreatedPaymentSession>("POST", "/payment-sessions", params, opts.idempotencyKey ?? crypto.randomUUID()),
    retrieve: (id: string) => this.request<PaymentSession>("GET", `/payment-sessions/${enc(id)}`),
    list: (params: ListParams & { status?: PaymentSession["status"]; paymentLinkId?: string } = {}) =>
      new PageList<PaymentSession>((after) => this.request("GET", `/payment-sessions${query({ ...params, startingAfter: after })}`), params.startingAfter),
    cancel: (id: string) => this.request<PaymentSession>("POST", `/payment-sessions/${enc(id)}/cancel`, {}),
  };

  /** Payment links: a page of ours that takes a payment for you (the service's docs/payment-links.md). */
  readonly paymentLinks = {
    /** Retried safely (one Idempotency-Key for every attempt). */
    create: (params: CreatePaymentLinkParams, opts: RequestOptions = {}) =>
      this.request<PaymentLink>("POST", "/payment-links", params, opts.idempotencyKey ?? crypto.randomUUID()),
    retrieve: (id: string) => this.request<PaymentLink>("GET", `/payment-links/${enc(id)}`),
    list: (params: ListParams = {}) => new PageList<PaymentLink>((after) => this.request("GET", `/payment-links${query({ ...params, startingAfter: after })}`), params.startingAfter),
    /** Its page takes no more payments; the sessions it started are untouched. */
    deactivate: (id: string) => this.request<PaymentLink>("POST", `/payment-links/${enc(id)}/deactivate`, {}),
  };

  readonly refunds = {
    /** Refunds a session's money to the address that paid it (or to a refund link: `destination: "link"`); retried safely (one Idempotency-Key for every attempt). */
    create: (paymentSessionId: string, params: CreateRefundParams, opts: RequestOptions = {}) =>
      this.request<Refund>("POST", `/payment-sessions/${enc(paymentSessionId)}/refunds`, params, opts.idempotencyKey ?? crypto.randomUUID()),
    retrieve: (id: string) => this.request<Refund>("GET", `/refunds/${enc(id)}`),
    /** Every refund of the environment, or one session's (`paymentSessionId`): newest first, every page when iterated. */
    list: (params: ListParams & { paymentSessionId?: string } = {}) => {
      const { paymentSessionId, ...paging } = params;
      const path = paymentSessionId === undefined ? "/refunds" : `/payment-sessions/${enc(paymentSessionId)}/refunds`;
      return new PageList<Refund>((after) => this.request("GET", `${path}${query({ ...paging, startingAfter: after })}`), paging.startingAfter);
    },
    cancel: (id: string) => this.request<Refund>("POST", `/refunds/${enc(id)}/cancel`, {}),
    /** Sends a refund whose link was claimed and waits for your approval (`awaiting_approval`). */
    approve: (id: string) => this.request<Refund>("POST", `/refunds/${enc(id)}/approve`, {}),
    /** Your refund balance per network: its address and what it holds, read from the chain. */
    balances: async () => (await this.request<{ data: RefundBalance[] }>("GET", "/refund-balances")).data,
  };

  /** Automatic returns in this environment: whether over-, late- and underpaid money goes back by itself, and after how long. */
  readonly refundSettings = {
    retrieve: () => this.request<RefundSettings>("GET", "/refund-settings"),
    /** A field left out keeps its value; recorded in the security history; applies to money that arrives from now on. */
    update: (params: UpdateRefundSettingsParams) => this.request<RefundSettings>("PUT", "/refund-settings", params),
  };

  /** A session's automatic returns (`scheduled`, `refunded`, `kept`, …), and keeping their money instead. */
  readonly automaticReturns = {
    /** Oldest first. */
    list: async (paymentSessionId: string) => (await this.request<{ data: AutomaticReturn[] }>("GET", `/payment-sessions/${enc(paymentSessionId)}/automatic-returns`)).data,
    /** Its returns still `scheduled` become `kept`: nothing goes back by itself. Calling it again changes nothing. Answers the list after. */
    keep: async (paymentSessionId: string) => (await this.request<{ data: AutomaticReturn[] }>("POST", `/payment-sessions/${enc(paymentSessionId)}/automatic-returns/keep`, {})).data,
  };

  readonly webhookEndpoints = {
    create: (params: { url: string; description?: string }, opts: RequestOptions = {}) =>
      this.request<CreatedWebhookEndpoint>("POST", "/webhook-endpoints", params, opts.idempotencyKey ?? crypto.randomUUID()),
    retrieve: (id: string) => this.request<WebhookEndpoint>("GET", `/webhook-endpoints/${enc(id)}`),
    list: async () => (await this.request<{ data: WebhookEndpoint[] }>("GET", "/webhook-endpoints")).data,
    update: (id: string, params: { url?: string; description?: string; enabled?: boolean }) =>
      this.request<WebhookEndpoint>("POST", `/webhook-endpoints/${enc(id)}`, params),
    del: (id: string) => this.request<{ id: string; deleted: true }>("DELETE", `/webhook-endpoints/${enc(id)}`),
    secret: (id: string) => this.request<WebhookSecret>("GET", `/webhook-endpoints/${enc(id)}/secret`),
    rotateSecret: (id: string, params: { overlapSeconds?: number } = {}) =>
      this.request<WebhookSecret>("POST", `/webhook-endpoints/${enc(id)}/rotate-secret`, params),
    sendTest: (id: string) => this.request<TestEventResult>("POST", `/webhook-endpoints/${enc(id)}/test`, {}),
    attempts: (id: string, params: ListParams = {}) =>
      new PageList<WebhookAttempt>((after) => this.request("GET", `/webhook-endpoints/${enc(id)}/attempts${query({ ...params, startingAfter: after })}`), params.startingAfter),
  };

  readonly events = {
    /** A session event, a refund event (`refund.*`) or an account event (`settlement_address.updated`) by the id its webhook carried: narrow on `type`. */
    retrieve: (id: string) =>
      this.request<PaymentSessionEventWithDeliveries | RefundEventWithDeliveries | SettlementAddressUpdatedEventWithDeliveries>("GET", `/events/${enc(id)}`),
    /** The sessions' events and their refunds', newest first (each session's in its `sequence`): narrow on `type`. */
    list: (params: ListParams & { paymentSessionId?: string; type?: EventType | RefundEventType } = {}) =>
      new PageList<PaymentSessionEvent | RefundEvent>((after) => this.request("GET", `/events${query({ ...params, startingAfter: after })}`), params.startingAfter),
    attempts: (id: string, params: ListParams = {}) =>
      new PageList<WebhookAttempt>((after) => this.request("GET", `/events/${enc(id)}/attempts${query({ ...params, startingAfter: after })}`), params.startingAfter),
    redeliver: (id: string, params: { webhookEndpointId?: string } = {}) =>
      this.request<{ eventId: string; deliveries: Delivery[] }>("POST", `/events/${enc(id)}/redeliver`, params),
  };

  readonly settlementAddresses = {
    list: async () => (await this.request<{ data: SettlementAddress[] }>("GET", "/settlement-addresses")).data,
    set: (chainId: number, address: string) => this.request<SettlementAddress>("PUT", `/settlement-addresses/${chainId}`, { address }),
  };

  /** One API call with retries; throws PaysessionError. */
  async request<T>(method: Method, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    // Safe to repeat: reads, PUT and DELETE, and any request carrying an Idempotency-Key.
    const repeatable = method !== "POST" || idempotencyKey !== undefined;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchFn(this.host + path, {
          method,
          headers: {
            authorization: `Bearer ${this.apiKey}`,
            accept: "application/json",
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
          },
          body: body !== undefined ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        if (repeatable && attempt < this.maxRetries) {
          await sleep(this.backoff(attempt));
          continue;
        }
        throw new PaysessionError(`Could not reach ${this.host}: ${(err as Error)?.message ?? err}`, "connection_error", "connection_failed");
      }
      if ((res.status === 429 || res.status >= 500) && repeatable && attempt < this.maxRetries) {
        const retryAfter = Number(res.headers.get("retry-after"));
        await res.body?.cancel().catch(() => {});
        await sleep(Math.max(this.backoff(attempt), Number.isFinite(retryAfter) ? retryAfter * 1000 : 0));
        continue;
      }
      const text = await res.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      if (res.ok) return json as T;
      const e = json?.error;
      throw new PaysessionError(
        e?.message ?? `HTTP ${res.status} from ${method} ${path}`,
        e?.type ?? "api_error",
        e?.code ?? "unexpected_response",
        res.status,
        e?.param,
        e?.requestId ?? res.headers.get("request-id") ?? undefined,
      );
    }
  }

  private backoff(attempt: number): number {
    const base = this.retryBaseMs * 2 ** attempt;
    return base / 2 + Math.random() * (base / 2);
  }
}

const enc = encodeURIComponent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function query(params: Record<string, string | number | undefined>): string {
  const q = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${enc(k)}=${enc(String(v))}`)
    .join("&");
  return q ? `?${q}` : "";
}
