/**
 * The hosted checkout page's controller. Framed by the SDK (it receives the session by
 * postMessage, see sdk/src/protocol.ts) or opened on its own with the session in the URL
 * fragment (`#paymentSessionId=…&paymentSessionToken=…&merchantId=…`, removed from the
 * address bar at once). Status reaches the screen by conditional polling of
 * GET /api/payment-sessions (every 500 ms while the payment is open; 304 while unchanged).
 */
import { PROTOCOL, readToCheckout, type FromCheckout, type ToCheckout } from "../../../../sdk/src/protocol.ts";
import { ApiFailure, SessionApi, type PayerNetwork, type PayerSession } from "./api.ts";
import { returnUrlOf } from "./return-url.ts";
import { qrSvg } from "./qr.ts";
import {
  afterUsedElsewhere,
  cannotSignTypedData,
  finalScreen,
  formatCountdown,
  formatFee,
  formatUnits,
  gaslessLine,
  insufficientTokenMessage,
  networkChoiceText,
  paymentUri,
  progressSteps,
  receivedSymbol,
  sendsLine,
  shortAddress,
  tokenAmountText,
  tokenBalanceText,
  walletProblem,
  type WalletProblem,
} from "./text.ts";
import { chosenToken, coveringToken, sameAddress, signsFor, type TokenOption } from "./tokens.ts";
import { discoverWallets, Wallet, type WalletChoice } from "./wallet.ts";
import { findInChain } from "../../../../shared/error-chain.ts";
import { messageOf } from "../../../../shared/describe-error.ts";

/** The service's refusal this failure is, wherever on its chain it sits (undefined: not one). */
const failureOf = (err: unknown) => findInChain(err, (x) => x instanceof ApiFailure);

const POLL_OPEN_MS = 500;
const POLL_DONE_MS = 3000;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

let parentOrigin: string | undefined;
/** Opened on its own by a payment link's page: where Done and ✕ take the payer (return-url.ts). */
let returnTo: string | undefined;
let init: ToCheckout | undefined;
let api: SessionApi | undefined;
let view: PayerSession | undefined;
let chainId: number | undefined;
let wallets: WalletChoice[] = [];
let wallet: Wallet | undefined;
let sentTxHash: string | undefined;
/** The network on which the payer signed an authorization that the payment service recorded (it submits it). */
let authorizedOn: number | undefined;
/**
 * The payment service refused the signature as already used (or the session as no longer open):
 * someone else may have submitted it on-chain first. The page follows the session instead of
 * saying so at once (afterUsedElsewhere); `message` is what it says if nothing shows.
 */
let usedElsewhere: { chainId: number; at: number; message: string } | undefined;
/** The connected wallet cannot sign typed data: it pays by transfer (and the page says so). */
let typedDataUnsupported = false;
/** The payer pays by signing: offered there for the chosen token (the main one), and the wallet can sign. */
const signsOn = (n: PayerNetwork, t: TokenOption) => signsFor(n, t) && !typedDataUnsupported;
/** The token the payer picked, per network (absent: the network's main one). */
const tokenChoice = new Map<number, string>();
/** The connected account's balances, by `chainId:token` (lowercase); cleared when the account or its network changes. */
const balances = new Map<string, bigint>();
const balanceKey = (c: number, t: TokenOption) => `${c}:${t.tokenAddress.toLowerCase()}`;
let busy = false;
let renderedNetworks = "";
let renderedTokens = "";
let renderedQr = "";

/** Every message of FromCheckout, without the protocol tag this function adds. */
type Outgoing = FromCheckout extends infer M ? (M extends FromCheckout ? Omit<M, "paysession"> : never) : never;

function post(msg: Outgoing) {
  if (window.parent === window) return;
  const full = { paysession: PROTOCOL, ...msg };
  // After init, messages go to the origin that sent init, and nowhere else. Before init the
  // parent is not known yet: "ready" and a "close" (the payer leaves before the session came)
  // carry nothing of a session, so they may go to any parent.
  if (parentOrigin) window.parent.postMessage(full, parentOrigin);
  else if (!init && (msg.type === "ready" || msg.type === "close")) window.parent.postMessage(full, "*");
}

