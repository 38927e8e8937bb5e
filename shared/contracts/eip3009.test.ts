/**
 * TestUSD's EIP-3009 on a real anvil, held to what USDC (FiatToken v2.2) does: a signed
 * authorization moves the money whoever submits it, once; a replay, a wrong signer, a window
 * not yet open or already closed, a canceled nonce and a tampered field revert with USDC's own
 * reasons. And the domain: right at the deterministic address, and right again where the
 * main-network stand-in copies the code (another address, another chain id, no storage).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  domainSeparator,
  keccak256,
  parseEventLogs,
  parseSignature,
  toHex,
  type Address,
  type Hex,
  type PublicClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { testUsdAbi } from "./artifacts.ts";
import {
  CANCEL_AUTHORIZATION_TYPES,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
} from "./eip3009.ts";
import { ANVIL_ACCOUNTS, clientsFor, startTestChain, type TestChain } from "../../testing/chain.ts";
import { startMainnetStandIn, type MainnetStandIn } from "../../testing/mainnet-standin.ts";
import { messageOf } from "../describe-error.ts";

const [, PAYEE, STRANGER] = ANVIL_ACCOUNTS;

interface Auth {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

const domainOf = (chainId: number, verifyingContract: Address) => ({ name: "Test USD", version: "2", chainId, verifyingContract });

function sign(signer: PrivateKeyAccount, chainId: number, token: Address, auth: Auth, kind: "transfer" | "receive" = "transfer"): Promise<Hex> {
  return kind === "transfer"
    ? signer.signTypedData({ domain: domainOf(chainId, token), types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message: auth })
    : signer.signTypedData({ domain: domainOf(chainId, token), types: RECEIVE_WITH_AUTHORIZATION_TYPES, primaryType: "ReceiveWithAuthorization", message: auth });
}

const authArgs = (a: Auth) => [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;

async function now(publicClient: PublicClient): Promise<bigint> {
  return (await publicClient.getBlock()).timestamp;
}

let nonceCounter = 0;
const freshNonce = (): Hex => keccak256(toHex(`eip3009.test ${++nonceCounter} ${Date.now()}`));

describe("TestUSD EIP-3009 (as USDC v2.2)", () => {
  let chain: TestChain;
  let payer: PrivateKeyAccount;
  let chainId: number;

  beforeAll(async () => {
    chain = await startTestChain();
    chainId = await chain.publicClient.getChainId();
    // A payer with tokens and no gas coin at all: the point of paying by authorization.
    payer = privateKeyToAccount(generatePrivateKey());
    await chain.mint(payer.address, 1_000_000_000n);
  }, 30_000);
  afterAll(async () => {
    await chain?.stop();
  });

  const read = <F extends "name" | "symbol" | "version" | "DOMAIN_SEPARATOR">(functionName: F, address: Address = chain.token) =>
    chain.publicClient.readContract({ address, abi: testUsdAbi, functionName });

  async function goodAuth(over: Partial<Auth> = {}): Promise<Auth> {
    return { from: payer.address, to: PAYEE, value: 12_340_000n, validAfter: 0n, validBefore: (await now(chain.publicClient)) + 3600n, nonce: freshNonce(), ...over };
  }

  /** Submits from the stranger (anvil account #2): anyone may, as on USDC. */
  async function submit(a: Auth, signature: Hex) {
    const hash = await chain.wallet(STRANGER).writeContract({
      address: chain.token,
      abi: testUsdAbi,
      functionName: "transferWithAuthorization",
      args: [...authArgs(a), signature],
    });
    return chain.receipt(hash);
  }

  /** The revert reason the exact call would give (eth_call, nothing sent). */
  async function revertOf(a: Auth, signature: Hex): Promise<string> {
    try {
      await chain.publicClient.simulateContract({ account: STRANGER, address: chain.token, abi: testUsdAbi, functionName: "transferWithAuthorization", args: [...authArgs(a), signature] });
      return "no revert";
    } catch (err) {
      return messageOf(err);
    }
  }

  test("name, symbol and version are USDC-like constants; the domain separator is EIP-712's over them", async () => {
    expect(await read("name")).toBe("Test USD");
    expect(await read("symbol")).toBe("tUSD");
    expect(await read("version")).toBe("2");
    const expected = domainSeparator({ domain: domainOf(chainId, chain.token) });
    expect(await read("DOMAIN_SEPARATOR")).toBe(expected);
    expect(await chain.publicClient.readContract({ address: chain.token, abi: testUsdAbi, functionName: "TRANSFER_WITH_AUTHORIZATION_TYPEHASH" })).toBe(
      "0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267",
    );
  });

  test("a signed authorization, submitted by a stranger, moves exactly the value and uses the nonce (bytes form)", async () => {
    const a = await goodAuth();
    const before = await chain.balanceOf(PAYEE);
    expect(await chain.publicClient.readContract({ address: chain.token, abi: testUsdAbi, functionName: "authorizationState", args: [a.from, a.nonce] })).toBe(false);
    const receipt = await submit(a, await sign(payer, chainId, chain.token, a));
    expect((await chain.balanceOf(PAYEE)) - before).toBe(a.value);
    const used = parseEventLogs({ abi: testUsdAbi, eventName: "AuthorizationUsed", logs: receipt.logs });
    expect(used.map((l) => l.args)).toEqual([{ authorizer: payer.address, nonce: a.nonce }]);
    const transfers = parseEventLogs({ abi: testUsdAbi, eventName: "Transfer", logs: receipt.logs });
    expect(transfers.map((l) => l.args)).toEqual([{ from: payer.address, to: PAYEE, value: a.value }]);
    expect(await chain.publicClient.readContract({ address: chain.token, abi: testUsdAbi, functionName: "authorizationState", args: [a.from, a.nonce] })).toBe(true);
  });

  test("the v, r, s form moves the money too", async () => {
    const a = await goodAuth({ value: 1n });
    const { v, r, s } = parseSignature(await sign(payer, chainId, chain.token, a));
    const before = await chain.balanceOf(PAYEE);
    const hash = await chain.wallet(STRANGER).writeContract({
      address: chain.token,
      abi: testUsdAbi,
      functionName: "transferWithAuthorization",
      args: [...authArgs(a), Number(v), r, s],
    });
    await chain.receipt(hash);
    expect((await chain.balanceOf(PAYEE)) - before).toBe(1n);
  });

  test("a replay of a used authorization reverts: used or canceled", async () => {
    const a = await goodAuth({ value: 5n });
    const sig = await sign(payer, chainId, chain.token, a);
    await submit(a, sig);
    expect(await revertOf(a, sig)).toContain("FiatTokenV2: authorization is used or canceled");
  });

  test("signed by another key, or with a field changed after signing: invalid signature", async () => {
    const a = await goodAuth();
    const other = privateKeyToAccount(generatePrivateKey());
    expect(await revertOf(a, await sign(other, chainId, chain.token, a))).toContain("FiatTokenV2: invalid signature");
    const sig = await sign(payer, chainId, chain.token, a);
    expect(await revertOf({ ...a, value: a.value + 1n }, sig)).toContain("FiatTokenV2: invalid signature");
    expect(await revertOf({ ...a, to: STRANGER }, sig)).toContain("FiatTokenV2: invalid signature");
    // Signed for another chain's domain: a signature of this token elsewhere is no good here.
    expect(await revertOf(a, await sign(payer, chainId + 1, chain.token, a))).toContain("FiatTokenV2: invalid signature");
    expect(await revertOf(a, sig)).toBe("no revert");
  });

  test("the window is strict: not yet valid at validAfter ≥ now, expired at validBefore ≤ now", async () => {
    const t = await now(chain.publicClient);
    const early = await goodAuth({ validAfter: t + 600n });
    expect(await revertOf(early, await sign(payer, chainId, chain.token, early))).toContain("FiatTokenV2: authorization is not yet valid");
    const late = await goodAuth({ validBefore: t });
    expect(await revertOf(late, await sign(payer, chainId, chain.token, late))).toContain("FiatTokenV2: authorization is expired");
  });

  test("a canceled nonce can no longer be used, and a cancel is itself once only", async () => {
    const a = await goodAuth();
    const sig = await sign(payer, chainId, chain.token, a);
    const cancel = await payer.signTypedData({
      domain: domainOf(chainId, chain.token),
      types: CANCEL_AUTHORIZATION_TYPES,
      primaryType: "CancelAuthorization",
      message: { authorizer: payer.address, nonce: a.nonce },
    });
    const receipt = await chain.receipt(
      await chain.wallet(STRANGER).writeContract({ address: chain.token, abi: testUsdAbi, functionName: "cancelAuthorization", args: [payer.address, a.nonce, cancel] }),
    );
    expect(parseEventLogs({ abi: testUsdAbi, eventName: "AuthorizationCanceled", logs: receipt.logs }).map((l) => l.args)).toEqual([
      { authorizer: payer.address, nonce: a.nonce },
    ]);
    expect(await revertOf(a, sig)).toContain("FiatTokenV2: authorization is used or canceled");
    await expect(
      chain.publicClient.simulateContract({ account: STRANGER, address: chain.token, abi: testUsdAbi, functionName: "cancelAuthorization", args: [payer.address, a.nonce, cancel] }),
    ).rejects.toThrow("FiatTokenV2: authorization is used or canceled");
  });

  test("receiveWithAuthorization: only the payee may submit it", async () => {
    const a = await goodAuth({ value: 7n });
    const sig = await sign(payer, chainId, chain.token, a, "receive");
    await expect(
      chain.publicClient.simulateContract({ account: STRANGER, address: chain.token, abi: testUsdAbi, functionName: "receiveWithAuthorization", args: [...authArgs(a), sig] }),
    ).rejects.toThrow("FiatTokenV2: caller must be the payee");
    // A transfer authorization is not a receive authorization (different typehash).
    const transferSig = await sign(payer, chainId, chain.token, a);
    await expect(
      chain.publicClient.simulateContract({ account: PAYEE, address: chain.token, abi: testUsdAbi, functionName: "receiveWithAuthorization", args: [...authArgs(a), transferSig] }),
    ).rejects.toThrow("FiatTokenV2: invalid signature");
    const before = await chain.balanceOf(PAYEE);
    await chain.receipt(
      await chain.wallet(PAYEE).writeContract({ address: chain.token, abi: testUsdAbi, functionName: "receiveWithAuthorization", args: [...authArgs(a), sig] }),
    );
    expect((await chain.balanceOf(PAYEE)) - before).toBe(7n);
  });

  test("more than the balance: the authorization is valid but the transfer reverts (nothing used)", async () => {
    const a = await goodAuth({ value: 10n ** 15n });
    expect(await revertOf(a, await sign(payer, chainId, chain.token, a))).toContain("ERC20InsufficientBalance");
    expect(await chain.publicClient.readContract({ address: chain.token, abi: testUsdAbi, functionName: "authorizationState", args: [a.from, a.nonce] })).toBe(false);
  });
});

