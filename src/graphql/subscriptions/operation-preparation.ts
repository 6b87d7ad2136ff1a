// One operation on a subscription connection, whichever the transport, once the operation
// pipeline has prepared it (admitted, charged, validated, chosen and allowed, as over HTTP): a
// subscription's cost reserved from the caller's subscription budget, and run by graphql's
// subscribe with each event admitted by that budget; a query or mutation run by the pipeline's
// execute in a slot acquired for its caller from the scheduler HTTP requests acquire theirs from
// (src/limits/fair-scheduler.ts); its results' errors formatted as the HTTP endpoint's are.
import type { FastifyRequest } from 'fastify'
import { type ExecutionArgs, type ExecutionResult, type GraphQLError, type GraphQLSchema, OperationTypeNode, subscribe } from 'graphql'
import type { AcquireOptions } from '../../limits/fair-scheduler.js'
import { isReplayed } from '../../events/event-stream.js'
import { callerKey, type RateLimitConsumer } from '../../limits/rate-limit.js'
import { COST_PER_POINT } from '../pipeline/metering.js'
import type { ConnectionCaller } from './connection-rights.js'
import { isReservation, type Reservation, type SubscriptionBudget } from './subscription-budget.js'
import { type GraphQLContext, Loaders } from '../context.js'
import { formatError } from '../errors.js'
import { type ListSizes, operationCosts } from '../document-limits/cost-measure.js'
import { boundAnswer, type OperationPipeline, type PreparedOperation } from '../pipeline/operation-pipeline.js'
import { extraAnswerPoints } from '../../limits/answer-bytes.js'
import { FormattedError } from './formatted-error.js'

export interface OperationPreparationOptions {
  schema: () => GraphQLSchema
  /** Where the operation was prepared; its execution is the pipeline's too. */
  pipeline: Pick<OperationPipeline, 'execute'>
  /** The page sizes the cost model counts a list by (as the HTTP endpoint's). */
  listSizes: ListSizes
  /** Where a subscription's cost is claimed from while it runs. */
  budget: SubscriptionBudget
  /**
   * Runs `work` in a slot acquired for the caller (the scheduler's `run`), so that an operation over
   * a long-lived connection waits for a slot as an HTTP request does; at once when absent (no
   * scheduler). A bounded wait is refused RATE_LIMITED when the caller has too many waiting.
   */
  schedule: (<T>(callerKey: string, work: () => Promise<T>, options: AcquireOptions) => Promise<T>) | undefined
  /** Takes the points of a resumed subscription's replay, and of results past an answer's first point, from its caller; absent when rate limiting is off. */
  consumeRateLimit: RateLimitConsumer | undefined
  /** Spans for each operation and each delivery (src/tracing/, when tracing is on); absent, none. */
  tracer?: OperationTracer
}

/**
 * The spans of operations on long-lived connections (tracing). A message on a WebSocket arrives
 * outside its connection's trace: each operation's work is put back in it here.
 */
export interface OperationTracer {
  /** Runs an operation's admission in a span of its own, in the trace of `request`, named after the operation `work` resolves to (it carries its document). */
  operation<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T>
  /** The operation of `context` is prepared: its execution, its source stream and its deliveries belong to the span active now. */
  prepared(context: object): void
  /** Runs `run` in the span the operation of `context` was prepared in. */
  within<T>(context: object, run: () => T): T
  /** Runs the delivery of `event` to the subscription of `context` in a span of the trace that published the event, linked to the subscription's. */
  deliver<T>(event: unknown, context: object, run: () => T): T
}

/** The context of one operation on a long-lived connection: its caller is read from the connection's ConnectionCaller each time. */
export function connectionContext(connectionCaller: ConnectionCaller, stream: GraphQLContext['stream']): GraphQLContext {
  return {
    get caller() {
      return connectionCaller.caller
    },
    loaders: new Loaders(() => connectionCaller.caller),
    stream,
  }
}

export class OperationPreparation {
  /** Each result as it goes: bounded, and charged by its length (boundResult). */
  readonly bound = <R extends object>(request: FastifyRequest, result: R) => boundResult(request, result, this.options.consumeRateLimit)

  /** Each subscription's reservation, by the context of its operation. */
  private readonly reservations = new WeakMap<object, Reservation>()

  constructor(private readonly options: OperationPreparationOptions) {}

  /** The caller a query's or mutation's slot is acquired for, by the context of its operation. */
  private readonly slotCallers = new WeakMap<object, string>()

  /**
   * graphql's execute in a slot acquired for the operation's caller. It waits however many of the
   * caller's do: the operation was admitted, and what may be waiting is bounded where it came from
   * (operations per connection and connections per caller, or the event stream's open requests).
   */
  readonly execute = async (args: ExecutionArgs): Promise<ExecutionResult> => {
    const { tracer } = this.options
    return tracer === undefined ? this.executeInSlot(args) : tracer.within(args.contextValue as object, () => this.executeInSlot(args))
  }

  private async executeInSlot(args: ExecutionArgs): Promise<ExecutionResult> {
    const key = this.slotCallers.get(args.contextValue as object)
    const { schedule } = this.options
    const { pipeline } = this.options
    if (key === undefined || schedule === undefined) return pipeline.execute(args)
    return schedule(key, async () => pipeline.execute(args), { queued: 'unbounded' })
  }