function showScreen(name: "loading" | "failed" | "pay" | "final") {
  for (const s of ["loading", "failed", "pay", "final"]) $(`screen-${s}`).hidden = s !== name;
}

function fail(code: string, message: string) {
  showScreen("failed");
  $("failed-body").textContent = message;
  $("failed-title").focus();
  post({ type: "fail", code, message });
}

/**
 * The ✕, Escape and Done: the payer may leave at any moment, also while the first read of the
 * session is still on its way. Nothing is known of the session then, so the SDK is told what
 * it assumes itself until told otherwise: PENDING, as created.
 */
function close() {
  if (returnTo) {
    location.assign(returnTo);
    return;
  }
  post({ type: "close", status: view?.status ?? "PENDING", reason: view?.statusReason ?? "created" });
}

// ---------- helpers of the view ----------

const network = (): PayerNetwork | undefined => view?.networks.find((n) => n.chainId === chainId) ?? view?.networks[0];
/** The stablecoin the payer pays in on `n`: the one picked, else the main one. */
const token = (n: PayerNetwork): TokenOption => chosenToken(n, tokenChoice.get(n.chainId));
const isOpen = () => view?.status === "PENDING";
/** A transfer is on its way or seen: no second way to pay, no faucet, no cancel until it settles. */
const paymentUnderWay = () => !!sentTxHash || authorizedOn !== undefined || (view?.payments.length ?? 0) > 0;
const expired = () => !!view && Date.parse(view.expiresAt) <= Date.now();

/** What reached the deposit on the network that received most, for under- and over-payment texts. */
function received(): { chainId: number; total: bigint } | undefined {
  if (!view || view.payments.length === 0) return undefined;
  const by = new Map<number, bigint>();
  for (const p of view.payments) by.set(p.chainId, (by.get(p.chainId) ?? 0n) + BigInt(p.amountBaseUnits));
  let best: { chainId: number; total: bigint } | undefined;
  for (const [c, total] of by) if (!best || total > best.total) best = { chainId: c, total };
  return best;
}

// ---------- rendering ----------

function render() {
  if (!view) return;
  $("merchant").textContent = view.merchantName;
  $("amount").textContent = `${view.amount} ${view.currency}`;
  $("env-badge").hidden = view.environment !== "sandbox";
  const paid = received();
  const paidNet = paid && view.networks.find((n) => n.chainId === paid.chainId);
  // Payments count in the network's unit (its `decimals`), whichever token they were in.
  const unit = paidNet ? receivedSymbol(view.payments.filter((p) => p.chainId === paidNet.chainId), paidNet.tokens, view.currency) : "";
  const fmt = (v: bigint) => (paidNet ? `${formatUnits(v, paidNet.decimals)} ${unit}` : "");
  const over = paid && paidNet && paid.total > BigInt(paidNet.amountBaseUnits) ? paid.total - BigInt(paidNet.amountBaseUnits) : undefined;
  const screen = finalScreen(view.status, view.statusReason, {
    merchantName: view.merchantName,
    amountText: `${view.amount} ${view.currency}`,
    receivedText: paid ? fmt(paid.total) : undefined,
    overpaidText: over ? fmt(over) : undefined,
    byAuthorization: view.payments.some((p) => p.method === "authorization"),
  });
  if (screen) {
    const wasShown = !$("screen-final").hidden;
    showScreen("final");
    placeProgress($("screen-final"));
    renderProgress();
    $("final-mark").dataset.tone = screen.tone;
    $("final-title").textContent = screen.title;
    $("final-body").textContent = screen.body;
    if (!wasShown) $("final-title").focus();
    return;
  }
  showScreen("pay");
  placeProgress($("problem"));
  renderProgress();
  renderNetworks();
  renderTokens();
  renderCountdown();
  renderQr();
  renderWallet();
  $("sandbox").hidden = view.environment !== "sandbox";
  $("faucet-btn").toggleAttribute("disabled", !wallet || busy || paymentUnderWay());
  $("testpay-btn").toggleAttribute("disabled", busy || expired() || paymentUnderWay());
  $("cancel-btn").hidden = paymentUnderWay();
}

