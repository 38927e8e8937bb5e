/** A browser named from its User-Agent, pure: the device list and the new-device notice use it. */
/** A User-Agent in a few words a person recognises ("Chrome on Linux"), else as sent, cut short. */
export function deviceName(ua: string | null): string {
  if (!ua) return "Unknown browser";
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrome\/|Chromium\//.test(ua) ? (/HeadlessChrome/.test(ua) ? "Headless Chrome" : "Chrome") : /Safari\//.test(ua) ? "Safari" : undefined;
  const os = /Windows/.test(ua) ? "Windows" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Android/.test(ua) ? "Android" : /Linux/.test(ua) ? "Linux" : undefined;
  return browser ? `${browser}${os ? ` on ${os}` : ""}` : ua.slice(0, 60);
}
