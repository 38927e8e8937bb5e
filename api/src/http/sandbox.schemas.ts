/**
 * Sandbox tool schemas (sandbox.ts): faucet, pay, fail-next-sweep.
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