/**
 * The progress list goes where the payer looks: on the pay screen right under the way to pay
 * (above the problem, notice and sandbox boxes), on the final screen under its Done. Moved
 * only when its place changes (a move would restart the active step's animation).
 */
function placeProgress(at: HTMLElement) {
  const progress = $("progress");
  if (at.id === "screen-final") {
    if (progress.parentElement !== at) at.append(progress);
  } else if (progress.nextElementSibling !== at) at.before(progress);
}

function renderNetworks() {
  const key = view!.networks.map((n) => n.chainId).join(",");
  $("networks").hidden = view!.networks.length < 2;
  if (key === renderedNetworks) return;
  renderedNetworks = key;
  const list = $("network-list");
  list.replaceChildren();
  for (const n of view!.networks) {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "radio";
    input.name = "network";
    input.value = String(n.chainId);
    input.checked = n.chainId === chainId;
    input.addEventListener("change", () => void chooseNetwork(n.chainId));
    const text = document.createElement("span");
    text.textContent = networkChoiceText(n);
    label.append(input, text);
    list.append(label);
  }
}

/**
 * The token choice, where the network accepts more than one: a radio group (arrow keys move
 * the choice, the legend names it for screen readers) drawn as a segmented control, each option
 * its symbol and, once a wallet is connected, the wallet's balance of it — a payer who holds
 * only USDT sees it at once. Rebuilt only when the network or its tokens change.
 */
function renderTokens() {
  const n = network();
  const tokens = n?.tokens ?? [];
  $("tokens").hidden = tokens.length < 2;
  if (!n || tokens.length < 2) return;
  const list = $("token-list");
  const key = `${n.chainId}:${tokens.map((t) => t.tokenAddress).join(",")}`;
  if (key !== renderedTokens) {
    renderedTokens = key;
    list.replaceChildren(
      ...tokens.map((t) => {
        const label = document.createElement("label");
        const input = document.createElement("input");
        input.type = "radio";
        input.name = "token";
        input.value = t.tokenAddress;
        input.addEventListener("change", () => chooseToken(t.tokenAddress));
        const symbol = document.createElement("span");
        symbol.className = "symbol";
        symbol.textContent = t.tokenSymbol;
        const held = document.createElement("span");
        held.className = "held";
        label.append(input, symbol, held);
        return label;
      }),
    );
  }
  const chosen = token(n);
  // No other token once a payment is on its way: what is shown stays what is being paid.
  ($("tokens") as HTMLFieldSetElement).disabled = paymentUnderWay();
  list.querySelectorAll("label").forEach((label, i) => {
    const t = tokens[i]!;
    label.querySelector("input")!.checked = sameAddress(t.tokenAddress, chosen.tokenAddress);
    label.querySelector(".held")!.textContent = wallet ? tokenBalanceText(t, balances.get(balanceKey(n.chainId, t))) : "";
  });
}

function renderCountdown() {
  if (!view) return;
  const left = Date.parse(view.expiresAt) - Date.now();
  $("countdown").textContent = formatCountdown(left);
  $("countdown").parentElement!.classList.toggle("late", left < 60_000);
  if (left <= 0 && isOpen() && !sentTxHash && view.payments.length === 0) {
    showProblem({ kind: "expired", message: "This payment has expired: the time to pay ran out. Do not send anything now; go back to the merchant to start again." }, []);
  }
}

