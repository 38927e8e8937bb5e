/**
 * `bun run admin networks` and `bun run admin factory:deploy --chain <id>`: the operator's
 * on-chain steps. factory:deploy puts the service's three contracts on a network: the deposit
 * factory (sweeps; sessions are offered only once it is there), AuthorizationBatch (several
 * payers' authorizations in one relayer transaction; without it they go one per transaction)
 * and RefundVaults for the relayer (the merchants' refund balances, each a CREATE2 vault inside
 * it: refunds wait on a network until it is there; its address follows from the relayer's). They read the network variables (SERVICE_RPC_URL_<KEY>, …) and
 * SERVICE_RELAYER_PRIVATE_KEY like `bun run start` does, and never touch the database.
 */
import { concat, createPublicClient, createWalletClient, defineChain, formatEther, formatGwei, http, webSocket, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Config } from "../config.ts";
import { parseChainsEnv, type NetworkConfig } from "../../../shared/chains/config.ts";
import { envSuffix, PRESETS } from "../../../shared/chains/presets.ts";
import { DETERMINISTIC_DEPLOYER, deployOnce, ensureServiceContractsDeployed, predictedFactoryAddress, serviceContractDeployTransactions } from "../../../shared/contracts/deploy.ts";
import { DEPLOY_SALT } from "../../../shared/contracts/addresses.ts";
import { predictedRefundVaultsAddress, refundVaultsInitCode } from "../../../shared/contracts/refund-vaults.ts";
import { DEV_RELAYER_PRIVATE_KEY } from "../credentials/relayer.ts";
import { describeStatus, probeNetworks } from "../onchain/network-status.ts";
import { describeError } from "../../../shared/describe-error.ts";

type Die = (message: string) => never;

function clientsFor(net: NetworkConfig, key: Hex) {
  const chain = defineChain({
    id: net.chainId,
    name: net.name,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [net.rpcUrl] } },
  });
  const transport = net.rpcUrl.startsWith("ws") ? webSocket(net.rpcUrl) : http(net.rpcUrl);
  return {
    publicClient: createPublicClient({ chain, transport, pollingInterval: 500 }),
    walletClient: createWalletClient({ chain, transport, account: privateKeyToAccount(key) }),
  };
}

