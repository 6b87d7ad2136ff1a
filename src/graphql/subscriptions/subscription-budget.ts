// Fan-out is bounded. One event is executed once per subscription that hears it, with that
// subscription's selection: the work one comment causes is the sum of the selections listening.
// Four bounds, on this instance (what is spent here is bounded here; each instance delivers to its
// own connections):
//   - a subscription's selection costs at most `maxCost` (the cost model of document-limits/cost-measure.ts);
//   - a caller's open subscriptions share one budget: the sum of their costs is at most
//     `callerCost` (refused at subscribe time, with the figures);
//   - deliveries are metered: a caller's deliveries may spend `deliveryCost` per window, counted in
//     the same cost units; past it each of their subscriptions is told once (RATE_LIMITED with
//     retryAfter), skips events until the window turns, and then receives again;
//   - one event's deliveries together may spend `eventMaxDeliveryCost`; the subscriptions past it
//     (the most recent ones: events are heard in order of subscription) are told that this event
//     was not delivered (SERVICE_UNAVAILABLE), and stay open.
// The caller is who the connection counts against (callerKey: the user, or the client address).
import { type ExecutionArgs, type ExecutionResult, createSourceEventStream, GraphQLError } from 'graphql'
import { AppError } from '../../errors.js'
import { isEventsInterrupted } from '../../events/event-stream.js'

export interface SubscriptionBudgetOptions {
  /** Largest cost of one subscription's selection. */
  maxCost: number
  /** Sum of the costs of one caller's open subscriptions. */
  callerCost: number
  /** Cost units one caller's deliveries may spend per window. */
  deliveryCost: number
  deliveryWindowMs: number
  /** Cost units one event's deliveries may spend together. */
  eventMaxDeliveryCost: number
}

/** A subscription's claim on its caller's budget, from subscribe until it ends. */
export interface Reservation {
  readonly key: string
  readonly cost: number
  release(): void
}

/** Why a subscription is refused: the limit, the figure and its bound. */
export interface BudgetRefusal {
  limit: 'subscription-cost' | 'subscription-budget'
  value: number
  max: number
  message: string
}

export const isReservation = (value: Reservation | BudgetRefusal): value is Reservation => 'release' in value

interface CallerAccount {
  reserved: number
  subscriptions: number
  windowStart: number
  spent: number
}

type Refusal = { code: 'RATE_LIMITED'; message: string; retryAfterS: number } | { code: 'SERVICE_UNAVAILABLE'; message: string }

export class SubscriptionBudget {
  private readonly accounts = new Map<string, CallerAccount>()
  /** Cost spent on each event's deliveries so far (events are objects shared by every listener). */
  private readonly spentOnEvent = new WeakMap<object, number>()
  private readonly cleaner: NodeJS.Timeout
  /** Deliveries skipped: past a caller's allowance, or past an event's ceiling. */
  skippedDeliveries = 0

  constructor(
    readonly options: SubscriptionBudgetOptions,
    /** The clock of the delivery windows. */
    private readonly now: () => number = Date.now,
  ) {
    // Accounts of callers with no subscription left are forgotten once their window has passed.
    this.cleaner = setInterval(
      () => {
        const now = this.now()
        for (const [key, account] of this.accounts) {
          if (account.subscriptions === 0 && now - account.windowStart >= options.deliveryWindowMs) this.accounts.delete(key)
        }
      },
      Math.max(options.deliveryWindowMs, 1000),
    ).unref()
  }

  close(): void {
    clearInterval(this.cleaner)
  }

  /** The reservation of a subscription of `cost` for `key`, or why it is refused (a limit of document-limits' kind). */
  reserve(key: string, cost: number): Reservation | BudgetRefusal {
    const { maxCost, callerCost } = this.options
    if (cost > maxCost) {
      return {
        limit: 'subscription-cost',
        value: cost,
        max: maxCost,
        message: `This subscription's selection costs ${cost}; a subscription may cost at most ${maxCost} (each event runs it again)`,
      }
    }
    const account = this.account(key)
    if (account.reserved + cost > callerCost) {
      const message = `Your open subscriptions cost ${account.reserved} together and this one ${cost}; a caller's subscriptions may cost at most ${callerCost} together: end one first`
      return { limit: 'subscription-budget', value: account.reserved + cost, max: callerCost, message }
    }
    account.reserved += cost
    account.subscriptions++
    let released = false
    return {
      key,
      cost,
      release: () => {
        if (released) return
        released = true
        account.reserved -= cost
        account.subscriptions--
      },
    }
  }

