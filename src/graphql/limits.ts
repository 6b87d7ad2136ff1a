// Validation rules that refuse abusive GraphQL documents before anything runs: too deep, too
// costly, too many aliases in one selection set, too many directives on one node. Each rule
// measures every operation of the document (the operationName is chosen later) and reports at
// most one BAD_REQUEST error per operation, with extensions {limit, value, max}.
//
// Fragments are measured once each, where first spread, on an explicit stack (never recursion),
// so fragment cycles and long chains of fragments terminate: a spread that closes a cycle counts
// as empty, and graphql's NoFragmentCyclesRule reports the cycle.
//
// Cost counts each field as 1 and multiplies a list field's subtree by its page size: its literal
// `limit` (capped at maxLimit), maxLimit when `limit` is a variable (results are cached per
// document text), defaultLimit when `limit` is left out. Introspection's lists take no `limit`:
// they count as the longest list introspection can return for the schema. A data list without
// `limit` is a page's items (`usersPage(limit: 50) { items }`): it takes the page size of the
// field around it, or maxLimit when that field takes no `limit`.
//
// Reads that touch rows beyond those they return cost those rows too (1 per row, like a field,
// and multiplied like one by the lists around them): a search (`q`) READ_ROWS.search, counting a
// page's `total` (or `totalCapped`, `pages`) READ_ROWS.count, a page by offset past the first (`page` > 1, on a
// collection or a nested window such as `posts(limit, page)`) the page × limit rows it skips and
// reads, at most READ_ROWS.offset (a variable `page` counts as that). See READ_ROWS below for why.
//
// Introspection (`__schema`, `__type` and everything under them) is measured apart, with bounds
// of its own: the standard introspection query multiplies schema-sized lists three deep (types,
// fields, args), and grows with the schema. On this project's schema (lists of up to 31 items)
// getIntrospectionQuery() costs 1,038,072 and GraphiQL's variant 1,095,673: more than three
// nested lists at maxLimit (1,010,101), which maxCost must refuse. Introspection's bounds are
// INTROSPECTION_MAX_DEPTH levels and twice what getIntrospectionQuery() with every option costs
// on the schema at hand (2,191,526 here), computed once per schema, so GraphiQL keeps working as
// the schema grows while `types { fields { type { fields { ...` is refused. `__typename` is an
// ordinary field: it costs 1 and is one level deep.
import {
  GraphQLError,
  Kind,
  Lexer,
  Source,
  TokenKind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isListType,
  isNonNullType,
  isObjectType,
  parse,
  type ASTNode,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql'
import type { GraphQLConfig } from '../config.js'
import type { ErrorCode } from '../errors.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../collections/pagination.js'

/**
 * A document longer than this many tokens is refused before it is parsed: it is ten times
 * GraphiQL's introspection query.
 */
export const MAX_TOKENS = 4_000

/**
 * Brackets ({, ( and [) open at once, at most. graphql's parser recurses once per level and
 * overflows the stack near 2,000 (`{a{a{a...` fits 1,999 levels in 4,000 tokens): the depth rule
 * refuses past GRAPHQL_MAX_DEPTH anyway, but only once the parser has built the document.
 */
export const MAX_NESTING = 500

/**
 * The refusal of a document beyond what the parser should be handed: more than `maxTokens`
 * tokens, or brackets nested past MAX_NESTING; undefined otherwise (or when it does not lex: the
 * parser then reports where). Counted with the lexer alone, each token let go as the next is read.
 *
 * graphql's parser has a `maxTokens` of its own, but stops only after building the tree of
 * everything before: under a flood of 4,200-token documents those trees outlived the young
 * generation and filled the old one, and refusals took up to 80 ms (npm run bench:graphql-abuse,
 * docs/architecture.md). A document of at most MAX_NESTING characters can hold neither too many
 * tokens nor too deep a nesting, so short ones are not counted at all.
 */
export function parserLimitError(query: string, maxTokens: number): GraphQLError | undefined {
  if (query.length <= Math.min(maxTokens, MAX_NESTING)) return undefined
  const lexer = new Lexer(new Source(query))
  let count = 0
  let depth = 0
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      // The lexer links each token to the one before: unlinked, the ones read can be collected.
      ;(token as { prev: unknown }).prev = null
      if (++count > maxTokens) return new GraphQLError(`Syntax Error: Document contains more than ${maxTokens} tokens. Parsing aborted.`)
      if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.PAREN_L || token.kind === TokenKind.BRACKET_L) {
        if (++depth > MAX_NESTING) return new GraphQLError(`Syntax Error: Document nests brackets more than ${MAX_NESTING} deep. Parsing aborted.`)
      } else if (token.kind === TokenKind.BRACE_R || token.kind === TokenKind.PAREN_R || token.kind === TokenKind.BRACKET_R) {
        depth--
      }
    }
  } catch {
    return undefined
  }
  return undefined
}

