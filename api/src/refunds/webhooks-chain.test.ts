/**
 * A refund's webhooks on the real stack (anvil, the Ponder indexer, the service's runner, sweeper
 * and delivery worker): a payer pays from its own wallet, the merchant refunds, the sweeper's
 * relayer sends it from the funded refund balance, and the merchant's endpoint receives
 * refund.created, refund.sent and refund.succeeded after payment_session.succeeded, each verified
 * with the standardwebhooks package against the endpoint's secret, all of the session's events in
 * one contiguous sequence in the order they happened. GET /events then holds them, matching the
 * OpenAPI document.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { erc20Abi, getAddress, type Address } from "viem";
import { Webhook } from "standardwebhooks";
import { startLifecycleStack, type LifecycleStack } from "../../../testing/lifecycle.ts";
import { eventually } from "../../../testing/eventually.ts";
import { FAST_WEBHOOK_ENV, startReceiver } from "../../../testing/webhook-receiver.ts";
import { checkEventsAgainstDocument } from "../../../testing/documented-events.ts";
import { localClients } from "../../../shared/devchain/clients.ts";
import { mintTestUsd } from "../../../shared/contracts/deploy.ts";
import { ensureRefundVaultsDeployed, refundVaultAddress, refundVaultSalt } from "../../../shared/contracts/refund-vaults.ts";
import { DEV_RELAYER_ADDRESS } from "../credentials/relayer.ts";

let stack: LifecycleStack;
let vaults: Address;
let payer: ReturnType<typeof localClients>;
const rcv = startReceiver();

beforeAll(async () => {
  stack = await startLifecycleStack({ env: FAST_WEBHOOK_ENV });
  const c = stack.chains[0]!;
  vaults = (await ensureRefundVaultsDeployed({ publicClient: c.publicClient, walletClient: c.walletClient }, DEV_RELAYER_ADDRESS)).address;
  payer = localClients(c.chain.rpcUrl, c.chain.chainId, 1); // anvil #1: #0 deploys and mints, #2 is the relayer
}, 90_000);
afterAll(async () => {
  await stack?.close();
  await rcv.stop();
});

const chain = () => stack.chains[0]!;
const mint = (to: Address, amount: bigint) => mintTestUsd({ publicClient: chain().publicClient, walletClient: chain().walletClient, to, amount, token: chain().token });

test("created, sent, succeeded: delivered after payment_session.succeeded, in the session's one sequence, each verified", async () => {
  const ep = await stack.svc.call("POST", "/webhook-endpoints", { auth: stack.key, body: { url: `${rcv.url}/refunds` } });
  expect(ep.status).toBe(201);
  const s = await stack.create("5.00");
  const payerAddress = payer.walletClient.account!.address;
  await mint(payerAddress, 5_000_000n);
  const hash = await payer.walletClient.writeContract({ account: payer.walletClient.account!, chain: null, address: chain().token, abi: erc20Abi, functionName: "transfer", args: [s.networks[0]!.depositAddress as Address, 5_000_000n] });
  await chain().publicClient.waitForTransactionReceipt({ hash });
  await stack.waitFor(s.id, "SUCCEEDED", 30_000);
  const [m] = await stack.svc.services.database.sql`select merchant_id, environment from app.payment_sessions where id = ${s.id}`;
  await mint(refundVaultAddress(vaults, refundVaultSalt(m!.merchant_id as string, m!.environment as string)), 2_000_000n);

  const r = await stack.svc.call("POST", `/payment-sessions/${s.id}/refunds`, { auth: stack.key, body: { amount: "2.00", reason: "requested_by_customer" } });
  expect(r.status).toBe(201);
  const done = await eventually(async () => {
    const v = (await stack.svc.call("GET", `/refunds/${r.body.refundId}`, { auth: stack.key })).body;
    return v.status === "SUCCEEDED" ? v : undefined;
  }, "the refund to succeed", 40_000);

  const wh = new Webhook(ep.body.secret);
  const events = await eventually(async () => {
    const mine = rcv.received.filter((x) => x.path === "/refunds").map((x) => wh.verify(x.body, x.headers) as any);
    return mine.some((e) => e.type === "refund.succeeded") ? mine : undefined;
  }, "refund.succeeded delivered", 20_000);
  const types = events.map((e) => e.type);
  const at = (t: string) => types.indexOf(t);
  expect(at("payment_session.succeeded")).toBeGreaterThanOrEqual(0);
  expect(at("payment_session.succeeded")).toBeLessThan(at("refund.created"));
  expect(at("refund.created")).toBeLessThan(at("refund.sent"));
  expect(at("refund.sent")).toBeLessThan(at("refund.succeeded"));
  expect(types.filter((t) => t.startsWith("refund."))).toEqual(["refund.created", "refund.sent", "refund.succeeded"]);
  // The session's events and its refund's share one sequence, delivered in it: 1, 2, 3, … without a gap.
  expect(events.map((e) => e.data.sequence)).toEqual(events.map((_, i) => i + 1));

  const [created, sent, succeeded] = ["refund.created", "refund.sent", "refund.succeeded"].map((t) => events[at(t)]);
  expect(created.data).toMatchObject({ refundId: r.body.refundId, paymentSessionId: s.id, status: "PENDING", amount: "2.00", transactionHash: null });
  expect(sent.data).toMatchObject({ status: "SENT", transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  expect(succeeded.data).toEqual({ ...done, sequence: succeeded.data.sequence });
  expect(succeeded.data.parts[0].destination).toBe(getAddress(payerAddress));

  const checked = await checkEventsAgainstDocument(stack.svc, stack.key);
  expect(checked.problems).toEqual([]);
  expect([...checked.types]).toEqual(expect.arrayContaining(["payment_session.succeeded", "refund.created", "refund.sent", "refund.succeeded"]));
}, 120_000);
