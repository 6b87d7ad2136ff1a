// The one path of a GraphQL operation, whichever transport brings it: POST and GET /graphql (and
// each operation of a batch), a WebSocket's subscribe message (graphql-transport-ws) and an event
// stream (graphql-sse) all call `prepare` (a batch, `prepareBatch`), which runs stages 2 to 7 in
// this order, given what the transport carries and how its caller pays (Transport); the transports
// run what it prepared and frame what they answer:
//
//   1. read params           — by the transport (request-params.ts), which refuses a malformed request;
//   2. persisted / trusted   — a hash resolved to its document; with GRAPHQL_TRUSTED_DOCUMENTS_ONLY,
//                              any other document is refused (persisted-queries.ts);
//   3. lexical limits        — tokens and bracket nesting, counted by the lexer alone (../document-limits/parser-guard.ts);
//   4. parse, once           — the document kept by its text, with the verdict of stage 5;
//   5. shape limits          — fields per selection set, depth, aliases, directives, each linear in
//                              the document, before any of graphql's own rules (some are quadratic);
//                              then the operation the request names is looked up, and one of a type
//                              the transport does not carry refused (a mutation sent with GET: 405;
//                              a subscription over plain HTTP);
//   6. charge                — the operation's points (metering.ts: cost and mutation fields) taken
//                              from the caller's allowance, or refused RATE_LIMITED, before it runs;
//   7. validate              — graphql's rules, the cost limit and introspection's refusal; then the
//                              operation chosen (or refused when none can be), and the caller's
//                              token judged for it (a mutation needs the write scope);
//   8. execute, in a slot    — (introspection alone answered from the answers kept per schema) of the caller's, from the scheduler every request acquires its slots
//                              from (src/limits/fair-scheduler.ts): an HTTP request holds one from
//                              before its route runs, an operation over a WebSocket or an event
//                              stream acquires one around its execution (../subscriptions/operation-preparation.ts).
//
//   9. bound the answer      — an answer longer than MAX_ANSWER_BYTES is replaced, before it is
//                              serialized, by PAYLOAD_TOO_LARGE (boundAnswer; src/limits/answer-bytes.ts),
//                              and charged by its bytes as it is sent.
//
// Validation (7) and the execution of queries and mutations (8) are this module's for every
// transport: a document's verdict is judged once, and its operations compiled by graphql-jit from
// its second use (a compiled operation runs without the interpreter's walk of the document). A
// subscription's source stream is graphql's subscribe (../subscriptions/operation-preparation.ts).
// Whatever is refused up to stage 5 costs the caller the 1 point its request (or message) took on
// arrival.
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  type DocumentNode,
  execute,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  getOperationAST,
  GraphQLError,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  Kind,
  OperationTypeNode,
  parse,
  print,
  specifiedRules,
  TypeInfo,
  validate,
  ValidationContext,
  type ValidationRule,
  visit,
} from 'graphql'
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit'
import { type Caller, grants, insufficientScope } from '../../core/caller.js'
import { AppError } from '../../errors.js'
import { answerTooLargeMessage, jsonLengthWithin, MAX_ANSWER_BYTES } from '../../limits/answer-bytes.js'
import type { RateLimitCharger } from '../../limits/rate-limit.js'
import type { ListSizes } from '../document-limits/cost-measure.js'
import { parserLimitError } from '../document-limits/parser-guard.js'
import { type QueryLimits, shapeLimitRules } from '../document-limits/query-limit-rules.js'
import { formatError } from '../errors.js'
import { createMetering, type Metering } from './metering.js'
import type { PersistedQueries, ResolvedOperation } from './persisted-queries.js'
import { chooseOperation, type RequestParams } from './request-params.js'

/** Parsed documents kept, by text: a document of 4,000 tokens can hold most of a megabyte of AST, so few. */
const CACHED_DOCUMENTS = 128

