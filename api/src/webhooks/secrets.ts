/**
 * Webhook secrets at rest. A merchant may ask to see an endpoint's secret again, so it
 * cannot be stored as a hash; it is sealed (credentials/seal.ts, AES-256-GCM) under the
 * service's encryption key (credentials/encryption-key.ts), with the endpoint id as associated
 * data, so a sealed value copied onto another endpoint's row does not open. Format:
 * `v1.<iv>.<tag>.<ciphertext>`, base64 parts: every stored secret was written so.
 */
import { seal, unseal, type SealFormat } from "../credentials/seal.ts";

const secretSeal = (endpointId: string) => ({ label: "v1", aad: endpointId }) as const satisfies SealFormat;

export const sealSecret = (key: Buffer, secret: string, endpointId: string): string => seal(key, secret, secretSeal(endpointId));

/** Throws when the value was not sealed under this key for this endpoint, or was altered. */
export const openSecret = (key: Buffer, sealed: string, endpointId: string): string => unseal(key, sealed, secretSeal(endpointId));