describe("the main-network stand-in: TestUSD's code at USDC's address on chain 8453, no storage copied", () => {
  let standIn: MainnetStandIn;
  beforeAll(async () => {
    standIn = await startMainnetStandIn("base");
  }, 30_000);
  afterAll(async () => {
    await standIn?.stop();
  });

  test("name and symbol still read, the domain is USDC's address and chain 8453, and an authorization signed for it pays", async () => {
    const { publicClient } = clientsFor(standIn.rpcUrl);
    const at = <F extends "name" | "symbol" | "version" | "DOMAIN_SEPARATOR">(functionName: F) =>
      publicClient.readContract({ address: standIn.usdc, abi: testUsdAbi, functionName });
    expect(await at("name")).toBe("Test USD");
    expect(await at("symbol")).toBe("tUSD");
    expect(await at("version")).toBe("2");
    expect(await at("DOMAIN_SEPARATOR")).toBe(domainSeparator({ domain: domainOf(8453, standIn.usdc) }));

    const payer = privateKeyToAccount(generatePrivateKey());
    await standIn.mintUsdc(payer.address, 5_000_000n);
    const a: Auth = { from: payer.address, to: PAYEE, value: 5_000_000n, validAfter: 0n, validBefore: (await now(publicClient)) + 600n, nonce: freshNonce() };
    const sig = await sign(payer, 8453, standIn.usdc, a);
    const { walletClient } = clientsFor(standIn.rpcUrl, STRANGER);
    const hash = await walletClient.writeContract({ chain: null, address: standIn.usdc, abi: testUsdAbi, functionName: "transferWithAuthorization", args: [...authArgs(a), sig] });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    expect(await standIn.balanceOf(PAYEE)).toBe(5_000_000n);
  });
});
