/**
 * The client's hand-written types against the service's own schemas, checked by the compiler
 * (`bun run typecheck`, part of CI): a field added, removed or retyped on either side is a type
 * error here. The runtime check is trivial; the test exists so the file is compiled with the rest.
 */
import { expect, test } from "bun:test";
import type { Static, TSchema } from "@sinclair/typebox";
import type { CreatedSession, HistoryEntry, MerchantSession } from "../../api/src/http/payment-sessions.schemas.ts";
import type { EventDetail as ApiDetail, ReasonAndDetail as ApiReasonAndDetail } from "../../api/src/sessions/event-detail.ts";
import type { CreatedWebhookEndpoint as ApiCreatedEndpoint, WebhookEndpoint as ApiEndpoint, WebhookSecret as ApiSecret, TestEventResult as ApiTestEvent } from "../../api/src/http/webhook-endpoints.schemas.ts";
import type { AnyEventWithDeliveries, RefundEvent as ApiRefundEvent, SessionEvent, SessionEventWithDeliveries, SettlementAddressUpdatedEvent, WebhookAttempt as ApiAttempt, EventList } from "../../api/src/http/events.schemas.ts";
import type { SettlementAddress as ApiSettlement } from "../../api/src/http/settlement-addresses.schemas.ts";
import type { CreateRefundBody, Refund as ApiRefund, RefundBalance as ApiRefundBalance, RefundList } from "../../api/src/http/refunds.schemas.ts";
import type { CreateLinkBody, LinkList, PaymentLink as ApiPaymentLink } from "../../api/src/http/payment-links.schemas.ts";
import type { AutomaticReturnList, RefundSettings as ApiRefundSettings, RefundSettingsBody } from "../../api/src/http/auto-returns.schemas.ts";
import type * as Sdk from "./types.ts";
import type { ErrorCode as ApiErrorCode } from "../../api/src/errors.ts";

/** true only when A and B are the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Api<S extends TSchema> = Static<S>;

const checks = {
  errorCodes: true satisfies Same<ApiErrorCode, Sdk.ApiErrorCode>,
  details: true satisfies Same<{ [R in Sdk.EventReason]: ApiDetail<R> }, Sdk.EventDetails>,
  // Optional fields too (`Same` alone lets one side lack an optional field): method, payer, ….
  detailFields: true satisfies Same<{ [R in Sdk.EventReason]: Required<ApiDetail<R>> }, { [R in Sdk.EventReason]: Required<Sdk.EventDetails[R]> }>,
  reasonAndDetail: true satisfies Same<ApiReasonAndDetail, Sdk.ReasonAndDetail>,
  historyEntry: true satisfies Same<Api<typeof HistoryEntry>, Sdk.HistoryEntry>,
  eventData: true satisfies Same<Api<typeof SessionEvent>["data"], Sdk.PaymentSessionEventData>,
  session: true satisfies Same<Api<typeof MerchantSession>, Sdk.PaymentSession>,
  created: true satisfies Same<Api<typeof CreatedSession>, Sdk.CreatedPaymentSession>,
  endpoint: true satisfies Same<Api<typeof ApiEndpoint>, Sdk.WebhookEndpoint>,
  createdEndpoint: true satisfies Same<Api<typeof ApiCreatedEndpoint>, Sdk.CreatedWebhookEndpoint>,
  secret: true satisfies Same<Api<typeof ApiSecret>, Sdk.WebhookSecret>,
  testEvent: true satisfies Same<Api<typeof ApiTestEvent>, Sdk.TestEventResult>,
  event: true satisfies Same<Api<typeof SessionEvent>, Sdk.PaymentSessionEvent>,
  eventWithDeliveries: true satisfies Same<Api<typeof SessionEventWithDeliveries>, Sdk.PaymentSessionEventWithDeliveries>,
  accountEvent: true satisfies Same<Api<typeof SettlementAddressUpdatedEvent>, Sdk.SettlementAddressUpdatedEvent>,
  refundEvent: true satisfies Same<Api<typeof ApiRefundEvent>, Sdk.RefundEvent>,
  anyEventWithDeliveries: true satisfies Same<
    Api<typeof AnyEventWithDeliveries>,
    Sdk.PaymentSessionEventWithDeliveries | Sdk.RefundEventWithDeliveries | Sdk.SettlementAddressUpdatedEventWithDeliveries
  >,
  eventPage: true satisfies Same<Api<typeof EventList>, Sdk.Page<Sdk.PaymentSessionEvent | Sdk.RefundEvent>>,
  attempt: true satisfies Same<Api<typeof ApiAttempt>, Sdk.WebhookAttempt>,
  settlement: true satisfies Same<Api<typeof ApiSettlement>, Sdk.SettlementAddress>,
  sessionFields: true satisfies Same<Required<Api<typeof MerchantSession>>, Required<Sdk.PaymentSession>>,
  refund: true satisfies Same<Api<typeof ApiRefund>, Sdk.Refund>,
  refundPage: true satisfies Same<Api<typeof RefundList>, Sdk.Page<Sdk.Refund>>,
  createRefund: true satisfies Same<Required<Api<typeof CreateRefundBody>>, Required<Sdk.CreateRefundParams>>,
  refundBalance: true satisfies Same<Api<typeof ApiRefundBalance>, Sdk.RefundBalance>,
  refundSettings: true satisfies Same<Api<typeof ApiRefundSettings>, Sdk.RefundSettings>,
  refundSettingsBody: true satisfies Same<Api<typeof RefundSettingsBody>, Sdk.UpdateRefundSettingsParams>,
  paymentLink: true satisfies Same<Api<typeof ApiPaymentLink>, Sdk.PaymentLink>,
  paymentLinkPage: true satisfies Same<Api<typeof LinkList>, Sdk.Page<Sdk.PaymentLink>>,
  createPaymentLink: true satisfies Same<Required<Api<typeof CreateLinkBody>>, Required<Sdk.CreatePaymentLinkParams>>,
  automaticReturn: true satisfies Same<Api<typeof AutomaticReturnList>["data"][number], Sdk.AutomaticReturn>,
};

test("the client's types are the service's schemas (checked at compile time)", () => {
  expect(Object.values(checks).every((v) => v === true)).toBe(true);
});

/**
 * A merchant narrows an event by its reason: the detail is that reason's, and a field of another
 * reason's detail does not compile (each @ts-expect-error fails the type check if its line compiles).
 */
