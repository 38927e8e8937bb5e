/**
 * The event detail's one definition: a detail that does not fit its reason does not compile
 * where transitions and money events are built (each @ts-expect-error fails the type check,
 * `bun run typecheck`, if its line compiles), and the document's component has one variant per
 * reason, told apart by `reason`.
 */
import { expect, test } from "bun:test";
import { EVENT_REASONS } from "../../../shared/status.ts";
import type { Transition } from "./decide.ts";
import { EVENT_DETAILS, ReasonAndDetailSchema, type MoneyReasonAndDetail } from "./event-detail.ts";

test("a transition's detail is the one of its reason", () => {
  const paid: Transition = { to: "FUNDED", reason: "paid", detail: { chainId: 1, amount: "1000000", overpaid: "0", txHashes: ["0xa"] } };
  // @ts-expect-error -- a sweep's field in a payment's detail
  const wrongField: Transition = { to: "FUNDED", reason: "paid", detail: { chainId: 1, amount: "1000000", overpaid: "0", txHashes: [], sweepTxHash: "0xb" } };
  // @ts-expect-error -- amounts are decimal strings of base units, never numbers
  const wrongType: Transition = { to: "ERROR", reason: "reorged", detail: { chainId: 1, amount: 5 } };
  // @ts-expect-error -- an expiry says nothing
  const notEmpty: Transition = { to: "CANCELED", reason: "expired", detail: { chainId: 1 } };
  // @ts-expect-error -- a money event's status reason is added by the repository, not by its builder
  const money: MoneyReasonAndDetail = { reason: "funds_settled", detail: { chainId: 1, txHash: "0xc", amountBaseUnits: "1", statusReason: "swept" } };
  expect([paid, wrongField, wrongType, notEmpty, money].map((x) => x.reason)).toEqual(["paid", "paid", "reorged", "expired", "funds_settled"]);
});

test("one schema per reason, and the document's union has one variant per reason", () => {
  expect(Object.keys(EVENT_DETAILS).sort()).toEqual([...EVENT_REASONS].sort());
  const variants = (ReasonAndDetailSchema as unknown as { oneOf: { properties: { reason: { const: string } } }[]; discriminator: unknown }).oneOf;
  expect(variants.map((v) => v.properties.reason.const)).toEqual([...EVENT_REASONS]);
  expect((ReasonAndDetailSchema as unknown as { discriminator: unknown }).discriminator).toEqual({ propertyName: "reason" });
});
