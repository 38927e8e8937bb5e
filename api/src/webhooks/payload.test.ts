import { expect, test } from "bun:test";
import type { SessionRow } from "../sessions/views.ts";
import { buildEvent, eventType } from "./payload.ts";

const session: SessionRow = {
  id: "ps_V1StGXR8Z5jdHi6BmyT2kq4e",
  merchantId: "acct_x",
  environment: "sandbox",
  status: "SUCCEEDED",
  statusReason: "swept",
  amountMinor: 1234n,
  currency: "USD",
  referenceId: "order_1",
  metadata: { orderId: "1" },
  expiresAt: new Date("2026-01-01T00:30:00Z"),
  tokenHash: "secret-hash",
  tokenExpiresAt: new Date("2026-01-01T01:30:00Z"),
  sequence: 3,
  wakeAt: null,
  fundingChainId: 1,
  fundingAmount: "12340000",
  forceSweepFailure: false,
  createdAt: new Date("2026-01-01T00:00:00Z"),
  updatedAt: new Date("2026-01-01T00:20:00Z"),
};

test("an event carries the session as of that event, with previousStatus, reason and sequence", () => {
  const deposit = { chainId: 8453, address: "0xdd", tokenAddress: "0x83", decimals: 6, requiredBaseUnits: "12340000", confirmations: 10 };
  const e = buildEvent(session, "mch_test_abc", [deposit], {
    id: "evt_1",
    sequence: 2,
    status: "FUNDED",
    previousStatus: "PENDING",
    reason: "paid",
    detail: { txHash: "0xabc" },
    createdAt: new Date("2026-01-01T00:10:00Z"),
  });
  expect(e).toEqual({
    id: "evt_1",
    type: "payment_session.funded",
    createdAt: "2026-01-01T00:10:00.000Z",
    data: {
      paymentSessionId: "ps_V1StGXR8Z5jdHi6BmyT2kq4e",
      status: "FUNDED",
      statusReason: "paid",
      amount: "12.34",
      currency: "USD",
      environment: "sandbox",
      merchantId: "mch_test_abc",
      referenceId: "order_1",
      metadata: { orderId: "1" },
      expiresAt: "2026-01-01T00:30:00.000Z",
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:10:00.000Z",
      networks: [
        { chainId: 8453, network: "Base", tokenAddress: "0x83", tokenSymbol: "USDC", decimals: 6, depositAddress: "0xdd", amountBaseUnits: "12340000", confirmations: 10 },
      ],
      previousStatus: "PENDING",
      reason: "paid",
      sequence: 2,
      detail: { txHash: "0xabc" },
    },
  });
  expect(JSON.stringify(e)).not.toContain("secret-hash");
});

test("one event type per status", () => {
  expect(["PENDING", "FUNDED", "SUCCEEDED", "CANCELED", "ERROR"].map((s) => eventType(s as never))).toEqual([
    "payment_session.pending",
    "payment_session.funded",
    "payment_session.succeeded",
    "payment_session.canceled",
    "payment_session.error",
  ]);
});