function overpaidSurplus(e: Sdk.PaymentSessionEvent): string | undefined {
  if (e.data.reason === "overpaid") return e.data.detail.overpaid;
  if (e.data.reason === "swept") {
    // @ts-expect-error -- `overpaid` is the funding payment's, not the sweep's
    return e.data.detail.overpaid;
  }
  // @ts-expect-error -- not narrowed: `overpaid` is not in every reason's detail
  return e.data.detail.overpaid;
}

/** How a session was paid, where the detail says it (events written before the field: undefined). */
function methodOf(h: Sdk.HistoryEntry): Sdk.PaymentMethod | undefined {
  if (h.reason === "paid" || h.reason === "swept" || h.reason === "paid_after_cancel" || h.reason === "funds_received") return h.detail.method;
  if (h.reason === "funds_settled") {
    // @ts-expect-error -- settled money says no method
    return h.detail.method;
  }
  return undefined;
}

function sweepOf(h: Sdk.HistoryEntry): string | undefined {
  if (h.reason === "swept") return h.detail.sweepTxHash;
  if (h.reason === "expired") {
    // @ts-expect-error -- an expiry has no detail fields
    return h.detail.sweepTxHash;
  }
  return undefined;
}

test("an event's detail narrows by its reason", () => {
  const base = { id: "evt_1", type: "payment_session.funded", createdAt: "2026-01-01T00:00:00.000Z" } as const;
  const session: Omit<Sdk.PaymentSessionEventData, "reason" | "detail"> = {
    paymentSessionId: "ps_1", status: "FUNDED", statusReason: "overpaid", amount: "1.00", currency: "USD", environment: "sandbox", merchantId: "mch_test_1",
    referenceId: null, metadata: {}, paymentLinkId: null, expiresAt: "", createdAt: "", updatedAt: "", networks: [], previousStatus: "PENDING", sequence: 2,
  };
  const detail = { chainId: 1, amount: "1500000", overpaid: "500000", txHashes: ["0xa"] };
  expect(overpaidSurplus({ ...base, data: { ...session, reason: "overpaid", detail } })).toBe("500000");
  expect(sweepOf({ sequence: 3, status: "SUCCEEDED", previousStatus: "FUNDED", at: "", reason: "swept", detail: { chainId: 1, sweepTxHash: "0xb" } })).toBe("0xb");
  expect(methodOf({ sequence: 3, status: "SUCCEEDED", previousStatus: "FUNDED", at: "", reason: "swept", detail: { chainId: 1, sweepTxHash: "0xb", method: "authorization" } })).toBe("authorization");
  expect(methodOf({ sequence: 2, status: "FUNDED", previousStatus: "PENDING", at: "", reason: "paid", detail })).toBeUndefined();
});