function renderQr() {
  const n = network();
  if (!n) return;
  const t = token(n);
  const uri = paymentUri({ tokenAddress: t.tokenAddress, chainId: n.chainId, depositAddress: n.depositAddress, amountBaseUnits: t.amountBaseUnits });
  if (uri === renderedQr) return;
  renderedQr = uri;
  $("qr").replaceChildren(qrSvg(uri, `QR code: pay ${tokenAmountText(t)} on ${n.network}`));
  $("qr-amount").textContent = tokenAmountText(t);
  $("qr-amount").dataset.value = formatUnits(BigInt(t.amountBaseUnits), t.decimals);
  $("qr-address").textContent = n.depositAddress;
  $("qr-token").textContent = `${t.tokenSymbol} ${t.tokenAddress}`;
  $("qr-token").dataset.value = t.tokenAddress;
  $("qr-network").textContent = `${n.network} (chain id ${n.chainId})`;
  ($("qr-link") as HTMLAnchorElement).href = uri;
}

function renderWallet() {
  const n = network();
  const list = $("wallet-list");
  $("connected").hidden = !wallet;
  list.hidden = !!wallet;
  $("no-wallet").hidden = !!wallet || wallets.length > 0;
  if (!wallet && list.childElementCount !== wallets.length) {
    list.replaceChildren();
    for (const w of wallets) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "wallet";
      b.dataset.wallet = w.id;
      if (w.icon) {
        const img = document.createElement("img");
        img.src = w.icon;
        img.alt = "";
        b.append(img);
      }
      b.append(document.createTextNode(`Connect ${w.name}`));
      b.addEventListener("click", () => void connect(w));
      list.append(b);
    }
  }
  if (n) $("pay-network").textContent = n.network;
  if (wallet && n && view) {
    const t = token(n);
    $("account").textContent = shortAddress(wallet.account);
    $("account").title = wallet.account;
    const held = balances.get(balanceKey(n.chainId, t));
    if (held !== undefined) {
      $("balance").textContent = `${formatUnits(held, t.decimals)} ${t.tokenSymbol}`;
      $("balance").dataset.baseUnits = held.toString();
    }
    $("pay-btn").textContent = `Pay ${tokenAmountText(t)}`;
    const price = `${view.amount} ${view.currency}`;
    $("pay-equals").textContent = signsOn(n, t) ? gaslessLine(tokenAmountText(t), price) : sendsLine(tokenAmountText(t), price);
    $("pay-btn").toggleAttribute("disabled", busy || expired() || paymentUnderWay());
  }
}

function renderProgress() {
  if (!view) return;
  const n = network();
  const payments = view.payments.filter((p) => !n || p.chainId === n.chainId);
  const steps = progressSteps({ status: view.status, reason: view.statusReason, required: n?.confirmations ?? 1, payments, sentTxHash, authorized: authorizedOn !== undefined && authorizedOn === n?.chainId });
  const appearing = $("progress").hidden && !!steps;
  $("progress").hidden = !steps;
  if (!steps) return;
  const ol = $("progress-list");
  ol.replaceChildren(
    ...steps.map((s) => {
      const li = document.createElement("li");
      li.dataset.step = s.id;
      li.dataset.state = s.state;
      li.textContent = s.label;
      return li;
    }),
  );
  const tx = sentTxHash ?? payments[0]?.txHash;
  $("progress-tx").textContent = tx ? `Transaction ${tx}` : "";
  // On a short screen (or below the QR code) the list may start out of sight: bring it, with
  // its transaction hash, into view once, when it appears.
  // (Scrolled by hand, not scrollIntoView: that would scroll the merchant's page behind the modal too.)
  if (appearing) {
    const box = $("progress").getBoundingClientRect();
    if (box.bottom > window.innerHeight) window.scrollBy(0, Math.max(0, Math.min(box.bottom - window.innerHeight + 16, box.top - 8)));
  }
}

function showProblem(p: WalletProblem | { kind: string; message: string }, actions: { label: string; run: () => void }[]) {
  $("problem").hidden = false;
  $("problem").dataset.kind = p.kind;
  $("problem-text").textContent = p.message;
  $("problem-actions").replaceChildren(
    ...actions.map((a) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = a.label;
      b.addEventListener("click", () => {
        clearProblem();
        a.run();
      });
      return b;
    }),
  );
}