export interface OperationPipelineOptions {
  schema: () => GraphQLSchema
  limits: QueryLimits
  listSizes: ListSizes
  maxTokens: number
  persisted: PersistedQueries
  /** graphql's validation beside its own rules: the cost limit, and introspection's refusal when it is off. */
  validationRules: readonly ValidationRule[]
  /** Compile a document's queries and mutations with graphql-jit from its second use (GRAPHQL_JIT); false keeps graphql's interpreter. */
  jit: boolean
  /** Spans around parse, validate and execute (src/tracing/, when tracing is on); absent, the stages run as they are. */
  tracer?: StageTracer
}

/**
 * Runs a stage in a span of its own (tracing): each returns what `run` returns, and its span ends
 * when that returns or, for a promise, settles. `cached`: the stage's verdict was remembered.
 */
export interface StageTracer {
  parse<T>(cached: boolean, run: () => T): T
  validate<T>(cached: boolean, run: () => T): T
  execute<T>(args: ExecutionArgs, run: () => T): T
}

/** The paths GraphQL is served on: over HTTP, and as an event stream. */
export const GRAPHQL_PATH = '/graphql'
export const STREAM_PATH = '/graphql/stream'

/** The refusal of a mutation sent with GET (405, Allow: POST): it must not run from a link or an <img>. */
export const MUTATION_OVER_GET = 'Mutations cannot be sent with GET; send them with POST'

/** The refusal of a subscription sent where no stream can carry its events (POST and GET /graphql). */
export const SUBSCRIPTIONS_ELSEWHERE = `Subscriptions are served over WebSocket at ${GRAPHQL_PATH} (graphql-transport-ws) or Server-Sent Events at ${STREAM_PATH} (graphql-sse)`

/**
 * An operation past admission (stages 2 to 5): its parameters (the document resolved from a hash),
 * its parsed document, and the operation the request names in it, or why none can be chosen.
 */
export interface AdmittedOperation extends ResolvedOperation {
  readonly document: DocumentNode
  readonly chosen: OperationDefinitionNode | GraphQLError
}

/** An operation past every stage before its execution (stage 8): charged, validated, its operation chosen and allowed to its caller. */
export interface PreparedOperation extends AdmittedOperation {
  readonly chosen: OperationDefinitionNode
}

/** An operation refused before it ran: its errors, in the service's shape; nothing of it ran. */
export interface RefusedOperation {
  readonly refused: readonly GraphQLFormattedError[]
}

/**
 * What a transport carries and how its caller pays, given once per transport (not per request):
 * `prepare` refuses any other operation type before it is charged (a mutation sent with GET
 * METHOD_NOT_ALLOWED, with Allow: POST; a subscription over plain HTTP, SUBSCRIPTIONS_ELSEWHERE).
 */
export interface Transport<Reply extends FastifyReply | undefined, Answered = never> {
  /** The operation types it runs. */
  readonly carries: ReadonlySet<OperationTypeNode>
  /**
   * Takes `points` from the caller, all of a request's (the point it took on arrival included), or
   * throws the AppError to answer (RATE_LIMITED with retryAfterS): each transport says how.
   */
  pay(request: FastifyRequest, reply: Reply, points: number): Promise<void>
  /**
   * Called before the charge when one of the operations is a mutation: a value when the request is
   * answered already (an Idempotency-Key's kept answer, replayed), which `prepare` returns as it is;
   * then nothing of it is charged or run.
   */
  beforeMutation?(request: FastifyRequest, reply: Reply): Promise<Answered | undefined>
}

const PAID = Promise.resolve()

/**
 * How an HTTP request pays for its operations: through the rate limit's charge, past the 1 point
 * it took on arrival; nothing to pay when rate limiting is off.
 */
export function paidOverHttp(charge: RateLimitCharger | undefined): Transport<FastifyReply>['pay'] {
  return charge === undefined ? () => PAID : (request, reply, points) => charge(request, reply, points - 1)
}