  /**
   * Runs `work` (an operation's preparation: parse, limits, charge, validation) in a slot acquired
   * for the request's caller, as an HTTP request's route runs in one; at once without a scheduler.
   * `queued`: 'bounded' refuses it RATE_LIMITED past the caller's queue (an event stream, an HTTP
   * request like any other); 'unbounded' for a WebSocket's operations, bounded per connection.
   */
  inSlot<T>(request: FastifyRequest, work: () => Promise<T>, queued: AcquireOptions['queued']): Promise<T> {
    const { schedule, tracer } = this.options
    const admit = tracer === undefined ? work : () => tracer.operation(request, work)
    return schedule === undefined ? admit() : schedule(callerKey(request, request.caller), admit, { queued })
  }

  /** graphql's subscribe, each event admitted by the budget before its selection runs. */
  readonly subscribe = (args: ExecutionArgs) => {
    const { tracer } = this.options
    return tracer === undefined ? this.meteredSubscribe(args) : tracer.within(args.contextValue as object, () => this.meteredSubscribe(args))
  }

  private meteredSubscribe(args: ExecutionArgs) {
    const reservation = this.reservations.get(args.contextValue as object)
    if (reservation === undefined) return subscribe(args)
    // Each event's selection runs as a query's does: compiled by graphql-jit from the document's second use.
    const { pipeline, tracer } = this.options
    const deliver =
      tracer === undefined
        ? (event: ExecutionArgs) => pipeline.execute(event)
        : (event: ExecutionArgs) => tracer.deliver(event.rootValue, event.contextValue as object, () => pipeline.execute(event))
    // A replayed event's delivery (a resumed stream's, a thousand at once) takes a turn of its caller's, as other work does.
    const inTurn = (args.contextValue as GraphQLContext).stream?.inTurn
    const run = inTurn === undefined ? deliver : (event: ExecutionArgs) => (isReplayed(event.rootValue) ? inTurn(async () => deliver(event)) : deliver(event))
    return this.options.budget.subscribe(args, reservation, run)
  }

  /**
   * Starts an operation the pipeline prepared on a connection: a query's or mutation's slot caller
   * noted, a subscription's cost reserved from its caller's budget (refused BAD_REQUEST past it).
   * The execution arguments, or the refusal in the service's shape.
   */
  start(request: FastifyRequest, prepared: PreparedOperation, context: GraphQLContext, reserved: Set<Reservation>): ExecutionArgs | FormattedError[] {
    const { options } = this
    const { document, chosen: operation } = prepared
    if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
      this.slotCallers.set(context, callerKey(request, request.caller))
    } else {
      // Its selection runs again for every event: its cost is claimed from the caller's budget
      // until it ends (released by the metered subscribe, or with the connection).
      const cost = operationCosts(document, options.schema(), options.listSizes).find(([node]) => node === operation)?.[1] ?? 0
      const reservation = options.budget.reserve(callerKey(request, request.caller), cost)
      if (!isReservation(reservation)) {
        const { message, limit, value, max } = reservation
        return [new FormattedError({ message, extensions: { code: 'BAD_REQUEST', limit, value, max } })]
      }
      // Held by the connection too (released with it at the latest), and forgotten once released.
      const held: Reservation = {
        key: reservation.key,
        cost: reservation.cost,
        release: () => {
          reservation.release()
          reserved.delete(held)
        },
      }
      reserved.add(held)
      this.reservations.set(context, held)
      const { schedule } = options
      if (context.stream !== undefined && schedule !== undefined) {
        // What a resumed stream reads and delivers of what it missed runs in its caller's turns.
        const key = callerKey(request, request.caller)
        context.stream.inTurn = (work) => schedule(key, work, { queued: 'unbounded' })
      }
      const consume = options.consumeRateLimit
      if (context.stream !== undefined && consume !== undefined) {
        // A resumed subscription's missed events are read out at once: a list of that many, each
        // its selection's cost, charged as the rate limit charges a query's cost.
        context.stream.chargeReplay = async (events) => {
          const points = Math.ceil((events * Math.max(cost, 1)) / COST_PER_POINT)
          if (points === 0) return
          const verdict = await consume(request, points, { refundRefused: true })
          if (!verdict.allowed) throw verdict.error
        }
      }
    }
    options.tracer?.prepared(context)
    return { schema: options.schema(), document, variableValues: prepared.variables, operationName: prepared.operationName, contextValue: context }
  }
}

/**
 * Stage 9 on a connection (../pipeline/operation-pipeline.ts): a result past MAX_ANSWER_BYTES is replaced by
 * PAYLOAD_TOO_LARGE before it is serialized, and its length past the first point is taken from the
 * caller once it goes (src/limits/answer-bytes.ts): never refused, as an HTTP answer's bytes are
 * not, so a caller past its allowance meets it at its next message or request.
 */
export async function boundResult<R extends object>(request: FastifyRequest, result: R, consume: RateLimitConsumer | undefined) {
  const bounded = boundAnswer(result)
  const extra = extraAnswerPoints(bounded.length)
  if (extra > 0) await consume?.(request, extra)
  return 'refused' in bounded ? bounded.refused : bounded.result
}

/** A result's errors in the service's shape (undefined: the result goes as it is). */
export const formatResult = <R extends { errors?: readonly GraphQLError[] }>(request: FastifyRequest, result: R) =>
  result.errors === undefined ? undefined : { ...result, errors: result.errors.map((error) => formatError(error, request)) }