function clearProblem() {
  $("problem").hidden = true;
  delete $("problem").dataset.kind;
}

function notice(text: string | undefined) {
  $("notice").hidden = !text;
  $("notice").textContent = text ?? "";
}

// ---------- actions ----------

async function withBusy(work: () => Promise<void>) {
  if (busy) return;
  busy = true;
  render();
  try {
    await work();
  } finally {
    busy = false;
    render();
  }
}

/** The payer picks another token: amounts, balance, QR code and the way to pay follow it (same network: nothing to ask the wallet). */
function chooseToken(address: string) {
  const n = network();
  if (!n || sameAddress(token(n).tokenAddress, address)) return;
  tokenChoice.set(n.chainId, address);
  clearProblem();
  notice(undefined);
  render();
}

async function chooseNetwork(id: number) {
  chainId = id;
  clearProblem();
  render();
  if (wallet) await withBusy(async () => void (await switchAndRefresh()));
}

async function connect(choice: WalletChoice) {
  clearProblem();
  await withBusy(async () => {
    try {
      wallet = await Wallet.connect(choice.provider);
      typedDataUnsupported = false;
      balances.clear(); // another account's, if any: read afresh below
    } catch (err) {
      showProblem(walletProblem(err), [{ label: "Try again", run: () => void connect(choice) }]);
      return;
    }
    const provider = choice.provider;
    provider.on?.("accountsChanged", (accounts: string[]) => {
      if (!accounts?.length) {
        wallet = undefined;
        showProblem({ kind: "disconnected", message: "Your wallet disconnected. Connect it again to go on, or pay with the QR code." }, []);
      } else if (wallet) {
        wallet = new Wallet(provider, accounts[0] as `0x${string}`);
        balances.clear();
        void refreshBalance();
      }
      render();
    });
    provider.on?.("chainChanged", () => void refreshBalance());
    provider.on?.("disconnect", () => {
      wallet = undefined;
      showProblem({ kind: "disconnected", message: "Your wallet disconnected. Connect it again to go on, or pay with the QR code." }, []);
      render();
    });
    await switchAndRefresh();
  });
}

/** In both environments the wallet is switched (added first when needed) as soon as it is connected. */
async function switchAndRefresh(): Promise<boolean> {
  const n = network();
  if (!wallet || !n) return false;
  try {
    await wallet.ensureChain(n);
  } catch (err) {
    const p = walletProblem(err, { networkName: n.network });
    showProblem(
      p.kind === "rejected" ? { kind: "wrong_network", message: `Your wallet is on another network. Switch it to ${n.network} to pay.` } : p,
      [{ label: `Switch to ${n.network}`, run: () => void withBusy(() => switchAndRefresh().then(() => undefined)) }],
    );
    $("balance").textContent = "—";
    return false;
  }
  await refreshBalance();
  return true;
}

/** The wallet's balance of every token the network accepts (the choice shows each), then the chosen one's in the facts. */
async function refreshBalance() {
  const n = network();
  if (!wallet || !n) return;
  const w = wallet;
  const tokens = n.tokens.length > 0 ? n.tokens : [token(n)];
  try {
    if ((await w.chainId()) !== n.chainId) {
      balances.clear();
      $("balance").textContent = `(wallet on another network)`;
      render();
      return;
    }
    const held = await Promise.all(tokens.map((t) => w.tokenBalance(t.tokenAddress)));
    if (wallet !== w) return; // the account changed meanwhile: its own refresh follows
    tokens.forEach((t, i) => balances.set(balanceKey(n.chainId, t), held[i]!));
    render();
  } catch (err) {
    balances.clear();
    $("balance").textContent = "—";
    showProblem(walletProblem(err, { networkName: n.network }), []);
  }
}

