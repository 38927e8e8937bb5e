/**
 * `bun run admin networks` and `bun run admin factory:deploy --chain <id>`: the operator's
 * on-chain steps. They read the network variables (SERVICE_RPC_URL_<KEY>, …) and
 * SERVICE_RELAYER_PRIVATE_KEY like `bun run start` does, and never touch the database.
 */
import { createPublicClient, createWalletClient, defineChain, formatEther, formatGwei, http, webSocket, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Config } from "../config.ts";
import { parseChainsEnv, type NetworkConfig } from "../../../shared/chains/config.ts";
import { envSuffix, PRESETS } from "../../../shared/chains/presets.ts";
import { DETERMINISTIC_DEPLOYER, ensureFactoryDeployed, factoryDeployTransaction, predictedFactoryAddress } from "../../../shared/contracts/deploy.ts";
import { DEV_RELAYER_PRIVATE_KEY } from "../sweeps/relayer.ts";
import { describeStatus, probeNetworks } from "../onchain/network-status.ts";

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
    die(`${net.name}: RPC (SERVICE_RPC_URL_${envSuffix(net.key)}) did not answer: ${String((err as Error).message).split("\n")[0]}`);
  }
  if (seen !== chainId) die(`SERVICE_RPC_URL_${envSuffix(net.key)} serves chain id ${seen}, not ${chainId} (${net.name}): nothing sent`);

  const code = await publicClient.getCode({ address: factory });
  if (code && code !== "0x") {
    out(`${net.name} (chain ${chainId}): the deposit factory is already deployed at ${factory}; nothing sent, nothing spent`, {
      chainId,
      factory,
      deployed: false,
    });
    return 0;
  }
  const proxy = await publicClient.getCode({ address: DETERMINISTIC_DEPLOYER });
  if (!proxy || proxy === "0x") {
    die(`${net.name}: no deterministic deployment proxy at ${DETERMINISTIC_DEPLOYER}, so the factory cannot get its fixed address here (see shared/contracts/README.md)`);
  }
  // What it will cost at most, before anything is sent.
  const tx = factoryDeployTransaction();
  const [gas, fees, balance] = await Promise.all([
    publicClient.estimateGas({ account: payer, ...tx }),
    publicClient.estimateFeesPerGas(),
    publicClient.getBalance({ address: payer }),
  ]);
  const maxCost = gas * fees.maxFeePerGas;
  if (balance < maxCost) {
    die(`relayer ${payer} holds ${formatEther(balance)} on ${net.name}; the deployment needs up to ${formatEther(maxCost)} (${gas} gas at up to ${formatGwei(fees.maxFeePerGas)} gwei): fund it first`);
  }
  const result = await ensureFactoryDeployed({ publicClient: publicClient as never, walletClient: walletClient as never });
  const r = result.receipt;
  if (!r) {
    out(`${net.name} (chain ${chainId}): the deposit factory appeared at ${factory} meanwhile (deployed by someone else); nothing spent`, { chainId, factory, deployed: false });
    return 0;
  }
  const cost = r.gasUsed * r.effectiveGasPrice;
  out(
    [
      `${net.name} (chain ${chainId}): deployed the deposit factory at ${factory}`,
      `  transaction ${r.transactionHash} in block ${r.blockNumber}`,
      `  cost ${formatEther(cost)} ETH (${r.gasUsed} gas at ${formatGwei(r.effectiveGasPrice)} gwei), paid by the relayer ${payer}`,
      `  sessions are offered on ${net.name} from now on (a running service notices within SERVICE_NETWORK_CHECK_SECONDS, or at the next session create)`,
    ].join("\n"),
    { chainId, factory, deployed: true, transactionHash: r.transactionHash, blockNumber: r.blockNumber.toString(), gasUsed: r.gasUsed.toString(), effectiveGasPrice: r.effectiveGasPrice.toString(), costWei: cost.toString(), payer },
  );
  return 0;
}