/** Operation types, as transports carry them. */
export const QUERIES: ReadonlySet<OperationTypeNode> = new Set([OperationTypeNode.QUERY])
export const QUERIES_AND_MUTATIONS: ReadonlySet<OperationTypeNode> = new Set([OperationTypeNode.QUERY, OperationTypeNode.MUTATION])
export const QUERIES_AND_SUBSCRIPTIONS: ReadonlySet<OperationTypeNode> = new Set([OperationTypeNode.QUERY, OperationTypeNode.SUBSCRIPTION])
export const EVERY_OPERATION: ReadonlySet<OperationTypeNode> = new Set([OperationTypeNode.QUERY, OperationTypeNode.MUTATION, OperationTypeNode.SUBSCRIPTION])

/** The uses of a document, and its operations compiled from the second one (by operation name; '' for the only one). */
interface Compiled {
  uses: number
  readonly byOperation: Map<string, CompiledQuery | undefined>
}

/** The operation compiled by graphql-jit, or undefined where it refuses or fails to (the interpreter then runs it). */
function compile(args: ExecutionArgs): CompiledQuery | undefined {
  try {
    const query = compileQuery(args.schema, args.document, args.operationName ?? undefined)
    return isCompiledQuery(query) ? query : undefined
  } catch {
    return undefined
  }
}

/**
 * A compiled operation's result, unless its variables were refused (errors and no data: nothing
 * ran): then graphql's own refusal, which names the variable and says what its type takes (a
 * scalar's message), where graphql-jit words it more tersely. Only refusals pay for a second look.
 */
async function withVariablesJudgedByGraphql(args: ExecutionArgs, result: Promise<ExecutionResult> | ExecutionResult): Promise<ExecutionResult> {
  const settled = await result
  return settled.data === undefined && settled.errors !== undefined ? execute(args) : settled
}

/** A text's parse: its document, or why it is refused (the parser's error, or the shape limit it is past). */
type Parsed = { document: DocumentNode } | { errors: readonly GraphQLError[] }

/**
 * Stages 3 to 5 as admit runs them, remembered by text (most recently used last: the oldest is the
 * first to go); in a span when tracing is on (decided once, here).
 */
function createParseStage(options: Pick<OperationPipelineOptions, 'schema' | 'limits' | 'maxTokens' | 'tracer'>): (query: string) => Parsed {
  const { maxTokens, tracer } = options
  const shapeRules = shapeLimitRules(options.limits)
  const parsed = new Map<string, Parsed>()

  /** Stages 3 to 5, remembered by text (most recently used last: the oldest is the first to go). */
  function parseOnce(query: string): Parsed {
    const cached = parsed.get(query)
    if (cached !== undefined) {
      parsed.delete(query)
      parsed.set(query, cached)
      return cached
    }
    const result = parseAndMeasure(query)
    parsed.set(query, result)
    if (parsed.size > CACHED_DOCUMENTS) parsed.delete(parsed.keys().next().value as string)
    return result
  }

  function parseAndMeasure(query: string): Parsed {
    const tooLarge = parserLimitError(query, maxTokens)
    if (tooLarge !== undefined) return { errors: [tooLarge] }
    let document: DocumentNode
    try {
      document = parse(query, { maxTokens })
    } catch (error) {
      return { errors: [error instanceof GraphQLError ? error : new GraphQLError(String(error))] }
    }
    const errors = checkShape(document)
    // A refused document is kept as its errors alone: an error's node would hold the whole tree
    // (and its tokens), and a flood of fresh refused documents would fill the cache with them.
    return errors.length === 0 ? { document } : { errors: errors.map(detached) }
  }

  /**
   * The shape limits, each in a visit of its own that reads the document at its root and stops
   * there: graphql's validate would walk every node of it (with type tracking) whatever the rules
   * say, 5-6 ms for a document of 975 fields, against about 1 ms for each limit's own walk.
   */
  function checkShape(document: DocumentNode): GraphQLError[] {
    const schema = options.schema()
    const errors: GraphQLError[] = []
    const context = new ValidationContext(schema, document, new TypeInfo(schema), (error) => errors.push(error))
    // The first limit a document is past is its refusal: the others are not measured.
    for (const rule of shapeRules) {
      visit(document, rule(context))
      if (errors.length > 0) break
    }
    return errors
  }

  return tracer === undefined ? parseOnce : (query: string) => tracer.parse(parsed.has(query), () => parseOnce(query))
}

