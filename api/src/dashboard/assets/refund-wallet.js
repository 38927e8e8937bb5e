// Paying a refund from the merchant's own wallet (pages/refund-wallet.ts): asks the injected
// EIP-1193 wallet for its account, checks it is the settlement address, then either has it sign
// the TransferWithAuthorization (eth_signTypedData_v4) or send the ERC-20 transfer itself
// (eth_sendTransaction), fills the form and posts it (with its CSRF token). Only the signature or
// the transaction hash leaves the wallet.
"use strict";
(function () {
  var form = document.getElementById("wallet-form");
  var button = document.getElementById("wallet-pay");
  if (!form || !button) return;
  var problem = document.getElementById("wallet-problem");
  var status = document.getElementById("wallet-status");
  var d = form.dataset;
  var say = function (text) { status.textContent = text; };
  var fail = function (text) { problem.textContent = text; problem.hidden = false; say(""); button.disabled = false; };
  var hex = function (n) { return "0x" + BigInt(n).toString(16); };
  var randomNonce = function () {
    var b = new Uint8Array(32);
    crypto.getRandomValues(b);
    return "0x" + Array.prototype.map.call(b, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  };
  // transfer(address,uint256): selector a9059cbb, then the two words.
  var transferData = function (to, value) {
    return "0xa9059cbb" + to.slice(2).toLowerCase().padStart(64, "0") + BigInt(value).toString(16).padStart(64, "0");
  };
  var set = function (name, value) { form.elements.namedItem(name).value = value; };

  button.addEventListener("click", async function () {
    problem.hidden = true;
    var eth = window.ethereum;
    if (!eth || !eth.request) return fail("No browser wallet found on this page. Install one (MetaMask, Rabby, …) or pay the refund from the refund balance instead.");
    button.disabled = true;
    try {
      say("Asking your wallet for its account…");
      var accounts = await eth.request({ method: "eth_requestAccounts" });
      var account = accounts && accounts[0];
      if (!account || account.toLowerCase() !== d.from.toLowerCase()) {
        return fail("Your wallet's account is " + (account || "none") + ", not your settlement address " + d.from + ". Switch to that account in your wallet and press the button again.");
      }
      var chainId = await eth.request({ method: "eth_chainId" });
      if (BigInt(chainId) !== BigInt(d.chainId)) {
        say("Switching your wallet to chain " + d.chainId + "…");
        await eth.request({ method: "wallet_switchEthereumChain", params: [{ chainId: hex(d.chainId) }] });
      }
      if (d.kind === "authorization") {
        var now = Math.floor(Date.now() / 1000);
        var message = { from: d.from, to: d.to, value: d.value, validAfter: "0", validBefore: String(now + Number(d.window)), nonce: randomNonce() };
        var typed = {
          types: {
            EIP712Domain: [{ name: "name", type: "string" }, { name: "version", type: "string" }, { name: "chainId", type: "uint256" }, { name: "verifyingContract", type: "address" }],
            TransferWithAuthorization: [
              { name: "from", type: "address" }, { name: "to", type: "address" }, { name: "value", type: "uint256" },
              { name: "validAfter", type: "uint256" }, { name: "validBefore", type: "uint256" }, { name: "nonce", type: "bytes32" },
            ],
          },
          primaryType: "TransferWithAuthorization",
          domain: { name: d.domainName, version: d.domainVersion, chainId: Number(d.chainId), verifyingContract: d.token },
          message: message,
        };
        say("Sign the authorization in your wallet…");
        var signature = await eth.request({ method: "eth_signTypedData_v4", params: [account, JSON.stringify(typed)] });
        for (var k in message) set(k, message[k]);
        set("signature", signature);
      } else {
        say("Confirm the transfer in your wallet…");
        var hash = await eth.request({ method: "eth_sendTransaction", params: [{ from: account, to: d.token, data: transferData(d.to, d.value), value: "0x0" }] });
        set("txHash", hash);
      }
      say("Sending it to the service…");
      form.submit();
    } catch (e) {
      fail(e && e.code === 4001 ? "You declined in your wallet: nothing was signed or sent." : "The wallet answered: " + ((e && e.message) || e));
    }
  });
})();