/** The bounds, from config (GRAPHQL_MAX_*; the defaults and why are in src/config.ts). */
export type QueryLimits = GraphQLConfig['limits']

export interface ListSizes {
  defaultLimit: number
  maxLimit: number
}

/**
 * getIntrospectionQuery() is 15 levels deep (`__schema types fields args type`, nine `ofType`, then
 * `name`), whatever its options but `typeDepth`; the room is for a client asking a deeper `ofType`
 * chain. Amplification (`fields { type { fields ...`) is the cost bound's business, and graphql's
 * own MaxIntrospectionDepthRule's.
 */
const INTROSPECTION_MAX_DEPTH = 20
/** How far an introspection subtree may cost beyond the full standard introspection query. */
const INTROSPECTION_COST_FACTOR = 2

type LimitName = 'depth' | 'cost' | 'aliases' | 'directives'

export function queryLimitRules(
  limits: QueryLimits,
  listSizes: ListSizes = { defaultLimit: DEFAULT_PAGE_LIMIT, maxLimit: MAX_PAGE_LIMIT },
): ValidationRule[] {
  return [depthRule(limits.maxDepth), costRule(limits.maxCost, listSizes), aliasesRule(limits.maxAliases), directivesRule(limits.maxDirectives)]
}

function limitError(message: string, node: ASTNode, limit: LimitName, value: number, max: number): GraphQLError {
  const code: ErrorCode = 'BAD_REQUEST'
  return new GraphQLError(message, { nodes: node, extensions: { code, limit, value, max } })
}

/** "the query", "the mutation", or `operation "Name"`: how a message names the operation. */
function nameOf(operation: OperationDefinitionNode): string {
  return operation.name === undefined ? `the ${operation.operation}` : `operation "${operation.name.value}"`
}

const sentence = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)

