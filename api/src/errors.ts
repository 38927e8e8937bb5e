/**
 * The one error catalogue. Every error the API returns has the shape
 *   { "error": { "type", "code", "message", "param"?, "requestId" } }
 * and a code from this table; docs/merchant-guide.md ("Errors") and Swagger list the same table. Adding a code
 * here is the only way to add an error.
 */

import { BaseError } from "../../shared/base-error.ts";

export const ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "conflict_error",
  "idempotency_error",
  "rate_limit_error",
  "api_error",
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

interface CatalogueEntry {
  status: number;
  type: ErrorType;
  message: string;
}

export const ERROR_CATALOGUE = {
  // The request itself
  body_malformed: { status: 400, type: "invalid_request_error", message: "The request body is not valid JSON." },
  body_not_object: { status: 400, type: "invalid_request_error", message: "The request body must be a JSON object." },
  body_too_large: { status: 413, type: "invalid_request_error", message: "The request body is larger than 64 KB." },
  content_type_unsupported: {
    status: 415,
    type: "invalid_request_error",
    message: "Send the request body as JSON with the header Content-Type: application/json.",
  },
  parameter_missing: { status: 400, type: "invalid_request_error", message: "A required parameter is missing." },
  parameter_invalid: { status: 400, type: "invalid_request_error", message: "A parameter has an invalid value." },
  parameter_unknown: { status: 400, type: "invalid_request_error", message: "The request has a parameter this endpoint does not take." },
  amount_invalid: {
    status: 400,
    type: "invalid_request_error",
    message: 'amount must be a string with exactly two decimal places, greater than zero, such as "12.34".',
  },
  amount_too_small: { status: 400, type: "invalid_request_error", message: "amount is below the minimum." },
  amount_too_large: { status: 400, type: "invalid_request_error", message: "amount is above the maximum." },
  currency_unsupported: { status: 400, type: "invalid_request_error", message: "currency is not supported." },
  idempotency_key_invalid: {
    status: 400,
    type: "invalid_request_error",
    message: "Idempotency-Key must be 1 to 255 printable ASCII characters.",
  },
  address_checksum_invalid: {
    status: 400,
    type: "invalid_request_error",
    message: "The address has mixed-case letters but its EIP-55 checksum is wrong: check it for a typo, or send it all lowercase.",
  },
  url_invalid: {
    status: 400,
    type: "invalid_request_error",
    message: "url must be an absolute https:// URL (http:// only in sandbox) without user name, password or fragment.",
  },
  redirect_url_invalid: {
    status: 400,
    type: "invalid_request_error",
    message: "redirectUrl must be an absolute https:// URL (in sandbox also http://localhost or http://127.0.0.1) without user name or password.",
  },
  url_https_required: { status: 400, type: "invalid_request_error", message: "Production webhook URLs must use https://." },
  url_address_forbidden: {
    status: 400,
    type: "invalid_request_error",
    message: "The webhook URL's host is or resolves to an address webhooks may not go to (private, loopback, link-local, metadata, …).",
  },
  url_unresolvable: { status: 400, type: "invalid_request_error", message: "The webhook URL's host does not resolve to an address." },
  route_not_found: { status: 404, type: "not_found_error", message: "No such endpoint." },
  method_not_allowed: { status: 405, type: "invalid_request_error", message: "This endpoint does not take that method." },

  // Credentials
  credentials_missing: {
    status: 401,
    type: "authentication_error",
    message: "Send your credential in the Authorization header: Bearer <credential>.",
  },
  credentials_malformed: {
    status: 401,
    type: "authentication_error",
    message: "The Authorization header does not hold a credential of ours (sk_test_…, sk_live_…, pst_test_… or pst_live_…).",
  },
  api_key_required: {
    status: 401,
    type: "authentication_error",
    message: "This endpoint takes a secret API key (sk_…), not a session token.",
  },
  session_token_required: {
    status: 401,
    type: "authentication_error",
    message: "This endpoint takes a payment session token (pst_…), not an API key. Never send API keys from a browser.",
  },
  api_key_invalid: { status: 401, type: "authentication_error", message: "The API key is not valid." },
  api_key_revoked: { status: 401, type: "authentication_error", message: "The API key was revoked." },
  api_key_expired: { status: 401, type: "authentication_error", message: "The API key has expired. Create a new one in the dashboard (Settings, API keys)." },
  session_token_invalid: { status: 401, type: "authentication_error", message: "The session token is not valid." },
  session_token_expired: { status: 401, type: "authentication_error", message: "The session token has expired." },
  metrics_token_invalid: { status: 401, type: "authentication_error", message: "The metrics token is not valid (SERVICE_METRICS_TOKEN)." },
  environment_mismatch: {
    status: 403,
    type: "permission_error",
    message: "This credential belongs to the other environment's base address.",
  },
  pay_to_other_account: {
    status: 403,
    type: "permission_error",
    message: "payTo is another account's settlement address: this key pays only its own account's.",
  },
  api_key_scope_missing: {
    status: 403,
    type: "permission_error",
    message: "This API key lacks the scope this endpoint takes.",
  },
  session_token_mismatch: {
    status: 403,
    type: "permission_error",
    message: "The session token belongs to a different payment session.",
  },

  // Resources and state
  resource_not_found: { status: 404, type: "not_found_error", message: "No such resource." },
  settlement_address_missing: {
    status: 409,
    type: "conflict_error",
    message: "The account has no settlement address for this environment: set one with PUT /settlement-addresses/{chainId} before creating production sessions.",
  },
  session_not_pending: { status: 409, type: "conflict_error", message: "Only a PENDING payment session can do that." },
  session_finished: {
    status: 409,
    type: "conflict_error",
    message: "The payment session has finished (SUCCEEDED, CANCELED or ERROR); only a PENDING or FUNDED session can do that.",
  },
  faucet_unavailable: { status: 409, type: "conflict_error", message: "This network has no faucet here: its test stablecoin is not ours to mint." },
  session_not_cancelable: { status: 409, type: "conflict_error", message: "The payment session can no longer be canceled." },
  webhook_endpoint_limit_reached: {
    status: 409,
    type: "conflict_error",
    message: "This account already has the most webhook endpoints allowed in this environment (16).",
  },
  webhook_endpoint_disabled: { status: 409, type: "conflict_error", message: "The webhook endpoint is disabled; enable it first." },
  no_webhook_endpoint: { status: 409, type: "conflict_error", message: "There is no enabled webhook endpoint in this environment to deliver to." },
  // Paying by a signed EIP-3009 authorization (POST /api/payment-sessions/authorizations)
  gasless_unavailable: {
    status: 409,
    type: "conflict_error",
    message: "Paying by signed authorization is not available for this payment session on that network (switched off here, or the token has no EIP-3009).",
  },
  authorization_signature_invalid: {
    status: 400,
    type: "invalid_request_error",
    message: "signature is not from's signature of the session's TransferWithAuthorization on that network's token.",
  },
  authorization_recipient_mismatch: {
    status: 400,
    type: "invalid_request_error",
    message: "to must be the session's settlement address on that network (the payer view's gasless.message.to).",
  },
  authorization_value_mismatch: { status: 400, type: "invalid_request_error", message: "value must be the session's amount in the token's base units." },
  authorization_window_mismatch: {
    status: 400,
    type: "invalid_request_error",
    message: "validAfter must be 0 and validBefore the session's expiry in unix seconds (the payer view's gasless.message).",
  },
  authorization_nonce_mismatch: {
    status: 400,
    type: "invalid_request_error",
    message: "nonce must be this payment session's nonce (the payer view's gasless.message.nonce); a nonce of another session is never accepted.",
  },
  authorization_expired: {
    status: 409,
    type: "conflict_error",
    message: "The payment session expires in under 30 seconds, or has expired: an authorization could no longer be carried out in time.",
  },
  authorization_insufficient_balance: { status: 409, type: "conflict_error", message: "from holds less of the token than the session's amount." },
  authorization_nonce_used: { status: 409, type: "conflict_error", message: "from has already used or canceled this session's nonce on the token." },
  authorization_rejected: { status: 409, type: "conflict_error", message: "The token refused the transfer when it was simulated; nothing was recorded." },
  authorization_exists: { status: 409, type: "conflict_error", message: "The payment session already has a different authorization recorded." },
  // Refunds (docs/refunds.md)
  session_not_refundable: {
    status: 409,
    type: "conflict_error",
    message: "The payment session has received no money that can be refunded.",
  },
  refund_exceeds_refundable: {
    status: 409,
    type: "conflict_error",
    message: "The amount is above what is left to refund of this payment session (what it received, less its refunds that are not CANCELED or FAILED).",
  },
  refund_not_cancelable: { status: 409, type: "conflict_error", message: "Only a PENDING refund can be canceled: this one was sent, or has finished." },
  refund_not_approvable: {
    status: 409,
    type: "conflict_error",
    message: "Only a refund whose link was claimed and that waits for your approval (awaiting_approval) can be approved.",
  },
  refund_wallet_payment_invalid: {
    status: 400,
    type: "invalid_request_error",
    message: "The wallet's authorization or transaction does not pay exactly this refund from the session's settlement address.",
  },
  refund_not_payable_from_wallet: {
    status: 409,
    type: "conflict_error",
    message: "This refund does not wait for the merchant's wallet: it is paid from the refund balance, was paid already, or is no longer PENDING.",
  },
  // Payment links (docs/payment-links.md): why a link's page starts no session
  payment_link_inactive: { status: 409, type: "conflict_error", message: "The payment link was deactivated: it starts no more payments." },
  payment_link_expired: { status: 409, type: "conflict_error", message: "The payment link has expired: it starts no more payments." },
  payment_link_used_up: {
    status: 409,
    type: "conflict_error",
    message: "The payment link has been used as many times as it allows (maxUses): it starts no more payments.",
  },
  idempotency_key_reused: {
    status: 422,
    type: "idempotency_error",
    message: "This Idempotency-Key was used with a different request. Use a new key for a new request.",
  },
  rate_limited: { status: 429, type: "rate_limit_error", message: "Too many requests with this API key. Retry after the time in Retry-After." },

  // Ours
  internal_error: { status: 500, type: "api_error", message: "Something went wrong on our side. The request may be retried." },
  network_unavailable: { status: 503, type: "api_error", message: "No network is enabled, or ready, for this environment on this server." },
  service_unavailable: { status: 503, type: "api_error", message: "The service is not ready. Retry shortly." },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/**
 * A refusal the API answers. Its `message` is what the answer says (BaseError keeps the short
 * message as the message); `cause`, when a refusal stands for a failure caught below (a webhook
 * URL's TargetError, the database away), is kept for the log and never answered.
 */
export class ApiError extends BaseError {
  override name = "ApiError";
  readonly status: number;
  readonly type: ErrorType;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly param?: string,
    readonly headers?: Record<string, string>,
    opts: { cause?: unknown } = {},
  ) {
    const entry: CatalogueEntry = ERROR_CATALOGUE[code];
    super(message ?? entry.message, opts);
    this.status = entry.status;
    this.type = entry.type;
  }
}

export interface ErrorBody {
  error: { type: ErrorType; code: ErrorCode; message: string; param?: string; requestId: string };
}

export function errorBody(err: ApiError, requestId: string): ErrorBody {
  return {
    error: {
      type: err.type,
      code: err.code,
      message: err.message,
      ...(err.param !== undefined ? { param: err.param } : {}),
      requestId,
    },
  };
}
