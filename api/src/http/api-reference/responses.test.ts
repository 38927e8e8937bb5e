/**
 * What the service answers is what the OpenAPI document says: every documented operation is
 * called (successes and errors, on a real chain so the sandbox tools succeed too), and every
 * answer is checked against the schema documented for its route and status, by an independent
 * JSON Schema validator (Ajv, draft 2020-12, the dialect of OpenAPI 3.1). An answer with a status
 * the document does not list fails as well.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { eventually } from "../../../../testing/eventually.ts";
import { startLifecycleStack, type LifecycleStack } from "../../../../testing/lifecycle.ts";
import { documentedAnswers, type DocumentedAnswers } from "../../../../testing/documented-answers.ts";
import { checkEventsAgainstDocument } from "../../../../testing/documented-events.ts";

let stack: LifecycleStack;
let doc: any;
let answers: DocumentedAnswers;
const seen: { op: string; status: number; body: unknown }[] = [];

beforeAll(async () => {
  stack = await startLifecycleStack({ env: { SERVICE_WEBHOOK_WORKER: "false" } });
  doc = (await stack.svc.call("GET", "/docs/json")).body;
  answers = documentedAnswers(doc);
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

async function call(method: string, path: string, opts: { auth?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const r = await stack.svc.call(method, path, opts);
  const op = answers.operationOf(method, path);
  expect(op, `${method} ${path} is a documented operation`).toBeDefined();
  seen.push({ op: op!, status: r.status, body: r.body });
  return r;
}

test("every documented operation answers as documented, successes and errors", async () => {
  const key = stack.key;
  const auth = { auth: key };
  await call("GET", "/healthz");
  await call("GET", "/readyz");

  // Sessions.
  const created = await call("POST", "/payment-sessions", { ...auth, body: { amount: "3.00", currency: "USD", referenceId: "ref-1", metadata: { a: "b" } }, headers: { "idempotency-key": "conf-1" } });
  expect(created.status).toBe(201);
  await call("POST", "/payment-sessions", { ...auth, body: { amount: "3.00", currency: "USD", referenceId: "ref-1", metadata: { a: "b" } }, headers: { "idempotency-key": "conf-1" } });
  await call("POST", "/payment-sessions", { ...auth, body: { amount: "3", currency: "USD" } });
  await call("POST", "/payment-sessions", { body: { amount: "3.00", currency: "USD" } });
  const id = created.body.paymentSessionId as string;
  const token = created.body.paymentSessionToken as string;
  await call("GET", "/payment-sessions?limit=1", auth);
  await call("GET", "/payment-sessions?limit=0", auth);
  await call("GET", `/payment-sessions/${id}`, auth);
  await call("GET", "/payment-sessions/ps_000000000000000000000000", auth);
  await call("GET", "/api/payment-sessions", { auth: token });
  await call("GET", "/api/payment-sessions", { auth: key });

  // The x402 facilitator: what it settles, a payment it refuses (x402's shape), a body that is no payment request.
  expect((await call("GET", "/x402/supported", auth)).body.kinds.length).toBeGreaterThan(0);
  const requirements = { scheme: "exact", network: "eip155:31337", asset: "0x00000000000000000000000000000000000000a1", amount: "10000", payTo: "0x00000000000000000000000000000000000000b2", maxTimeoutSeconds: 60, extra: {} };
  const x402 = { x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload: {} }, paymentRequirements: requirements };
  expect((await call("POST", "/x402/verify", { ...auth, body: x402 })).body.invalidReason).toBe("invalid_exact_evm_payload");
  expect((await call("POST", "/x402/settle", { ...auth, body: x402 })).body.errorReason).toBe("invalid_exact_evm_payload");
  await call("POST", "/x402/verify", { ...auth, body: { x402Version: 2 } });
  await call("POST", "/x402/settle", { body: x402 });

  // Sandbox tools on a real chain: faucet, pay (to SUCCEEDED), expire, fail-next-sweep, simulate-error.
  await call("POST", "/sandbox/faucet", { ...auth, body: { address: "0x00000000000000000000000000000000000000a1", amount: "5.00" } });
  await call("POST", "/sandbox/faucet", { ...auth, body: { address: "nope" } });
  await call("POST", "/sandbox/refund-balances/fund", { ...auth, body: { amount: "5.00" } });
  await call("POST", "/sandbox/refund-balances/fund", { ...auth, body: { token: "0x00000000000000000000000000000000000000a1" } });
  const fns = await call("POST", `/sandbox/payment-sessions/${id}/fail-next-sweep`, { ...auth, body: {} });
  expect(fns.status).toBe(200);
  const paid = await call("POST", `/sandbox/payment-sessions/${id}/pay`, { ...auth, body: {} });
  expect(paid.status).toBe(200);
  const other = (await call("POST", "/payment-sessions", { ...auth, body: { amount: "1.00", currency: "USD" } })).body;
  await call("POST", `/sandbox/payment-sessions/${other.paymentSessionId}/simulate-error`, { ...auth, body: {} });
  await call("POST", `/sandbox/payment-sessions/${other.paymentSessionId}/simulate-error`, { ...auth, body: {} });
  const third = (await call("POST", "/payment-sessions", { ...auth, body: { amount: "1.00", currency: "USD" } })).body;
  await call("POST", `/sandbox/payment-sessions/${third.paymentSessionId}/expire`, { ...auth, body: {} });
  const fourth = (await call("POST", "/payment-sessions", { ...auth, body: { amount: "1.00", currency: "USD" } })).body;
  await call("POST", `/payment-sessions/${fourth.paymentSessionId}/cancel`, { ...auth, body: {} });
  await call("POST", `/payment-sessions/${fourth.paymentSessionId}/cancel`, { ...auth, body: {} });
  const fifth = (await call("POST", "/payment-sessions", { ...auth, body: { amount: "1.00", currency: "USD" } })).body;
  await call("POST", "/api/payment-sessions/cancel", { auth: fifth.paymentSessionToken, body: {} });
  await call("POST", "/api/payment-sessions/cancel", { auth: fifth.paymentSessionToken, body: {} });
  // The payer's sandbox helpers (session token): test tokens to a wallet, and the test wallet pays.
  const sixth = (await call("POST", "/payment-sessions", { ...auth, body: { amount: "1.00", currency: "USD" } })).body;
  await call("POST", "/api/sandbox/faucet", { auth: sixth.paymentSessionToken, body: { address: "0x00000000000000000000000000000000000000a2" } });
  await call("POST", "/api/sandbox/faucet", { auth: sixth.paymentSessionToken, body: { address: "nope" } });
  await call("POST", "/api/sandbox/pay", { auth: sixth.paymentSessionToken, body: {} });
  await call("POST", "/api/sandbox/pay", { auth: key, body: {} });
  // Paying by a signed authorization (EIP-3009): a payer with test tokens and no gas coin signs the view's offer.
  const seventh = (await call("POST", "/payment-sessions", { ...auth, body: { amount: "1.00", currency: "USD" } })).body;
  const offer = (await call("GET", "/api/payment-sessions", { auth: seventh.paymentSessionToken })).body.networks[0].gasless;
  const payer = privateKeyToAccount(generatePrivateKey());
  await stack.chains[0]!.mint(payer.address, 1_000_000n);
  const m = offer.message;
  const signature = await payer.signTypedData({
    domain: offer.domain,
    types: offer.types,
    primaryType: offer.primaryType,
    message: { ...m, from: payer.address, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore) },
  });
  const authorization = { chainId: offer.domain.chainId, ...m, from: payer.address, signature };
  expect((await call("POST", "/api/payment-sessions/authorizations", { auth: seventh.paymentSessionToken, body: authorization })).status).toBe(202);
  await call("POST", "/api/payment-sessions/authorizations", { auth: seventh.paymentSessionToken, body: { ...authorization, value: "1" } });
  await call("POST", "/api/payment-sessions/authorizations", { auth: sixth.paymentSessionToken, body: authorization });
  expect((await call("GET", "/api/payment-sessions/authorizations", { auth: seventh.paymentSessionToken })).status).toBe(200);
  expect((await call("GET", "/api/payment-sessions/authorizations", { auth: sixth.paymentSessionToken })).status).toBe(404);
  await eventually(async () => (await stack.svc.call("GET", `/payment-sessions/${id}`, auth)).body.status !== "PENDING", "the paid session leaves PENDING", 30_000);
  await call("GET", `/payment-sessions/${id}`, auth);
  await call("GET", "/api/payment-sessions", { auth: token });

  // Refunds of the paid session, once its payment is in its ledger.
  await eventually(async () => (await stack.svc.services.database.sql`select 1 from app.session_funds where session_id = ${id} and direction = 'in'`).length > 0, "the payment in the ledger", 30_000);
  const rf = await call("POST", `/payment-sessions/${id}/refunds`, { ...auth, body: { amount: "1.00", reason: "requested_by_customer" }, headers: { "idempotency-key": "refund-conf-1" } });
  expect(rf.status).toBe(201);
  await call("POST", `/payment-sessions/${id}/refunds`, { ...auth, body: { amount: "1.00", reason: "requested_by_customer" }, headers: { "idempotency-key": "refund-conf-1" } });
  await call("POST", `/payment-sessions/${id}/refunds`, { ...auth, body: { amount: "99.00", reason: "other" } });
  await call("POST", `/payment-sessions/${other.paymentSessionId}/refunds`, { ...auth, body: { reason: "other" } });
  await call("POST", `/payment-sessions/${id}/refunds`, { ...auth, body: { reason: "nope" } });
  await call("POST", "/payment-sessions/ps_000000000000000000000000/refunds", { ...auth, body: { reason: "other" } });
  await call("GET", `/refunds/${rf.body.refundId}`, auth);
  await call("GET", "/refunds/rf_000000000000000000000000", auth);
  await call("GET", `/payment-sessions/${id}/refunds`, auth);
  await call("GET", "/payment-sessions/ps_000000000000000000000000/refunds", auth);
  await call("GET", "/refunds?limit=1", auth);
  await call("GET", "/refunds?limit=0", auth);
  expect((await call("POST", `/refunds/${rf.body.refundId}/cancel`, { ...auth, body: {} })).status).toBe(200);
  await call("POST", `/refunds/${rf.body.refundId}/cancel`, { ...auth, body: {} });
  // A refund to a link, claimed on its page (not an API operation), then approved; approved again, refused.
  const linked = await call("POST", `/payment-sessions/${id}/refunds`, { ...auth, body: { amount: "0.50", reason: "other", destination: "link", requireApproval: true } });
  expect(linked.status).toBe(201);
  await call("POST", `/refunds/${linked.body.refundId}/approve`, { ...auth, body: {} });
  const claimed = await fetch(`${stack.svc.url}${new URL(linked.body.claimUrl).pathname}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "address=0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  });
  expect(claimed.status).toBe(303);
  expect((await call("POST", `/refunds/${linked.body.refundId}/approve`, { ...auth, body: {} })).status).toBe(200);
  await call("POST", "/refunds/rf_000000000000000000000000/approve", { ...auth, body: {} });
  await call("GET", `/payment-sessions/${id}`, auth);
  // What POST /sandbox/refund-balances/fund minted above, read from the chain.
  expect((await call("GET", "/refund-balances", auth)).body.data[0].tokens[0].balanceBaseUnits).toBe("5000000");
  // Automatic returns: the setting, a session's returns, keep.
  expect((await call("GET", "/refund-settings", auth)).body).toEqual({ automaticReturns: false, delaySeconds: 86400 });
  expect((await call("PUT", "/refund-settings", { ...auth, body: { automaticReturns: true, delaySeconds: 3600 } })).body).toEqual({ automaticReturns: true, delaySeconds: 3600 });
  expect((await call("PUT", "/refund-settings", { ...auth, body: { delaySeconds: 0 } })).status).toBe(400);
  await call("PUT", "/refund-settings", { ...auth, body: { automaticReturns: false } });
  await call("GET", `/payment-sessions/${id}/automatic-returns`, auth);
  await call("GET", "/payment-sessions/ps_000000000000000000000000/automatic-returns", auth);
  await call("POST", `/payment-sessions/${id}/automatic-returns/keep`, { ...auth, body: {} });
  await call("POST", "/payment-sessions/ps_000000000000000000000000/automatic-returns/keep", { ...auth, body: {} });

  // Payment links: create (and its replay, bad input, a reused key), list, retrieve, deactivate.
  const link = await call("POST", "/payment-links", { ...auth, body: { amount: "5.00", description: "Conformance link", maxUses: 2 }, headers: { "idempotency-key": "link-conf-1" } });
  expect(link.status).toBe(201);
  await call("POST", "/payment-links", { ...auth, body: { amount: "5.00", description: "Conformance link", maxUses: 2 }, headers: { "idempotency-key": "link-conf-1" } });
  await call("POST", "/payment-links", { ...auth, body: { amount: "6.00", description: "Conformance link" }, headers: { "idempotency-key": "link-conf-1" } });
  await call("POST", "/payment-links", { ...auth, body: { minAmount: "1.00", maxAmount: "9.00", description: "Chosen", redirectUrl: "ftp://x" } });
  await call("POST", "/payment-links", { ...auth, body: { minAmount: "1.00", maxAmount: "9.00", description: "Chosen", expiresAt: "2099-01-01T00:00:00Z" } });
  await call("GET", "/payment-links?limit=1", auth);
  await call("GET", "/payment-links?limit=0", auth);
  await call("GET", `/payment-links/${link.body.paymentLinkId}`, auth);
  await call("GET", "/payment-links/plink_000000000000000000000000", auth);
  expect((await call("POST", `/payment-links/${link.body.paymentLinkId}/deactivate`, { ...auth, body: {} })).body.status).toBe("inactive");
  await call("POST", "/payment-links/plink_000000000000000000000000/deactivate", { ...auth, body: {} });

  // Settlement addresses.
  await call("GET", "/settlement-addresses", auth);
  await call("PUT", "/settlement-addresses/31337", { ...auth, body: { address: "0x00000000000000000000000000000000000000b2" } });
  await call("PUT", "/settlement-addresses/31337", { ...auth, body: { address: "0xAbCdEf0000000000000000000000000000000000" } });
  await call("PUT", "/settlement-addresses/999", { ...auth, body: { address: "0x00000000000000000000000000000000000000b2" } });

  // Webhook endpoints and events.
  const ep = await call("POST", "/webhook-endpoints", { ...auth, body: { url: "http://127.0.0.1:9/hook", description: "conformance" } });
  expect(ep.status).toBe(201);
  const epId = ep.body.id as string;
  await call("POST", "/webhook-endpoints", { ...auth, body: { url: "ftp://x" } });
  await call("GET", "/webhook-endpoints", auth);
  await call("GET", `/webhook-endpoints/${epId}`, auth);
  await call("POST", `/webhook-endpoints/${epId}`, { ...auth, body: { description: "renamed" } });
  await call("GET", `/webhook-endpoints/${epId}/secret`, auth);
  await call("POST", `/webhook-endpoints/${epId}/rotate-secret`, { ...auth, body: { overlapSeconds: 60 } });
  await call("POST", `/webhook-endpoints/${epId}/test`, { ...auth, body: {} });
  await call("GET", `/webhook-endpoints/${epId}/attempts`, auth);
  const events = await call("GET", "/events?limit=5", auth);
  expect(events.body.data.length).toBeGreaterThan(0);
  const evtId = events.body.data[0].id as string;
  await call("GET", `/events?paymentSessionId=${id}`, auth);
  await call("GET", "/events?type=nope", auth);
  await call("GET", `/events/${evtId}`, auth);
  await call("GET", "/events/evt_000000000000000000000000", auth);
  await call("GET", `/events/${evtId}/attempts`, auth);
  await call("POST", `/events/${evtId}/redeliver`, { ...auth, body: {} });
  await call("DELETE", `/webhook-endpoints/${epId}`, auth);
  await call("GET", `/webhook-endpoints/${epId}`, auth);

  // Every documented operation was called.
  const documented = Object.entries(doc.paths).flatMap(([p, m]: [string, any]) => Object.keys(m).map((x) => `${x.toUpperCase()} ${p}`));
  expect(documented.filter((op) => !seen.some((s) => s.op === op))).toEqual([]);

  // Every answer matches the schema documented for its route and status.
  const violations = seen.map((s) => answers.problem(s.op, s.status, s.body)).filter((v) => v !== undefined);
  expect(violations).toEqual([]);
  expect(seen.length).toBeGreaterThan(50);
}, 120_000);

test("every event of the sessions above, in GET /events and in their histories, matches the schema of its reason", async () => {
  const checked = await checkEventsAgainstDocument(stack.svc, stack.key);
  expect(checked.problems).toEqual([]);
  expect([...checked.reasons]).toEqual(expect.arrayContaining(["created", "paid", "simulated", "expired", "canceled_by_merchant", "canceled_by_payer"]));
}, 30_000);
