/**
 * Settlement address schemas (settlement-addresses.ts).
 */
import { t } from "elysia";
import { JsonInteger } from "./schemas.ts";

export const SettlementAddressBody = t.Object(
  { address: t.String({ maxLength: 64, description: "0x-prefixed 20-byte address, any case.", examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] }) },
  { additionalProperties: false },
);

export const SettlementAddress = t.Object({
  chainId: JsonInteger({ examples: [8453] }),
  network: t.String({ examples: ["Base"] }),
  address: t.Union([t.String(), t.Null()], {
    description: "Where new sessions' funds settle on this network (EIP-55); null on a production network without one.",
    examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
  }),
  isDefault: t.Boolean({ description: "Sandbox: no address of yours is set here; funds settle to the server's default sandbox address." }),
  updatedAt: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const SettlementAddressList = t.Object({ data: t.Array(SettlementAddress) });
