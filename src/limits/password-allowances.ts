// Password work (scrypt) has allowances of its own, apart from the rate limit (config.passwords
// says which and why): failed sign-ins per address, per account and address, and per account, and
// password changes per user. They count where the rate limit counts: in Redis when it is shared,
// else in this process. One store, so one log of its failures for the four (one line per outage,
// not one per allowance).
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import { createLimiter, storeFailureLog } from './limiter.js'

export function createPasswordAllowances(
  { passwords, rateLimit }: Pick<Config, 'passwords' | 'rateLimit'>,
  { redis, log, now }: { redis: { redis: Redis; keyPrefix: string } | undefined; log: FastifyBaseLogger; now?: (() => number) | undefined },
) {
  const failures = storeFailureLog(log, 'password-allowances', rateLimit.onStoreError, 'sign-ins and password changes')
  const allowance = (name: string, points: number, windowMs: number) =>
    createLimiter({ name, points, windowMs, redis, onStoreError: rateLimit.onStoreError, log, failures, now })
  return {
    changes: allowance('password-changes', passwords.changesMax, passwords.changesWindowMs),
    signIn: {
      perAddress: allowance('sign-in-address', passwords.signInMaxPerAddress, passwords.signInWindowMs),
      perAccountAndAddress: allowance('sign-in-account-address', passwords.signInMaxPerAccountAndAddress, passwords.signInWindowMs),
      perAccount: allowance('sign-in-account', passwords.signInMaxPerAccount, passwords.signInWindowMs),
    },
    /** The store's failures, counted once for the four. */
    failures,
  }
}
