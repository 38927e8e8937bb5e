/**
 * Webhook endpoint schemas (webhook-endpoints.ts): bodies, the endpoint, its secret, the test event.
 */
import { t } from "elysia";
import { ENVIRONMENTS } from "../../../shared/environment.ts";
import { WebhookAttempt } from "./events.schemas.ts";
import { literals, JsonInteger } from "./schemas.ts";

export const CreateWebhookEndpointBody = t.Object(
  {
    url: t.String({
      maxLength: 2048,
      description: "Where events are POSTed. Production: https:// to a public address. Sandbox: http:// and localhost allowed too.",
      examples: ["https://example.com/webhooks/paysession"],
    }),
    description: t.Optional(t.String({ maxLength: 256, description: "Your note about this endpoint.", examples: ["Orders service"] })),
    enabled: t.Optional(t.Boolean({ description: "Default true." })),
  },
  { additionalProperties: false },
);

export const UpdateWebhookEndpointBody = t.Object(
  {
    url: t.Optional(t.String({ maxLength: 2048, description: "A new URL; checked like on creation." })),
    description: t.Optional(t.String({ maxLength: 256, description: "A new description; an empty string clears it." })),
    enabled: t.Optional(
      t.Boolean({ description: "false stops deliveries (queued ones are canceled); true resumes with the next event and clears disabledReason." }),
    ),
  },
  { additionalProperties: false },
);

export const RotateSecretBody = t.Object(
  {
    overlapSeconds: t.Optional(
      JsonInteger({
        minimum: 0,
        maximum: 604800,
        description: "How long the old secret stays valid (deliveries carry both signatures meanwhile). Default 86400 (24 h); 0 drops it at once.",
        examples: [86400],
      }),
    ),
  },
  { additionalProperties: false },
);

const endpointFields = {
  id: t.String({ examples: ["whe_V1StGXR8Z5jdHi6BmyT2kq4e"] }),
  url: t.String({ examples: ["https://example.com/webhooks/paysession"] }),
  description: t.Union([t.String(), t.Null()]),
  enabled: t.Boolean(),
  disabledReason: t.Union([t.Literal("gone"), t.Null()], { description: '"gone": disabled because it answered 410 Gone.' }),
  environment: literals(ENVIRONMENTS),
  previousSecretExpiresAt: t.Union([t.String({ format: "date-time" }), t.Null()], {
    description: "While a rotated-out secret is still valid: until when. Deliveries carry a signature with each.",
  }),
  createdAt: t.String({ format: "date-time" }),
  updatedAt: t.String({ format: "date-time" }),
};

export const WebhookEndpoint = t.Object(endpointFields);

export const CreatedWebhookEndpoint = t.Object({
  ...endpointFields,
  secret: t.String({ description: "The signing secret (Standard Webhooks). Also at GET /webhook-endpoints/{id}/secret.", examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"] }),
});

export const WebhookEndpointList = t.Object({ data: t.Array(WebhookEndpoint) });

export const DeletedWebhookEndpoint = t.Object({ id: t.String(), deleted: t.Literal(true) });

export const WebhookSecret = t.Object({
  secret: t.String({ examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"] }),
  previousSecretExpiresAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const TestEventResult = t.Object({
  event: t.Object({
    id: t.String(),
    type: t.Literal("webhook.test"),
    createdAt: t.String({ format: "date-time" }),
    data: t.Object({ webhookEndpointId: t.String(), environment: literals(ENVIRONMENTS), message: t.String() }),
  }),
  attempt: WebhookAttempt,
});
