/** Paysession's server client: `new Paysession()`, typed errors, webhook verification. */
export { Paysession, PageList, type FetchFunction, type PaysessionOptions, type RequestOptions } from "./client.ts";
export { PaysessionError, type PaysessionErrorCode } from "./errors.ts";
export { verifyWebhook, WebhookVerificationError, WEBHOOK_TOLERANCE_SECONDS, type HeaderBag, type WebhookEvent } from "./webhooks.ts";
export type * from "./types.ts";
