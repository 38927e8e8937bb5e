import { getAddress } from "viem";
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
  paymentLinkId: "plink_V1StGXR8Z5jdHi6BmyT2kq4e",
};

test("an event carries the session as of that event, with previousStatus, reason and sequence", () => {
  // Stored lowercase; the event gives them in EIP-55 form.
  const deposit = {
    chainId: 8453,
    address: "0x5b3a7c56f4ef1a1c2f0b6fc1d1d59d5f1f4f8e3a",
    tokenAddress: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
    settlementAddress: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    decimals: 6,
    requiredBaseUnits: "12340000",
    confirmations: 10,
  };
  const e = buildEvent(session, "mch_test_abc", [deposit], {
    id: "evt_1",
    sequence: 2,
    status: "FUNDED",
    previousStatus: "PENDING",
    reason: "paid",
    detail: { chainId: 8453, amount: "12340000", overpaid: "0", txHashes: ["0xabc"] },
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
      paymentLinkId: "plink_V1StGXR8Z5jdHi6BmyT2kq4e",
      expiresAt: "2026-01-01T00:30:00.000Z",
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:10:00.000Z",
      networks: [
        {
          chainId: 8453,
          network: "Base",
          tokenAddress: getAddress(deposit.tokenAddress),
          tokenSymbol: "USDC",
          decimals: 6,
          depositAddress: getAddress(deposit.address),
          amountBaseUnits: "12340000",
          confirmations: 10,
          tokens: [{ tokenAddress: getAddress(deposit.tokenAddress), tokenSymbol: "USDC", decimals: 6, amountBaseUnits: "12340000" }],
          settlementAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        },
      ],
      previousStatus: "PENDING",
      reason: "paid",
      sequence: 2,
      detail: { chainId: 8453, amount: "12340000", overpaid: "0", txHashes: ["0xabc"] },
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