/**
 * The pipeline of the app's schema: `prepare` (for a batch, `prepareBatch`) runs its stages in
 * order (admit, charge, judge: validate, choose, authorize), and `execute` runs what it prepared.
 * Each stage and its state (the parse cache, the validation verdicts, the compiled operations) is
 * made once, here, not per operation.
 */
export function createOperationPipeline(options: OperationPipelineOptions) {
  const admit = createAdmitStage(options)
  const metering = createMetering({ schema: options.schema, listSizes: options.listSizes, maxCost: options.limits.maxCost })
  const validateStage = createValidateStage(options)
  const executeStage = createExecuteStage(options)

  return {
    /**
     * Stages 2 to 7 for one operation, whatever the transport: admitted (2 to 5); refused if the
     * transport does not carry its type; charged its points (6); validated, its operation chosen
     * and allowed to `caller` (7). The operation ready to execute, its refusal, or what the
     * transport answered before the charge (Transport.beforeMutation). A refused charge throws.
     */
    async prepare<Reply extends FastifyReply | undefined, Answered>(
      request: FastifyRequest,
      reply: Reply,
      params: RequestParams,
      transport: Transport<Reply, Answered>,
      caller: Caller | null,
    ): Promise<PreparedOperation | RefusedOperation | Answered> {
      const operation = await admit(request, reply, params, transport.carries)
      if (isRefused(operation)) return operation
      if (transport.beforeMutation !== undefined && isMutation(operation)) {
        const answered = await transport.beforeMutation(request, reply)
        if (answered !== undefined) return answered
      }
      await transport.pay(request, reply, metering.pointsOf(operation))
      return judge(request, operation, caller, validateStage)
    },

    /**
     * As prepare, for a batch: every operation admitted, then the points of all of them (1 for
     * each refused one) paid at once, before any of them runs; each then judged.
     */
    async prepareBatch<Reply extends FastifyReply | undefined, Answered>(
      request: FastifyRequest,
      reply: Reply,
      params: readonly RequestParams[],
      transport: Transport<Reply, Answered>,
      caller: Caller | null,
    ): Promise<(PreparedOperation | RefusedOperation)[] | Answered> {
      const operations: (AdmittedOperation | RefusedOperation)[] = []
      for (const one of params) operations.push(await admit(request, reply, one, transport.carries))
      if (transport.beforeMutation !== undefined && operations.some((operation) => !isRefused(operation) && isMutation(operation))) {
        const answered = await transport.beforeMutation(request, reply)
        if (answered !== undefined) return answered
      }
      await transport.pay(request, reply, pointsOfBatch(operations, metering))
      return operations.map((operation) => (isRefused(operation) ? operation : judge(request, operation, caller, validateStage)))
    },

    /** Stage 7's validation alone, for a protocol handler that asks for it again (its verdict is remembered). */
    validate: validateStage,

    /**
     * Stage 8 for a query or a mutation of a validated document (createExecuteStage): introspection
     * alone from the answers kept, else graphql-jit from the document's second use, else graphql's.
     */
    execute(args: ExecutionArgs): Promise<ExecutionResult> | ExecutionResult {
      return executeStage(args)
    },
  }
}

/**
 * Stages 2 to 5: the operation ready to be charged, or its refusal; last, one of a type the
 * transport does not carry is refused (refuseUncarried).
 */
function createAdmitStage(
  options: Pick<OperationPipelineOptions, 'schema' | 'limits' | 'maxTokens' | 'persisted' | 'tracer'>,
): (
  request: FastifyRequest,
  reply: FastifyReply | undefined,
  params: RequestParams,
  carries: ReadonlySet<OperationTypeNode>,
) => Promise<AdmittedOperation | RefusedOperation> {
  const { persisted } = options
  const parseStage = createParseStage(options)
  return async (request, reply, params, carries) => {
    const resolved = await persisted.resolve(params)
    if ('code' in resolved) return { refused: [{ message: resolved.message, extensions: { code: resolved.code } }] }
    const result = parseStage(resolved.query)
    if ('errors' in result) return { refused: result.errors.map((error) => formatError(error, request)) }
    const operation = { ...resolved, document: result.document, chosen: chooseOperation(result.document, resolved.operationName) }
    return refuseUncarried(request, reply, operation, carries) ?? operation
  }
}