function sandboxActions(): { label: string; run: () => void }[] {
  return view?.environment === "sandbox" ? [{ label: "Get test tokens", run: () => void getTestTokens() }] : [];
}

async function pay() {
  const n = network();
  if (!wallet || !n || !view) return;
  clearProblem();
  notice(undefined);
  await withBusy(async () => {
    if (expired()) {
      showProblem({ kind: "expired", message: "This payment has expired. Nothing was sent." }, []);
      return;
    }
    if (!(await switchAndRefresh())) return;
    const t = token(n);
    const amount = BigInt(t.amountBaseUnits);
    let prepared: Awaited<ReturnType<Wallet["prepareTransfer"]>>;
    try {
      const balance = await wallet!.tokenBalance(t.tokenAddress);
      if (balance < amount) {
        // switchAndRefresh has just read every token's balance: one that covers the amount is offered.
        const instead = coveringToken(n.tokens, t, (o) => balances.get(balanceKey(n.chainId, o)));
        showProblem(
          { kind: "insufficient_token", message: insufficientTokenMessage({ held: balance, token: t, networkName: n.network, instead }) },
          instead ? [{ label: `Pay in ${instead.tokenSymbol}`, run: () => chooseToken(instead.tokenAddress) }, ...sandboxActions()] : sandboxActions(),
        );
        return;
      }
      // Where the payment service offers it for this token: one signature, no gas coin needed (payByAuthorization).
      if (signsOn(n, t) && (await payByAuthorization(n))) return;
      // Any other token by a plain transfer; sent as is, never simulated against an ABI that
      // expects a bool back (USDT's transfer returns nothing). The gas estimate is the dry run.
      prepared = await wallet!.prepareTransfer(t.tokenAddress, n.depositAddress, amount);
      const native = await wallet!.nativeBalance();
      if (native < prepared.maxFeeWei) {
        showProblem(
          { kind: "insufficient_gas", message: `Not enough ${n.nativeCurrency.symbol} on ${n.network} for the network fee (about ${formatFee(prepared.maxFeeWei)} ${n.nativeCurrency.symbol}). Add some and try again.` },
          sandboxActions(),
        );
        return;
      }
    } catch (err) {
      showProblem(walletProblem(err, { networkName: n.network }), [{ label: "Try again", run: () => void pay() }, ...sandboxActions()]);
      return;
    }
    if (expired()) {
      showProblem({ kind: "expired", message: "This payment has expired. Nothing was sent." }, []);
      return;
    }
    try {
      sentTxHash = await wallet!.send(prepared.tx);
    } catch (err) {
      showProblem(walletProblem(err, { networkName: n.network }), [{ label: "Try again", run: () => void pay() }]);
      return;
    }
    void watchReceipt(wallet!, sentTxHash);
  });
}

/**
 * Pays by signing the session's EIP-3009 authorization (the payer view's `gasless` offer) and
 * handing it to the payment service, which checks it, records it and submits it: the payer needs
 * no gas coin. false: the wallet cannot sign typed data, so the caller pays by transfer instead.
 */
async function payByAuthorization(n: PayerNetwork): Promise<boolean> {
  const offer = n.gasless!;
  let signature: string;
  try {
    signature = await wallet!.signAuthorization(offer);
  } catch (err) {
    if (cannotSignTypedData(err)) {
      typedDataUnsupported = true;
      render();
      return false;
    }
    showProblem(walletProblem(err, { networkName: n.network }), [{ label: "Try again", run: () => void pay() }]);
    return true;
  }
  try {
    // 202 with the record: `recorded` (the service submits it) or `mined` (someone else did first): either way it is on its way.
    await api!.authorize({ chainId: n.chainId, from: wallet!.account, ...offer.message, signature });
    authorizedOn = n.chainId;
  } catch (err) {
    const e = failureOf(err) ?? new ApiFailure(0, "unknown", String(err), { cause: err });
    if (e.code === "authorization_nonce_used" || e.code === "session_not_pending") {
      // Submitted on-chain by someone else before it reached the service, perhaps: the session says whether it paid.
      authorizedOn = n.chainId;
      usedElsewhere = { chainId: n.chainId, at: Date.now(), message: e.message };
      return true;
    }
    showProblem({ kind: e.code, message: e.message }, [{ label: "Try again", run: () => void pay() }]);
  }
  return true;
}

