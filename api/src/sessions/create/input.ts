/**
 * The meaning checks of a create request, after its shape was validated against
 * CreateSessionBody: amount bounds, currency, metadata limits, expiry bounds. Pure.
 */
import { ApiError } from "../../errors.ts";
import { formatAmount, isSupportedCurrency, parseAmount, SUPPORTED_CURRENCIES, type Currency } from "../../../../shared/money.ts";

export interface CreateSessionBody {
  amount: string;
  currency: string;
  metadata?: Record<string, string>;
  referenceId?: string;
  expiresInSeconds?: number;
}

export interface CreateSessionInput {
  amountMinor: bigint;
  currency: Currency;
  metadata: Record<string, string>;
  referenceId: string | null;
  expiresInSeconds: number;
}

export interface CreateLimits {
  minAmountMinor: bigint;
  maxAmountMinor: bigint;
  defaultExpirySeconds: number;
  minExpirySeconds: number;
  maxExpirySeconds: number;
}

export const METADATA_LIMITS = { keys: 20, keyLength: 40, valueLength: 500 } as const;

export function checkCreateInput(body: CreateSessionBody, limits: CreateLimits): CreateSessionInput {
  const amount = parseAmount(body.amount);
  if (!amount.ok) {
    throw new ApiError(
      "amount_invalid",
      amount.problem === "zero"
        ? "amount must be greater than zero."
        : `amount must be a string with exactly two decimal places, such as "12.34"; got ${JSON.stringify(body.amount.slice(0, 40))}.`,
      "amount",
    );
  }
  if (amount.minor < limits.minAmountMinor) {
    throw new ApiError("amount_too_small", `amount must be at least ${formatAmount(limits.minAmountMinor)}.`, "amount");
  }
  if (amount.minor > limits.maxAmountMinor) {
    throw new ApiError("amount_too_large", `amount must be at most ${formatAmount(limits.maxAmountMinor)}.`, "amount");
  }
  const currency = body.currency.toUpperCase();
  if (!isSupportedCurrency(currency)) {
    throw new ApiError(
      "currency_unsupported",
      `currency ${JSON.stringify(body.currency.slice(0, 10))} is not supported; supported: ${SUPPORTED_CURRENCIES.join(", ")}.`,
      "currency",
    );
  }
  const metadata = checkMetadata(body.metadata);
  const expiresInSeconds = body.expiresInSeconds ?? limits.defaultExpirySeconds;
  if (expiresInSeconds < limits.minExpirySeconds || expiresInSeconds > limits.maxExpirySeconds) {
    throw new ApiError(
      "parameter_invalid",
      `expiresInSeconds must be between ${limits.minExpirySeconds} and ${limits.maxExpirySeconds}.`,
      "expiresInSeconds",
    );
  }
  return {
    amountMinor: amount.minor,
    currency,
    metadata,
    referenceId: body.referenceId ?? null,
    expiresInSeconds,
  };
}

/** Metadata within METADATA_LIMITS (the schema checks each value's type): sessions' and refunds'. */
export function checkMetadata(given: Record<string, string> | undefined): Record<string, string> {
  const metadata = given ?? {};
  const keys = Object.keys(metadata);
  if (keys.length > METADATA_LIMITS.keys) {
    throw new ApiError("parameter_invalid", `metadata may hold at most ${METADATA_LIMITS.keys} keys.`, "metadata");
  }
  for (const k of keys) {
    if (k.length === 0 || k.length > METADATA_LIMITS.keyLength) {
      throw new ApiError("parameter_invalid", `metadata keys must be 1 to ${METADATA_LIMITS.keyLength} characters.`, "metadata");
    }
    if (metadata[k]!.length > METADATA_LIMITS.valueLength) {
      throw new ApiError("parameter_invalid", `metadata values must be at most ${METADATA_LIMITS.valueLength} characters.`, `metadata.${k}`);
    }
  }
  return metadata;
}