/**
 * After admission, before the charge: an operation type the transport does not carry. Only a GET
 * leaves mutations out (405, Allow: POST); HTTP leaves subscriptions out (no stream for their events).
 */
function refuseUncarried(
  request: FastifyRequest,
  reply: FastifyReply | undefined,
  operation: AdmittedOperation,
  carries: ReadonlySet<OperationTypeNode>,
): RefusedOperation | undefined {
  const { chosen } = operation
  if (chosen instanceof GraphQLError || carries.has(chosen.operation)) return undefined
  if (chosen.operation === OperationTypeNode.MUTATION) {
    reply?.header('allow', 'POST')
    throw new AppError('METHOD_NOT_ALLOWED', MUTATION_OVER_GET)
  }
  return { refused: [formatError(new GraphQLError(SUBSCRIPTIONS_ELSEWHERE, { nodes: chosen }), request)] }
}

/** Stage 6 for a batch: the points of every operation, 1 for each refused one (its request's point on arrival). */
function pointsOfBatch(operations: readonly (AdmittedOperation | RefusedOperation)[], metering: Metering): number {
  return operations.reduce((sum, operation) => sum + (isRefused(operation) ? 1 : metering.pointsOf(operation)), 0)
}

/** Stage 7: validated, its operation chosen, and allowed to the caller; or the first of these refusals. */
function judge(
  request: FastifyRequest,
  operation: AdmittedOperation,
  caller: Caller | null,
  validateStage: (document: DocumentNode) => readonly GraphQLError[],
): PreparedOperation | RefusedOperation {
  const errors = validateStage(operation.document)
  if (errors.length > 0) return { refused: errors.map((error) => formatError(error, request)) }
  const { chosen } = operation
  if (chosen instanceof GraphQLError) return { refused: [formatError(chosen, request)] }
  const forbidden = authorize(chosen, caller)
  if (forbidden !== undefined) return { refused: [formatError(forbidden, request)] }
  return operation as PreparedOperation
}

/**
 * Stage 7's validation: graphql's rules and the cost limit, judged once per document (the parse
 * cache gives a text sent again the same document); in a span when tracing is on (decided once, here).
 */
function createValidateStage(
  options: Pick<OperationPipelineOptions, 'schema' | 'validationRules' | 'tracer'>,
): (document: DocumentNode) => readonly GraphQLError[] {
  const { tracer } = options
  const fullRules = [...specifiedRules, ...options.validationRules]
  /** The verdicts, which go with their documents (a document depends on nothing else: variables are not read). */
  const validated = new WeakMap<DocumentNode, { schema: GraphQLSchema; errors: readonly GraphQLError[] }>()

  function validateOnce(document: DocumentNode): readonly GraphQLError[] {
    const schema = options.schema()
    const known = validated.get(document)
    if (known?.schema === schema) return known.errors
    const errors = validate(schema, document, fullRules)
    validated.set(document, { schema, errors })
    return errors
  }

  return tracer === undefined ? validateOnce : (document: DocumentNode) => tracer.validate(validated.has(document), () => validateOnce(document))
}

/**
 * Stage 8 for a query or a mutation of a validated document: a query of introspection alone
 * from the answers kept per schema (createIntrospectionAnswers); else by graphql-jit from the document's
 * second use (graphql's interpreter took 60 ms of the loop at once for 9 aliased pages of 100
 * users with their posts, where the compiled form took 28), else, and for what graphql-jit
 * refuses to compile, by graphql's execute. In a span when tracing is on (decided once, here).
 */
