/**
 * The modal: an overlay holding an iframe of the hosted checkout. Styles are set through the
 * CSSOM (element.style), never a <style> element or a style attribute, so a merchant page
 * with a strict Content-Security-Policy (no 'unsafe-inline' styles) shows it all the same.
 *
 * Accessibility: a dialog (role, aria-modal, label), focus moved into the checkout and kept
 * there (two sentinels send Tab back to the frame), Escape closes, the page behind does not
 * scroll, and focus returns to where it was when the modal closes. Until the checkout's page
 * has loaded, focus stays on the dialog itself: keys typed into a frame whose script has not
 * run yet reach no one, so Escape would do nothing there. On a narrow screen
 * (≤ 480 px) it fills the screen.
 */

export interface Modal {
  iframe: HTMLIFrameElement;
  remove(): void;
}

const Z_TOP = "2147483000";

function styled<K extends keyof HTMLElementTagNameMap>(tag: K, style: Partial<CSSStyleDeclaration>): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  Object.assign(el.style, style);
  return el;
}

export function openModal(checkoutUrl: string, onEscape: () => void): Modal {
  const previousFocus = document.activeElement as HTMLElement | null;
  const root = document.documentElement;
  const previousOverflow = root.style.overflow;
  root.style.overflow = "hidden";

  const narrow = window.innerWidth <= 480;
  const overlay = styled("div", {
    position: "fixed",
    inset: "0",
    zIndex: Z_TOP,
    background: "rgba(15, 23, 42, 0.55)",
    display: "flex",
    alignItems: "center",
    justifyContent: "center",
  });
  overlay.setAttribute("data-paysession", "overlay");

  const dialog = styled("div", {
    position: "relative",
    width: narrow ? "100vw" : "min(440px, calc(100vw - 32px))",
    height: narrow ? "100%" : "min(720px, calc(100vh - 32px))",
    borderRadius: narrow ? "0" : "14px",
    overflow: "hidden",
    background: "#ffffff",
    boxShadow: "0 24px 64px rgba(0, 0, 0, 0.35)",
    outline: "none",
  });
  dialog.tabIndex = -1;
  dialog.setAttribute("role", "dialog");
  dialog.setAttribute("aria-modal", "true");
  dialog.setAttribute("aria-label", "Payment checkout");

  const iframe = styled("iframe", { border: "0", width: "100%", height: "100%", display: "block" });
  iframe.title = "Payment checkout";
  iframe.src = checkoutUrl;
  // Copy buttons of the checkout write to the clipboard from inside the frame.
  iframe.allow = "clipboard-write";
  iframe.setAttribute("data-paysession", "checkout");

  const sentinel = () => {
    const s = styled("span", { position: "absolute", width: "1px", height: "1px", overflow: "hidden" });
    s.tabIndex = 0;
    s.setAttribute("aria-hidden", "true");
    s.addEventListener("focus", () => iframe.focus());
    return s;
  };

  dialog.append(iframe);
  overlay.append(sentinel(), dialog, sentinel());

  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      onEscape();
    }
  };
  document.addEventListener("keydown", onKey, true);
  // The checkout's script runs before its load event: from then on it handles Escape and its ✕.
  iframe.addEventListener("load", () => iframe.focus(), { once: true });
  document.body.append(overlay);
  dialog.focus();

  return {
    iframe,
    remove() {
      document.removeEventListener("keydown", onKey, true);
      overlay.remove();
      root.style.overflow = previousOverflow;
      if (previousFocus && typeof previousFocus.focus === "function") previousFocus.focus();
    },
  };
}
