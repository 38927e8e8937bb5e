/**
 * A refund create's body, its meaning checked (its shape is checked against the route's schema
 * first, http/refunds.schemas.ts): the amount "x.yy" to minor units, the token an address,
 * metadata within the sessions' limits. Pure.
 */
import { parseAmount } from "../../../shared/money.ts";
import { ApiError } from "../errors.ts";
import { checkMetadata } from "../sessions/create/input.ts";
import { checkAddressInput } from "../sessions/deposits.ts";
import type { RefundAsk, RefundReason } from "./logic.ts";
import { LINK_LIFETIME } from "./links.ts";

export interface CreateRefundBody {
  amount?: string;
  reason: RefundReason;
  chainId?: number;
  token?: string;
  metadata?: Record<string, string>;
  destination?: "link";
  requireApproval?: boolean;
  linkExpiresInSeconds?: number;
}

export interface RefundInput {
  ask: RefundAsk;
  reason: RefundReason;
  metadata: Record<string, string>;
  /** To a refund link (refunds/links.ts), with its lifetime and whether a claim waits for approval. */
  link?: { expiresInSeconds: number; requireApproval: boolean };
}

export function checkRefundInput(body: CreateRefundBody): RefundInput {
  const ask: RefundAsk = {};
  if (body.amount !== undefined) {
    const amount = parseAmount(body.amount);
    if (!amount.ok) {
      throw new ApiError(
        "amount_invalid",
        amount.problem === "zero" ? "amount must be greater than zero." : `amount must be a string with exactly two decimal places, such as "12.34"; got ${JSON.stringify(body.amount.slice(0, 40))}.`,
        "amount",
      );
    }
    ask.amountMinor = amount.minor;
  }
  if (body.chainId !== undefined) ask.chainId = body.chainId;
  if (body.token !== undefined) {
    const token = checkAddressInput(body.token);
    if (!token.ok) throw new ApiError(token.problem === "checksum" ? "address_checksum_invalid" : "parameter_invalid", token.problem === "checksum" ? undefined : "token must be a 0x address of 40 hex digits.", "token");
    ask.token = token.address.toLowerCase();
  }
  if (body.destination !== "link") {
    // Meaningless without a link: refused rather than ignored, so a forgotten `destination` is seen.
    for (const name of ["requireApproval", "linkExpiresInSeconds"] as const) {
      if (body[name] !== undefined) throw new ApiError("parameter_invalid", `${name} applies only to a refund with destination "link".`, name);
    }
    return { ask, reason: body.reason, metadata: checkMetadata(body.metadata) };
  }
  const link = { expiresInSeconds: body.linkExpiresInSeconds ?? LINK_LIFETIME.defaultSeconds, requireApproval: body.requireApproval ?? false };
  return { ask, reason: body.reason, metadata: checkMetadata(body.metadata), link };
}