function createExecuteStage(options: Pick<OperationPipelineOptions, 'jit' | 'tracer'>): (args: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult {
  const { tracer } = options
  /** The compiled operations, which go with their documents as the validation verdicts do. */
  const compiled = new WeakMap<DocumentNode, Compiled>()
  const introspection = createIntrospectionAnswers()

  function executeOnce(args: ExecutionArgs): Promise<ExecutionResult> | ExecutionResult {
    const introspected = introspection.answer(args)
    if (introspected !== undefined) return introspected
    if (!options.jit) return execute(args)
    let known = compiled.get(args.document)
    if (known === undefined) {
      known = { uses: 0, byOperation: new Map() }
      compiled.set(args.document, known)
    }
    if (++known.uses < 2) return execute(args)
    const name = args.operationName ?? ''
    if (!known.byOperation.has(name)) known.byOperation.set(name, compile(args))
    const query = known.byOperation.get(name)
    if (query === undefined) return execute(args)
    return withVariablesJudgedByGraphql(args, query.query(args.rootValue, args.contextValue, args.variableValues ?? {}))
  }

  return tracer === undefined ? executeOnce : (args: ExecutionArgs) => tracer.execute(args, () => executeOnce(args))
}

/**
 * Stage 7, for the operation chosen to run: the caller's token must grant what it does (a mutation
 * needs the write scope; a query or a subscription, read). FORBIDDEN otherwise, on every transport,
 * before anything of it runs.
 */
function authorize(operation: OperationDefinitionNode, caller: Caller | null): GraphQLError | undefined {
  const needed = operation.operation === OperationTypeNode.MUTATION ? 'write' : 'read'
  if (caller === null || grants(caller, needed)) return undefined
  const refusal = insufficientScope(needed)
  return new GraphQLError(refusal.message, { nodes: operation, originalError: refusal })
}

/** Whether the operation the request names is a mutation (one that cannot be chosen is not: it runs nothing). */
const isMutation = (operation: AdmittedOperation): boolean =>
  !(operation.chosen instanceof GraphQLError) && operation.chosen.operation === OperationTypeNode.MUTATION

export type OperationPipeline = ReturnType<typeof createOperationPipeline>

/** Introspection answers kept per schema: the few documents tools send (GraphiQL's, a client's code generator). */
const INTROSPECTION_ANSWERS_KEPT = 16

/**
 * The answers of queries that ask introspection alone (`__schema`, `__type`, `__typename` at the
 * top, without directives), kept per schema: each top-level field is answered once for its
 * selection (alias aside), the fragments of its document and the variables, and its answer is
 * shared by every alias and every later request. Introspection reads only the schema, so the
 * answer cannot change while the schema is the same; 8 aliased full introspections cost the
 * graphql walk of one (the points of all 8 are charged by metering.ts, their bytes as they are sent).
 */
function createIntrospectionAnswers() {
  /** The top-level fields of each document's operations that ask introspection alone (null: not such an operation). */
  const plans = new WeakMap<DocumentNode, Map<string, { operation: OperationDefinitionNode; fields: readonly FieldNode[] } | null>>()
  /** Each field's key, but for the variables: its text without its alias, and its document's fragments. */
  const keys = new WeakMap<FieldNode, string>()
  const answers = new WeakMap<GraphQLSchema, Map<string, unknown>>()

  function planOf(document: DocumentNode, operationName: string | null | undefined) {
    let byName = plans.get(document)
    if (byName === undefined) {
      byName = new Map()
      plans.set(document, byName)
    }
    const name = operationName ?? ''
    let plan = byName.get(name)
    if (plan === undefined) {
      const operation = getOperationAST(document, operationName)
      const selections = operation?.operation === OperationTypeNode.QUERY ? operation.selectionSet.selections : []
      const fields = selections.filter(
        (selection): selection is FieldNode => selection.kind === Kind.FIELD && INTROSPECTION_FIELDS.has(selection.name.value) && !selection.directives?.length,
      )
      plan = operation != null && fields.length > 0 && fields.length === selections.length ? { operation, fields } : null
      byName.set(name, plan)
    }
    return plan
  }

  function keyOf(document: DocumentNode, field: FieldNode): string {
    let key = keys.get(field)
    if (key === undefined) {
      const fragments = document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)
      key = [print({ ...field, alias: undefined }), ...fragments.map((fragment) => print(fragment))].join('\n')
      keys.set(field, key)
    }
    return key
  }

  /** One field's answer, computed alone on a miss; undefined when it cannot be kept (it failed, or did not finish at once). */
  function fieldAnswer(args: ExecutionArgs, operation: OperationDefinitionNode, field: FieldNode): unknown {
    let kept = answers.get(args.schema)
    if (kept === undefined) {
      kept = new Map<string, unknown>()
      answers.set(args.schema, kept)
    }
    const key = `${keyOf(args.document, field)}\n${JSON.stringify(args.variableValues ?? {})}`
    if (kept.has(key)) {
      const answer = kept.get(key)
      kept.delete(key)
      kept.set(key, answer)
      return answer
    }
    const alone = { ...field, alias: undefined }
    const document: DocumentNode = {
      kind: Kind.DOCUMENT,
      definitions: [
        { ...operation, selectionSet: { kind: Kind.SELECTION_SET, selections: [alone] } },
        ...args.document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION),
      ],
    }
    const result = execute({ ...args, document, operationName: operation.name?.value })
    if (result instanceof Promise || result.errors !== undefined || result.data == null) return undefined
    const answer = result.data[field.name.value]
    kept.set(key, answer)
    if (kept.size > INTROSPECTION_ANSWERS_KEPT) kept.delete(kept.keys().next().value as string)
    return answer
  }

  return {
    /** The answer of an operation that asks introspection alone; undefined for any other (it runs as usual). */
    answer(args: ExecutionArgs): ExecutionResult | undefined {
      const plan = planOf(args.document, args.operationName)
      if (plan === null) return undefined
      const data: Record<string, unknown> = {}
      for (const field of plan.fields) {
        const responseKey = (field.alias ?? field.name).value
        if (field.name.value === '__typename') {
          data[responseKey] = args.schema.getQueryType()?.name
          continue
        }
        const answer = fieldAnswer(args, plan.operation, field)
        if (answer === undefined) return undefined
        data[responseKey] = answer
      }
      return { data }
    },
  }
}