/** A rule that measures each operation once, when the document is entered, and skips the rest of the pass. */
function operationRule<T>(
  measureFor: (schema: GraphQLSchema) => Measure<T>,
  check: (context: ValidationContext, operation: OperationDefinitionNode, value: T) => GraphQLError | undefined,
): ValidationRule {
  return (context) => ({
    Document(document) {
      for (const [operation, value] of measureOperations(document, measureFor(context.getSchema()))) {
        const error = check(context, operation, value)
        if (error !== undefined) context.reportError(error)
      }
      return false
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Measuring: each limit says how a field and a union of selections sum up; the walk is shared.
// It is a loop over selection sets, not graphql's visit: a megabyte of fields must cost
// milliseconds, and visit's set-up per call would dominate a document of many small fragments.

interface Measure<T> {
  /** Where `field` finds each field's definition; without it (a lookup per field costs), none is. */
  readonly schema?: GraphQLSchema
  readonly empty: T
  /** A field, given the sum of its own selections (`empty` for a leaf). */
  field(node: FieldNode, selections: T, definition: GraphQLField<unknown, unknown> | undefined): T
  /** Two selections of one selection set (fields, or fragments spread or inlined into it). */
  add(a: T, b: T): T
}

interface Fragment<T> {
  readonly definition: FragmentDefinitionNode
  /** Set once measured: a spread met after `started` but before then closes a cycle, and counts as empty. */
  value: T | undefined
  started: boolean
}

/** Each operation's measure; a fragment is measured once, where it is first spread. */
function measureOperations<T>(document: DocumentNode, measure: Measure<T>): Array<[OperationDefinitionNode, T]> {
  const fragments = new Map<string, Fragment<T>>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) {
      fragments.set(definition.name.value, { definition, value: undefined, started: false })
    }
  }
  return document.definitions
    .filter((definition) => definition.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => [operation, measureSelections(operation, measure, fragments)])
}

/** A selection set being summed: a field's (its sum goes through `field`), an inline fragment's, or a spread fragment's. */
interface Frame<T> {
  readonly selections: readonly SelectionNode[]
  index: number
  sum: T
  readonly type: GraphQLNamedType | null | undefined
  readonly field: FieldNode | undefined
  readonly definition: GraphQLField<unknown, unknown> | undefined
  readonly fragment: Fragment<T> | undefined
}

/**
 * One loop over the operation's selection sets, with the fragments it spreads on the same stack:
 * a fragment spread for the first time is measured there, and its measure kept for the next spreads.
 */
function measureSelections<T>(operation: OperationDefinitionNode, measure: Measure<T>, fragments: ReadonlyMap<string, Fragment<T>>): T {
  const { schema } = measure
  const frame = (selectionSet: SelectionSetNode, type: Frame<T>['type'], field?: FieldNode, definition?: Frame<T>['definition'], fragment?: Fragment<T>): Frame<T> => ({
    selections: selectionSet.selections,
    index: 0,
    sum: measure.empty,
    type,
    field,
    definition,
    fragment,
  })
  const frames = [frame(operation.selectionSet, schema?.getRootType(operation.operation))]
  for (;;) {
    const top = frames[frames.length - 1]!
    const selection = top.selections[top.index++]
    if (selection === undefined) {
      frames.pop()
      const parent = frames[frames.length - 1]
      if (parent === undefined) return top.sum
      if (top.fragment !== undefined) top.fragment.value = top.sum
      parent.sum = measure.add(parent.sum, top.field === undefined ? top.sum : measure.field(top.field, top.sum, top.definition))
    } else if (selection.kind === Kind.FIELD) {
      const definition = schema && fieldDefinition(top.type, selection.name.value)
      if (selection.selectionSet === undefined) top.sum = measure.add(top.sum, measure.field(selection, measure.empty, definition))
      else frames.push(frame(selection.selectionSet, definition && getNamedType(definition.type), selection, definition))
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition === undefined ? top.type : schema?.getType(selection.typeCondition.name.value)
      frames.push(frame(selection.selectionSet, type))
    } else {
      const fragment = fragments.get(selection.name.value)
      if (fragment === undefined || fragment.started) {
        top.sum = measure.add(top.sum, fragment?.value ?? measure.empty)
      } else {
        fragment.started = true
        const { typeCondition, selectionSet } = fragment.definition
        frames.push(frame(selectionSet, schema?.getType(typeCondition.name.value), undefined, undefined, fragment))
      }
    }
  }
}

function fieldDefinition(parentType: GraphQLNamedType | null | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef
  if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef
  return isObjectType(parentType) || isInterfaceType(parentType) ? parentType.getFields()[name] : undefined
}

const isIntrospection = (node: FieldNode): boolean => node.name.value.startsWith('__') && node.name.value !== '__typename'

// ---------------------------------------------------------------------------------------------
// Depth

/** A chain of nested fields, outermost first; chains share their tails. */
interface Path {
  readonly field: FieldNode
  readonly length: number
  readonly rest: Path | undefined
}

interface Depth {
  /** The deepest chain outside introspection. */
  readonly main: Path | undefined
  /** The deepest chain under an introspection field, from that field down. */
  readonly introspection: Path | undefined
  /** The deepest chain of any fields: what an introspection field above would measure. */
  readonly all: Path | undefined
}

const lengthOf = (path: Path | undefined): number => path?.length ?? 0
const deeper = (a: Path | undefined, b: Path | undefined): Path | undefined => (lengthOf(b) > lengthOf(a) ? b : a)
const extend = (field: FieldNode, rest: Path | undefined): Path => ({ field, length: 1 + lengthOf(rest), rest })

/** The field at `index` (0 is the outermost): where a path first goes past a limit. */
function fieldAt(path: Path, index: number): FieldNode {
  let at = path
  for (let i = 0; i < index && at.rest !== undefined; i++) at = at.rest
  return at.field
}

const depthMeasure: Measure<Depth> = {
  empty: { main: undefined, introspection: undefined, all: undefined },
  field(node, selections) {
    const all = extend(node, selections.all)
    if (isIntrospection(node)) return { main: undefined, introspection: all, all }
    return { main: extend(node, selections.main), introspection: selections.introspection, all }
  },
  add: (a, b) => ({ main: deeper(a.main, b.main), introspection: deeper(a.introspection, b.introspection), all: deeper(a.all, b.all) }),
}

function depthRule(maxDepth: number): ValidationRule {
  return operationRule(() => depthMeasure, (_context, operation, { main, introspection }) => {
    if (main !== undefined && main.length > maxDepth) {
      const message = `${sentence(nameOf(operation))} is ${main.length} levels deep; the limit is ${maxDepth}`
      return limitError(message, fieldAt(main, maxDepth), 'depth', main.length, maxDepth)
    }
    if (introspection !== undefined && introspection.length > INTROSPECTION_MAX_DEPTH) {
      const message = `Introspection in ${nameOf(operation)} is ${introspection.length} levels deep; the limit for introspection is ${INTROSPECTION_MAX_DEPTH}`
      return limitError(message, fieldAt(introspection, INTROSPECTION_MAX_DEPTH), 'depth', introspection.length, INTROSPECTION_MAX_DEPTH)
    }
    return undefined
  })
}

// ---------------------------------------------------------------------------------------------
// Cost

interface Cost {
  /** Outside introspection. */
  readonly main: number
  /**
   * What one item costs under a data list without a `limit` argument (`UserPage.items`): the field
   * around it gives the page size (`usersPage(limit: 50)`), or maxLimit if it takes no `limit`.
   */
  readonly perItem: number
  readonly introspection: number
  /** A `total` (or `totalCapped`, `pages`) below, not yet charged: the page field above pays READ_ROWS.count, once. */
  readonly counts: boolean
  /** Whether rows a read touches (search, count, offset) are in the cost: the message says so. */
  readonly reads: boolean
}

/**
 * Rows a read may touch beyond the items it returns, as the bounds on reads make them (issue #18,
 * src/db/list-page.ts and src/collections/pagination.ts): a search reads the trigram index's candidates, or
 * the newest 10,000 rows for a term too short for the index; a count is bounded the same way; an
 * offset page reads and throws away the rows before it, up to the window of page × limit ≤ 10,000
 * (further is cursor's). Before those bounds and these charges (issue #18, 200,000 users), 15
 * aliases of `usersPage(q: "zz-nomatch", limit: 1) { pageInfo { total } }` held the event loop
 * 2.5 s (about 170 ms each, a scan and a count of every row) while each cost 3.
 */
export const READ_ROWS = { search: 10_000, count: 10_000, offset: 10_000 } as const

/** The fields of PageInfo that count the page's collection when selected (as the page resolvers decide). */
const COUNTING_FIELDS = ['total', 'totalCapped', 'pages']

function countingFields(schema: GraphQLSchema): ReadonlySet<GraphQLField<unknown, unknown>> {
  const pageInfo = schema.getType('PageInfo')
  if (!isObjectType(pageInfo)) return new Set()
  const fields = pageInfo.getFields()
  return new Set(COUNTING_FIELDS.flatMap((name) => fields[name] ?? []))
}

/** The rows a field's own read touches beyond its items: its search and its offset. */
function readRows(node: FieldNode, definition: GraphQLField<unknown, unknown> | undefined, pageSize: number | undefined): number {
  if (definition === undefined) return 0
  const argument = (name: string) => (definition.args.some((arg) => arg.name === name) ? node.arguments?.find((arg) => arg.name.value === name)?.value : undefined)
  let rows = 0
  const q = argument('q')
  if (q !== undefined && q.kind !== Kind.NULL && !(q.kind === Kind.STRING && q.value === '')) rows += READ_ROWS.search
  const page = argument('page')
  if (page?.kind === Kind.VARIABLE) rows += READ_ROWS.offset
  else if (page?.kind === Kind.INT && Number(page.value) > 1) rows += Math.min(Number(page.value) * (pageSize ?? 1), READ_ROWS.offset)
  return rows
}

function costMeasure(listSizes: ListSizes, schema: GraphQLSchema): Measure<Cost> {
  const listBound = introspectionListBound(schema)
  const counting = countingFields(schema)
  return {
    schema,
    empty: { main: 0, perItem: 0, introspection: 0, counts: false, reads: false },
    field(node, { main, perItem, introspection, counts, reads }, definition) {
      const type = definition && (isNonNullType(definition.type) ? definition.type.ofType : definition.type)
      const isList = type !== undefined && isListType(type)
      const limit = definition?.args.some((arg) => arg.name === 'limit') ? pageSize(node, listSizes) : undefined
      const below = main + (isList || limit === undefined ? listSizes.maxLimit : limit) * perItem
      if (isIntrospection(node)) return { main: 0, perItem: 0, introspection: 1 + below + introspection, counts: false, reads: false }
      // The field's own read, once per time it runs: its search, its offset, and the count of its
      // page when a counting field is selected below (the page field is the one with a limit).
      const countRows = counts && limit !== undefined ? READ_ROWS.count : 0
      const ownRows = readRows(node, definition, limit) + countRows
      const own = { counts: counts && countRows === 0 && !isList, reads: reads || ownRows > 0 || (definition !== undefined && counting.has(definition)) }
      if (definition !== undefined && counting.has(definition)) return { main: 1, perItem: 0, introspection, counts: true, reads: true }
      if (!isList) return { main: 1 + ownRows + below, perItem: 0, introspection, ...own }
      if (limit === undefined && !isIntrospectionType(getNamedType(type))) {
        return { main: 1 + ownRows, perItem: below, introspection: listSizes.maxLimit * introspection, ...own }
      }
      const size = limit ?? listBound
      return { main: 1 + ownRows + size * below, perItem: 0, introspection: size * introspection, ...own }
    },
    add: (a, b) => ({
      main: a.main + b.main,
      perItem: a.perItem + b.perItem,
      introspection: a.introspection + b.introspection,
      // `total` and `pages` of one page are one count.
      counts: a.counts || b.counts,
      reads: a.reads || b.reads,
    }),
  }
}

/** The page a field's `limit` argument asks for: its literal value capped, or defaultLimit when left out. */
function pageSize(node: FieldNode, listSizes: ListSizes): number {
  const limit = node.arguments?.find((arg) => arg.name.value === 'limit')?.value
  if (limit === undefined || limit.kind === Kind.NULL) return listSizes.defaultLimit
  // A limit below 1 is refused when the field runs; a variable (or a value the field will refuse)
  // counts as the largest page.
  if (limit.kind === Kind.INT) return Math.min(Math.max(Number(limit.value), 1), listSizes.maxLimit)
  return listSizes.maxLimit
}

const listBounds = new WeakMap<GraphQLSchema, number>()

/**
 * The longest list introspection can return: types, directives, fields or interfaces of a type,
 * arguments of a field or directive, enum values, input fields (possibleTypes are types).
 */
function introspectionListBound(schema: GraphQLSchema): number {
  let bound = listBounds.get(schema)
  if (bound !== undefined) return bound
  const types = Object.values(schema.getTypeMap())
  const directives = schema.getDirectives()
  bound = Math.max(types.length, directives.length, ...directives.map((directive) => directive.args.length))
  for (const type of types) {
    if (isObjectType(type) || isInterfaceType(type)) {
      const fields = Object.values(type.getFields())
      bound = Math.max(bound, fields.length, type.getInterfaces().length, ...fields.map((field) => field.args.length))
    } else if (isInputObjectType(type)) {
      bound = Math.max(bound, Object.keys(type.getFields()).length)
    } else if (isEnumType(type)) {
      bound = Math.max(bound, type.getValues().length)
    }
  }
  listBounds.set(schema, bound)
  return bound
}

const introspectionCostBounds = new WeakMap<GraphQLSchema, number>()

/** What introspection may cost on this schema: a multiple of the full standard introspection query. */
function introspectionCostBound(schema: GraphQLSchema): number {
  let bound = introspectionCostBounds.get(schema)
  if (bound !== undefined) return bound
  const query = parse(
    getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    }),
  )
  // The page sizes do not matter: introspection lists have no `limit`.
  const measured = measureOperations(query, costMeasure({ defaultLimit: 1, maxLimit: 1 }, schema))
  bound = INTROSPECTION_COST_FACTOR * (measured[0]?.[1].introspection ?? 0)
  introspectionCostBounds.set(schema, bound)
  return bound
}

