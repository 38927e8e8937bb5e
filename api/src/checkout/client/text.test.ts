import { describe, expect, test } from "bun:test";
import {
  afterUsedElsewhere,
  cannotSignTypedData,
  finalScreen,
  formatCountdown,
  formatFee,
  formatUnits,
  gaslessLine,
  insufficientTokenMessage,
  networkChoiceText,
  paymentUri,
  progressSteps,
  receivedSymbol,
  sendsLine,
  shortAddress,
  tokenAmountText,
  tokenBalanceText,
  USED_ELSEWHERE_GRACE_MS,
  walletProblem,
  type Status,
} from "./text.ts";
import { chosenToken, coveringToken, signsFor, type TokenOption } from "./tokens.ts";
import { qrPath } from "./qr.ts";

describe("amounts and time", () => {
  test("base units format exactly, with at least two places, never through a float", () => {
    expect(formatUnits(12_340_000n, 6)).toBe("12.34");
    expect(formatUnits(0n, 6)).toBe("0.00");
    expect(formatUnits(1n, 6)).toBe("0.000001");
    expect(formatUnits(100_000_000n, 6)).toBe("100.00");
    expect(formatUnits(123456789012345678901234567890n, 18)).toBe("123456789012.34567890123456789");
    expect(formatUnits(-5_000_000n, 6)).toBe("-5.00");
  });

  test("a network fee reads rounded up to 6 decimals", () => {
    expect(formatFee(62_105_870_678_129n)).toBe("0.000063");
    expect(formatFee(10n ** 18n)).toBe("1.00");
  });

  test("countdown", () => {
    expect(formatCountdown(30 * 60_000)).toBe("30:00");
    expect(formatCountdown(61_999)).toBe("1:01");
    expect(formatCountdown(3_723_000)).toBe("1:02:03");
    expect(formatCountdown(-5000)).toBe("0:00");
  });

  test("an account address is shortened to its ends; what is not an address stays whole", () => {
    expect(shortAddress("0x1a65d9DCf20897699E9e3b2b90b0cc63E5197e36")).toBe("0x1a65…7e36");
    expect(shortAddress("0x12")).toBe("0x12");
    expect(shortAddress("not an address")).toBe("not an address");
  });

  test("the line under the pay button says what is sent and that it is the price", () => {
    expect(sendsLine("12.34 TUSD", "12.34 USD")).toBe("You send 12.34 TUSD = 12.34 USD, the price.");
  });

  test("EIP-681 URI: transfer on the token contract of the chain", () => {
    expect(paymentUri({ tokenAddress: "0xT", chainId: 8453, depositAddress: "0xD", amountBaseUnits: "12340000" })).toBe("ethereum:0xT@8453/transfer?address=0xD&uint256=12340000");
  });
});

