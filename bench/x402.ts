/**
 * The x402 facilitator's figures (docs/x402.md): POST /x402/verify p50/p99 idle, one request at a
 * time (every check, the chain's included: the token's nonce state and the payer's balance, and
 * the relayer's call simulated on anvil; nothing written), with `GET /healthz` the same way in
 * the same run as the floor (the HTTP stack and a loopback round trip) and each figure also as a
 * ratio to it; then POST /x402/settle → the session SUCCEEDED, p50/p95, one payment at a time
 * (the session made, the authorization recorded, the relayer's transaction mined — the settle's
 * answer — then the indexer and the runner: FUNDED, SUCCEEDED). A real service with its
 * indexer, runner and sweeper on anvil mining a block a second as `bun run dev`'s does.
 * Then the verifies again while the service takes 500 session creates a second (paced, from
 * this process): p50/p99 under load, with the floor under the same load.
 * Prints one JSON object. Goal: verify p50 ≤ 5 ms idle.
 *   BENCH_VERIFIES (default 2,000), BENCH_SETTLES (default 10), BENCH_LOAD_CREATES_PER_SECOND (default 500).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAddress, toHex, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { startLifecycleStack } from "../testing/lifecycle.ts";
import { startEmbeddedPostgres } from "../api/src/db/embedded.ts";
import { freePort } from "../testing/ports.ts";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../shared/contracts/eip3009.ts";
import { DEFAULT_SANDBOX_SETTLEMENT } from "../api/src/config.ts";
import { percentile, round } from "./lib.ts";

const VERIFIES = Number(process.env.BENCH_VERIFIES ?? 2000);
const SETTLES = Number(process.env.BENCH_SETTLES ?? 10);
const LOAD_CREATES_PER_SECOND = Number(process.env.BENCH_LOAD_CREATES_PER_SECOND ?? 500);
const CHAIN = 31337;
const PRICE = 10_000n;
const PAY_TO = getAddress(DEFAULT_SANDBOX_SETTLEMENT);

const pgDir = mkdtempSync(join(tmpdir(), "bench-x402-pg-"));
const pg = await startEmbeddedPostgres({ dataDir: join(pgDir, "pg"), port: await freePort(), persistent: false });
process.env.PAYSESSION_TEST_PG_URL = pg.url;
const stack = await startLifecycleStack();
const anvil = stack.chains[0]!;
const token = anvil.token;
const read = (fn: "name" | "version") => anvil.publicClient.readContract({ address: token, abi: [{ type: "function", name: fn, stateMutability: "view", inputs: [], outputs: [{ type: "string" }] }] as const, functionName: fn });
const domain = { name: await read("name"), version: await read("version") };
const headers = { authorization: `Bearer ${stack.key}`, "content-type": "application/json" };

/** A signed exact payment of PRICE to the sandbox settlement address, as an x402 client sends it. */
async function payment(account: PrivateKeyAccount) {
  const requirements = { scheme: "exact", network: `eip155:${CHAIN}`, asset: token, amount: PRICE.toString(), payTo: PAY_TO, maxTimeoutSeconds: 300, extra: domain };
  const authorization = { from: account.address, to: PAY_TO as Address, value: PRICE, validAfter: 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 300), nonce: toHex(crypto.getRandomValues(new Uint8Array(32))) };
  const signature = await account.signTypedData({ domain: { ...domain, chainId: CHAIN, verifyingContract: token }, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message: authorization });
  const wire = { ...authorization, value: PRICE.toString(), validAfter: "0", validBefore: authorization.validBefore.toString() };
  return JSON.stringify({
    x402Version: 2,
    paymentPayload: { x402Version: 2, resource: { url: "http://bench.example/thing" }, accepted: requirements, payload: { authorization: wire, signature } },
    paymentRequirements: requirements,
  });
}

async function timed(count: number, request: (i: number) => Promise<Response>, ok: (r: Response, body: string) => boolean) {
  const ms: number[] = [];
  let failures = 0;
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const r = await request(i);
    const body = await r.text();
    const t = performance.now() - t0;
    if (ok(r, body)) ms.push(t);
    else failures++;
  }
  return { ms, failures };
}

