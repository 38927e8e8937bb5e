/**
 * A payer signs the session's EIP-3009 authorization and someone else — a wallet extension, a
 * relay, a front-runner: here another account with viem, straight against anvil — submits it
 * before the checkout's POST reaches us. The service never recorded it. On real parts (anvil,
 * Ponder in full and in bounded mode, the runner, the sweeper with our relayer on), in each mode:
 *   - the session goes PENDING → FUNDED → SUCCEEDED from the block that carries its nonce, long
 *     before its expiry (30 minutes away), counted once in and once settled, with no sweep;
 *   - the checkout's late POST of that same authorization answers what happened: 202, its
 *     record `mined` with the stranger's transaction (GET says the same), and our relayer sends
 *     nothing for it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, parseSignature, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { ANVIL_ACCOUNTS } from "../../../shared/devchain/index.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { eventually } from "../../../testing/eventually.ts";
import { DEV_RELAYER_ADDRESS } from "../credentials/relayer.ts";

const stranger = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey);

interface Offer {
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: { TransferWithAuthorization: { name: string; type: string }[] };
  message: { to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
}

/**
 * A session whose payer signs its authorization and a stranger carries it out first (the v, r, s
 * overload, as a relay would, with its own gas); nothing is recorded with us.
 */
async function paidByStranger(stack: LifecycleStack, amount: string) {
  const chain = stack.chains[0]!;
  const sql = stack.svc.services.database.sql;
  const s = await stack.create(amount);
  const view = (await stack.svc.call("GET", "/api/payment-sessions", { auth: s.token })).body;
  const offer = view.networks[0].gasless as Offer;
  expect(offer).not.toBeNull();
  // The payer holds TestUSD and no gas coin, and signs what the checkout shows.
  const payer = privateKeyToAccount(generatePrivateKey());
  await chain.mint(payer.address, BigInt(offer.message.value));
  const m = offer.message;
  const message = { from: payer.address, to: m.to, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce };
  const signature = await payer.signTypedData({ domain: offer.domain, types: offer.types, primaryType: "TransferWithAuthorization", message });
  const sig = parseSignature(signature);
  const hash = await chain.walletClient.writeContract({
    account: stranger,
    chain: chain.walletClient.chain,
    address: chain.token,
    abi: eip3009Abi,
    functionName: "transferWithAuthorization",
    args: [payer.address, m.to, message.value, message.validAfter, message.validBefore, m.nonce, Number(sig.v ?? 27n + BigInt(sig.yParity)), sig.r, sig.s],
  });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe("success");
  expect(getAddress(receipt.from)).toBe(stranger.address);
  expect(Number((await sql`select count(*)::int as n from app.payment_authorizations where session_id = ${s.id}`)[0]!.n)).toBe(0);
  return { s, m, payer, signature, receipt };
}

