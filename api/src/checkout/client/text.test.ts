import { describe, expect, test } from "bun:test";
import { cannotSignTypedData, finalScreen, formatCountdown, formatFee, formatUnits, gaslessLine, paymentUri, progressSteps, sendsLine, shortAddress, walletProblem, type Status } from "./text.ts";
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
