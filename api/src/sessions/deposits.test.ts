import { expect, test } from "bun:test";
import { getAddress } from "viem";
import { parseChainsEnv } from "../../../shared/chains/config.ts";
import { predictDepositAddress, predictedFactoryAddress, sessionSalt } from "../../../shared/contracts/addresses.ts";
import { parseSettlementAddress, planDeposits } from "./deposits.ts";

const parsed = parseChainsEnv({
  SERVICE_RPC_URL_LOCAL: "http://127.0.0.1:1",
  SERVICE_RPC_URL_LOCAL2: "http://127.0.0.1:2",
  SERVICE_RPC_URL_BASE: "http://127.0.0.1:3",
  SERVICE_RPC_URL_ETHEREUM: "http://127.0.0.1:4",
});
if (!parsed.ok) throw new Error(parsed.errors.join("; "));
const networks = parsed.config.networks;
const SETTLE = "0x1111111111111111111111111111111111111111";

test("sandbox: every sandbox network, the default settlement, the CREATE2 address of the session", () => {
  const plan = planDeposits({ sessionId: "ps_abc", environment: "sandbox", amountMinor: 1234n, networks, settlements: new Map(), defaultSettlement: SETTLE });
  expect(plan.ok).toBe(true);
  if (!plan.ok) return;
  expect(plan.deposits.map((d) => d.chainId).sort()).toEqual([31337, 31338]);
  const d = plan.deposits[0]!;
  expect(d.requiredBaseUnits).toBe(12_340_000n);
  expect(d.address).toBe(predictDepositAddress({ factory: predictedFactoryAddress(), settlement: getAddress(SETTLE), sessionSalt: sessionSalt("ps_abc") }).toLowerCase());
  expect(d.settlementAddress).toBe(SETTLE);
  // Same factory everywhere: the same address on both networks.
  expect(plan.deposits[1]!.address).toBe(d.address);
  // Another session, another address.
  const other = planDeposits({ sessionId: "ps_abd", environment: "sandbox", amountMinor: 1234n, networks, settlements: new Map(), defaultSettlement: SETTLE });
  expect(other.ok && other.deposits[0]!.address).not.toBe(d.address);
});

test("production: only networks with the merchant's settlement address; none is a clear refusal", () => {
  expect(planDeposits({ sessionId: "ps_1", environment: "production", amountMinor: 100n, networks, settlements: new Map(), defaultSettlement: SETTLE })).toEqual({ ok: false, problem: "no_settlement" });
  const plan = planDeposits({ sessionId: "ps_1", environment: "production", amountMinor: 100n, networks, settlements: new Map([[8453, SETTLE]]) });
  expect(plan.ok && plan.deposits.map((d) => d.chainId)).toEqual([8453]);
  expect(planDeposits({ sessionId: "ps_1", environment: "production", amountMinor: 100n, networks: networks.filter((n) => n.environment === "sandbox"), settlements: new Map() })).toEqual({ ok: false, problem: "no_network" });
});

test("settlement addresses: valid, any case; zero and junk refused", () => {
  expect(parseSettlementAddress(SETTLE)).toBe(getAddress(SETTLE));
  expect(parseSettlementAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8")).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  for (const bad of ["", "0x", "0x0000000000000000000000000000000000000000", "0x123", "hello", "0x70997970c51812dc3a010c7d01b50e0d17dc79c8ff"]) {
    expect(parseSettlementAddress(bad)).toBeUndefined();
  }
});
