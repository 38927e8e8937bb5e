/**
 * A merchant's server, for bench/detection.ts's merchant part, in a process of its own: detection
 * as the merchant sees it, on its own clocks. Again and again: create a session
 * (POST /payment-sessions with its own key), pay it with its own transfer on the local network
 * (its own account, its own nonces), take its own receipt's time, then poll
 * GET /payment-sessions/{id} every `pollMs` until the answer says FUNDED (or later). One JSON line
 * at the end: per payment its block, receipt time, the first FUNDED answer's send and arrival
 * times, the last answer before it, how many polls, and each answer's duration — the bench pairs
 * them with the indexer's NOTIFY and the FUNDED event's own time to say where the time went.
 *   bun bench/detection-merchant.ts <apiBaseUrl> <sandboxKey> <rpcUrl> <token> <payerPrivateKey> <seconds> <payEveryMs> <pollMs>
 */
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { testUsdAbi } from "../shared/contracts/artifacts.ts";
import { localClients } from "../shared/devchain/clients.ts";

const [base, key, rpcUrl, token, payerKey, secondsArg, payEveryArg, pollArg] = process.argv.slice(2) as [string, string, string, Address, Hex, string, string, string];
const seconds = Number(secondsArg);
const payEveryMs = Number(payEveryArg);
const pollMs = Number(pollArg);
const clients = localClients(rpcUrl, 31337);
const account = privateKeyToAccount(payerKey);
const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };

/** Statuses a session reaches only after FUNDED (the sweeper is off in the bench, but a payment may still settle). */
const FUNDED_OR_LATER = new Set(["FUNDED", "SUCCEEDED"]);

export interface Payment {
  id: string;
  block: string;
  /** Date.now() when this process had its own receipt. */
  receiptAt: number;
  /** The poll whose answer first said FUNDED: sent and answered (Date.now()). */
  fundedPollSentAt: number;
  fundedSeenAt: number;
  /** The last answer before it (still PENDING): when it arrived; null if the first poll already said FUNDED. */
  lastPendingAnsweredAt: number | null;
  polls: number;
  /** Each poll's duration, sent → answer read (ms). */
  answerMs: number[];
}

async function createSession(): Promise<{ id: string; deposit: Address } | undefined> {
  const r = await fetch(`${base}/payment-sessions`, { method: "POST", headers, body: JSON.stringify({ amount: "1.00", currency: "USD" }) });
  const b = (await r.json()) as { paymentSessionId: string; networks: { depositAddress: Address }[] };
  return r.status === 201 ? { id: b.paymentSessionId, deposit: b.networks[0]!.depositAddress } : undefined;
}

const payments: Payment[] = [];
const failures: Record<string, number> = {};
const fail = (k: string) => (failures[k] = (failures[k] ?? 0) + 1);
const t0 = Date.now();
while (Date.now() - t0 < seconds * 1000) {
  const s = await createSession().catch(() => undefined);
  if (!s) {
    fail("create");
    await Bun.sleep(100);
    continue;
  }
  const hash = await clients.walletClient.writeContract({ account, chain: clients.walletClient.chain, address: token, abi: testUsdAbi, functionName: "transfer", args: [s.deposit, 1_000_000n] });
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 2 });
  const receiptAt = Date.now();
  const answerMs: number[] = [];
  let lastPendingAnsweredAt: number | null = null;
  let seen: { sent: number; at: number } | undefined;
  while (Date.now() - receiptAt < 10_000) {
    const sent = Date.now();
    const t = performance.now();
    const r = await fetch(`${base}/payment-sessions/${s.id}`, { headers });
    const body = (await r.json()) as { status?: string };
    answerMs.push(Math.round((performance.now() - t) * 100) / 100);
    const at = Date.now();
    if (r.status === 200 && body.status && FUNDED_OR_LATER.has(body.status)) {
      seen = { sent, at };
      break;
    }
    if (r.status !== 200) fail(`poll ${r.status}`);
    lastPendingAnsweredAt = at;
    await Bun.sleep(pollMs);
  }
  if (!seen) fail("not funded in 10 s");
  else payments.push({ id: s.id, block: receipt.blockNumber.toString(), receiptAt, fundedPollSentAt: seen.sent, fundedSeenAt: seen.at, lastPendingAnsweredAt, polls: answerMs.length, answerMs });
  await Bun.sleep(payEveryMs);
}
console.log(JSON.stringify({ payments, failures }));
