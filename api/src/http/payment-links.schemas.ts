/** Payment link schemas (docs/payment-links.md): the create body, the link as the merchant sees it, lists. */
import { t } from "elysia";
import { ENVIRONMENTS } from "../../../shared/environment.ts";
import { METADATA_LIMITS } from "../sessions/create/input.ts";
import { LINK_LIMITS } from "../payment-links/rules.ts";
import { JsonInteger, literals } from "./schemas.ts";

const Amount = (description: string) => t.String({ description, examples: ["25.00"], maxLength: 32 });

export const CreateLinkBody = t.Object(
  {
    amount: t.Optional(Amount("A fixed price, two decimal places (within SERVICE_MIN_AMOUNT..SERVICE_MAX_AMOUNT). Or send minAmount and maxAmount instead: the payer types the amount.")),
    minAmount: t.Optional(Amount("With maxAmount, instead of amount: the least the payer may type.")),
    maxAmount: t.Optional(Amount("With minAmount: the most the payer may type.")),
    currency: t.Optional(t.String({ description: "Currency code. Supported: USD (the default).", examples: ["USD"], maxLength: 16 })),
    description: t.String({ minLength: 1, maxLength: LINK_LIMITS.descriptionLength, description: "What is paid for, shown to the payer on the link's page.", examples: ["Invoice 2026-114: logo design"] }),
    maxUses: t.Optional(
      JsonInteger({
        minimum: 1,
        maximum: LINK_LIMITS.maxUses,
        description: "How many sessions the link may have that did not end CANCELED (paid, or still payable). An unpaid session that expires gives its use back. Absent: no limit.",
        examples: [1],
      }),
    ),
    expiresAt: t.Optional(t.String({ maxLength: 40, description: "A date-time (RFC 3339) after which the page starts no session. At least a minute ahead, at most ten years.", examples: ["2027-01-31T23:59:59Z"] })),
    redirectUrl: t.Optional(
      t.String({
        maxLength: LINK_LIMITS.redirectUrlLength,
        description: "Where the payer goes once the session is paid, with `?paymentSessionId=…` added. https:// (in sandbox also http://localhost and http://127.0.0.1). Absent: a receipt page.",
        examples: ["https://example.com/thanks"],
      }),
    ),
    metadata: t.Optional(
      t.Record(t.String(), t.String({ maxLength: METADATA_LIMITS.valueLength }), {
        description: `Copied into the metadata of every session the link starts (at most ${METADATA_LIMITS.keys} keys). Never shown to the payer.`,
        examples: [{ invoice: "2026-114" }],
      }),
    ),
  },
  { additionalProperties: false },
);

const Money = t.Union([t.String({ examples: ["25.00"] }), t.Null()]);

export const PaymentLink = t.Object({
  paymentLinkId: t.String({ examples: ["plink_V1StGXR8Z5jdHi6BmyT2kq4e"] }),
  url: t.String({ description: "The link's page: send it to the payer, print it as a QR code.", examples: ["https://pay.example.com/pay/plink_V1StGXR8Z5jdHi6BmyT2kq4e"] }),
  status: literals(["active", "inactive", "expired", "used_up"] as const),
  amount: t.Union([t.String({ examples: ["25.00"] }), t.Null()], { description: "The fixed price; null when the payer chooses within minAmount..maxAmount." }),
  minAmount: Money,
  maxAmount: Money,
  currency: t.String({ examples: ["USD"] }),
  description: t.String(),
  maxUses: t.Union([JsonInteger(), t.Null()]),
  uses: JsonInteger({ description: "Sessions the link started that did not end CANCELED." }),
  expiresAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
  redirectUrl: t.Union([t.String(), t.Null()]),
  metadata: t.Record(t.String(), t.String()),
  environment: literals(ENVIRONMENTS),
  createdAt: t.String({ format: "date-time" }),
  deactivatedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const LinkList = t.Object({
  data: t.Array(PaymentLink),
  hasMore: t.Boolean(),
  nextCursor: t.Union([t.String(), t.Null()], { description: "Pass as startingAfter to get the next page." }),
});

export const LinkListQuery = t.Object({
  limit: t.Optional(t.String({ pattern: "^[0-9]{1,3}$", description: "1 to 100, default 20." })),
  startingAfter: t.Optional(t.String({ description: "A paymentLinkId: the page after it." })),
});
