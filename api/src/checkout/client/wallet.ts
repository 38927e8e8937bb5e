/**
 * The payer's browser wallet: discovery (EIP-6963, falling back to window.ethereum), connect,
 * switching to the session's network (adding it first when the wallet does not know it),
 * balances, and the one ERC-20 transfer. Calls go through the wallet's own EIP-1193
 * provider — never to an RPC address of ours — so the page needs no connect-src beyond
 * itself. viem only encodes the call (tree-shaken to the ABI coder).
 */
import { encodeFunctionData, erc20Abi, numberToHex } from "viem";
import { hasErrorCode } from "../../../../shared/error-chain.ts";

export interface Eip1193 {
  request(args: { method: string; params?: unknown[] | object }): Promise<unknown>;
  on?(event: string, listener: (...args: any[]) => void): void;
  removeListener?(event: string, listener: (...args: any[]) => void): void;
}

export interface WalletChoice {
  id: string;
  name: string;
  icon?: string;
  provider: Eip1193;
}

/**
 * Wallets announced by EIP-6963 as they arrive (`onChange` with the whole list each time), and
 * `window.ethereum` when no wallet announced itself within `fallbackAfterMs`.
 */
export function discoverWallets(onChange: (wallets: WalletChoice[]) => void, fallbackAfterMs = 250): () => void {
  const found: WalletChoice[] = [];
  const onAnnounce = (event: Event) => {
    const detail = (event as CustomEvent).detail as { info?: { uuid?: string; name?: string; icon?: string; rdns?: string }; provider?: Eip1193 } | undefined;
    if (!detail?.provider || typeof detail.provider.request !== "function" || !detail.info?.uuid) return;
    if (found.some((w) => w.id === detail.info!.uuid)) return;
    // Icons are data: URIs by the standard; anything else would be a third-party request.
    const icon = typeof detail.info.icon === "string" && detail.info.icon.startsWith("data:image/") ? detail.info.icon : undefined;
    found.push({ id: detail.info.uuid, name: String(detail.info.name ?? "Wallet").slice(0, 40), icon, provider: detail.provider });
    onChange([...found]);
  };
  window.addEventListener("eip6963:announceProvider", onAnnounce);
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  const timer = setTimeout(() => {
    const injected = (window as unknown as { ethereum?: Eip1193 }).ethereum;
    if (found.length === 0 && injected && typeof injected.request === "function") {
      found.push({ id: "injected", name: "Browser wallet", provider: injected });
    }
    onChange([...found]);
  }, fallbackAfterMs);
  return () => {
    clearTimeout(timer);
    window.removeEventListener("eip6963:announceProvider", onAnnounce);
  };
}

export interface ChainToAdd {
  chainId: number;
  network: string;
  rpcUrl: string | null;
  nativeCurrency: { name: string; symbol: string; decimals: number };
  explorerUrl: string | null;
}

export class Wallet {
  constructor(
    readonly provider: Eip1193,
    readonly account: `0x${string}`,
  ) {}

  static async connect(provider: Eip1193): Promise<Wallet> {
    const accounts = (await provider.request({ method: "eth_requestAccounts" })) as string[];
    const account = accounts?.[0];
    if (!account) throw Object.assign(new Error("The wallet gave no account."), { code: 4900 });
    return new Wallet(provider, account as `0x${string}`);
  }

  async chainId(): Promise<number> {
    return Number(BigInt((await this.provider.request({ method: "eth_chainId" })) as string));
  }

  /** Switches the wallet to `chain`, adding it first when the wallet does not know it (error 4902). */
  async ensureChain(chain: ChainToAdd): Promise<void> {
    if ((await this.chainId()) === chain.chainId) return;
    const hex = numberToHex(chain.chainId);
    try {
      await this.provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: hex }] });
    } catch (err) {
      const unknown = hasErrorCode(err, 4902);
      if (!unknown || !chain.rpcUrl) throw err;
      await this.provider.request({
        method: "wallet_addEthereumChain",
        params: [
          {
            chainId: hex,
            chainName: chain.network,
            nativeCurrency: chain.nativeCurrency,
            rpcUrls: [chain.rpcUrl],
            ...(chain.explorerUrl ? { blockExplorerUrls: [chain.explorerUrl] } : {}),
          },
        ],
      });
      // Most wallets switch on add; some only add.
      if ((await this.chainId()) !== chain.chainId) await this.provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: hex }] });
    }
  }

  async tokenBalance(token: string): Promise<bigint> {
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [this.account] });
    const out = (await this.provider.request({ method: "eth_call", params: [{ to: token, data }, "latest"] })) as string;
    return BigInt(out && out !== "0x" ? out : "0x0");
  }

  async nativeBalance(): Promise<bigint> {
    return BigInt((await this.provider.request({ method: "eth_getBalance", params: [this.account, "latest"] })) as string);
  }

  /** The transfer call and what its fee may cost at most (gas estimate × gas price). */
  async prepareTransfer(token: string, to: string, amount: bigint): Promise<{ tx: { from: string; to: string; data: string }; maxFeeWei: bigint }> {
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to as `0x${string}`, amount] });
    const tx = { from: this.account, to: token, data };
    const [gas, price] = await Promise.all([
      this.provider.request({ method: "eth_estimateGas", params: [tx] }) as Promise<string>,
      this.provider.request({ method: "eth_gasPrice" }) as Promise<string>,
    ]);
    return { tx, maxFeeWei: BigInt(gas) * BigInt(price) };
  }

  /**
   * One eth_signTypedData_v4 signature of the session's TransferWithAuthorization (EIP-3009):
   * `offer` as the payer view gives it, `from` this account. The wallet shows what it signs.
   */
  async signAuthorization(offer: {
    primaryType: "TransferWithAuthorization";
    domain: { name: string; version: string; chainId: number; verifyingContract: string };
    types: { TransferWithAuthorization: readonly { name: string; type: string }[] };
    message: { to: string; value: string; validAfter: string; validBefore: string; nonce: string };
  }): Promise<string> {
    const typed = {
      types: {
        EIP712Domain: [
          { name: "name", type: "string" },
          { name: "version", type: "string" },
          { name: "chainId", type: "uint256" },
          { name: "verifyingContract", type: "address" },
        ],
        ...offer.types,
      },
      primaryType: offer.primaryType,
      domain: offer.domain,
      message: { from: this.account, ...offer.message },
    };
    return (await this.provider.request({ method: "eth_signTypedData_v4", params: [this.account, JSON.stringify(typed)] })) as string;
  }

  async send(tx: { from: string; to: string; data: string }): Promise<string> {
    return (await this.provider.request({ method: "eth_sendTransaction", params: [tx] })) as string;
  }

  /** true: mined and succeeded; false: mined and reverted; undefined: not mined yet. */
  async receiptOk(hash: string): Promise<boolean | undefined> {
    const r = (await this.provider.request({ method: "eth_getTransactionReceipt", params: [hash] })) as { status?: string } | null;
    if (!r) return undefined;
    return r.status === "0x1";
  }
}
