// The refund-link page's only script (refund-page/page.ts): the form works without it; with a
// browser wallet (EIP-1193, window.ethereum) it shows "Connect wallet", which asks the wallet for
// its account (eth_requestAccounts) and fills the address in. The payer still presses Claim.
(() => {
  const button = document.getElementById("connect");
  const input = document.getElementById("address");
  const note = document.getElementById("wallet-note");
  // A refusal's reason is about the address it was given: once the address changes it is stale.
  const clearError = () => {
    const error = document.getElementById("address-error");
    if (error) error.remove();
    if (input) {
      input.removeAttribute("aria-invalid");
      input.setAttribute("aria-describedby", "address-help");
    }
  };
  if (input) input.addEventListener("input", clearError, { once: true });
  const wallet = window.ethereum;
  if (!button || !input || !note || !wallet || typeof wallet.request !== "function") return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    button.disabled = true;
    note.textContent = "Waiting for your wallet…";
    try {
      const accounts = await wallet.request({ method: "eth_requestAccounts" });
      const account = Array.isArray(accounts) ? accounts[0] : undefined;
      if (typeof account !== "string") throw Object.assign(new Error("no account"), { code: 4100 });
      input.value = account;
      clearError();
      note.textContent = "Filled in from your wallet. Check it, then press Claim refund.";
      input.focus();
    } catch (e) {
      note.textContent = e && e.code === 4001 ? "Your wallet did not share an account. Paste your address instead." : "Your wallet could not be reached. Paste your address instead.";
    } finally {
      button.disabled = false;
    }
  });
})();
