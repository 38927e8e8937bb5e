/**
 * TEST/BENCH helper: Debian's Chromium driven by playwright-core, and a payer's wallet for it —
 * an EIP-1193 provider injected into every frame (announced by EIP-6963 and as
 * window.ethereum) whose requests are answered here, in the test process: accounts and chain
 * switching like a browser wallet, transactions signed with a real private key and sent to the
 * real anvil of the chain the wallet is on, everything else forwarded to that chain's RPC.
 * Requests go through a Playwright binding, not fetch, so the checkout's CSP (connect-src
 * 'self') is the one a real wallet extension meets too.
 */
import type { BrowserContext, Page } from "playwright-core";
import { createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BaseError } from "../shared/base-error.ts";

export interface TestWalletOptions {
  /** Chains the wallet knows at first: chain id → RPC URL. It starts on the first. */
  knownChains: Record<number, string>;
  privateKey?: Hex;
  /**
   * Whether the wallet signs EIP-712 typed data (eth_signTypedData_v4), as browser wallets do.
   * Off by default: a wallet that answers "method not found", so the checkout pays by transfer
   * (tests of the transfer path); on for tests of paying by authorization.
   */
  signsTypedData?: boolean;
}

export interface TestWallet {
  address: `0x${string}`;
  /** Methods the payer refuses (answered with EIP-1193 error 4001) until removed. */
  reject: Set<string>;
  /** Every request the page made, in order. */
  calls: { method: string; params: unknown }[];
  chainId(): number;
}

const INIT_SCRIPT = `(() => {
  const listeners = {};
  const emit = (event, value) => (listeners[event] || []).slice().forEach((l) => { try { l(value); } catch {} });
  const provider = {
    isPaysessionTestWallet: true,
    async request({ method, params }) {
      const out = await window.__paysessionTestWallet(method, params === undefined ? [] : params);
      if (out.error) { const e = new Error(out.error.message); e.code = out.error.code; throw e; }
      if (method === "wallet_switchEthereumChain" || method === "wallet_addEthereumChain") emit("chainChanged", out.chainId);
      return out.result;
    },
    on(event, l) { (listeners[event] = listeners[event] || []).push(l); return provider; },
    removeListener(event, l) { listeners[event] = (listeners[event] || []).filter((x) => x !== l); return provider; },
  };
  const info = Object.freeze({ uuid: "7a3f0e4c-0000-4000-8000-00000000beef", name: "Test Wallet", rdns: "test.paysession.wallet",
    icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 10 10'%3E%3Crect width='10' height='10' rx='2' fill='%234f46e5'/%3E%3C/svg%3E" });
  const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
  window.addEventListener("eip6963:requestProvider", announce);
  window.ethereum = provider;
  // What a wallet does on its own (the payer disconnects, switches account): tests call this.
  window.__testWalletEmit = emit;
  announce();
})();`;

class RpcError extends BaseError {
  override name = "RpcError";
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export async function installWallet(context: BrowserContext, opts: TestWalletOptions): Promise<TestWallet> {
  const account = privateKeyToAccount(opts.privateKey ?? generatePrivateKey());
  const chains = new Map<number, string>(Object.entries(opts.knownChains).map(([id, url]) => [Number(id), url]));
  let current = Number(Object.keys(opts.knownChains)[0]);
  const wallet: TestWallet = { address: account.address, reject: new Set(), calls: [], chainId: () => current };

  async function rpc(method: string, params: unknown): Promise<unknown> {
    const res = await fetch(chains.get(current)!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
    if (body.error) throw new RpcError(body.error.code, body.error.message);
    return body.result;
  }

  async function handle(method: string, params: any[]): Promise<unknown> {
    if (wallet.reject.has(method)) throw new RpcError(4001, "User rejected the request.");
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [account.address];
      case "eth_chainId":
        return `0x${current.toString(16)}`;
      case "wallet_switchEthereumChain": {
        const id = Number(BigInt(params[0].chainId));
        if (!chains.has(id)) throw new RpcError(4902, `Unrecognized chain ID ${params[0].chainId}. Try adding the chain using wallet_addEthereumChain first.`);
        current = id;
        return null;
      }
      case "wallet_addEthereumChain": {
        const id = Number(BigInt(params[0].chainId));
        const url = params[0].rpcUrls?.[0];
        if (typeof url !== "string") throw new RpcError(-32602, "rpcUrls required");
        chains.set(id, url);
        current = id; // like most wallets: adding asks to switch, and the payer accepts
        return null;
      }
      case "eth_sendTransaction": {
        const tx = params[0] as { from: string; to: Hex; data?: Hex; value?: Hex };
        if (tx.from.toLowerCase() !== account.address.toLowerCase()) throw new RpcError(4100, "Unknown account");
        const url = chains.get(current)!;
        const client = createWalletClient({ account, transport: http(url) });
        return client.sendTransaction({
          chain: { id: current, name: `chain ${current}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [url] } } },
          to: tx.to,
          data: tx.data,
          value: tx.value ? BigInt(tx.value) : undefined,
        });
      }
      case "eth_signTypedData_v4": {
        if (!opts.signsTypedData) throw new RpcError(-32601, "The method eth_signTypedData_v4 does not exist / is not available");
        if (String(params[0]).toLowerCase() !== account.address.toLowerCase()) throw new RpcError(4100, "Unknown account");
        const typed = JSON.parse(String(params[1])) as { domain: any; types: Record<string, { name: string; type: string }[]>; primaryType: string; message: Record<string, unknown> };
        const { EIP712Domain: _domainType, ...types } = typed.types;
        // uint fields arrive as decimal strings: as numbers for the signer.
        const uints = new Set(types[typed.primaryType]!.filter((f) => /^uint/.test(f.type)).map((f) => f.name));
        const message = Object.fromEntries(Object.entries(typed.message).map(([k, v]) => [k, uints.has(k) ? BigInt(v as string) : v]));
        return account.signTypedData({ domain: typed.domain, types, primaryType: typed.primaryType, message } as never);
      }
      default:
        return rpc(method, params);
    }
  }

  await context.exposeBinding("__paysessionTestWallet", async (_source, method: string, params: any[]) => {
    wallet.calls.push({ method, params });
    try {
      const result = await handle(method, params);
      return { result, chainId: `0x${current.toString(16)}` };
    } catch (err) {
      const e = err as { code?: number; message?: string; shortMessage?: string };
      // viem wraps node errors; the payer's wallet would show the node's message
      return { error: { code: typeof e.code === "number" ? e.code : -32603, message: e.shortMessage ?? e.message ?? String(err) } };
    }
  });
  await context.addInitScript(INIT_SCRIPT);
  return wallet;
}

/** The checkout frame of the SDK's modal on `page`. */
export async function checkoutFrame(page: Page) {
  const handle = await page.waitForSelector('iframe[data-paysession="checkout"]');
  const frame = await handle.contentFrame();
  if (!frame) throw new Error("the checkout iframe has no frame");
  return frame;
}