describe("the token choice", () => {
  // A network taking USDC (6 decimals, EIP-3009: the gasless offer is for it) and a DAI-like token with 18.
  const USDC: TokenOption = { tokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", tokenSymbol: "USDC", decimals: 6, amountBaseUnits: "12340000" };
  const DAI: TokenOption = { tokenAddress: "0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb", tokenSymbol: "DAI", decimals: 18, amountBaseUnits: "12340000000000000000" };
  // The network's own fields are the main token's address and symbol in the session's unit (the most decimals).
  const net = { ...USDC, decimals: 18, amountBaseUnits: DAI.amountBaseUnits, network: "Base", tokens: [USDC, DAI], gasless: { domain: { verifyingContract: USDC.tokenAddress.toLowerCase() } } };

  test("the main token unless another accepted one is picked; a pick the network does not take falls back to the main one", () => {
    expect(chosenToken(net, undefined)).toBe(USDC);
    expect(chosenToken(net, DAI.tokenAddress.toLowerCase())).toBe(DAI);
    expect(chosenToken(net, "0x2222222222222222222222222222222222222222")).toBe(USDC);
    // A view without `tokens`: the network's own fields.
    const { tokens: _t, ...bare } = net;
    expect(chosenToken(bare, DAI.tokenAddress).tokenSymbol).toBe("USDC");
  });

  test("amounts in each token's own base units and decimals", () => {
    expect(tokenAmountText(USDC)).toBe("12.34 USDC");
    expect(tokenAmountText(DAI)).toBe("12.34 DAI");
    expect(networkChoiceText(net)).toBe("Base · 12.34 USDC or DAI");
    expect(networkChoiceText({ network: "Base", tokens: [USDC] })).toBe("Base · 12.34 USDC");
    expect(sendsLine(tokenAmountText(DAI), "12.34 USD")).toBe("You send 12.34 DAI = 12.34 USD, the price.");
    expect(tokenBalanceText(DAI, 5n * 10n ** 18n)).toBe("Balance 5.00");
    expect(tokenBalanceText(USDC, undefined)).toBe("");
  });

  test("pay by signature only in the token the gasless offer is for; any other by transfer", () => {
    expect(signsFor(net, USDC)).toBe(true);
    expect(signsFor(net, DAI)).toBe(false);
    expect(signsFor({ gasless: null }, USDC)).toBe(false);
  });

  test("the QR code's URI is for the chosen token and its own amount", () => {
    const t = chosenToken(net, DAI.tokenAddress);
    expect(paymentUri({ tokenAddress: t.tokenAddress, chainId: 8453, depositAddress: "0xD", amountBaseUnits: t.amountBaseUnits })).toBe(
      `ethereum:${DAI.tokenAddress}@8453/transfer?address=0xD&uint256=12340000000000000000`,
    );
  });

  test("not enough of the chosen token: another the wallet holds enough of is named as the way on", () => {
    const held = new Map<string, bigint>([[USDC.tokenAddress, 0n], [DAI.tokenAddress, 20n * 10n ** 18n]]);
    const instead = coveringToken(net.tokens, USDC, (t) => held.get(t.tokenAddress));
    expect(instead).toBe(DAI);
    expect(insufficientTokenMessage({ held: 0n, token: USDC, networkName: "Base", instead })).toBe(
      "Your wallet holds 0.00 USDC on Base; this payment needs 12.34 USDC. It holds enough DAI: pay in DAI instead.",
    );
    // Not enough of any, or a balance not read: no such offer, and the usual way on.
    expect(coveringToken(net.tokens, USDC, (t) => (t === DAI ? 12n * 10n ** 18n : 0n))).toBeUndefined();
    expect(coveringToken(net.tokens, USDC, () => undefined)).toBeUndefined();
    expect(coveringToken(net.tokens, DAI, (t) => held.get(t.tokenAddress))).toBeUndefined(); // never the chosen one itself
    expect(insufficientTokenMessage({ held: 1_000_000n, token: USDC, networkName: "Base" })).toBe(
      "Your wallet holds 1.00 USDC on Base; this payment needs 12.34 USDC. Add USDC to this wallet, or pay from another wallet with the QR code.",
    );
  });

  test("what arrived is named in its token when all in one, else in the currency (several add up at par)", () => {
    expect(receivedSymbol([{ token: DAI.tokenAddress.toLowerCase() }], net.tokens, "USD")).toBe("DAI");
    expect(receivedSymbol([{ token: USDC.tokenAddress }, { token: DAI.tokenAddress }], net.tokens, "USD")).toBe("USD");
    expect(receivedSymbol([{ token: null }], net.tokens, "USD")).toBe("USD");
  });
});

describe("final screens", () => {
  const ctx = { merchantName: "Acme", amountText: "12.34 USD" };
  test("every status but PENDING has one, and each reason its own words", () => {
    expect(finalScreen("PENDING", "created", ctx)).toBeUndefined();
    const all: [Status, string, string][] = [
      ["SUCCEEDED", "swept", "Payment complete"],
      ["FUNDED", "paid", "Payment received"],
      ["CANCELED", "expired", "This payment has expired"],
      ["CANCELED", "canceled_by_payer", "Payment canceled"],
      ["CANCELED", "canceled_by_merchant", "Payment canceled by the merchant"],
      ["ERROR", "underpaid", "Payment incomplete"],
      ["ERROR", "paid_after_cancel", "Payment arrived too late"],
      ["ERROR", "sweep_failed", "Payment received, settlement delayed"],
      ["ERROR", "reorged", "Payment reversed by the network"],
      ["ERROR", "simulated", "Payment failed (sandbox)"],
      ["ERROR", "something_new", "Payment failed"],
    ];
    for (const [status, reason, title] of all) expect(finalScreen(status, reason, ctx)?.title).toBe(title);
  });

  test("under-, over- and late payments say what happened to the funds", () => {
    expect(finalScreen("ERROR", "underpaid", { ...ctx, receivedText: "5.00 TUSD" })!.body).toContain("Only 5.00 TUSD of 12.34 USD arrived");
    expect(finalScreen("ERROR", "underpaid", ctx)!.body).toContain("goes to Acme");
    expect(finalScreen("SUCCEEDED", "swept", { ...ctx, overpaidText: "1.00 TUSD" })!.body).toContain("You sent 1.00 TUSD more than asked");
    // Paid by signature: the final screen says so, and that the fee was paid for the payer; a transfer says nothing of it.
    expect(finalScreen("SUCCEEDED", "swept", { ...ctx, byAuthorization: true })!.body).toBe("You paid 12.34 USD to Acme. Paid by your signature: the network fee was covered for you.");
    expect(finalScreen("FUNDED", "paid", { ...ctx, byAuthorization: true })!.body).toContain("the network fee was covered for you");
    expect(finalScreen("SUCCEEDED", "swept", ctx)!.body).not.toContain("signature");
    expect(finalScreen("ERROR", "paid_after_cancel", { ...ctx, receivedText: "12.34 TUSD" })!.body).toContain("The funds are not lost");
  });
});

describe("wallet problems", () => {
  test("each failure gets a kind and a plain message with a way forward", () => {
    expect(walletProblem({ code: 4001, message: "User rejected the request." }).kind).toBe("rejected");
    expect(walletProblem(new Error("MetaMask Tx Signature: User denied transaction signature.")).kind).toBe("rejected");
    expect(walletProblem({ code: 4900 }).kind).toBe("disconnected");
    expect(walletProblem({ code: -32603, data: { originalError: { code: 4902 } } }, { networkName: "Base" }).message).toContain("does not know Base");
    expect(walletProblem({ code: -32000, message: "insufficient funds for gas * price + value" }).kind).toBe("insufficient_gas");
    const other = walletProblem({ code: -32000, message: "nonce too low" });
    expect(other.kind).toBe("other");
    expect(other.message).toContain("QR code");
  });
});

describe("paying by signature", () => {
  test("a wallet that cannot sign typed data is told apart from a payer who refuses", () => {
    expect(cannotSignTypedData({ code: 4200, message: "Unsupported method" })).toBe(true);
    expect(cannotSignTypedData({ code: -32601, message: "The method eth_signTypedData_v4 does not exist / is not available" })).toBe(true);
    expect(cannotSignTypedData({ code: -32603, data: { originalError: { code: 4200 } } })).toBe(true);
    expect(cannotSignTypedData({ code: 4001, message: "User rejected the request." })).toBe(false);
    expect(cannotSignTypedData(new Error("network down"))).toBe(false);
  });

  test("the line under Pay says what is signed and that there is no network fee", () => {
    expect(gaslessLine("12.34 TUSD", "12.34 USD")).toBe("You sign a transfer of 12.34 TUSD = 12.34 USD, the price. No network fee: the payment service submits it for you.");
  });

  test("progress after signing starts at 'Payment signed'", () => {
    const steps = progressSteps({ status: "PENDING", reason: "created", required: 1, payments: [], authorized: true })!;
    expect(steps.map((x) => `${x.id}:${x.state}:${x.label}`).slice(0, 2)).toEqual(["sent:done:Payment signed (no network fee)", "seen:active:Seen on-chain"]);
  });
});

describe("progress", () => {
  const base = { status: "PENDING" as Status, reason: "created", required: 3, payments: [] as { txHash: string; confirmations: number }[] };
  const states = (s: ReturnType<typeof progressSteps>) => s!.map((x) => `${x.id}:${x.state}`);
  test("nothing to show before a payment is sent or seen", () => {
    expect(progressSteps(base)).toBeUndefined();
  });
  test("sent → seen → confirmations n of m → funded → settled", () => {
    expect(states(progressSteps({ ...base, sentTxHash: "0x1" }))).toEqual(["sent:done", "seen:active", "confirmations:todo", "funded:todo", "settled:todo"]);
    const seen = progressSteps({ ...base, payments: [{ txHash: "0x1", confirmations: 2 }] })!;
    expect(states(seen)).toEqual(["sent:done", "seen:done", "confirmations:active", "funded:todo", "settled:todo"]);
    expect(seen[2]!.label).toBe("Confirmations: 2 of 3");
    expect(states(progressSteps({ ...base, status: "FUNDED", reason: "paid", payments: [{ txHash: "0x1", confirmations: 3 }] }))).toEqual([
      "sent:done",
      "seen:done",
      "confirmations:done",
      "funded:done",
      "settled:active",
    ]);
    expect(progressSteps({ ...base, status: "SUCCEEDED", reason: "swept", payments: [{ txHash: "0x1", confirmations: 9 }] })!.every((s) => s.state === "done")).toBe(true);
  });
});

describe("QR code", () => {
  test("a square of modules with the three finder patterns and a quiet zone", () => {
    const { size, d } = qrPath("ethereum:0xe2b4152e3b6Cc732B52DF67F42b2cBDbaEe385a5@31337/transfer?address=0x6E0cfAa6eE7Fbec4EcDD404ca7e1Dc9267ee558C&uint256=12340000");
    const dark = new Set([...d.matchAll(/M(\d+) (\d+)/g)].map((m) => `${m[1]},${m[2]}`));
    const inner = size - 8;
    expect(inner % 4).toBe(1); // QR sizes are 17 + 4 × version
    for (const [ox, oy] of [[4, 4], [4 + inner - 7, 4], [4, 4 + inner - 7]] as [number, number][]) {
      // Each finder: a dark 7×7 ring, a light ring, a dark 3×3 centre.
      expect(dark.has(`${ox},${oy}`) && dark.has(`${ox + 6},${oy + 6}`) && dark.has(`${ox + 3},${oy + 3}`)).toBe(true);
      expect(dark.has(`${ox + 1},${oy + 1}`)).toBe(false);
    }
    for (let i = 0; i < size; i++) expect(dark.has(`${i},0`) || dark.has(`0,${i}`)).toBe(false);
  });
});

describe("a signature refused as already used on-chain", () => {
  const at = 1_000_000;
  test("the page follows the session while it may still show the payment, and whenever it shows it", () => {
    expect(afterUsedElsewhere({ refusedAt: at, now: at, status: "PENDING", paymentsOnNetwork: 0 })).toBe("follow");
    expect(afterUsedElsewhere({ refusedAt: at, now: at + USED_ELSEWHERE_GRACE_MS - 1, status: "PENDING", paymentsOnNetwork: 0 })).toBe("follow");
    expect(afterUsedElsewhere({ refusedAt: at, now: at + 10 * USED_ELSEWHERE_GRACE_MS, status: "PENDING", paymentsOnNetwork: 1 })).toBe("follow");
    for (const status of ["FUNDED", "SUCCEEDED", "CANCELED", "ERROR"] as Status[]) {
      expect(afterUsedElsewhere({ refusedAt: at, now: at + 10 * USED_ELSEWHERE_GRACE_MS, status, paymentsOnNetwork: 0 })).toBe("follow");
    }
  });
  test("a session still open with nothing of it after the grace: a problem", () => {
    expect(afterUsedElsewhere({ refusedAt: at, now: at + USED_ELSEWHERE_GRACE_MS, status: "PENDING", paymentsOnNetwork: 0 })).toBe("problem");
  });
});