/** Costs past 2^53 are reported as 2^53 - 1: the exact figure no longer matters, and JSON can carry it. */
const reported = (cost: number): number => Math.min(cost, Number.MAX_SAFE_INTEGER)

/** What an operation costs outside introspection: the figure maxCost bounds, and the rate limit charges (src/graphql/metering.ts). */
const mainCost = (cost: Cost, listSizes: ListSizes): number => cost.main + listSizes.maxLimit * cost.perItem

/** Each operation of a parsed document with its cost outside introspection (what costRule checks against maxCost). */
export function operationCosts(document: DocumentNode, schema: GraphQLSchema, listSizes: ListSizes): Array<[OperationDefinitionNode, number]> {
  const measure = costMeasure(listSizes, schema)
  return measureOperations(document, measure).map(([operation, cost]) => [operation, mainCost(cost, listSizes)])
}

function costRule(maxCost: number, listSizes: ListSizes): ValidationRule {
  return operationRule((schema) => costMeasure(listSizes, schema), (context, operation, cost) => {
    const main = mainCost(cost, listSizes)
    const { introspection } = cost
    if (main > maxCost) {
      const how = cost.reads
        ? 'each field 1, each search, count and page by offset the rows it may read, times the page size of each list it is in'
        : 'each field 1, times the page size of each list it is in'
      const message = `${sentence(nameOf(operation))} costs ${reported(main)} (${how}); the limit is ${maxCost}`
      return limitError(message, operation, 'cost', reported(main), maxCost)
    }
    const introspectionMax = introspectionCostBound(context.getSchema())
    if (introspection > introspectionMax) {
      const message = `Introspection in ${nameOf(operation)} costs ${reported(introspection)}; the limit for introspection is ${introspectionMax}`
      return limitError(message, operation, 'cost', reported(introspection), introspectionMax)
    }
    return undefined
  })
}