const INTROSPECTION_FIELDS: ReadonlySet<string> = new Set(['__schema', '__type', '__typename'])

export const isRefused = (operation: object): operation is RefusedOperation => 'refused' in operation

/** How to ask for a smaller answer, as the refusal says it. */
const SMALLER_ANSWER = 'ask for fewer items (limit, first), fewer aliases or fewer fields; in a batch, the answers count together: send the operations apart'

/**
 * Stage 9: a result (or a batch's bodies so far, by `budget`: what is left of MAX_ANSWER_BYTES)
 * measured before it is serialized: within the budget, its length; past it, PAYLOAD_TOO_LARGE in
 * its place, as any operation's refusal is placed, on every transport. Nothing of the text of an
 * answer over the bound is built.
 */
export function boundAnswer<R extends object>(
  result: R,
  budget = MAX_ANSWER_BYTES,
): { result: R; length: number } | { refused: { errors: GraphQLFormattedError[] }; length: number } {
  const length = jsonLengthWithin(result, budget)
  if (length !== undefined) return { result, length }
  const refused = answerTooLarge()
  return { refused, length: jsonLengthWithin(refused, Number.POSITIVE_INFINITY) ?? 0 }
}

/** The refusal of an answer past MAX_ANSWER_BYTES, in an operation's place. */
export const answerTooLarge = (): { errors: GraphQLFormattedError[] } => ({
  errors: [{ message: answerTooLargeMessage(undefined, MAX_ANSWER_BYTES, SMALLER_ANSWER), extensions: { code: 'PAYLOAD_TOO_LARGE', max: MAX_ANSWER_BYTES } }],
})

/** The error without the nodes it points at: its locations are kept, by the source and positions. */
const detached = (error: GraphQLError): GraphQLError =>
  new GraphQLError(error.message, { source: error.source, positions: error.positions, path: error.path, extensions: error.extensions })
