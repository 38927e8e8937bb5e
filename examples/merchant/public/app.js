// The example shop's page script. It asks its own server for a payment session (the server
// holds the API key), opens the checkout with the SDK, and shows what sdk.open resolved with.
// The order itself is decided by the webhooks on the server; the page only shows it.
const merchantId = document.querySelector('meta[name="paysession-merchant-id"]').content;
const paysession = window.Paysession.init({ merchantId });

const $ = (id) => document.getElementById(id);

async function showOrder(orderId) {
  const order = await (await fetch(`/orders/${orderId}`)).json();
  $("order-json").textContent = JSON.stringify(order, null, 2);
}

$("buy").addEventListener("click", async () => {
  $("buy").disabled = true;
  try {
    const res = await fetch("/orders", { method: "POST" });
    if (!res.ok) throw new Error(`the shop's server answered ${res.status}`);
    const { orderId, paymentSessionId, paymentSessionToken } = await res.json();
    let result;
    try {
      result = await paysession.open({ paymentSessionId, paymentSessionToken });
    } catch (err) {
      // A PaysessionError: err.code says why the checkout could not be opened.
      result = { error: err.code ?? "unknown", message: err.message };
    }
    $("result").hidden = false;
    $("result-json").textContent = JSON.stringify(result, null, 2);
    document.body.dataset.outcome = result.outcome ?? result.error;
    // The webhook may still be on its way: look again for a few seconds.
    for (let i = 0; i < 10; i++) {
      await showOrder(orderId);
      await new Promise((r) => setTimeout(r, 1000));
    }
  } catch (err) {
    $("result").hidden = false;
    $("result-json").textContent = String(err);
  } finally {
    $("buy").disabled = false;
  }
});
