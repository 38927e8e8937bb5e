/**
 * Schemas of what the payer's checkout reads and calls with the session token: the payer's
 * session view (GET /api/payment-sessions) and the sandbox helpers under /api/sandbox/.
 */
import { t } from "elysia";
import { NetworkToken, PublicSession } from "./payment-sessions.schemas.ts";
import { JsonInteger } from "./schemas.ts";
import { GaslessOffer } from "./authorizations.schemas.ts";

const PayerNetwork = t.Object({
  chainId: JsonInteger({ examples: [31337] }),
  network: t.String(),
  tokenAddress: t.String(),
  tokenSymbol: t.String(),
  decimals: JsonInteger(),
  depositAddress: t.String({ description: "The session's one-time address on this network: pay the amount of the token here." }),
  amountBaseUnits: t.String({ description: "The amount in the token's base units." }),
  confirmations: JsonInteger({ description: "Blocks after which a payment counts." }),
  tokens: t.Array(NetworkToken, { description: "Every stablecoin the session accepts on this network, the main one first: the payer may pay in any, or several." }),
  rpcUrl: t.Union([t.String(), t.Null()], {
    description: "The RPC address a wallet is given to add this network (`SERVICE_PUBLIC_RPC_URL_<KEY>`); null: the wallet must know it already.",
  }),
  nativeCurrency: t.Object({ name: t.String(), symbol: t.String(), decimals: JsonInteger() }),
  explorerUrl: t.Union([t.String(), t.Null()]),
  gasless: t.Union([GaslessOffer, t.Null()], {
    description: "What to sign to pay without gas coin (POST /api/payment-sessions/authorizations); null: not offered on this network (switched off, the token has no EIP-3009, or the session is no longer payable that way).",
  }),
});

export const PayerSession = t.Composite(
  [
    t.Omit(PublicSession, ["networks"]),
    t.Object({
      statusReason: t.String({ description: "Why the session has its status (`created`, `paid`, `expired`, `canceled_by_payer`, `underpaid`, `paid_after_cancel`, …)." }),
      merchantId: t.String({ description: "The merchant's public id in the session's environment (the SDK checks it against the one it was initialised with)." }),
      tokenExpiresAt: t.String({ format: "date-time" }),
      networks: t.Array(PayerNetwork),
      payments: t.Array(
        t.Object({
          chainId: JsonInteger(),
          txHash: t.String(),
          amountBaseUnits: t.String(),
          confirmations: JsonInteger({ description: "Blocks on top of the payment's, its own included; 0: not in an indexed block yet." }),
          method: t.Union([t.Literal("transfer"), t.Literal("authorization")], {
            description: "`transfer`: sent to the deposit address; `authorization`: the payer's signed authorization carried out, straight to the settlement address.",
          }),
          payer: t.Union([t.String(), t.Null()], { description: "The address the money came from (EIP-55 checksum); null when the index does not say." }),
          token: t.Union([t.String(), t.Null()], { description: "The stablecoin paid (EIP-55 checksum); `amountBaseUnits` is in the network's `decimals`. Null when the index does not say." }),
        }),
        { description: "Payments seen on-chain, oldest first: transfers into the session's deposit addresses and payments by authorization." },
      ),
    }),
  ],
  { description: "The payer's view of the token's session: the public view plus what the checkout needs to guide and follow a payment." },
);

export const PayerFaucetBody = t.Object(
  {
    address: t.String({ maxLength: 64, description: "The payer's wallet address.", examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] }),
    chainId: t.Optional(JsonInteger({ description: "One of the session's networks with a faucet (default: the first)." })),
    tokenAddress: t.Optional(
      t.String({
        maxLength: 64,
        description: "The stablecoin to mint: one the session accepts on that network (`networks[].tokens`), default the main one.",
        examples: ["0xb18f89E5E0ECA73D3da7a8E327F5EAd35955a8f9"],
      }),
    ),
  },
  { additionalProperties: false },
);

export const PayerPayBody = t.Object(
  { chainId: t.Optional(JsonInteger({ description: "One of the session's networks with a faucet (default: the first)." })) },
  { additionalProperties: false },
);

export const PayerSandboxTransfer = t.Object({
  chainId: JsonInteger(),
  tokenAddress: t.Optional(t.String({ description: "The faucet: the stablecoin minted (EIP-55)." })),
  txHash: t.String(),
  amountBaseUnits: t.String({ description: "Test stablecoin sent, in that token's base units." }),
  gasTopUpWei: t.Optional(t.String({ description: "Native coin given for gas (local networks only), in wei; \"0\" when the address had enough." })),
});
