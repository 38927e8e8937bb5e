/**
 * Redelivering an event, whichever door asks: the API's route (http/events.ts) and the dashboard
 * (the Events page, a payment's page) call redeliverEvent. The event is the owner's session,
 * account or refund event; it goes to one enabled endpoint, or to every enabled one; the redelivery and
 * its security-history line, naming `by`, commit together.
 */
import type { Sql, TransactionSql } from "postgres";
import { ApiError } from "../errors.ts";
import { isId } from "../../../shared/ids.ts";
import type { Db } from "../db/client.ts";
import { changeStatement, type ChangedBy } from "../credentials/security-history.ts";
import { findEndpoint, listEndpoints, type Owner } from "./endpoints.ts";
import { findRefundEvent, redeliverRefundEvent, type RefundEventRow } from "./refund-events.ts";
import { deliveriesOf, findAccountEvent, findEvent, redeliver, redeliverAccountEvent, type AccountEventRow, type DeliveryView, type EventWithSession } from "./events.ts";

export type OwnEvent =
  | { kind: "session"; id: string; session: EventWithSession }
  | { kind: "account"; id: string; account: AccountEventRow }
  | { kind: "refund"; id: string; refund: RefundEventRow };

/** A session event, or else an account or refund event, of this owner; else the 404 naming `id`. */
export async function ownEvent(db: Db, owner: Owner, id: string): Promise<OwnEvent> {
  if (isId("event", id)) {
    const session = await findEvent(db, owner, id);
    if (session) return { kind: "session", id, session };
    const account = await findAccountEvent(db, owner, id);
    if (account) return { kind: "account", id, account };
    const refund = await findRefundEvent(db, owner, id);
    if (refund) return { kind: "refund", id, refund };
  }
  throw new ApiError("resource_not_found", `No event ${JSON.stringify(id.slice(0, 64))} in this account and environment.`, "id");
}

/** Queues the event again to `endpointId` (enabled), or to every enabled endpoint; returns the deliveries it queued. */
export async function redeliverEvent(
  database: { db: Db; sql: Sql },
  owner: Owner,
  by: ChangedBy,
  eventId: string,
  endpointId?: string,
): Promise<{ eventId: string; deliveries: DeliveryView[] }> {
  const found = await ownEvent(database.db, owner, eventId);
  let endpointIds: string[];
  if (endpointId !== undefined) {
    const ep = isId("webhookEndpoint", endpointId) ? await findEndpoint(database.db, owner, endpointId) : undefined;
    if (!ep) throw new ApiError("resource_not_found", "No such webhook endpoint in this account and environment.", "webhookEndpointId");
    if (!ep.enabled) throw new ApiError("webhook_endpoint_disabled", undefined, "webhookEndpointId");
    endpointIds = [ep.id];
  } else {
    endpointIds = (await listEndpoints(database.db, owner)).filter((e) => e.enabled).map((e) => e.id);
    if (endpointIds.length === 0) throw new ApiError("no_webhook_endpoint");
  }
  const line = (tx: TransactionSql) => changeStatement(tx, by, "webhook_event_redelivered", { eventId: found.id, endpointId: endpointId ?? "every enabled endpoint" });
  if (found.kind === "session") await redeliver(database.sql, found.session.event, endpointIds, line);
  else if (found.kind === "account") await redeliverAccountEvent(database.sql, found.account, endpointIds, line);
  else await redeliverRefundEvent(database.sql, found.refund, endpointIds, line);
  const deliveries = (await deliveriesOf(database.db, found.id)).filter((d) => !d.ordered && endpointIds.includes(d.webhookEndpointId));
  return { eventId: found.id, deliveries };
}