try {
  // Payers with TestUSD and no gas coin; verify goes round their (unsettled) payments.
  const payers: PrivateKeyAccount[] = [];
  for (let i = 0; i < 8; i++) {
    const a = privateKeyToAccount(generatePrivateKey());
    await anvil.mint(a.address, PRICE * 10n); // one after another: the minter's nonces
    payers.push(a);
  }
  const bodies = await Promise.all(payers.map(payment));
  const figures = (count: number) => ({
    healthz: () => timed(count, () => fetch(`${stack.svc.url}/healthz`), (r) => r.status === 200),
    verify: () => timed(count, (i) => fetch(`${stack.svc.url}/x402/verify`, { method: "POST", headers, body: bodies[i % bodies.length] }), (r, b) => r.status === 200 && JSON.parse(b).isValid === true),
  });
  const measureAll = async (count: number) => {
    const all: Record<string, { ms: number[]; failures: number }> = {};
    for (let round = 0; round < 4; round++) {
      for (const [name, run] of Object.entries(figures(Math.ceil(count / 4)))) {
        const res = await run();
        (all[name] ??= { ms: [], failures: 0 }).ms.push(...res.ms);
        all[name]!.failures += res.failures;
      }
    }
    const out: Record<string, { n: number; failures: number; p50Ms: number; p99Ms: number }> = {};
    for (const [name, { ms, failures }] of Object.entries(all)) {
      ms.sort((a, b) => a - b);
      out[name] = { n: ms.length, failures, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99) };
    }
    return out;
  };
  await measureAll(400); // warm-up: JIT, prepared statements, the token's domain read once
  const idle = await measureAll(VERIFIES);

  // The same verifies while the service takes LOAD_CREATES_PER_SECOND session creates (paced, open
  // loop, from this process, at most 200 in flight): what a resource server sees on a busy service.
  const createBody = JSON.stringify({ amount: "1.00", currency: "USD" });
  let creates = 0;
  let createFailures = 0;
  let inFlight = 0;
  let loading = true;
  const loadStarted = performance.now();
  const load = (async () => {
    let sent = 0;
    while (loading) {
      const due = Math.floor(((performance.now() - loadStarted) / 1000) * LOAD_CREATES_PER_SECOND);
      while (sent < due && inFlight < 200) {
        sent++;
        inFlight++;
        fetch(`${stack.svc.url}/payment-sessions`, { method: "POST", headers, body: createBody })
          .then(async (r) => {
            await r.arrayBuffer();
            if (r.status === 201) creates++;
            else createFailures++;
          }, () => createFailures++)
          .finally(() => inFlight--);
      }
      await Bun.sleep(2);
    }
  })();
  await Bun.sleep(1000); // the load settles
  const creates0 = creates;
  const t0Load = performance.now();
  const loaded = await measureAll(Math.min(VERIFIES, 1000));
  const loadSeconds = (performance.now() - t0Load) / 1000;
  const achievedCreatesPerSecond = Math.round((creates - creates0) / loadSeconds);
  loading = false;
  await load;
  while (inFlight > 0) await Bun.sleep(10);

  const settleToSucceededMs: number[] = [];
  const settleAnswerMs: number[] = [];
  for (let i = 0; i <= SETTLES; i++) {
    const body = await payment(payers[i % payers.length]!);
    const t0 = performance.now();
    const r = await fetch(`${stack.svc.url}/x402/settle`, { method: "POST", headers, body });
    const answer = (await r.json()) as { success: boolean; errorReason?: string; extra?: { paymentSessionId: string } };
    const answered = performance.now() - t0;
    if (!answer.success) throw new Error(`settle: ${JSON.stringify(answer)}`);
    await stack.waitFor(answer.extra!.paymentSessionId, "SUCCEEDED", 60_000);
    if (i > 0) {
      settleAnswerMs.push(answered);
      settleToSucceededMs.push(performance.now() - t0);
    }
  }
  settleAnswerMs.sort((a, b) => a - b);
  settleToSucceededMs.sort((a, b) => a - b);
  const floor = idle.healthz!.p50Ms;
  const goal = 5;
  console.log(
    JSON.stringify({
      bench: "x402",
      verify: { ...idle.verify, p50xFloor: round(idle.verify!.p50Ms / floor, 1), p99xFloor: round(idle.verify!.p99Ms / idle.healthz!.p99Ms, 1) },
      floor: idle.healthz,
      underLoad: {
        createsPerSecondAsked: LOAD_CREATES_PER_SECOND,
        createsPerSecondAchieved: achievedCreatesPerSecond,
        createFailures,
        verify: { ...loaded.verify, p50xFloor: round(loaded.verify!.p50Ms / loaded.healthz!.p50Ms, 1) },
        floor: loaded.healthz,
      },
      settle: {
        payments: settleToSucceededMs.length,
        answerMs: { p50: Math.round(percentile(settleAnswerMs, 50)), p95: Math.round(percentile(settleAnswerMs, 95)) },
        toSucceededMs: { p50: Math.round(percentile(settleToSucceededMs, 50)), p95: Math.round(percentile(settleToSucceededMs, 95)) },
      },
      cores: navigator.hardwareConcurrency,
      goals: { verifyIdleP50Ms: goal },
      pass: { verify: idle.verify!.p50Ms <= goal },
      note: "sandbox: 1 confirmation, a block a second (anvil heartbeat) or per transaction; service, indexer and bench in one process tree",
    }),
  );
} finally {
  await stack.close();
  await pg.stop();
  rmSync(pgDir, { recursive: true, force: true });
}
