// Password hashing with scrypt from node:crypto, at OWASP's recommended cost (N=2^14, r=8, p=5)
// unless PASSWORD_SCRYPT_N says otherwise, stored as `scrypt$N$r$p$salt$hash` so the cost can change
// without breaking old hashes (each is checked at the cost it was made with).
// One derivation costs about 250 ms of CPU. It runs on libuv's thread pool (scrypt's callback form
// queues a job there; the event loop only waits for the callback), but that pool has 4 threads
// (UV_THREADPOOL_SIZE) and fs, dns.lookup and zlib share them: so at most MAX_CONCURRENT
// derivations run at once, the others wait in a bounded queue served in turn by whose work it is
// (a client address, a user), and past the queue the work is refused with 503 and Retry-After.
import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { AppError } from '../errors.js'

/** scrypt's CPU and memory cost N (a power of two), OWASP's recommendation; r and p stay as they are. */
export const DEFAULT_SCRYPT_N = 2 ** 14
const R = 8
const P = 5
const KEY_LENGTH = 64
const SALT_LENGTH = 16

/**
 * Derivations on the thread pool at once: at most two of its four threads (the others left to fs,
 * dns and zlib), and never every core: a derivation keeps a core busy for its whole 250 ms, so on a
 * two-core machine two at once left the event loop without one (npm run bench:abuse, a batch of
 * password changes: probe p99 348 ms with two, see docs/security.md).
 */
export const MAX_CONCURRENT_DERIVATIONS = Math.max(1, Math.min(2, availableParallelism() - 1))
/**
 * Derivations waiting for a thread, whoever asked; one more is refused (503). At 250 ms each, a
 * full queue drains in 4 to 8 s: a longer wait helps no client.
 */
export const MAX_QUEUED_DERIVATIONS = 32

/** Whose work a derivation is (a client address, a user): the queue serves each in turn. */
export type HashingLane = string

/** The lane of work nobody in particular asked for. */
const SHARED_LANE: HashingLane = ''

export interface PasswordHashingStats {
  /** Derivations started since the process started. */
  readonly derivations: number
  readonly running: number
  readonly queued: number
  /** Derivations refused because the queue was full. */
  readonly refused: number
}

/**
 * A semaphore whose waiters queue per lane: a free thread goes to the waiting lane with the fewest
 * derivations running, the longest-unserved first. A flood from one address waits behind itself,
 * while another client's single sign-in takes the next free thread.
 */
export function createDerivationGate() {
  /** The waiters of each lane, the lanes in turn order (a lane served goes to the back). */
  const lanes = new Map<HashingLane, (() => void)[]>()
  const runningByLane = new Map<HashingLane, number>()
  /** When each lane was last given a thread (a count of starts), so a tie goes to the one served longest ago. */
  const servedAt = new Map<HashingLane, number>()
  let starts = 0
  let running = 0
  let queued = 0
  let derivations = 0
  let refused = 0
  /** Milliseconds a derivation took lately (a moving average), for Retry-After. */
  let averageMs = 250

  const runningIn = (lane: HashingLane) => runningByLane.get(lane) ?? 0

  function start(lane: HashingLane): void {
    servedAt.set(lane, ++starts)
    running++
    runningByLane.set(lane, runningIn(lane) + 1)
  }

  function finish(lane: HashingLane): void {
    running--
    const left = runningIn(lane) - 1
    if (left === 0) runningByLane.delete(lane)
    else runningByLane.set(lane, left)
    if (left === 0 && !lanes.has(lane)) servedAt.delete(lane)
  }

  function admitNext(): void {
    let chosen: HashingLane | undefined
    const lastServed = (lane: HashingLane) => servedAt.get(lane) ?? 0
    for (const lane of lanes.keys()) {
      if (chosen === undefined) chosen = lane
      else if (runningIn(lane) < runningIn(chosen) || (runningIn(lane) === runningIn(chosen) && lastServed(lane) < lastServed(chosen))) chosen = lane
    }
    if (chosen === undefined) return
    const waiters = lanes.get(chosen) ?? []
    const admit = waiters.shift()
    // The lane goes to the back of the turn order (or leaves it when empty).
    lanes.delete(chosen)
    if (waiters.length > 0) lanes.set(chosen, waiters)
    queued--
    start(chosen)
    admit?.()
  }

  return {
    async run<T>(lane: HashingLane, work: () => Promise<T>): Promise<T> {
      if (running >= MAX_CONCURRENT_DERIVATIONS) {
        if (queued >= MAX_QUEUED_DERIVATIONS) {
          refused++
          const retryAfterS = Math.max(1, Math.ceil(((queued / MAX_CONCURRENT_DERIVATIONS + 1) * averageMs) / 1000))
          throw new AppError('SERVICE_UNAVAILABLE', `Too many passwords are being checked right now; retry in ${retryAfterS} s`, undefined, { retryAfterS })
        }
        queued++
        await new Promise<void>((resolve) => {
          const waiters = lanes.get(lane)
          if (waiters === undefined) lanes.set(lane, [resolve])
          else waiters.push(resolve)
        })
      } else {
        start(lane)
      }
      derivations++
      const started = performance.now()
      try {
        return await work()
      } finally {
        averageMs = 0.8 * averageMs + 0.2 * (performance.now() - started)
        finish(lane)
        admitNext()
      }
    },
    stats: (): PasswordHashingStats => ({ derivations, running, queued, refused }),
  }
}

const gate = createDerivationGate()

/** How much hashing this process has done and is doing (tests and metrics read it). */
export const passwordHashingStats = (): PasswordHashingStats => gate.stats()

function derive(password: string, salt: Buffer, options: ScryptOptions, lane: HashingLane): Promise<Buffer> {
  return gate.run(
    lane,
    () =>
      new Promise((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key)))
      }),
  )
}

/** The stored form of `password`; SERVICE_UNAVAILABLE (with Retry-After) when too much hashing waits already. */
export async function hashPassword(password: string, lane: HashingLane = SHARED_LANE, scryptN = DEFAULT_SCRYPT_N): Promise<string> {
  const salt = randomBytes(SALT_LENGTH)
  const key = await derive(password, salt, { N: scryptN, r: R, p: P }, lane)
  return ['scrypt', scryptN, R, P, salt.toString('base64'), key.toString('base64')].join('$')
}

/** True when `password` matches `stored`; compares in constant time. SERVICE_UNAVAILABLE as hashPassword. */
export async function verifyPassword(password: string, stored: string, lane: HashingLane = SHARED_LANE): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64')
  const key = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) }, lane)
  return key.length === expected.length && timingSafeEqual(key, expected)
}

/** The decoy hash of each cost. */
const decoys = new Map<number, Promise<string>>()
/**
 * Spends the time a real check would when there is no hash to check against (unknown e-mail, no
 * password set), so the answer's timing does not tell which part of a sign-in was wrong: at the
 * cost new passwords are hashed at.
 */
export async function verifyAgainstDecoy(password: string, lane: HashingLane = SHARED_LANE, scryptN = DEFAULT_SCRYPT_N): Promise<false> {
  // The decoy is computed once per cost; a failed attempt (a full queue) is not kept.
  let decoy = decoys.get(scryptN)
  if (decoy === undefined) {
    decoy = hashPassword('decoy password that matches nothing', SHARED_LANE, scryptN).catch((error: unknown) => {
      decoys.delete(scryptN)
      throw error
    })
    decoys.set(scryptN, decoy)
  }
  await verifyPassword(password, await decoy, lane)
  return false
}
