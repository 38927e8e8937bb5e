/**
 * Sandbox tool schemas (sandbox.ts): faucet, refund-balance funding, pay, fail-next-sweep.
 */
import { t } from "elysia";
import { JsonInteger } from "./schemas.ts";

export const FaucetBody = t.Object(
  {
    address: t.String({ maxLength: 64, description: "Who gets the TestUSD.", examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"] }),
    amount: t.Optional(t.String({ maxLength: 32, description: 'Default "100.00".', examples: ["100.00"] })),
    chainId: t.Optional(JsonInteger({ description: "A sandbox network with a faucet; default the local test network.", examples: [31337] })),
  },
  { additionalProperties: false },
);

export const SandboxPayBody = t.Object(
  {
    amount: t.Optional(t.String({ maxLength: 32, description: "Default: the session amount. More or less to over- or under-pay.", examples: ["12.34"] })),
    chainId: t.Optional(JsonInteger({ description: "One of the session's networks with a faucet; default the first.", examples: [31337] })),
  },
  { additionalProperties: false },
);

export const SandboxTransfer = t.Object({
  chainId: JsonInteger({ examples: [31337] }),
  txHash: t.String({ examples: ["0x9f…"] }),
  amountBaseUnits: t.String({ examples: ["12340000"] }),
});

export const FailNextSweepResult = t.Object({ paymentSessionId: t.String(), failNextSweep: t.Boolean() });

export const FundRefundBalanceBody = t.Object(
  {
    amount: t.Optional(t.String({ maxLength: 32, description: 'Default "100.00".', examples: ["100.00"] })),
    chainId: t.Optional(JsonInteger({ description: "A sandbox network with a faucet; default the local test network.", examples: [31337] })),
    token: t.Optional(t.String({ maxLength: 64, description: "The test stablecoin to mint (TestUSD or TestUSDT); default the network's main one (TestUSD)." })),
  },
  { additionalProperties: false },
);

export const FundedRefundBalance = t.Object({
  chainId: JsonInteger({ examples: [31337] }),
  txHash: t.String({ examples: ["0x9f…"] }),
  amountBaseUnits: t.String({ examples: ["100000000"] }),
  address: t.String({ description: "Your refund balance's address on that network (EIP-55).", examples: ["0x5FbDB2315678afecb367f032d93F642f64180aa3"] }),
  tokenAddress: t.String({ description: "The stablecoin minted (EIP-55)." }),
});