// ---------------------------------------------------------------------------------------------
// Aliases

interface Aliases {
  /** Aliased fields in this selection set, with those of fragments spread or inlined into it. */
  readonly count: number
  /** The selection set below with the most, and the field (or operation) it belongs to. */
  readonly worst: { readonly count: number; readonly owner: ASTNode } | undefined
}

const worse = (a: Aliases['worst'], b: Aliases['worst']): Aliases['worst'] => ((b?.count ?? 0) > (a?.count ?? 0) ? b : a)

const aliasesMeasure: Measure<Aliases> = {
  empty: { count: 0, worst: undefined },
  field: (node, selections) => ({
    count: node.alias === undefined ? 0 : 1,
    worst: worse(selections.worst, { count: selections.count, owner: node }),
  }),
  add: (a, b) => ({ count: a.count + b.count, worst: worse(a.worst, b.worst) }),
}

function aliasesRule(maxAliases: number): ValidationRule {
  return operationRule(() => aliasesMeasure, (_context, operation, value) => {
    const worst = worse(value.worst, { count: value.count, owner: operation })
    if (worst === undefined || worst.count <= maxAliases) return undefined
    const message = `${sentence(nameOf(operation))} has ${worst.count} aliased fields in one selection set; the limit is ${maxAliases}`
    return limitError(message, worst.owner, 'aliases', worst.count, maxAliases)
  })
}