  /** Whether `event` may be delivered to the subscription holding `reservation` now (and what it is charged), or why not. */
  admit(reservation: Reservation, event: unknown): Refusal | undefined {
    if (typeof event !== 'object' || event === null || isEventsInterrupted(event)) return undefined
    const { deliveryCost, deliveryWindowMs, eventMaxDeliveryCost } = this.options
    const account = this.account(reservation.key)
    const now = this.now()
    if (now - account.windowStart >= deliveryWindowMs) {
      account.windowStart = now
      account.spent = 0
    }
    if (account.spent + reservation.cost > deliveryCost) {
      this.skippedDeliveries++
      const retryAfterS = Math.max(1, Math.ceil((account.windowStart + deliveryWindowMs - now) / 1000))
      return {
        code: 'RATE_LIMITED',
        message: `Deliveries past your allowance (${deliveryCost} cost units per ${deliveryWindowMs / 1000} s, each delivery costing its selection): events are skipped for ${retryAfterS} s, then delivered again`,
        retryAfterS,
      }
    }
    const spentOnEvent = this.spentOnEvent.get(event) ?? 0
    if (spentOnEvent + reservation.cost > eventMaxDeliveryCost) {
      this.skippedDeliveries++
      return {
        code: 'SERVICE_UNAVAILABLE',
        message: `An event was not delivered: its deliveries on this instance reached their ceiling (${eventMaxDeliveryCost} cost units)`,
      }
    }
    this.spentOnEvent.set(event, spentOnEvent + reservation.cost)
    account.spent += reservation.cost
    return undefined
  }

  /**
   * graphql's subscribe, with each event admitted before its selection runs: refused deliveries
   * are skipped, and the subscriber told once per refusal (a result with the error); the
   * reservation is released when the subscription ends, however it ends.
   */
  subscribe(args: ExecutionArgs, reservation: Reservation, run: Execute): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
    return meteredSubscribe(this, args, reservation, run)
  }

  private account(key: string): CallerAccount {
    let account = this.accounts.get(key)
    if (account === undefined) {
      account = { reserved: 0, subscriptions: 0, windowStart: this.now(), spent: 0 }
      this.accounts.set(key, account)
    }
    return account
  }
}

/** Runs an operation's selection on one event: the operation pipeline's execute (compiled by graphql-jit from a document's second use). */
type Execute = (args: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult

async function meteredSubscribe(
  budget: SubscriptionBudget,
  args: ExecutionArgs,
  reservation: Reservation,
  run: Execute,
): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  let source: AsyncIterable<unknown> | ExecutionResult
  try {
    source = await createSourceEventStream(args)
  } catch (error) {
    reservation.release()
    throw error
  }
  if (!(Symbol.asyncIterator in source)) {
    reservation.release()
    return source
  }
  const events = source[Symbol.asyncIterator]()
  /** The refusal last told: told once, until a delivery goes through again. */
  let told: Refusal['code'] | undefined

  const end = async (): Promise<IteratorResult<ExecutionResult>> => {
    reservation.release()
    await events.return?.()
    return { done: true, value: undefined }
  }

  /** One event of the source as the subscriber's next result; a skipped event reads the next one. */
  const mapResult = async (item: IteratorResult<unknown>): Promise<IteratorResult<ExecutionResult>> => {
    if (item.done === true) {
      reservation.release()
      return { done: true, value: undefined }
    }
    const refusal = budget.admit(reservation, item.value)
    if (refusal === undefined) {
      told = undefined
      return { done: false, value: await run({ ...args, rootValue: item.value }) }
    }
    if (told === refusal.code) return mapResult(await events.next())
    told = refusal.code
    const error = new AppError(refusal.code, refusal.message, undefined, refusal.code === 'RATE_LIMITED' ? { retryAfterS: refusal.retryAfterS } : {})
    return { done: false, value: { errors: [new GraphQLError(refusal.message, { originalError: error })] } }
  }

  // Shaped as graphql's own mapping of a source stream (mapAsyncIterator), so a delivery takes the
  // same turns as before; hand-written, not an async generator: return() must reach the source at
  // once, even while it waits for an event, so an idle subscription ends when its client leaves.
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    async next(): Promise<IteratorResult<ExecutionResult>> {
      return mapResult(await events.next())
    },
    return: end,
    async throw(error?: unknown) {
      await end()
      throw error instanceof Error ? error : new Error(String(error))
    },
    [Symbol.asyncIterator]: () => iterator,
  }
  return iterator
}