for (const mode of ["full", "bounded"] as const) {
  describe(`${mode} indexing`, () => {
    let stack: LifecycleStack;
    beforeAll(async () => {
      stack = await startLifecycleStack({ env: { SERVICE_INDEX_MODE: mode } });
    }, 90_000);
    afterAll(async () => {
      await stack?.close();
    }, 30_000);

    test("a stranger submits the payer's signature before the checkout's POST: FUNDED → SUCCEEDED from its block, no sweep; the late POST answers its record, mined, and nothing is sent", async () => {
      const chain = stack.chains[0]!;
      const sql = stack.svc.services.database.sql;
      const relayerNonce = await chain.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS });
      const { s, m, payer, signature, receipt } = await paidByStranger(stack, "4.20");

      // The session sees it from its block: FUNDED, then SUCCEEDED (the money is already at the settlement address).
      const done = await stack.waitFor(s.id, "SUCCEEDED", 20_000);
      expect(done.history.map((h) => [h.status, h.reason])).toEqual([
        ["PENDING", "created"],
        ["FUNDED", "paid"],
        ["SUCCEEDED", "swept"],
      ]);
      expect(done.history[1]!.detail).toMatchObject({ chainId: 31337, amount: "4200000", txHashes: [receipt.transactionHash], method: "authorization", payer: payer.address });
      expect(done.history[2]!.detail).toEqual({ chainId: 31337, sweepTxHash: receipt.transactionHash, method: "authorization" });
      // In bounded mode too the indexer kept it: the nonce is the session's, though nobody recorded it with us.
      const [kept] = await sql`select tx_hash, "from", "to", value::text from indexer.authorized_transfers where nonce = ${m.nonce.toLowerCase()}`;
      expect({ ...kept }).toEqual({ tx_hash: receipt.transactionHash, from: payer.address.toLowerCase(), to: m.to.toLowerCase(), value: "4200000" });
      // Paid and settled exactly once, by that one transaction; nothing to sweep.
      const ledger = await sql`select direction, tx_hash, amount::text from app.session_funds where session_id = ${s.id} order by direction`;
      expect(ledger.map((r) => ({ ...r }))).toEqual([
        { direction: "in", tx_hash: receipt.transactionHash, amount: "4200000" },
        { direction: "out", tx_hash: receipt.transactionHash, amount: "4200000" },
      ]);
      expect(Number((await sql`select count(*)::int as n from app.sweeps where session_id = ${s.id}`)[0]!.n)).toBe(0);

      // The checkout's POST arrives now: it answers what happened, not an error.
      const body = { chainId: 31337, from: payer.address, to: m.to, value: m.value, validAfter: m.validAfter, validBefore: m.validBefore, nonce: m.nonce, signature };
      const late = await stack.svc.call("POST", "/api/payment-sessions/authorizations", { auth: s.token, body });
      expect(late.status).toBe(202);
      expect(late.body).toMatchObject({ paymentSessionId: s.id, status: "mined", reason: null, txHash: receipt.transactionHash, from: payer.address, to: getAddress(m.to), value: "4200000" });
      expect((await stack.svc.call("GET", "/api/payment-sessions/authorizations", { auth: s.token })).body).toEqual(late.body);
      // The same again: the same record.
      expect((await stack.svc.call("POST", "/api/payment-sessions/authorizations", { auth: s.token, body })).body).toEqual(late.body);
      // Our relayer (running) never sent it, and the ledger still has it once.
      await Bun.sleep(500);
      expect(await chain.publicClient.getTransactionCount({ address: DEV_RELAYER_ADDRESS })).toBe(relayerNonce);
      expect(Number((await sql`select count(*)::int as n from app.sweep_transactions where kind = 'authorization'`)[0]!.n)).toBe(0);
      expect(Number((await sql`select count(*)::int as n from app.session_funds where session_id = ${s.id}`)[0]!.n)).toBe(2);
      expect((await stack.status(s.id)).status).toBe("SUCCEEDED");
    }, 60_000);

    test("a reorg takes that payment away, though nothing of it was ever recorded with us: reported like any reorged payment (funds_reverted, received and settled)", async () => {
      const chain = stack.chains[0]!;
      const { s, receipt } = await paidByStranger(stack, "2.10");
      await stack.waitFor(s.id, "SUCCEEDED", 20_000);
      // Replace the payment's block (and any after it) with empty ones.
      const depth = Number((await chain.publicClient.getBlockNumber()) - receipt.blockNumber) + 1;
      await chain.rpc("anvil_reorg", [depth, []]);
      const reverted = async () => (await stack.status(s.id)).history.filter((h) => h.reason === "funds_reverted");
      await eventually(async () => ((await reverted()).length === 2 ? true : undefined), "both movements reported reverted", 20_000);
      expect((await reverted()).map((h) => h.detail).sort((a, b) => String(a.direction).localeCompare(String(b.direction)))).toEqual([
        { chainId: 31337, direction: "received", txHash: receipt.transactionHash, amountBaseUnits: "2100000", statusReason: "swept" },
        { chainId: 31337, direction: "settled", txHash: receipt.transactionHash, amountBaseUnits: "2100000", statusReason: "swept" },
      ]);
    }, 60_000);
  });
}
