// Failed sign-ins, counted per client address, per account and address, and per account, before
// any password is checked.
import { createHash } from 'node:crypto'
import { AppError } from '../errors.js'
import type { Limiter } from '../limits/limiter.js'

/** Failed sign-ins per client address, per account and address, and per account (the highest). */
export interface SignInAllowance {
  perAddress: Limiter
  perAccountAndAddress: Limiter
  perAccount: Limiter
}

interface SignInAttempt {
  /** Returns the points the attempt took: it succeeded, or no password was checked. */
  giveBack(): Promise<void>
}

const NOTHING_TAKEN: SignInAttempt = { giveBack: async () => {} }

/**
 * Takes one attempt from each allowance, the client address's first: the first refusal stops
 * there, so an address past its allowance counts against no account, and one address adds at most
 * its account-and-address allowance to an account's. The points are taken before the password is
 * checked (so parallel attempts cannot all pass one check), and given back on success.
 */
async function takeAttempt(allowance: SignInAllowance, email: string, address: string): Promise<SignInAttempt> {
  // The account is the e-mail address given, whether or not a user has it (a refusal tells
  // nothing about who exists), hashed so that no address is stored in Redis's keys.
  const account = createHash('sha256').update(email.toLowerCase()).digest('base64url')
  const steps: [Limiter, string][] = [
    [allowance.perAddress, address],
    [allowance.perAccountAndAddress, `${account}:${address}`],
    [allowance.perAccount, account],
  ]
  const taken: [Limiter, string][] = []
  for (const [limiter, key] of steps) {
    const verdict = await limiter.consume(key)
    if (!verdict.allowed) {
      const { retryAfterS } = verdict
      throw new AppError('RATE_LIMITED', `Too many failed sign-ins: retry in ${retryAfterS} s`, undefined, { retryAfterS })
    }
    taken.push([limiter, key])
  }
  return {
    async giveBack() {
      await Promise.all(taken.map(([limiter, key]) => limiter.reward(key)))
    },
  }
}

/** One attempt taken from each allowance ('unlimited': where nobody signs in, nothing is taken). */
export const takeSignInAttempt = (allowance: SignInAllowance | 'unlimited', email: string, address: string): Promise<SignInAttempt> =>
  allowance === 'unlimited' ? Promise.resolve(NOTHING_TAKEN) : takeAttempt(allowance, email, address)
