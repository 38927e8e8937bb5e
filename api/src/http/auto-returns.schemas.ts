/**
 * Automatic returns schemas (auto-returns.ts; docs/refunds.md, "Automatic returns").
 */
import { t, type Static } from "elysia";
import { JsonInteger } from "./schemas.ts";

const delay = { minimum: 1, maximum: 2_592_000 };

export const RefundSettings = t.Object({
  automaticReturns: t.Boolean({ description: "Overpaid, late and underpaid money goes back by itself after `delaySeconds`. Off by default." }),
  delaySeconds: JsonInteger({ ...delay, description: "Default 86400 (24 h).", examples: [86400] }),
});

export const RefundSettingsBody = t.Object(
  {
    automaticReturns: t.Optional(t.Boolean()),
    delaySeconds: t.Optional(JsonInteger({ ...delay, examples: [86400] })),
  },
  { additionalProperties: false },
);

const AutomaticReturnObject = t.Object({
  automaticReturnId: t.String({ examples: ["ar_5tH2kQ9mXcV4bN7pL1sD8fGa"] }),
  chainId: JsonInteger({ examples: [8453] }),
  reason: t.Union([t.Literal("overpayment"), t.Literal("late_payment"), t.Literal("underpaid_expired")]),
  status: t.Union([t.Literal("scheduled"), t.Literal("refunded"), t.Literal("kept"), t.Literal("merchant_refunded"), t.Literal("skipped")], {
    description: "`refunded`: see `refundId`; `skipped`: see `outcome` (docs/refunds.md).",
  }),
  dueAt: t.String({ format: "date-time" }),
  refundId: t.Union([t.String(), t.Null()]),
  outcome: t.Union([t.String(), t.Null()]),
  createdAt: t.String({ format: "date-time" }),
  decidedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

// One component for the list and the keep's answer (the document stays small).
const AUTOMATIC_RETURN = "AutomaticReturn";
export const autoReturnComponents = { [AUTOMATIC_RETURN]: AutomaticReturnObject };
const AutomaticReturn = t.Unsafe<Static<typeof AutomaticReturnObject>>({ $ref: `#/components/schemas/${AUTOMATIC_RETURN}` });
export const AutomaticReturnList = t.Object({ data: t.Array(AutomaticReturn) });
