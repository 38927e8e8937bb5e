/**
 * `bun run test:production` — the steps of docs/going-live.md, run as written, offline:
 * two local chains stand in for Ethereum and Base (chain ids 1 and 8453, a 6-decimal token's
 * code at the presets' canonical USDC addresses, no deposit factory), `bun run start` in its
 * production configuration and `bun run admin` as real processes, one payment per chain to
 * SUCCEEDED, one refund of each back to its payer, and what moved read back from the chain
 * (receipt logs and balanceOf).
 *
 * Also rehearsed: the service started before the factory was deployed — every network is
 * reported not ready, a session create answers 503 network_unavailable (no deposit address that
 * nothing could sweep is handed out) and the relayer spends nothing — then the operator deploys
 * the factory and the next session is offered and paid, without a restart.
 *
 * Prints one JSON line (steps and duration); exits non-zero on the first step that fails.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createWalletClient, decodeEventLog, erc20Abi, getAddress, http, parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { predictedAuthorizationBatchAddress, predictedFactoryAddress } from "../shared/contracts/addresses.ts";
import { predictedRefundVaultsAddress } from "../shared/contracts/refund-vaults.ts";
import { startMainnetStandIn, type EthereumStandIn, type MainnetStandIn } from "./mainnet-standin.ts";
import { freePort } from "./ports.ts";
import { ANVIL_ACCOUNTS } from "../shared/devchain/index.ts";
import { localClients } from "../shared/devchain/clients.ts";
import { describeError } from "../shared/describe-error.ts";

const ROOT = resolve(import.meta.dir, "..");
const started = Date.now();
const steps: { step: string; ms: number }[] = [];
let mark = Date.now();
const step = (name: string) => {
  steps.push({ step: name, ms: Date.now() - mark });
  mark = Date.now();
  console.error(`[rehearsal] ok: ${name}`);
};
function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`rehearsal failed: ${what}`);
}

const dataDir = mkdtempSync(join(tmpdir(), "paysession-rehearsal-"));
let ethereum: EthereumStandIn | undefined;
let base: MainnetStandIn | undefined;
let server: ChildProcess | undefined;
let serverExited: Promise<number | null> | undefined;
let mining: ReturnType<typeof setInterval> | undefined;
let serverLog = "";

/** The environment the going-live steps set, and nothing of the developer's own. */
function operatorEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SERVICE_") && !k.startsWith("DATABASE_")) env[k] = v;
  return { ...env, ...extra };
}

