/**
 * A settlement change is announced to every enabled webhook endpoint of its environment as a
 * signed `settlement_address.updated` event, signed and recorded (app.webhook_attempts, kind
 * "account") like a test event.
 *
 * Known limit: the durable outbox (app.webhook_deliveries) is keyed to session events, so this
 * account event is sent once, right after the change, and not retried; the change itself is in
 * the security history (durable) whatever happens to the announcement. Sent after the answer,
 * so a slow endpoint never holds the page.
 */
import type { Database } from "../db/client.ts";
import type { Resolver } from "./target.ts";
import type { Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import { sendWebhook } from "./sender.ts";
import { secretKey, webhookHeaders } from "./signing.ts";
import { insertAttempts, type NewAttempt } from "./attempts.ts";
import { listEndpoints, signingSecrets } from "./endpoints.ts";
import { publicMerchantId, type Merchant } from "../credentials/store.ts";

export const SETTLEMENT_EVENT_TYPE = "settlement_address.updated";

export interface SettlementChange {
  chainId: number;
  network: string;
  address: string;
  previousAddress: string | null;
}

/** `changedBy`: the user's email (dashboard) or the API key's display prefix (API). */
/** What sending needs (the HTTP services bag fits it). */
export interface AnnouncementServices {
  database: Database;
  encryptionKey: Buffer;
  resolver?: Resolver;
  config: { webhooks: { timeoutMs: number; allowPrivateTargets: boolean } };
}

export async function announceSettlementChange(services: AnnouncementServices, merchant: Merchant, changedBy: string, environment: Environment, change: SettlementChange): Promise<void> {
  const now = new Date();
  const event = {
    id: newId("event"),
    type: SETTLEMENT_EVENT_TYPE,
    createdAt: now.toISOString(),
    data: { environment, merchantId: publicMerchantId(merchant, environment), ...change, changedBy },
  };
  const body = JSON.stringify(event);
  const endpoints = (await listEndpoints(services.database.db, { merchantId: merchant.id, environment })).filter((e) => e.enabled && !e.deletedAt);
  const send = async () => {
    const attempts = await Promise.all(
      endpoints.map(async (row): Promise<NewAttempt> => {
        const keys = signingSecrets(services.encryptionKey, {
          id: row.id,
          secretSealed: row.secretSealed,
          previousSecretSealed: row.previousSecretSealed,
          previousValid: !!row.previousSecretExpiresAt && row.previousSecretExpiresAt > now,
        }).map(secretKey);
        const result = await sendWebhook(row.url, environment, webhookHeaders(keys, event.id, Math.floor(now.getTime() / 1000), body), body, {
          timeoutMs: services.config.webhooks.timeoutMs,
          resolver: services.resolver,
          allowPrivateTargets: services.config.webhooks.allowPrivateTargets,
        });
        return {
          id: newId("webhookAttempt"),
          endpointId: row.id,
          merchantId: row.merchantId,
          environment,
          eventId: event.id,
          kind: "account",
          attemptNumber: 1,
          url: row.url,
          succeeded: result.succeeded,
          statusCode: result.statusCode,
          latencyMs: result.latencyMs,
          responseExcerpt: result.responseExcerpt,
          error: result.error,
          atMs: Date.now(),
        };
      }),
    );
    if (attempts.length) await insertAttempts(services.database.sql, attempts);
  };
  send().catch((e) => console.error(JSON.stringify({ level: "error", msg: "settlement announcement failed", error: String((e as Error)?.message ?? e) })));
}
