/**
 * `bun examples/x402-api/pay.ts` — an agent paying the API: @x402/fetch with a viem account.
 * PAYER_PRIVATE_KEY (a wallet holding the stablecoin; no gas coin needed), X402_API_URL
 * (default http://127.0.0.1:4200), X402_MAX_BASE_UNITS (the most it pays for one request,
 * default 1000000: $1 at 6 decimals).
 */
import { privateKeyToAccount } from "viem/accounts";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";

const key = process.env.PAYER_PRIVATE_KEY as `0x${string}` | undefined;
if (!key) {
  console.error("PAYER_PRIVATE_KEY is not set (in the sandbox: POST /sandbox/faucet sends TestUSD to its address)");
  process.exit(1);
}
const account = privateKeyToAccount(key);
const max = BigInt(process.env.X402_MAX_BASE_UNITS ?? "1000000");
const client = x402Client.fromConfig({
  schemes: [{ network: "eip155:*", client: new ExactEvmScheme(account) }],
  // The sandbox's TestUSD is no default asset of the x402 packages: allow any asset, and cap
  // what one request may cost with a policy of our own.
  spendControls: { allowedAssets: true },
  policies: [(_version, options) => options.filter((r) => BigInt(r.amount) <= max)],
});
const pay = wrapFetchWithPayment(fetch, client);
const res = await pay(`${process.env.X402_API_URL ?? "http://127.0.0.1:4200"}/weather`);
console.log(res.status, await res.text());
const receipt = res.headers.get("payment-response");
if (receipt) console.log(decodePaymentResponseHeader(receipt));