// ---------------------------------------------------------------------------------------------
// Directives: a property of each node as written, so checked in graphql's own pass, reporting
// at most once per operation or fragment (a fragment is reported once, whoever spreads it).

const DIRECTIVE_HOLDERS: Record<string, string> = {
  [Kind.OPERATION_DEFINITION]: 'operation',
  [Kind.FRAGMENT_DEFINITION]: 'fragment',
  [Kind.VARIABLE_DEFINITION]: 'variable',
  [Kind.FIELD]: 'field',
  [Kind.FRAGMENT_SPREAD]: 'fragment spread',
  [Kind.INLINE_FRAGMENT]: 'inline fragment',
}

function directivesRule(maxDirectives: number): ValidationRule {
  return (context) => {
    let reported = false
    const check = (node: ASTNode & { readonly directives?: readonly unknown[] }) => {
      const count = node.directives?.length ?? 0
      if (reported || count <= maxDirectives) return
      reported = true
      const message = `A ${DIRECTIVE_HOLDERS[node.kind]} carries ${count} directives; the limit is ${maxDirectives}`
      context.reportError(limitError(message, node, 'directives', count, maxDirectives))
    }
    const definition = (node: OperationDefinitionNode | FragmentDefinitionNode) => {
      reported = false
      check(node)
    }
    const visitor: ASTVisitor = {
      OperationDefinition: definition,
      FragmentDefinition: definition,
      VariableDefinition: check,
      Field: check,
      FragmentSpread: check,
      InlineFragment: check,
    }
    return visitor
  }
}
