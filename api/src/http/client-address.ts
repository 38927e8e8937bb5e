/** The peer address of each request, as the socket saw it (set by serve.ts; read by the dashboard's security history and sign-in throttle). Never a header a client could forge. */
export const clientAddresses = new WeakMap<Request, string>();
