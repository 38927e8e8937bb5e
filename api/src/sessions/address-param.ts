/** An address as every route and action takes it, refused with the documented 400 (errors.ts). */
import type { Address } from "viem";
import { ApiError } from "../errors.ts";
import { checkAddressInput } from "./deposits.ts";

/**
 * An address parameter as every route takes it (checkAddressInput: any case, an EIP-55 checksum
 * when mixed): the address, or the documented 400 — `address_checksum_invalid` for a wrong
 * checksum, else `parameter_invalid`. `nonZero`: the zero address is refused too.
 */
export function addressParam(text: unknown, param: string, opts: { nonZero?: boolean } = {}): Address {
  const input = checkAddressInput(text);
  if (!input.ok && input.problem === "checksum") throw new ApiError("address_checksum_invalid", undefined, param);
  if (opts.nonZero && (!input.ok || /^0x0{40}$/i.test(input.address))) {
    throw new ApiError("parameter_invalid", `${param} must be a non-zero 0x-prefixed 20-byte address.`, param);
  }
  if (!input.ok) throw new ApiError("parameter_invalid", `${param} must be a 0x-prefixed 20-byte address.`, param);
  return input.address;
}
