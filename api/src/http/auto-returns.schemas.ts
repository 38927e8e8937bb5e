/**
 * Automatic returns schemas (auto-returns.ts; docs/refunds.md, "Automatic returns").
 */
import { t } from "elysia";
import { JsonInteger } from "./schemas.ts";

const delay = { minimum: 1, maximum: 2_592_000 };

export const RefundSettings = t.Object({
  automaticReturns: t.Boolean({ description: "Whether money that arrived when it should not have (an overpayment's excess, a late payment, what an underpaid session received) goes back to the payer by itself after `delaySeconds`. Off by default." }),
  delaySeconds: JsonInteger({ ...delay, description: "How long such money waits for you to act (refund it yourself, or keep it) before it goes back. Default 86400 (24 h).", examples: [86400] }),
});

export const RefundSettingsBody = t.Object(
  {
    automaticReturns: t.Optional(t.Boolean({ description: "On or off, for money that arrives from now on (and, when off, for returns still waiting)." })),
    delaySeconds: t.Optional(JsonInteger({ ...delay, description: "1 to 2592000 (30 days), for money that arrives from now on.", examples: [86400] })),
  },
  { additionalProperties: false },
);

export const AutomaticReturn = t.Object({
  automaticReturnId: t.String({ examples: ["ar_5tH2kQ9mXcV4bN7pL1sD8fGa"] }),
  chainId: JsonInteger({ examples: [8453] }),
  reason: t.Union([t.Literal("overpayment"), t.Literal("late_payment"), t.Literal("underpaid_expired")]),
  status: t.Union([t.Literal("scheduled"), t.Literal("refunded"), t.Literal("kept"), t.Literal("merchant_refunded"), t.Literal("skipped")], {
    description: "`scheduled`: waits until `dueAt`; `refunded`: its refund is `refundId`; `kept`: you kept the money; `merchant_refunded`: you refunded the session first; `skipped`: `outcome` says why (`disabled`, `nothing_to_return`, `amount_too_large`, …).",
  }),
  dueAt: t.String({ format: "date-time" }),
  refundId: t.Union([t.String(), t.Null()]),
  outcome: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
  decidedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const AutomaticReturnList = t.Object({ data: t.Array(AutomaticReturn) });
