// Password hashing with scrypt from node:crypto, at OWASP's recommended cost (N=2^14, r=8, p=5),
// stored as `scrypt$N$r$p$salt$hash` so the cost can rise later without breaking old hashes.
import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from 'node:crypto'

const COST = { N: 2 ** 14, r: 8, p: 5 } as const
const KEY_LENGTH = 64
const SALT_LENGTH = 16

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    )
  })
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH)
  const key = await derive(password, salt, COST)
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$')
}

/** True when `password` matches `stored`; compares in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64')
  const key = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) })
  return key.length === expected.length && timingSafeEqual(key, expected)
}

let decoy: Promise<string> | undefined
/**
 * Spends the time a real check would when there is no hash to check against (unknown e-mail, no
 * password set), so the answer's timing does not tell which part of a sign-in was wrong.
 */
export async function verifyAgainstDecoy(password: string): Promise<false> {
  decoy ??= hashPassword('decoy password that matches nothing')
  await verifyPassword(password, await decoy)
  return false
}