export async function networkCommand(command: "networks" | "factory:deploy", args: { chain?: string; json: boolean }, config: Config, die: Die): Promise<number> {
  const parsed = parseChainsEnv(process.env);
  if (!parsed.ok) die(`invalid network configuration:\n${parsed.errors.map((e) => `  - ${e}`).join("\n")}`);
  const networks = parsed.config.networks;
  const ownKey = config.sweeps.relayerPrivateKey?.reveal();
  const keyFor = (n: NetworkConfig): Hex | undefined => ownKey ?? (n.environment === "sandbox" ? DEV_RELAYER_PRIVATE_KEY : undefined);
  const out = (human: string, data: unknown) => console.log(args.json ? JSON.stringify(data) : human);

  if (command === "networks") {
    if (networks.length === 0) die("no network is enabled: set SERVICE_RPC_URL_<KEY> (see docs/on-chain.md, Networks)");
    const statuses = await probeNetworks(networks, {
      relayerFor: (id) => {
        const k = keyFor(networks.find((n) => n.chainId === id)!);
        return k ? privateKeyToAccount(k).address : undefined;
      },
    });
    out(
      statuses.map((s) => [describeStatus(s), ...[...s.fatal, ...s.notReady, ...s.warnings].map((l) => `  - ${l}`)].join("\n")).join("\n"),
      { networks: statuses },
    );
    return statuses.some((s) => !s.ready) ? 1 : 0;
  }

  // factory:deploy
  const known = Object.values(PRESETS).map((p) => `${p.chainId} (${p.name})`).join(", ");
  const raw = args.chain ?? die(`--chain <chain id> is required; known: ${known}`);
  const chainId = /^[0-9]{1,12}$/.test(raw) ? Number(raw) : NaN;
  const preset = Object.values(PRESETS).find((p) => p.chainId === chainId);
  if (!preset) die(`--chain ${raw}: not a chain id this service knows; known: ${known}`);
  const net = networks.find((n) => n.chainId === chainId);
  if (!net) die(`${preset.name} is not enabled here: set SERVICE_RPC_URL_${envSuffix(preset.key)} (the deploy goes through that RPC)`);
  const factory = predictedFactoryAddress();
  if (net.factory && net.factory.toLowerCase() !== factory.toLowerCase()) {
    die(`SERVICE_FACTORY_ADDRESS_${envSuffix(net.key)} points at ${net.factory}; factory:deploy only deploys the deterministic factory at ${factory}`);
  }
  const key = keyFor(net) ?? die("SERVICE_RELAYER_PRIVATE_KEY is required: the relayer account pays for the deployment (see docs/going-live.md)");
  const { publicClient, walletClient } = clientsFor(net, key);
  const payer = walletClient.account.address as Address;
  let seen: number;
  try {
    seen = await publicClient.getChainId();
  } catch (err) {
    die(`${net.name}: RPC (SERVICE_RPC_URL_${envSuffix(net.key)}) did not answer: ${describeError(err, { links: 1, firstLines: true })}`);
  }
  if (seen !== chainId) die(`SERVICE_RPC_URL_${envSuffix(net.key)} serves chain id ${seen}, not ${chainId} (${net.name}): nothing sent`);

  // RefundVaults is the relayer's own (its operator), so its address follows from the key that pays here.
  const refundVaults = predictedRefundVaultsAddress(payer);
  const planned = [
    ...serviceContractDeployTransactions(),
    { name: "refundVaults" as const, address: refundVaults, to: DETERMINISTIC_DEPLOYER, data: concat([DEPLOY_SALT, refundVaultsInitCode(payer)]) },
  ];
  const codes = await Promise.all(planned.map((t) => publicClient.getCode({ address: t.address })));
  const missing = planned.filter((_, i) => !codes[i] || codes[i] === "0x");
  const batch = planned.find((t) => t.name === "batch")!.address;
  if (missing.length === 0) {
    out(`${net.name} (chain ${chainId}): the deposit factory (${factory}), AuthorizationBatch (${batch}) and RefundVaults (${refundVaults}) are already deployed; nothing sent, nothing spent`, {
      chainId,
      factory,
      batch,
      refundVaults,
      deployed: false,
    });
    return 0;
  }
  const proxy = await publicClient.getCode({ address: DETERMINISTIC_DEPLOYER });
  if (!proxy || proxy === "0x") {
    die(`${net.name}: no deterministic deployment proxy at ${DETERMINISTIC_DEPLOYER}, so the contracts cannot get their fixed addresses here (see shared/contracts/README.md)`);
  }
  // What it will cost at most, before anything is sent.
  const [gases, fees, balance] = await Promise.all([
    Promise.all(missing.map((t) => publicClient.estimateGas({ account: payer, to: t.to, data: t.data }))),
    publicClient.estimateFeesPerGas(),
    publicClient.getBalance({ address: payer }),
  ]);
  const gas = gases.reduce((a, b) => a + b, 0n);
  const maxCost = gas * fees.maxFeePerGas;
  if (balance < maxCost) {
    die(`relayer ${payer} holds ${formatEther(balance)} on ${net.name}; the deployment needs up to ${formatEther(maxCost)} (${gas} gas at up to ${formatGwei(fees.maxFeePerGas)} gwei): fund it first`);
  }
  const clients = { publicClient: publicClient as never, walletClient: walletClient as never };
  const result = await ensureServiceContractsDeployed(clients);
  const vaultsDeployed = await deployOnce(clients, refundVaultsInitCode(payer), refundVaults, "RefundVaults");
  const deployed: ("factory" | "batch" | "refundVaults")[] = [...result.deployed, ...(vaultsDeployed.sent ? (["refundVaults"] as const) : [])];
  const receipts = [...result.receipts, ...(vaultsDeployed.receipt ? [vaultsDeployed.receipt] : [])];
  if (receipts.length === 0) {
    out(`${net.name} (chain ${chainId}): the contracts appeared meanwhile (deployed by someone else); nothing spent`, { chainId, factory, batch, refundVaults, deployed: false });
    return 0;
  }
  const cost = receipts.reduce((a, r) => a + r.gasUsed * r.effectiveGasPrice, 0n);
  const gasUsed = receipts.reduce((a, r) => a + r.gasUsed, 0n);
  const names = { factory: `the deposit factory at ${factory}`, batch: `AuthorizationBatch at ${batch}`, refundVaults: `RefundVaults at ${refundVaults}` };
  out(
    [
      `${net.name} (chain ${chainId}): deployed ${deployed.map((d) => names[d]).join(" and ")}`,
      ...receipts.map((r) => `  transaction ${r.transactionHash} in block ${r.blockNumber} (${r.gasUsed} gas at ${formatGwei(r.effectiveGasPrice)} gwei)`),
      `  cost ${formatEther(cost)} ETH in all (${gasUsed} gas), paid by the relayer ${payer}`,
      `  sessions are offered on ${net.name} from now on (a running service notices within SERVICE_NETWORK_CHECK_SECONDS, or at the next session create)`,
    ].join("\n"),
    {
      chainId,
      factory,
      batch,
      refundVaults,
      deployed: true,
      contracts: deployed,
      transactionHash: receipts[0]!.transactionHash,
      transactions: receipts.map((r) => ({ hash: r.transactionHash, blockNumber: r.blockNumber.toString(), gasUsed: r.gasUsed.toString(), effectiveGasPrice: r.effectiveGasPrice.toString() })),
      gasUsed: gasUsed.toString(),
      costWei: cost.toString(),
      payer,
    },
  );
  return 0;
}