function sh(cmd: string[], env: Record<string, string>) {
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd: ROOT, env, encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function main() {
  // The two "main networks", as a new operator would try them offline. No factory yet.
  [ethereum, base] = await Promise.all([startMainnetStandIn("ethereum"), startMainnetStandIn("base")]);
  const chains = { 1: ethereum, 8453: base } as Record<number, MainnetStandIn>;
  step("two local chains with chain ids 1 and 8453, a 6-decimal token at the canonical USDC addresses (and USDT's on chain 1)");

  // Going live, step 1: the two keys to generate and keep.
  const encryptionKey = sh(["openssl", "rand", "-base64", "32"], process.env as Record<string, string>).out.trim();
  const relayerKey = `0x${sh(["openssl", "rand", "-hex", "32"], process.env as Record<string, string>).out.trim()}` as Hex;
  check(encryptionKey.length === 44 && /^0x[0-9a-f]{64}$/.test(relayerKey), "openssl made the keys");
  const port = await freePort();
  const host = `http://127.0.0.1:${port}`;
  const env = operatorEnv({
    SERVICE_ENCRYPTION_KEY: encryptionKey,
    SERVICE_RELAYER_PRIVATE_KEY: relayerKey,
    // step 2: the networks and the public address
    SERVICE_RPC_URL_ETHEREUM: ethereum.rpcUrl,
    SERVICE_RPC_URL_BASE: base.rpcUrl,
    SERVICE_PUBLIC_URL: host,
    // step 10: payers without gas coin are on by default on both networks.
    // The stand-in's fee market is anvil's (it suggests a 1 gwei tip), not Base's (≈ 0.001 gwei):
    // above Base's default ceiling of 0.5 gwei. An operator sets the ceiling for the network it runs.
    SERVICE_GASLESS_MAX_FEE_GWEI_BASE: "5",
    // this machine only: a data directory and ports of its own
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: String(port),
    SERVICE_EMBEDDED_PG_PORT: String(await freePort()),
    SERVICE_INDEXER_PORT: String(await freePort()),
  });
  const admin = (...args: string[]) => sh(["bun", "run", "--silent", "admin", ...args], env);

  // Step 3: what the networks look like: reachable, USDC with 6 decimals, no factory, relayer empty.
  let r = admin("networks");
  check(r.code === 1, `admin networks exits 1 while a network is not ready: ${r.out}${r.err}`);
  check(/Ethereum \(chain 1, production\), head \d+, USDC 6 decimals, USDT 6 decimals, factory MISSING, batch missing, relayer 0x[0-9a-fA-F]{40} 0 \(LOW\), NOT READY/.test(r.out), `networks output: ${r.out}`);
  check(r.out.includes("Base (chain 8453, production)"), "Base listed");
  const relayer = getAddress(r.out.match(/relayer (0x[0-9a-fA-F]{40})/)![1]!);
  check(relayer === privateKeyToAccount(relayerKey).address, "the relayer shown is the key's account");
  step("admin networks: both reachable, USDC 6 decimals, factory and batch contract missing, relayer empty");

  // Step 4: fund the relayer (on a real network: send ETH to it; here anvil_setBalance).
  for (const c of [ethereum, base]) await c.rpc("anvil_setBalance", [relayer, `0x${parseEther("1").toString(16)}`]);
  r = admin("networks");
  check(!r.out.includes("(LOW)") && r.out.includes(`relayer ${relayer} 1,`), `relayer funded: ${r.out}`);
  step("relayer funded, admin networks shows its balance");

  // The situation of the issue: the service started before the factory is deployed.
  server = spawn("bun", ["run", "start"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  serverExited = new Promise((res) => server!.once("exit", (code) => res(code)));
  server.stdout!.on("data", (d: Buffer) => (serverLog += d.toString()));
  server.stderr!.on("data", (d: Buffer) => (serverLog += d.toString()));
  const upBy = Date.now() + 90_000;
  while (!/sweeper   running/.test(serverLog)) {
    check(Date.now() < upBy && server.exitCode === null, `bun run start came up:\n${serverLog}`);
    await Bun.sleep(100);
  }
  check(/NOT READY Ethereum: no deposit factory at 0x/.test(serverLog) && /NOT READY Base: no deposit factory/.test(serverLog), `start-up log names the missing factory:\n${serverLog}`);
  check(!serverLog.includes(relayerKey.slice(2)) && !serverLog.includes(encryptionKey), "no secret in the log");
  const call = async (method: string, path: string, key?: string, body?: unknown) => {
    const res = await fetch(`${host}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  let ready = await call("GET", "/readyz");
  check(ready.status === 200 && ready.body.status === "degraded" && ready.body.networks.every((n: any) => n.ready === false && n.factory.present === false), `readyz degraded: ${JSON.stringify(ready.body)}`);
  step("bun run start without the factory: up, both networks NOT READY in the log and on /readyz");

  // Steps 7–8: the merchant, its settlement addresses, the live key.
  r = admin("merchant:create", "--name", "Acme", "--json");
  check(r.code === 0, `merchant:create: ${r.err}`);
  const created = JSON.parse(r.out);
  const merchant = created.merchant.id as string;
  const liveKey = created.keys.production as string;
  const settlement: Record<number, Address> = { 1: "0x1111111111111111111111111111111111111111", 8453: "0x8453845384538453845384538453845384538453" };
  const noSettlement = await call("POST", "/payment-sessions", liveKey, { amount: "1.00", currency: "USD" });
  check(noSettlement.status === 409 && noSettlement.body.error.code === "settlement_address_missing", "409 before a settlement address");
  for (const chainId of [1, 8453]) {
    r = admin("settlement:set", "--merchant", merchant, "--env", "production", "--chain", String(chainId), "--address", settlement[chainId]!);
    check(r.code === 0, `settlement:set ${chainId}: ${r.err}`);
  }
  // Not ready: no deposit address is handed out, and the relayer has sent nothing.
  const refused = await call("POST", "/payment-sessions", liveKey, { amount: "1.00", currency: "USD" });
  check(refused.status === 503 && refused.body.error.code === "network_unavailable", `503 while not ready: ${JSON.stringify(refused.body)}`);
  for (const c of [ethereum, base]) check((await c.rpc("eth_getTransactionCount", [relayer, "latest"])) === "0x0", "the relayer spent nothing while not ready");
  step("merchant, settlement addresses; a live create while not ready answers 503, the relayer sent nothing");

  // Step 5 (done late here on purpose): deploy the factory on each network.
  const deployCost: Record<number, bigint> = {};
  for (const chainId of [1, 8453]) {
    const before = await localClients(chains[chainId]!.rpcUrl, chainId).publicClient.getBalance({ address: relayer });
    r = admin("factory:deploy", "--chain", String(chainId));
    check(
      r.code === 0 && r.out.includes(`deployed the deposit factory at ${predictedFactoryAddress()} and AuthorizationBatch at ${predictedAuthorizationBatchAddress()} and RefundVaults at ${predictedRefundVaultsAddress(relayer)}`),
      `factory:deploy ${chainId}: ${r.out}${r.err}`,
    );
    const cost = r.out.match(/cost ([0-9.]+) ETH/)![1]!;
    const after = await localClients(chains[chainId]!.rpcUrl, chainId).publicClient.getBalance({ address: relayer });
    check(before - after === parseEther(cost), `the printed cost (${cost}) is what the relayer paid (${before - after} wei)`);
    deployCost[chainId] = before - after;
    r = admin("factory:deploy", "--chain", String(chainId));
    check(r.code === 0 && r.out.includes("already deployed") && r.out.includes("nothing sent"), "factory:deploy again: a no-op");
  }
  r = admin("networks");
  check(r.code === 0 && (r.out.match(/factory present, batch present/g) ?? []).length === 2 && !r.out.includes("AuthorizationBatch"), `admin networks: ready: ${r.out}`);
  step("admin factory:deploy on chain 1 and 8453: the factory, AuthorizationBatch and RefundVaults, transactions, cost = the relayer's balance change; idempotent");

  // Step 9: a small test payment on each chain, no restart needed: in USDT on Ethereum (its second
  // stablecoin: a USDT-like token's code at the canonical USDT address), in USDC on Base.
  const payer = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey);
  const paidIn: Record<number, { token: Address; symbol: string; mint: (to: Address, amount: bigint) => Promise<unknown> }> = {
    1: { token: ethereum.usdt, symbol: "USDT", mint: (to, amount) => ethereum!.mintUsdt(to, amount) },
    8453: { token: base.usdc, symbol: "USDC", mint: (to, amount) => base!.mintUsdc(to, amount) },
  };
  const sessions: { id: string; chainId: number; deposit: Address; baseUnits: bigint }[] = [];
  const createdBy = Date.now() + 5000;
  for (const chainId of [1, 8453]) {
    let s = await call("POST", "/payment-sessions", liveKey, { amount: chainId === 1 ? "1.25" : "2.50", currency: "USD" });
    while (s.status === 503 && Date.now() < createdBy) {
      await Bun.sleep(250);
      s = await call("POST", "/payment-sessions", liveKey, { amount: chainId === 1 ? "1.25" : "2.50", currency: "USD" });
    }
    check(s.status === 201, `create after deploy: ${JSON.stringify(s.body)}`);
    check(JSON.stringify(s.body.networks.map((n: any) => n.chainId)) === "[1,8453]", "offered on both networks");
    const n = s.body.networks.find((x: any) => x.chainId === chainId);
    check(n.tokenAddress.toLowerCase() === chains[chainId]!.usdc.toLowerCase() && n.confirmations === (chainId === 1 ? 12 : 10), "preset USDC and confirmations");
    const symbols = n.tokens.map((t: any) => t.tokenSymbol).join(",");
    check(symbols === (chainId === 1 ? "USDC,USDT" : "USDC"), `the network's stablecoins on chain ${chainId}: ${symbols}`);
    const paying = n.tokens.find((t: any) => t.tokenSymbol === paidIn[chainId]!.symbol);
    check(getAddress(paying.tokenAddress) === getAddress(paidIn[chainId]!.token), `${paidIn[chainId]!.symbol} at its canonical address on chain ${chainId}`);
    sessions.push({ id: s.body.paymentSessionId, chainId, deposit: getAddress(n.depositAddress), baseUnits: BigInt(paying.amountBaseUnits) });
  }
  // Ready once the indexer has caught up with the deploy's blocks (a moment: "degraded" meanwhile).
  const deadline = Date.now() + 30_000;
  do {
    ready = await call("GET", "/readyz");
    if (ready.body.status === "ready") break;
    await Bun.sleep(250);
  } while (Date.now() < deadline);
  check(ready.body.status === "ready", `readyz ready after deploy: ${JSON.stringify(ready.body)}`);
  for (const s of sessions) {
    const c = chains[s.chainId]!;
    const pay = paidIn[s.chainId]!;
    await pay.mint(payer.address, s.baseUnits);
    const wallet = createWalletClient({ account: payer, transport: http(c.rpcUrl), chain: localClients(c.rpcUrl, s.chainId).walletClient.chain });
    // (USDT's transfer returns no data: sent without a simulation that expects a bool.)
    const hash = await wallet.writeContract({ address: pay.token, abi: erc20Abi, functionName: "transfer", args: [s.deposit, s.baseUnits], chain: wallet.chain, gas: 100_000n });
    await localClients(c.rpcUrl, s.chainId).publicClient.waitForTransactionReceipt({ hash });
  }
  // Blocks keep coming, as on a real chain (12 and 10 confirmations).
  mining = setInterval(() => {
    for (const c of [ethereum!, base!]) c.mine(1).catch(() => {});
  }, 150);
  const doneBy = Date.now() + 120_000;
  const finals: Record<string, any> = {};
  for (const s of sessions) {
    for (;;) {
      const v = await call("GET", `/payment-sessions/${s.id}`, liveKey);
      if (["SUCCEEDED", "ERROR", "CANCELED"].includes(v.body.status)) {
        finals[s.id] = v.body;
        break;
      }
      check(Date.now() < doneBy, `session on chain ${s.chainId} reached SUCCEEDED (now ${v.body.status}):\n${serverLog.slice(-3000)}`);
      await Bun.sleep(250);
    }
    check(finals[s.id].status === "SUCCEEDED", `SUCCEEDED on chain ${s.chainId}: ${JSON.stringify(finals[s.id].history)}`);
  }
  clearInterval(mining);
  step("one payment per chain, in USDT on Ethereum and USDC on Base: PENDING → FUNDED → SUCCEEDED");

  // What moved, read from the chain: the sweep's receipt logs and the settlement balances.
  for (const s of sessions) {
    const c = chains[s.chainId]!;
    const { publicClient } = localClients(c.rpcUrl, s.chainId);
    const hist = finals[s.id].history as { status: string; detail: Record<string, unknown> }[];
    const sweepTx = hist.find((h) => h.status === "SUCCEEDED")!.detail.sweepTxHash as Hex;
    check(/^0x[0-9a-f]{64}$/.test(sweepTx ?? ""), `sweepTxHash in the SUCCEEDED event: ${JSON.stringify(hist)}`);
    const receipt = await publicClient.getTransactionReceipt({ hash: sweepTx });
    const token = paidIn[s.chainId]!.token;
    const moved = receipt.logs
      .filter((l) => l.address.toLowerCase() === token.toLowerCase())
      .map((l) => decodeEventLog({ abi: erc20Abi, data: l.data, topics: l.topics }))
      .filter((e) => e.eventName === "Transfer")
      .map((e) => e.args as { from: Address; to: Address; value: bigint });
    check(
      moved.some((t) => getAddress(t.from) === s.deposit && getAddress(t.to) === getAddress(settlement[s.chainId]!) && t.value === s.baseUnits),
      `the sweep's receipt has Transfer(deposit → settlement, ${s.baseUnits}) on chain ${s.chainId}`,
    );
    check((await c.balanceOf(settlement[s.chainId]!, token)) === s.baseUnits, `settlement balanceOf ${paidIn[s.chainId]!.symbol} on chain ${s.chainId}`);
    check((await c.balanceOf(s.deposit, token)) === 0n, `deposit emptied on chain ${s.chainId}`);
    check(getAddress(receipt.from) === relayer, "the relayer sent the sweep");
  }
  step("on chain: the sweep receipts' Transfer logs and balanceOf show each amount at its settlement address");

  // A refund of each payment, from the merchant's refund balance (one address on every network,
  // funded by the merchant), back to the payer's own address, read from the refund's receipt.
  const balances = await call("GET", "/refund-balances", liveKey);
  check(balances.status === 200 && balances.body.data.length === 2, `refund balances: ${JSON.stringify(balances.body)}`);
  const vault = getAddress(balances.body.data[0].address);
  check(balances.body.data.every((b: any) => getAddress(b.address) === vault), "one refund balance address on both networks");
  mining = setInterval(() => {
    for (const c of [ethereum!, base!]) c.mine(1).catch(() => {});
  }, 150);
  for (const s of sessions) {
    const c = chains[s.chainId]!;
    const pay = paidIn[s.chainId]!;
    const refundUnits = 500_000n; // 0.50 in the 6-decimal token
    await pay.mint(vault, refundUnits);
    const payerBefore = await c.balanceOf(payer.address, pay.token);
    const created = await call("POST", `/payment-sessions/${s.id}/refunds`, liveKey, { amount: "0.50", reason: "requested_by_customer" });
    check(created.status === 201 && getAddress(created.body.parts[0].destination) === payer.address, `refund created on chain ${s.chainId}, to the payer: ${JSON.stringify(created.body)}`);
    let refund: any;
    const refundedBy = Date.now() + 120_000;
    for (;;) {
      refund = (await call("GET", `/refunds/${created.body.refundId}`, liveKey)).body;
      if (["SUCCEEDED", "FAILED", "CANCELED"].includes(refund.status)) break;
      check(Date.now() < refundedBy, `refund on chain ${s.chainId} reached SUCCEEDED (now ${refund.status} ${refund.waitingReason ?? ""}):\n${serverLog.slice(-3000)}`);
      await Bun.sleep(250);
    }
    check(refund.status === "SUCCEEDED", `refund SUCCEEDED on chain ${s.chainId}: ${JSON.stringify(refund)}`);
    const { publicClient } = localClients(c.rpcUrl, s.chainId);
    const receipt = await publicClient.getTransactionReceipt({ hash: refund.transactionHash as Hex });
    const moved = receipt.logs
      .filter((l) => l.address.toLowerCase() === pay.token.toLowerCase())
      .map((l) => decodeEventLog({ abi: erc20Abi, data: l.data, topics: l.topics }))
      .filter((e) => e.eventName === "Transfer")
      .map((e) => e.args as { from: Address; to: Address; value: bigint });
    check(
      moved.length === 1 && getAddress(moved[0]!.from) === vault && getAddress(moved[0]!.to) === payer.address && moved[0]!.value === refundUnits,
      `the refund's receipt has exactly Transfer(refund balance → payer, ${refundUnits}) on chain ${s.chainId}: ${JSON.stringify(moved, (_, v) => (typeof v === "bigint" ? v.toString() : v))}`,
    );
    check((await c.balanceOf(payer.address, pay.token)) - payerBefore === refundUnits, `the payer's ${pay.symbol} grew by the refund on chain ${s.chainId}`);
    check(getAddress(receipt.from) === relayer, "the relayer sent the refund");
  }
  clearInterval(mining);
  step("one refund per chain, in USDT on Ethereum and USDC on Base: from the refund balance to the payer, its receipt's Transfer log exact");

  // Step 10: one payment per chain by a payer holding USDC and no ETH, with one signature.
  mining = setInterval(() => {
    for (const c of [ethereum!, base!]) c.mine(1).catch(() => {});
  }, 150);
  for (const chainId of [1, 8453]) {
    const c = chains[chainId]!;
    const { publicClient } = localClients(c.rpcUrl, chainId);
    const s = await call("POST", "/payment-sessions", liveKey, { amount: "3.75", currency: "USD" });
    check(s.status === 201, `create for the authorization payment: ${JSON.stringify(s.body)}`);
    const token = s.body.paymentSessionToken as string;
    // The payer view offers what to sign (once the fee is under the network's ceiling).
    let offer: any;
    const offeredBy = Date.now() + 30_000;
    for (;;) {
      const view = await call("GET", `/api/payment-sessions?paymentSessionId=${s.body.paymentSessionId}`, token);
      offer = view.body.networks?.find((n: any) => n.chainId === chainId)?.gasless;
      if (offer) break;
      check(Date.now() < offeredBy, `chain ${chainId} offers paying by authorization: ${JSON.stringify(view.body.networks)}`);
      await Bun.sleep(500);
    }
    const gaslessPayer = privateKeyToAccount(generatePrivateKey());
    const value = BigInt(offer.message.value);
    await c.mintUsdc(gaslessPayer.address, value);
    const settledBefore = await c.balanceOf(settlement[chainId]!);
    const message = { ...offer.message, from: gaslessPayer.address, value, validAfter: BigInt(offer.message.validAfter), validBefore: BigInt(offer.message.validBefore) };
    const signature = await gaslessPayer.signTypedData({ domain: offer.domain, types: offer.types, primaryType: "TransferWithAuthorization", message });
    const recorded = await call("POST", "/api/payment-sessions/authorizations", token, { chainId, from: gaslessPayer.address, value: offer.message.value, validAfter: offer.message.validAfter, validBefore: offer.message.validBefore, nonce: offer.message.nonce, signature });
    check(recorded.status === 202, `authorization recorded on chain ${chainId}: ${JSON.stringify(recorded.body)}`);
    let final: any;
    const byAuthorizationBy = Date.now() + 120_000;
    for (;;) {
      final = (await call("GET", `/payment-sessions/${s.body.paymentSessionId}`, liveKey)).body;
      if (["SUCCEEDED", "ERROR", "CANCELED"].includes(final.status)) break;
      check(Date.now() < byAuthorizationBy, `authorization payment on chain ${chainId} reached SUCCEEDED (now ${final.status}):\n${serverLog.slice(-3000)}`);
      await Bun.sleep(250);
    }
    const succeeded = (final.history as { status: string; detail: Record<string, unknown> }[]).find((h) => h.status === "SUCCEEDED");
    check(succeeded?.detail.method === "authorization", `SUCCEEDED by authorization on chain ${chainId}: ${JSON.stringify(final.history)}`);
    const receipt = await publicClient.getTransactionReceipt({ hash: succeeded!.detail.sweepTxHash as Hex });
    const moved = receipt.logs
      .filter((l) => l.address.toLowerCase() === c.usdc.toLowerCase())
      .flatMap((l) => {
        try {
          return [decodeEventLog({ abi: erc20Abi, data: l.data, topics: l.topics })];
        } catch {
          return []; // AuthorizationUsed: not an ERC-20 event
        }
      })
      .filter((e) => e.eventName === "Transfer")
      .map((e) => e.args as { from: Address; to: Address; value: bigint });
    check(
      moved.some((t) => getAddress(t.from) === gaslessPayer.address && getAddress(t.to) === getAddress(settlement[chainId]!) && t.value === value),
      `the payment's receipt has Transfer(payer → settlement, ${value}) on chain ${chainId}`,
    );
    check((await c.balanceOf(settlement[chainId]!)) - settledBefore === value, `settlement balanceOf grew by the amount on chain ${chainId}`);
    check((await publicClient.getBalance({ address: gaslessPayer.address })) === 0n, `the payer spent no gas coin on chain ${chainId}`);
    check(getAddress(receipt.from) === relayer, "the relayer submitted the authorization");
  }
  clearInterval(mining);
  step("one payment per chain by authorization: a payer with USDC and no ETH signs once; SUCCEEDED with no sweep, the Transfer payer → settlement in the receipt's logs");

  server.kill("SIGTERM");
  check((await serverExited) === 0, "bun run start stops cleanly on SIGTERM");
  server = undefined;
  step("stopped cleanly");
}

let failed = false;
try {
  await main();
} catch (err) {
  failed = true;
  console.error(describeError(err, { stack: true }));
  if (serverLog) console.error(`--- service log (last lines) ---\n${serverLog.split("\n").slice(-40).join("\n")}`);
} finally {
  if (mining) clearInterval(mining);
  if (server && server.exitCode === null) {
    server.kill("SIGTERM");
    await Promise.race([serverExited, Bun.sleep(15_000)]);
    if (server.exitCode === null) server.kill("SIGKILL");
  }
  await ethereum?.stop();
  await base?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
console.log(JSON.stringify({ rehearsal: "production", ok: !failed, seconds: Math.round((Date.now() - started) / 100) / 10, steps }));
process.exit(failed ? 1 : 0);
