/**
 * The client's hand-written types against the service's own schemas, checked by the compiler
 * (`bun run typecheck`, part of CI): a field added, removed or retyped on either side is a type
 * error here. The runtime check is trivial; the test exists so the file is compiled with the rest.
 */
import { expect, test } from "bun:test";
import type { Static, TSchema } from "@sinclair/typebox";
import type { CreatedSession, MerchantSession } from "../../api/src/http/payment-sessions.schemas.ts";
import type { CreatedWebhookEndpoint as ApiCreatedEndpoint, WebhookEndpoint as ApiEndpoint, WebhookSecret as ApiSecret, TestEventResult as ApiTestEvent } from "../../api/src/http/webhook-endpoints.schemas.ts";
import type { AnyEventWithDeliveries, SessionEvent, SessionEventWithDeliveries, SettlementAddressUpdatedEvent, WebhookAttempt as ApiAttempt, EventList } from "../../api/src/http/events.schemas.ts";
import type { SettlementAddress as ApiSettlement } from "../../api/src/http/settlement-addresses.schemas.ts";
import type * as Sdk from "./types.ts";

/** true only when A and B are the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Api<S extends TSchema> = Static<S>;

const checks = {
  session: true satisfies Same<Api<typeof MerchantSession>, Sdk.PaymentSession>,
  created: true satisfies Same<Api<typeof CreatedSession>, Sdk.CreatedPaymentSession>,
  endpoint: true satisfies Same<Api<typeof ApiEndpoint>, Sdk.WebhookEndpoint>,
  createdEndpoint: true satisfies Same<Api<typeof ApiCreatedEndpoint>, Sdk.CreatedWebhookEndpoint>,
  secret: true satisfies Same<Api<typeof ApiSecret>, Sdk.WebhookSecret>,
  testEvent: true satisfies Same<Api<typeof ApiTestEvent>, Sdk.TestEventResult>,
  event: true satisfies Same<Api<typeof SessionEvent>, Sdk.PaymentSessionEvent>,
  eventWithDeliveries: true satisfies Same<Api<typeof SessionEventWithDeliveries>, Sdk.PaymentSessionEventWithDeliveries>,
  accountEvent: true satisfies Same<Api<typeof SettlementAddressUpdatedEvent>, Sdk.SettlementAddressUpdatedEvent>,
  anyEventWithDeliveries: true satisfies Same<Api<typeof AnyEventWithDeliveries>, Sdk.PaymentSessionEventWithDeliveries | Sdk.SettlementAddressUpdatedEventWithDeliveries>,
  eventPage: true satisfies Same<Api<typeof EventList>, Sdk.Page<Sdk.PaymentSessionEvent>>,
  attempt: true satisfies Same<Api<typeof ApiAttempt>, Sdk.WebhookAttempt>,
  settlement: true satisfies Same<Api<typeof ApiSettlement>, Sdk.SettlementAddress>,
};

test("the client's types are the service's schemas (checked at compile time)", () => {
  expect(Object.values(checks).every((v) => v === true)).toBe(true);
});
