// How much password work (scrypt) a client may cause: failed sign-ins per address, account and
// both (SIGN_IN_*), and password changes per user (PASSWORD_CHANGES_*).
import { ConfigError, type Env, readInteger } from './read-env.js'

/**
 * Allowances of password work, apart from the rate limit. A sign-in attempt takes a point from
 * three allowances before its password is checked and gives them back when it succeeds, so they
 * count failures (and attempts in flight). The account-wide bound is the highest: one address can
 * spend at most its account-and-address allowance of it, so locking a victim out takes
 * SIGN_IN_MAX_PER_ACCOUNT / SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS addresses (10 by default) at once.
 */
export interface PasswordAllowances {
  /** Failed sign-ins from one client address (its /64 for IPv6), whatever the accounts, per window. @default 20 */
  readonly signInMaxPerAddress: number
  /** Failed sign-ins to one account (the e-mail address given) from one client address, per window. @default 10 */
  readonly signInMaxPerAccountAndAddress: number
  /** Failed sign-ins to one account from every address together, per window; above SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS. @default 100 */
  readonly signInMaxPerAccount: number
  /** @default 900 s (15 minutes) */
  readonly signInWindowMs: number
  /** Passwords one signed-in user may set (their own, or others' as an admin: create, PUT, PATCH, updateUser) per window. @default 5 */
  readonly changesMax: number
  /** @default 900 s (15 minutes) */
  readonly changesWindowMs: number
  /**
   * scrypt's cost N for new passwords, a power of two (PASSWORD_SCRYPT_N): each derivation takes
   * time and memory in proportion. Hashes made at another cost keep being checked at theirs.
   * Lower it only where passwords protect nothing (a test suite). @default 16384 (2^14)
   */
  readonly scryptN: number
}

export function readPasswordAllowances(env: Env): PasswordAllowances {
  const signInMaxPerAccountAndAddress = readInteger(env, 'SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS', 10, 1, 1_000_000_000)
  const signInMaxPerAccount = readInteger(env, 'SIGN_IN_MAX_PER_ACCOUNT', 100, 1, 1_000_000_000)
  // Else one address could spend an account's whole allowance and lock its owner out alone.
  if (signInMaxPerAccount <= signInMaxPerAccountAndAddress) {
    throw new ConfigError(
      'SIGN_IN_MAX_PER_ACCOUNT',
      `expected more than SIGN_IN_MAX_PER_ACCOUNT_AND_ADDRESS (${signInMaxPerAccountAndAddress}), got ${signInMaxPerAccount}`,
    )
  }
  return Object.freeze({
    signInMaxPerAddress: readInteger(env, 'SIGN_IN_MAX_PER_ADDRESS', 20, 1, 1_000_000_000),
    signInMaxPerAccountAndAddress,
    signInMaxPerAccount,
    signInWindowMs: readInteger(env, 'SIGN_IN_WINDOW_S', 900, 1, 86_400) * 1000,
    changesMax: readInteger(env, 'PASSWORD_CHANGES_MAX', 5, 1, 1_000_000_000),
    changesWindowMs: readInteger(env, 'PASSWORD_CHANGES_WINDOW_S', 900, 1, 86_400) * 1000,
    scryptN: readScryptN(env),
  })
}

function readScryptN(env: Env): number {
  const n = readInteger(env, 'PASSWORD_SCRYPT_N', 16_384, 1024, 1_048_576)
  if ((n & (n - 1)) !== 0) throw new ConfigError('PASSWORD_SCRYPT_N', `expected a power of two from 1024 to 1048576, got ${n}`)
  return n
}
