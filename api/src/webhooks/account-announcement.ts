/**
 * Changing a settlement address, the one way both faces do it (the API's
 * `PUT /settlement-addresses/{chainId}` and the dashboard, which calls that route in-process):
 * in ONE transaction the new address, its line in the security history, and a
 * `settlement_address.updated` account event with one outbox row per enabled webhook endpoint
 * of the environment (effects/webhook-outbox.ts). The delivery worker then sends it like any
 * session event: signed, retried on the same schedule, every attempt logged (kind "account"),
 * redeliverable, dropped when the endpoint is disabled or answers 410. A change that fails
 * writes no event; an event is never lost once the change committed.
 */
import { and, eq } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { merchantSettlements } from "../db/schema.ts";
import type { Environment } from "../../../shared/environment.ts";
import { newId } from "../../../shared/ids.ts";
import { setSettlement, type Settlement } from "../sessions/settlements.ts";
import { checksummed } from "../sessions/views.ts";
import { recordSecurityEvent, type Actor } from "../credentials/security-history.ts";
import { enqueueAccountEvent } from "../effects/webhook-outbox.ts";
import { publicMerchantId, type Merchant } from "../credentials/store.ts";
import type { SettlementAddressUpdatedData } from "./payload.ts";
import type { AccountEventType } from "../db/column-values.ts";

export const SETTLEMENT_EVENT_TYPE: AccountEventType = "settlement_address.updated";

export interface SettlementChange {
  chainId: number;
  network: string;
  address: string;
  previousAddress: string | null;
}

export interface SettlementChangeRequest {
  merchant: Merchant;
  environment: Environment;
  chainId: number;
  network: string;
  /** Already checked: a non-zero 0x address with a valid checksum (or all one case). */
  address: string;
  /** Who, for the security history. */
  actor: Actor;
  /** Who, as the event says it: the user's email (dashboard) or `API key <prefix>…`. */
  changedBy: string;
  /** Extra facts for the security history (e.g. via, keyId). */
  detail?: Record<string, unknown>;
}

export interface SettlementChangeResult {
  saved: Settlement;
  change: SettlementChange;
  eventId: string;
  deliveries: number;
}

export async function changeSettlementAddress(database: Pick<Database, "db">, r: SettlementChangeRequest): Promise<SettlementChangeResult> {
  return database.db.transaction(async (tx) => {
    // Locked, so two changes at once each announce the address they replaced.
    const [before] = await tx
      .select({ address: merchantSettlements.address })
      .from(merchantSettlements)
      .where(and(eq(merchantSettlements.merchantId, r.merchant.id), eq(merchantSettlements.environment, r.environment), eq(merchantSettlements.chainId, r.chainId)))
      .for("update");
    const saved = await setSettlement(tx, r.merchant.id, r.environment, r.chainId, r.address);
    const change: SettlementChange = {
      chainId: r.chainId,
      network: r.network,
      address: checksummed(saved.address),
      previousAddress: before ? checksummed(before.address) : null,
    };
    await recordSecurityEvent(tx, r.actor, "settlement_address_changed", { ...change, ...r.detail }, r.environment);
    const eventId = newId("event");
    const data: SettlementAddressUpdatedData = { environment: r.environment, merchantId: publicMerchantId(r.merchant, r.environment), ...change, changedBy: r.changedBy };
    const deliveries = await enqueueAccountEvent(tx, {
      id: eventId,
      merchantId: r.merchant.id,
      environment: r.environment,
      type: SETTLEMENT_EVENT_TYPE,
      data,
    });
    return { saved, change, eventId, deliveries };
  });
}