/** A signature refused as used elsewhere that the session has shown nothing of for a while: now it is a problem. */
function checkUsedElsewhere() {
  if (!usedElsewhere || !view) return;
  const on = usedElsewhere.chainId;
  const paymentsOnNetwork = view.payments.filter((p) => p.chainId === on).length;
  if (afterUsedElsewhere({ refusedAt: usedElsewhere.at, now: Date.now(), status: view.status, paymentsOnNetwork }) === "follow") {
    if (view.status !== "PENDING" || paymentsOnNetwork > 0) usedElsewhere = undefined; // it paid (or the session ended): the session shows it from here
    return;
  }
  const message = usedElsewhere.message;
  usedElsewhere = undefined;
  authorizedOn = undefined;
  showProblem({ kind: "authorization_nonce_used", message }, [{ label: "Try again", run: () => void pay() }]);
  render();
}

/** A transaction that reverts never shows up as a payment: say so instead of waiting forever. */
async function watchReceipt(w: Wallet, hash: string) {
  for (let i = 0; i < 600 && sentTxHash === hash; i++) {
    try {
      const ok = await w.receiptOk(hash);
      if (ok === true) return;
      if (ok === false) {
        sentTxHash = undefined;
        showProblem({ kind: "reverted", message: "The transaction failed on-chain (reverted): nothing was paid. Try again." }, [{ label: "Try again", run: () => void pay() }]);
        render();
        return;
      }
    } catch {
      // the wallet may be away for a moment; the session's own progress still shows
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function getTestTokens() {
  const n = network();
  if (!api || !n) return;
  const t = token(n);
  if (!wallet) {
    showProblem({ kind: "no_wallet", message: "Connect a wallet first: the test tokens go to its address." }, []);
    return;
  }
  await withBusy(async () => {
    try {
      const r = await api!.faucet(wallet!.account, n.chainId, t.tokenAddress);
      clearProblem();
      // The new balance first, then the notice: the payer never reads "sent" beside the old balance.
      await refreshBalance();
      notice(`Test tokens sent: ${formatUnits(BigInt(r.amountBaseUnits), t.decimals)} ${t.tokenSymbol} to your wallet.`);
    } catch (err) {
      showProblem({ kind: "faucet", message: failureOf(err)?.message ?? String(err) }, []);
    }
  });
}

async function testPay() {
  const n = network();
  if (!api || !n) return;
  clearProblem();
  await withBusy(async () => {
    try {
      sentTxHash = (await api!.testPay(n.chainId)).txHash;
      notice("Paid from the sandbox test wallet.");
    } catch (err) {
      showProblem({ kind: "testpay", message: failureOf(err)?.message ?? String(err) }, []);
    }
  });
}

async function cancel() {
  if (!api) return;
  await withBusy(async () => {
    try {
      view = await api!.cancel();
      post({ type: "status", status: view.status, reason: view.statusReason });
    } catch (err) {
      showProblem({ kind: "cancel", message: failureOf(err)?.message ?? String(err) }, []);
    }
  });
}

async function copy(button: HTMLElement) {
  const target = $(button.dataset.copy!);
  const text = target.dataset.value ?? target.textContent ?? "";
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    // Clipboard refused (permissions): select the text so the payer can copy it by hand.
    const range = document.createRange();
    range.selectNodeContents(target);
    window.getSelection()?.removeAllRanges();
    window.getSelection()?.addRange(range);
    button.textContent = "Selected";
  }
  setTimeout(() => (button.textContent = "Copy"), 1500);
}

function selectTab(which: "wallet" | "qr") {
  $("tab-wallet").setAttribute("aria-selected", String(which === "wallet"));
  $("tab-qr").setAttribute("aria-selected", String(which === "qr"));
  $("panel-wallet").hidden = which !== "wallet";
  $("panel-qr").hidden = which !== "qr";
}

// ---------- the session ----------

async function poll() {
  if (!api || !init) return;
  try {
    const next = await api.session(init.paymentSessionId);
    if (next) {
      const changed = !view || next.status !== view.status || next.statusReason !== view.statusReason;
      view = next;
      if (changed) post({ type: "status", status: next.status, reason: next.statusReason });
      render();
    }
    checkUsedElsewhere();
  } catch (err) {
    if (failureOf(err)?.status === 401 && view && !isOpen()) return; // token past its lifetime after the end: keep the last screen
  }
  setTimeout(poll, view && (view.status === "PENDING" || view.status === "FUNDED") ? POLL_OPEN_MS : POLL_DONE_MS);
}

const FAIL_CODES: Record<string, string> = {
  session_token_invalid: "session_token_invalid",
  session_token_expired: "session_token_expired",
  session_token_mismatch: "session_mismatch",
  credentials_malformed: "session_token_invalid",
};

async function start(msg: ToCheckout) {
  init = msg;
  api = new SessionApi(msg.paymentSessionToken);
  try {
    view = await api.session(msg.paymentSessionId);
  } catch (err) {
    const failure = failureOf(err);
    if (failure && FAIL_CODES[failure.code]) fail(FAIL_CODES[failure.code]!, failure.message);
    else fail("checkout_unreachable", messageOf(err));
    return;
  }
  if (!view) return fail("checkout_unreachable", "The payment service gave no session.");
  if (view.merchantId !== msg.merchantId) {
    return fail("merchant_mismatch", "This payment session belongs to another merchant than the one this page was set up with (NEXT_PUBLIC_SERVICE_MERCHANT_ID).");
  }
  chainId = view.networks[0]?.chainId;
  render();
  post({ type: "interactive", status: view.status, reason: view.statusReason });
  discoverWallets((found) => {
    wallets = found;
    render();
  });
  setInterval(renderCountdown, 1000);
  setTimeout(poll, POLL_OPEN_MS);
}

function boot() {
  $("close-btn").addEventListener("click", close);
  $("done-btn").addEventListener("click", close);
  $("pay-btn").addEventListener("click", () => void pay());
  $("faucet-btn").addEventListener("click", () => void getTestTokens());
  $("testpay-btn").addEventListener("click", () => void testPay());
  $("cancel-btn").addEventListener("click", () => void cancel());
  $("tab-wallet").addEventListener("click", () => selectTab("wallet"));
  $("tab-qr").addEventListener("click", () => selectTab("qr"));
  document.querySelectorAll<HTMLElement>("button.copy").forEach((b) => b.addEventListener("click", () => void copy(b)));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") close();
  });

  if (window.parent === window) {
    // Opened on its own: the session comes in the fragment (never sent to a server), which is
    // then removed from the address bar and history.
    const params = new URLSearchParams(location.hash.slice(1));
    history.replaceState(null, "", location.pathname);
    returnTo = returnUrlOf(params.get("returnUrl"), location.origin);
    const msg = readToCheckout({
      paysession: PROTOCOL,
      type: "init",
      merchantId: params.get("merchantId"),
      paymentSessionId: params.get("paymentSessionId"),
      paymentSessionToken: params.get("paymentSessionToken"),
    });
    if (!msg) return fail("invalid_argument", "Open this page through the merchant's site.");
    void start(msg);
    return;
  }
  const onMessage = (event: MessageEvent) => {
    // Only our parent speaks to us, and only once.
    if (event.source !== window.parent || init) return;
    const msg = readToCheckout(event.data);
    if (!msg) return;
    parentOrigin = event.origin;
    window.removeEventListener("message", onMessage);
    void start(msg);
  };
  window.addEventListener("message", onMessage);
  post({ type: "ready" });
}

boot();
